import ArgumentParser
import Foundation
import Logging
import PushPrepCommandLine
import PushPrepCore
import PushPrepQueue
import ServiceLifecycle
import UnixSignals

/// `pushprep-queue-bench`: the job queue's own throughput, with jobs that do nothing.
@main
struct QueueBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushprep-queue-bench",
        abstract: "Measure the job queue's throughput with no-op jobs (enqueue, claim, complete).",
        discussion: """
            Enqueues --jobs jobs in batches (timed: enqueue jobs/s), then runs --workers queue \
            workers, each on its own connection, whose handler succeeds at once, until every job \
            has succeeded (timed from the first claim to the last accepted result: process \
            jobs/s). Checks that every job succeeded exactly once, prints the time spent in each \
            kind of queue call, and ends with one line for scripts:

              bench queue: backend=sqlite mode=tasks workers=4 concurrency=32 jobs=20000 enqueue_per_s=… process_per_s=…

            The queue must hold no jobs: use a new SQLite file or an empty PostgreSQL database. \
            Exits 1 when a job did not succeed exactly once or the run timed out.

            Examples:
              pushprep-queue-bench --queue sqlite:/tmp/bench.db --jobs 20000 --workers 4
              pushprep-queue-bench --queue postgres://postgres@127.0.0.1:5432/bench --workers 4 --processes
            """,
        subcommands: [RunCommand.self, WorkerProcessCommand.self],
        defaultSubcommand: RunCommand.self
    )
}

/// The benchmark itself (the default subcommand).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run the benchmark (the default).")

    @OptionGroup var worker: WorkerOptions

    @OptionGroup var options: BenchOptions

    func run() async throws {
        let benchmark = try QueueBenchmark(worker: worker, options: options)
        do {
            let result = try await benchmark.run()
            print(result.report)
            print(result.line)
        } catch {
            let reason = (error as? BenchFailure)?.message ?? String(describing: error)
            print(
                "bench queue: FAILED backend=\(benchmark.url.backendName) workers=\(options.workers) "
                    + "jobs=\(options.jobs): \(reason)")
            throw ExitCode(1)
        }
    }
}

/// What one run does: `run`'s own options, kept as given for ``QueueBenchmark``.
struct BenchOptions: ParsableArguments {
    @Option(help: "Jobs to enqueue and process.")
    var jobs: Int = 20_000

    @Option(help: "Queue workers, each with its own connection.")
    var workers: Int = 1

    @Option(help: "Jobs per enqueue call.")
    var enqueueBatch: Int = 500

    @Flag(help: "Run each worker in its own process instead of as tasks in this one.")
    var processes = false

    @Option(help: "Seconds between reads of the queue's counts while it runs (not part of the timing).")
    var statsInterval: Double = 0.5

    @Option(
        name: .customLong("worker-netns"),
        help: ArgumentHelp(
            "With --processes: start worker N in network namespace NAME N (round robin; repeatable).",
            discussion: "Runs `ip netns exec NAME` (root): workers on hosts of their own, as `make bench-cluster` does."
        ))
    var workerNamespaces: [String] = []

    @Option(help: "Seconds the processing may take before the run fails.")
    var timeout: Double = 600

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard (1...64).contains(workers) else { throw ValidationError("--workers must be in 1...64") }
        guard enqueueBatch >= 1 else { throw ValidationError("--enqueue-batch must be at least 1") }
        guard workerNamespaces.isEmpty || processes else { throw ValidationError("--worker-netns needs --processes") }
        _ = try durations
    }

    /// `--stats-interval` (0.01...3600 s) and `--timeout` (1...86400 s) as durations.
    var durations: (statsInterval: Duration, timeout: Duration) {
        get throws {
            (
                try statsInterval.seconds(option: "--stats-interval", in: 0.01...3600),
                try timeout.seconds(option: "--timeout", in: 1...86_400)
            )
        }
    }
}

/// A worker process started by `run --processes`; not for direct use.
struct WorkerProcessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "One benchmark worker until SIGTERM (started by --processes).",
        shouldDisplay: false)

    @OptionGroup var worker: WorkerOptions

    @Option(help: "Where to write this worker's report (JSON) when it stops.")
    var report: String

    func run() async throws {
        let logger = worker.makeLogger()
        let handler = NoOpJobHandler()
        let recorder = CallRecorder()
        let service = BenchWorker(
            url: try worker.url, configuration: try worker.configuration, handler: handler, recorder: recorder,
            logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        let data = try JSONEncoder().encode(recorder.snapshot(handled: handler.handled))
        try AtomicFile.writeDestination([UInt8](data), to: report)
    }
}

/// The options every worker gets, in this process or in a child.
struct WorkerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("sqlite:PATH or postgres://USER@HOST:PORT/DB; must hold no jobs.", valueName: "url"))
    var queue: String

    @Option(help: "Jobs each worker runs at once (a claim takes at most the free slots).")
    var concurrency: Int = 32

    @Option(help: "Seconds an idle worker waits before looking for work again.")
    var pollInterval: Double = 0.05

    @Option(help: "Seconds a claim holds a job without a heartbeat.")
    var lease: Double = 60

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        _ = try url
        let configuration = try configuration
        try asUsageError { try configuration.validate() }
    }

    var url: QueueURL {
        get throws { try asUsageError { try QueueURL(parsing: queue) } }
    }

    /// A worker as `pushprep worker` would run one, minus pruning (nothing is old enough).
    var configuration: WorkerConfiguration {
        get throws {
            WorkerConfiguration(
                concurrency: concurrency,
                lease: try lease.seconds(option: "--lease", in: WorkerConfiguration.leaseSeconds),
                pollInterval: try pollInterval.seconds(
                    option: "--poll-interval", in: WorkerConfiguration.pollIntervalSeconds),
                retention: nil)
        }
    }

    /// The same options as arguments, for a worker process.
    var arguments: [String] {
        [
            "--queue", queue, "--concurrency", "\(concurrency)", "--poll-interval", "\(pollInterval)",
            "--lease", "\(lease)", "--log-level", logging.logLevel,
        ]
    }

    /// Sends log lines at `--log-level` or above to standard error.
    func makeLogger() -> Logger {
        logging.makeLogger(label: "pushprep-queue-bench")
    }
}

/// Why a run does not count.
struct BenchFailure: Error, CustomStringConvertible {
    var message: String

    init(_ message: String) { self.message = message }

    var description: String { message }
}

extension QueueURL {
    /// `sqlite` or `postgres`, for the result line.
    var backendName: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres: "postgres"
        }
    }
}
