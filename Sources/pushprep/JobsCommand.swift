public import ArgumentParser
import Foundation
import PushPrepCommandLine
import PushPrepCore
import PushPrepQueue

/// `pushprep jobs`: look at and manage the queue.
struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "List, show, retry, cancel and prune queued jobs.",
        subcommands: [List.self, Show.self, Retry.self, Cancel.self, Prune.self, Stats.self]
    )

    /// Options every `jobs` subcommand takes.
    struct Common: ParsableArguments {
        @OptionGroup var queue: QueueOptions
        @OptionGroup var output: JSONOutputOptions
        @OptionGroup var logging: LoggingOptions

        func withQueue<Result: Sendable>(_ body: (any JobQueueBackend) async throws -> Result) async throws -> Result {
            try await queue.withQueue(logger: logging.makeLogger(), body)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Jobs, newest first.")

        @Option(help: "Only jobs in this state: queued, running, succeeded, failed, dead, cancelled.")
        var state: JobState?

        @Option(help: "At most this many jobs (1...100000).")
        var limit: Int = 50

        @OptionGroup var common: Common

        func validate() throws {
            guard (1...100_000).contains(limit) else {
                throw ValidationError("--limit must be in 1...100000, got \(limit)")
            }
        }

        func run() async throws {
            let jobs = try await common.withQueue { try await $0.list(state: state, limit: limit) }
            if common.output.json { return try JSONOutputOptions.print(jobs.map(JobView.init)) }
            guard !jobs.isEmpty else { return print("no jobs" + (state.map { " \($0.rawValue)" } ?? "")) }
            print(
                TextTable.render(
                    header: ["ID", "STATE", "ATTEMPT", "PRIO", "UPDATED", "SOURCE", "ERROR"],
                    rows: jobs.map { job in
                        [
                            "\(job.id)", JobView.stateLabel(job), "\(job.attempt)/\(job.maxAttempts)",
                            "\(job.priority)",
                            JobView.shortDate(job.updatedAt), job.source,
                            job.errorCode.map { "\($0): \(job.errorMessage ?? "")" } ?? "",
                        ]
                    }))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "One job, with its manifest entry when done (--manifest: as a manifest document).")

        @Argument(help: "The job's id.") var id: JobID

        @Flag(
            help: """
                Print a manifest of the succeeded job's entry (the schema of process's manifest.json), \
                for payload - or preflight --manifest.
                """)
        var manifest = false

        @OptionGroup var manifestVersion: ManifestVersionOption

        @OptionGroup var common: Common

        func validate() throws {
            if manifest && common.output.json { throw ValidationError("give --manifest or --json, not both") }
            if manifestVersion.isGiven && !manifest { throw ValidationError("--manifest-version takes --manifest") }
        }

        func run() async throws {
            let job = try await common.withQueue { try await $0.job(id) }
            if manifest {
                // The same checks and codes as payload --job: a job that has not succeeded has none.
                let finished: JobEntries.Finished
                do {
                    finished = try JobEntries.finishedEntry(id, job, for: "a manifest")
                } catch {
                    throw CommandFailure(message: error.description)
                }
                let document = Manifest(
                    settings: finished.settings, attachments: [finished.entry], version: manifestVersion.version)
                FileHandle.standardOutput.write(try document.jsonData())
                return
            }
            guard let job else {
                throw CommandFailure(message: "\(PushPrepError.Code.jobNotFound): no job \(id)")
            }
            if common.output.json { return try JSONOutputOptions.print(JobView(job)) }
            // What clients queued, and what their sources answered, is printed escaped.
            let shown = UntrustedText.escaped
            var lines = [
                "job \(job.id): \(JobView.stateLabel(job))",
                "source:    \(shown(job.source))",
                "attempt:   \(job.attempt) of \(job.maxAttempts)",
                "priority:  \(job.priority)",
                "created:   \(JobView.longDate(job.createdAt))",
                "run at:    \(JobView.longDate(job.runAt))",
                "updated:   \(JobView.longDate(job.updatedAt))",
            ]
            if let finished = job.finishedAt { lines.append("finished:  \(JobView.longDate(finished))") }
            if let owner = job.leaseOwner {
                lines.append("worker:    \(shown(owner)) (token \(job.leaseToken))")
                if let expires = job.leaseExpiresAt { lines.append("lease:     until \(JobView.longDate(expires))") }
            }
            if let timeout = job.timeoutSeconds { lines.append("timeout:   \(timeout) s") }
            if let code = job.errorCode { lines.append("error:     \(shown(code)): \(shown(job.errorMessage ?? ""))") }
            print(lines.joined(separator: "\n"))
            if let entry = job.entry {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print("manifest entry:")
                print(String(decoding: try encoder.encode(entry), as: UTF8.self))
            }
        }
    }

    /// The job `retry` and `cancel` change, and the options every `jobs` subcommand takes.
    struct Change: ParsableArguments {
        @Argument(help: "The job's id.") var id: JobID

        @OptionGroup var common: Common

        /// Changes the job with `change`, then prints it: as JSON with `--json`, else the line
        /// `done` says.
        func run(
            _ change: (any JobQueueBackend, JobID) async throws -> JobRecord, done: (JobRecord) -> String
        ) async throws {
            let job = try await common.withQueue { try await change($0, id) }
            if common.output.json { return try JSONOutputOptions.print(JobView(job)) }
            print(done(job))
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue a failed, dead or cancelled job again, with a fresh set of attempts.")

        @OptionGroup var job: Change

        func run() async throws {
            try await job.run({ try await $0.retry($1) }, done: { "job \($0.id) queued again" })
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cancel a queued job, or stop a running one at its next step.")

        @OptionGroup var job: Change

        func run() async throws {
            try await job.run({ try await $0.cancel($1) }) { job in
                job.state == .cancelled
                    ? "job \(job.id) cancelled"
                    : "job \(job.id) is running: its worker stops it at its next heartbeat"
            }
        }
    }

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete finished jobs older than the retention.")

        @Option(help: "Days since the job finished (0...3650).")
        var olderThan: Double = 7

        @Flag(
            help: """
                Also delete the pruned jobs' uploads (under --uploads) and outputs (under --out) that no job left \
                in the queue still needs.
                """)
        var deleteFiles = false

        @Option(help: "The uploads directory serve was given (with --delete-files).")
        var uploads: String = "./pushprep-uploads"

        @Option(help: "The out directory the outputs are in (with --delete-files).")
        var out: String = "./pushprep-out"

        @OptionGroup var common: Common

        func validate() throws {
            guard olderThan.isFinite, WorkerConfiguration.retentionDays.contains(olderThan) else {
                throw ValidationError("--older-than must be in 0...3650 days, got \(olderThan)")
            }
        }

        func run() async throws {
            let before = Date().addingTimeInterval(-olderThan * 86_400)
            guard deleteFiles else {
                let count = try await common.withQueue { try await $0.prune(finishedBefore: before) }
                if common.output.json { return try JSONOutputOptions.print(["pruned": count]) }
                print("pruned \(count) finished job\(count == 1 ? "" : "s")")
                return
            }
            let files = PrunedFiles(uploads: uploads, out: out)
            let (count, outcome) = try await common.withQueue { queue in
                let pruned = try await queue.pruneReturningFiles(finishedBefore: before)
                // Bound before the tuple is built (scripts/lint-tuple-await.py: issue 26 §0).
                let outcome = try await files.delete(pruned, queue: queue)
                return (pruned.count, outcome)
            }
            if common.output.json {
                struct View: Encodable {
                    var pruned: Int
                    var files: PrunedFiles.Outcome
                }
                return try JSONOutputOptions.print(View(pruned: count, files: outcome))
            }
            print(
                "pruned \(count) finished job\(count == 1 ? "" : "s"); deleted \(outcome.uploadsDeleted) upload(s) and "
                    + "\(outcome.outputsDeleted) output(s), \(outcome.bytesDeleted) bytes; kept \(outcome.keptInUse) "
                    + "file(s) other jobs still name")
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Jobs by state, queue depth, expired leases.")

        @OptionGroup var common: Common

        struct View: Encodable {
            var states: [String: Int]
            var ready: Int
            var scheduled: Int
            var expiredLeases: Int
            var oldestReadySeconds: Double?
        }

        func run() async throws {
            let stats = try await common.withQueue { try await $0.stats() }
            let view = View(
                states: Dictionary(
                    uniqueKeysWithValues: JobState.allCases.map { ($0.rawValue, stats.byState[$0] ?? 0) }),
                ready: stats.ready, scheduled: stats.scheduled, expiredLeases: stats.expiredLeases,
                oldestReadySeconds: stats.oldestReadyAge)
            if common.output.json { return try JSONOutputOptions.print(view) }
            var rows = JobState.allCases.map { [$0.rawValue, "\(stats.byState[$0] ?? 0)"] }
            rows += [
                ["ready now", "\(stats.ready)"], ["scheduled", "\(stats.scheduled)"],
                ["expired leases", "\(stats.expiredLeases)"],
                ["oldest ready", stats.oldestReadyAge.map { String(format: "%.1f s", $0) } ?? "-"],
            ]
            print(TextTable.render(header: ["STATE", "JOBS"], rows: rows))
        }
    }
}

extension JobState: ExpressibleByArgument {}

/// A job as `jobs show --json` and `jobs list --json` print it: the record's own JSON (its
/// queue columns, ``JobRecord/CodingKeys``), with its error, settings and result decoded beside
/// them, each absent when nil.
struct JobView: Encodable {
    var job: JobRecord

    /// The keys beside the record's own.
    enum CodingKeys: String, CodingKey {
        case error, settings, result
    }

    /// The view of `job`.
    init(_ job: JobRecord) {
        self.job = job
    }

    /// The record's members, then the decoded ones in the same object (the output sorts keys).
    func encode(to encoder: any Encoder) throws {
        try job.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(job.lastError, forKey: .error)
        try container.encodeIfPresent(job.settings, forKey: .settings)
        try container.encodeIfPresent(job.entry, forKey: .result)
    }

    /// The state, with "cancelling" for a running job asked to stop and "scheduled" for a
    /// queued one that waits.
    static func stateLabel(_ job: JobRecord) -> String {
        if job.state == .running && job.cancelRequested { return "running (cancelling)" }
        if job.state == .queued && job.runAt > Date() { return "queued (at \(shortDate(job.runAt)))" }
        return job.state.rawValue
    }

    static func shortDate(_ date: Date) -> String {
        if let text = outOfCalendar(date) { return text }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = Calendar.current.isDateInToday(date) ? "HH:mm:ss" : "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    static func longDate(_ date: Date) -> String {
        outOfCalendar(date) ?? ISO8601DateFormatter().string(from: date)
    }

    /// "Infinity", "-Infinity" or "NaN" for a time no calendar names (PostgreSQL's
    /// `'infinity'::timestamptz`, SQLite's `9e999`; formatters print nothing or a year in the
    /// millions for them), else nil. Years 1 to 9999 are printed as dates.
    private static func outOfCalendar(_ date: Date) -> String? {
        let seconds = date.timeIntervalSince1970
        if seconds.isNaN { return "NaN" }
        if seconds > 253_402_300_799 { return "Infinity" }
        if seconds < -62_135_596_800 { return "-Infinity" }
        return nil
    }
}
