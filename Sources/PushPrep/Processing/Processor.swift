import Foundation
public import Logging
public import PushPrepCore
import PushPrepMedia
import PushPrepPayload
public import PushPrepRemote
import Synchronization

/// Processes inputs into attachments in an out directory, with bounded parallelism, and
/// returns the manifest.
public struct Processor: Sendable {
    /// Progress of a run, reported after each input.
    public struct Progress: Sendable {
        public var done: Int
        public var total: Int
        public var failed: Int
    }

    public let settings: ProcessingSettings
    public let outputDirectory: String
    /// How `http://` and `https://` inputs are fetched.
    public let remote: RemoteSettings
    /// The memory budget of the run's inputs, in bytes (nil: the default share of the machine's
    /// memory; see ``ProcessingSession``).
    public let memoryLimit: Int?
    /// Where the inputs are decoded, when not in this process (`--isolation process`).
    package var decoders: (any InputDecoder)? = nil
    let logger: Logger

    /// A processor writing into `outputDirectory` (created when missing).
    public init(
        settings: ProcessingSettings, outputDirectory: String, logger: Logger,
        remote: RemoteSettings = RemoteSettings(),
        memoryLimit: Int? = nil
    ) {
        self.settings = settings
        self.memoryLimit = memoryLimit
        self.outputDirectory = outputDirectory
        self.remote = remote
        self.logger = logger
        // libvips' and libav's lines about an input go to the logger processing it; the others
        // to the first processor's or session's (see LibraryLog).
        LibraryLog.bootstrap(logger)
    }

    /// Processes every input; never throws for a bad input (that is a failed entry). Throws
    /// only when the settings are invalid (checked once, here) or the out directory cannot be
    /// used.
    ///
    /// Runs a ``ProcessingSession`` of `settings.jobs` threads for the run (handing each input's
    /// open file to ``decoders`` when set), with a window of twice that many inputs in flight.
    public func run(
        _ inputs: [InputItem], progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws(PushPrepError) -> Manifest {
        let validated = try settings.validated()
        let session = try ProcessingSession(
            threads: settings.jobs, remote: remote,
            memory: MemoryBudget(limit: memoryLimit ?? MemoryBudget.defaultLimit()),
            decoders: decoders, logger: logger)
        do throws(PushPrepError) {
            try prepareOutputDirectory()
        } catch {
            await session.shutdown()
            throw error
        }
        let outputDirectory = self.outputDirectory
        let processOne: @Sendable (InputItem) async -> ManifestEntry = { item in
            await session.process(item, settings: validated, outputDirectory: outputDirectory, control: nil)
        }

        var entries = [ManifestEntry?](repeating: nil, count: inputs.count)
        var failed = 0
        var done = 0
        await withTaskGroup(of: (Int, ManifestEntry).self) { group in
            var next = 0
            func submit() {
                guard next < inputs.count else { return }
                let index = next
                let item = inputs[index]
                next += 1
                group.addTask { (index, await processOne(item)) }
            }
            // A window of twice the thread count keeps every thread busy without queueing
            // thousands of tasks up front.
            for _ in 0..<(settings.jobs * 2) { submit() }
            for await (index, entry) in group {
                entries[index] = entry
                done += 1
                if entry.failure != nil { failed += 1 }
                progress?(Progress(done: done, total: inputs.count, failed: failed))
                submit()
            }
        }
        await session.shutdown()
        return Manifest(settings: settings, attachments: entries.map { $0! })
    }

    /// Creates the out directory and removes temporaries that dead processes left in it.
    private func prepareOutputDirectory() throws(PushPrepError) {
        try Directories.create(outputDirectory, name: "the out directory \(outputDirectory)")
        AtomicFile.removeStaleTemporaries(in: outputDirectory)
    }
}

/// Decodes inputs that this process fetched, opened, checked and hashed, out of process: the
/// pool of confined decoder processes (`--isolation process`). A ``ProcessingSession`` given one
/// keeps everything else and hands it each input's open file; whoever started the decoders ends
/// them.
package protocol InputDecoder: Sendable {
    /// Processes `item` from `file` into `outputDirectory` (which exists) and returns its manifest
    /// entry, its estimated peak memory reserved in `memory` while it is decoded; never throws (a
    /// bad input, a decoder that fails, or a stop of `control`, is a failed entry).
    func decode(
        _ item: InputItem, file: InputFile, settings: ProcessingSettings, outputDirectory: String,
        memory: MemoryBudget?, control: ProcessingControl?
    ) async -> ManifestEntry
}
