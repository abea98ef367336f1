import Foundation
public import Logging
import NIOPosix
public import PushPrepCore
import PushPrepMedia
import PushPrepPayload
public import PushPrepRemote
import Synchronization

/// Long-lived: owns the thread pool that libvips/libav calls block, and one RemoteFetcher for
/// URL inputs, shared by every job processed through it.
///
/// ``Processor/run(_:progress:)`` makes one per run; a queue worker keeps one for its whole
/// life and processes one job after another through it, each with its own settings, out
/// directory and ``ProcessingControl``. Call ``shutdown()`` when done.
public final class ProcessingSession: Sendable {
    private let pool: NIOThreadPool
    private let fetcher: RemoteFetcher
    private let remote: RemoteSettings
    private let sources: SourcePolicy
    private let logger: Logger
    /// Where inputs are decoded when not on the pool's threads (`--isolation process`).
    private let decoders: (any InputDecoder)?
    private let isShutDown = Mutex(false)
    /// What the inputs being decoded at once may add up to (their ``MemoryEstimate``s): one
    /// budget for every job processed through the session.
    package let memory: MemoryBudget

    /// A session whose pool has `threads` threads (at least one: as many inputs are processed
    /// at once), fetching URLs with `remote`, reading the sources `sources` allows (a failed
    /// entry `source_not_allowed` for the others). libvips' and libav's lines about its inputs go to
    /// `logger`. Throws `invalid_settings` when `remote` does not validate: it is checked here,
    /// once, not for each URL.
    ///
    /// Inputs wait for their share of a memory budget of `memoryLimit` bytes (default: a share of
    /// the machine's memory or of the cgroup's limit, ``MemoryBudget/defaultShare``) before they
    /// are decoded.
    public convenience init(
        threads: Int, remote: RemoteSettings, sources: SourcePolicy = .any, memoryLimit: Int? = nil, logger: Logger
    ) throws(PushPrepError) {
        try self.init(
            threads: threads, remote: remote, sources: sources,
            memory: MemoryBudget(limit: memoryLimit ?? MemoryBudget.defaultLimit()), logger: logger)
    }

    /// A session whose inputs wait for their share of `memory` (a budget that reports to the
    /// worker's metrics, say), or are decoded by `decoders` (whose owner ends them after the
    /// session). With decoders, the pool's threads only read and hash the inputs, and the
    /// budget is the decoders' own.
    package init(
        threads: Int, remote: RemoteSettings, sources: SourcePolicy = .any, memory: MemoryBudget,
        decoders: (any InputDecoder)? = nil, logger: Logger
    ) throws(PushPrepError) {
        try remote.validate()
        self.memory = memory
        self.decoders = decoders
        pool = NIOThreadPool(numberOfThreads: max(1, threads))
        pool.start()
        fetcher = RemoteFetcher(settings: remote, logger: logger)
        self.remote = remote
        self.sources = sources
        self.logger = logger
        // libvips' and libav's lines about an input go to the logger processing it; the others
        // to the first processor's or session's (see LibraryLog).
        LibraryLog.bootstrap(logger)
    }

    /// Processes one input into `outputDirectory` (created when missing) and returns its
    /// manifest entry; a stop shows as a failed entry with code `cancelled` or `timeout` ("the
    /// job's timeout of N s passed"), and leaves no output (nor temporary) behind. Its log
    /// lines, libvips' and libav's included, carry `metadata` (a job's id, say).
    ///
    /// Never throws: an out directory that cannot be created and a session already shut down
    /// are failed entries too. The settings are ``ProcessingSettings/Validated``: checked once
    /// where they came in (a run's start, a job's pickup), not for each input. Temporaries left
    /// by dead processes are not swept here (that would list the directory for every job); see
    /// ``Processor/run(_:progress:)``.
    public func process(
        _ item: InputItem, settings: ProcessingSettings.Validated, outputDirectory: String,
        control: ProcessingControl?, metadata: Logger.Metadata = [:]
    ) async -> ManifestEntry {
        var logger = self.logger
        for (key, value) in metadata { logger[metadataKey: key] = value }
        let processor = InputProcessor(
            settings: settings.settings, outputDirectory: outputDirectory, logger: logger, control: control,
            sources: sources, memory: memory, decoders: decoders)
        do throws(PushPrepError) {
            try control?.check()
            try sources.admit(item)
            try Directories.create(outputDirectory, name: "the out directory \(outputDirectory)")
        } catch {
            return processor.failed(item, error)
        }
        if item.isRemote {
            return await processor.processRemote(item, fetcher: fetcher, pool: pool)
        }
        return await processor.onPool(pool, item)
    }

    /// Processes `item` from `file`, which a decoder process's parent opened, checked and hashed
    /// (``InputFile/adopting(descriptor:path:size:sha256:keepContents:)``), into `outputDirectory`;
    /// otherwise as ``process(_:settings:outputDirectory:control:metadata:)``.
    package func process(
        _ item: InputItem, file: InputFile, settings: ProcessingSettings.Validated, outputDirectory: String
    ) async -> ManifestEntry {
        let processor = InputProcessor(
            settings: settings.settings, outputDirectory: outputDirectory, logger: logger, control: nil,
            sources: .any, memory: memory)
        do throws(PushPrepError) {
            try Directories.create(outputDirectory, name: "the out directory \(outputDirectory)")
        } catch {
            return processor.failed(item, error)
        }
        return await processor.onPool(pool, item, file: file)
    }

    /// Stops the pool (after the inputs it is processing) and closes the fetcher's
    /// connections. Inputs processed afterwards fail with `io_error`. Calling it again does
    /// nothing.
    public func shutdown() async {
        let first = isShutDown.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        await fetcher.shutdown()
        try? await pool.shutdownGracefully()
    }
}
