import ArgumentParser
import Foundation
import PushPrepCommandLine
import PushPrepCore
import PushPrepQueue

/// `pushprep enqueue`: adds one job per input to the queue.
struct EnqueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "Queue inputs for workers (pushprep worker) to process.",
        discussion: """
            INPUT is a file, a directory (one job per file), an http(s) URL, or - for one per \
            line on standard input. Local paths are stored as absolute paths: workers on other \
            hosts need the same paths (a shared directory). A local path that does not exist or \
            cannot be read here is a usage error, unless --no-check says the workers see another \
            file system. Enqueueing an input with the same settings while a job for it is queued \
            or running returns that job.

            Prints one job id per input (--json: id, source, state and whether it was created).

            Examples:
              pushprep enqueue photos/ --base-url https://cdn.example.com/push
              pushprep enqueue --queue postgres://pushprep@db/pushprep --priority 10 clip.mov
              pushprep enqueue --delay 60 --max-attempts 3 https://example.com/a.jpg
            """
    )

    @OptionGroup var queue: QueueOptions

    @Option(help: "Higher runs first (-1000...1000).")
    var priority: Int = 0

    @Option(help: "Seconds to wait before the job may run (0...2592000, 30 days).")
    var delay: Double = 0

    @Option(help: "Tries before the job ends dead (1...100).")
    var maxAttempts: Int = 5

    @Option(help: "Seconds one attempt may take in all, 1...86400 (default: the worker's --job-timeout).")
    var jobTimeout: Double?

    @Option(
        name: ProcessingSettings.Declared.baseURL.name,
        help: ProcessingSettings.Declared.baseURL.argumentHelp(
            "URL prefix of the worker's out directory; each entry's url is this + its file."))
    var baseURL: String?

    @Flag(
        help:
            "Queue local paths without checking that they exist and can be read here (workers on another file system).")
    var noCheck = false

    @OptionGroup var options: ImageOptions

    @OptionGroup var output: JSONOutputOptions

    @OptionGroup var logging: LoggingOptions

    @Argument(help: "Files, directories, http(s) URLs, or - for paths and URLs on standard input.")
    var inputs: [String]

    func validate() throws {
        guard JobSpec.priorities.contains(priority) else {
            throw ValidationError("--priority must be in -1000...1000, got \(priority)")
        }
        guard JobSpec.attempts.contains(maxAttempts) else {
            throw ValidationError("--max-attempts must be in 1...100, got \(maxAttempts)")
        }
        _ = try durations
        try asUsageError { try settings.validate() }
    }

    /// `--delay` and `--job-timeout` as durations; a usage error when out of range.
    var durations: (delay: Duration, timeout: Duration?) {
        get throws {
            (
                try delay.seconds(option: "--delay", in: JobSpec.delaySeconds),
                try jobTimeout.map { try $0.seconds(option: "--job-timeout", in: JobSpec.timeoutSeconds) }
            )
        }
    }

    var settings: ProcessingSettings {
        var settings = options.settings
        settings.baseURL = baseURL
        return settings
    }

    /// An http(s) URL, which workers fetch: not a path to check.
    static func isURL(_ source: String) -> Bool {
        let lowered = source.prefix(8).lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// A regular file (after links) that this process may read.
    static func isReadableFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isReadableFile(atPath: path)
    }

    struct Row: Encodable {
        var id: JobID
        var source: String
        var state: JobState
        var created: Bool
    }

    func run() async throws {
        let logger = logging.makeLogger()
        let items = InputExpander.expand(inputs)
        guard !items.isEmpty else { throw ValidationError("no inputs: the directories given hold no files") }
        let (delay, timeout) = try durations
        let specs: [JobSpec]
        do {
            specs = try ProcessingJobs.specs(
                sources: items.map { $0.source == $0.path ? $0.source : $0.path }, settings: settings,
                priority: priority, delay: delay, maxAttempts: maxAttempts, timeout: timeout)
        } catch {
            // With its code: invalid_request for a source the queue refuses, invalid_settings
            // for numbers out of range.
            throw ValidationError(error.description)
        }
        if !noCheck {
            for spec in specs where !Self.isURL(spec.source) {
                guard Self.isReadableFile(spec.source) else {
                    throw ValidationError(
                        "not_found: \(UntrustedText.escaped(spec.source)) does not exist or cannot be read here"
                            + " (give --no-check if the workers see another file system); nothing was queued")
                }
            }
        }
        let results = try await queue.withQueue(logger: logger) { try await $0.enqueue(specs) }
        if output.json {
            try JSONOutputOptions.print(
                zip(specs, results).map { Row(id: $1.id, source: $0.source, state: $1.state, created: $1.created) })
        } else {
            for result in results { print(result.id) }
        }
    }
}
