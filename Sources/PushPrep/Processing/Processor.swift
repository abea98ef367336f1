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
    /// Runs a ``ProcessingSession`` of `settings.jobs` threads for the run (or hands each input
    /// to `handler`, a pool of decoder processes, say), with a window of twice that many inputs
    /// in flight.
    public func run(
        _ inputs: [InputItem],
        through handler: (any InputHandler)? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws(PushPrepError) -> Manifest {
        let validated = try settings.validated()
        let session =
            try handler == nil
            ? ProcessingSession(threads: settings.jobs, remote: remote, memoryLimit: memoryLimit, logger: logger)
            : nil
        do throws(PushPrepError) {
            try prepareOutputDirectory()
        } catch {
            await session?.shutdown()
            throw error
        }
        let outputDirectory = self.outputDirectory
        let processOne: @Sendable (InputItem) async -> ManifestEntry = { item in
            if let session {
                await session.process(item, settings: validated, outputDirectory: outputDirectory, control: nil)
            } else {
                await handler!.process(item, settings: validated, outputDirectory: outputDirectory)
            }
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
        await session?.shutdown()
        return Manifest(settings: settings, attachments: entries.map { $0! })
    }

    /// Creates the out directory and removes temporaries that dead processes left in it.
    private func prepareOutputDirectory() throws(PushPrepError) {
        try Directories.create(outputDirectory, name: "the out directory \(outputDirectory)")
        AtomicFile.removeStaleTemporaries(in: outputDirectory)
    }
}

/// What processes each input of a ``Processor``'s run in place of its own ``ProcessingSession``:
/// the pool of confined decoder processes (`--isolation process`).
public protocol InputHandler: Sendable {
    /// Processes `item` into `outputDirectory` (which exists) and returns its manifest entry;
    /// never throws (a bad input, or a decoder that fails, is a failed entry).
    func process(_ item: InputItem, settings: ProcessingSettings.Validated, outputDirectory: String) async
        -> ManifestEntry
}
