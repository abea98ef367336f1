import Foundation
import Logging
import PushPrepCore
import PushPrepQueue
import ServiceLifecycle

/// One benchmark run: enqueue, process with no-op jobs, check, report.
struct QueueBenchmark: Sendable {
    var worker: WorkerOptions
    /// `--jobs`, `--workers`, `--enqueue-batch`, `--processes`, `--stats-interval`, `--timeout`.
    var options: BenchOptions
    var url: QueueURL
    var logger: Logger

    init(worker: WorkerOptions, options: BenchOptions) throws {
        self.worker = worker
        self.options = options
        url = try worker.url
        logger = worker.makeLogger()
    }

    /// What a run measured.
    struct Result {
        var report: String
        var line: String
    }

    func run() async throws -> Result {
        try await JobQueues.withBackend(url, logger: logger) { queue in
            try await requireEmpty(queue)
            let enqueueRecorder = CallRecorder()
            let enqueueSeconds = try await enqueueAll(TimedJobQueue(base: queue, recorder: enqueueRecorder))
            let cpuBefore = CPUTime.current(children: options.processes)
            var report =
                options.processes ? try await runProcesses(monitor: queue) : try await runTasks(monitor: queue)
            let cpuSeconds = CPUTime.current(children: options.processes) - cpuBefore
            try await verify(queue, report: report)
            report.merge(enqueueRecorder.snapshot(handled: 0))
            return summarize(report, enqueueSeconds: enqueueSeconds, cpuSeconds: cpuSeconds)
        }
    }

    // MARK: - Phases

    /// Refuses a queue that already holds jobs: the counts would not add up.
    private func requireEmpty(_ queue: any JobQueue & JobQueueAdmin) async throws {
        let total = try await queue.stats().byState.values.reduce(0, +)
        guard total == 0 else {
            throw BenchFailure(
                "the queue at \(url) already holds \(total) jobs; use a new SQLite file or an empty database")
        }
    }

    /// Enqueues every job in batches on one connection; returns the seconds it took.
    ///
    /// The specs are real PushPrep specs (default settings as the payload, a SHA-256 dedup
    /// key), built before the clock starts.
    private func enqueueAll(_ queue: any JobQueue & JobQueueAdmin) async throws -> Double {
        let settings = ProcessingSettings()
        let run = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let specs = try ProcessingJobs.specs(
            sources: (0..<options.jobs).map { "https://bench.invalid/\(run)/\($0).jpg" }, settings: settings)
        let start = ContinuousClock.now
        var created = 0
        for first in stride(from: 0, to: options.jobs, by: options.enqueueBatch) {
            let batch = specs[first..<min(first + options.enqueueBatch, options.jobs)]
            let results = try await queue.enqueue(Array(batch))
            created += results.count { $0.created }
        }
        let elapsed = ContinuousClock.now - start
        guard created == options.jobs else {
            throw BenchFailure("only \(created) of \(options.jobs) enqueued jobs were created")
        }
        return elapsed.seconds
    }

    /// Runs the workers as tasks of this process, each with its own connection.
    private func runTasks(monitor: any JobQueue & JobQueueAdmin) async throws -> WorkerReport {
        let recorder = CallRecorder()
        let handler = NoOpJobHandler()
        let configuration = try worker.configuration
        let services = (0..<options.workers).map { _ in
            ServiceGroupConfiguration.ServiceConfiguration(
                service: BenchWorker(
                    url: url, configuration: configuration, handler: handler, recorder: recorder,
                    logger: logger))
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: services, logger: logger))
        try await runUntilSucceeded(
            monitor, accepted: { recorder.accepted }, workers: { try await group.run() },
            stop: { await group.triggerGracefulShutdown() })
        return recorder.snapshot(handled: handler.handled)
    }

    /// Runs each worker in a child process of this executable and merges their reports.
    private func runProcesses(monitor: any JobQueue & JobQueueAdmin) async throws -> WorkerReport {
        let children = try WorkerProcesses(
            count: options.workers, arguments: worker.arguments, namespaces: options.workerNamespaces)
        defer { children.removeReports() }
        do {
            try await runUntilSucceeded(
                monitor, accepted: nil, workers: { try await children.waitForExit() }, stop: { children.terminate() })
        } catch {
            children.kill()
            throw error
        }
        return try children.reports()
    }

    /// Runs `workers` until the queue reports every job succeeded, then calls `stop` and waits
    /// for them to end. Fails when they end first, a job fails, or the timeout passes.
    ///
    /// - Parameter accepted: The results accepted so far, when this process can tell (tasks
    ///   mode): the queue's counts are then read once that reaches the job count, and otherwise
    ///   only every stats interval, so that the monitor hardly loads the database it measures.
    private func runUntilSucceeded(
        _ monitor: any JobQueue & JobQueueAdmin, accepted: (@Sendable () -> Int)?,
        workers: @escaping @Sendable () async throws -> Void,
        stop: @escaping @Sendable () async -> Void
    ) async throws {
        enum Event: Sendable {
            case allSucceeded
            case workersStopped(String?)
        }
        try await withThrowingTaskGroup(of: Event.self) { tasks in
            tasks.addTask {
                do {
                    try await workers()
                    return .workersStopped(nil)
                } catch {
                    return .workersStopped(String(describing: error))
                }
            }
            tasks.addTask {
                try await waitUntilSucceeded(monitor, accepted: accepted)
                return .allSucceeded
            }
            if case .workersStopped(let error) = try await tasks.next() {
                tasks.cancelAll()
                throw BenchFailure("the workers stopped before every job succeeded: \(error ?? "no error")")
            }
            await stop()
            if case .workersStopped(let error?) = try await tasks.next() {
                throw BenchFailure("a worker failed: \(error)")
            }
        }
    }

    /// Polls the queue's counts until every job succeeded.
    private func waitUntilSucceeded(_ queue: any JobQueue & JobQueueAdmin, accepted: (@Sendable () -> Int)?)
        async throws
    {
        let (statsInterval, timeout) = try options.durations
        let deadline = ContinuousClock.now + timeout
        let localCheck: Duration = .milliseconds(10)
        var nextStats = ContinuousClock.now + statsInterval
        while true {
            if let accepted {
                try await Task.sleep(for: localCheck)
                guard accepted() >= options.jobs || ContinuousClock.now >= nextStats else { continue }
            } else {
                try await Task.sleep(until: nextStats)
            }
            nextStats = ContinuousClock.now + statsInterval
            let stats = try await queue.stats()
            let succeeded = stats.byState[.succeeded] ?? 0
            let ended = JobState.allCases.filter(\.isRetryable).map { stats.byState[$0] ?? 0 }.reduce(0, +)
            guard ended == 0 else {
                throw BenchFailure("\(ended) jobs ended failed, dead or cancelled: \(stats.byState)")
            }
            if succeeded >= options.jobs { return }
            guard ContinuousClock.now < deadline else {
                throw BenchFailure("timed out: \(succeeded) of \(options.jobs) jobs succeeded after \(timeout)")
            }
        }
    }

    /// Checks that every job succeeded exactly once: all succeeded on their first attempt (one
    /// claim each), the handler ran once per job and the queue accepted every result.
    private func verify(_ queue: any JobQueue & JobQueueAdmin, report: WorkerReport) async throws {
        let stats = try await queue.stats()
        let others = stats.byState.filter { $0.key != .succeeded && $0.value != 0 }
        guard stats.byState[.succeeded] == options.jobs, others.isEmpty else {
            throw BenchFailure(
                "expected \(options.jobs) succeeded jobs and nothing else, the queue has \(stats.byState)")
        }
        let records = try await queue.list(state: .succeeded, limit: options.jobs + 1)
        let reclaimed = records.count { $0.attempt != 1 }
        guard records.count == options.jobs, reclaimed == 0 else {
            throw BenchFailure("\(reclaimed) of \(records.count) succeeded jobs were claimed more than once")
        }
        guard report.handled == options.jobs, report.accepted == options.jobs, report.refused == 0 else {
            throw BenchFailure(
                "the handler ran \(report.handled) times and the queue accepted \(report.accepted) results "
                    + "(refused \(report.refused)) for \(options.jobs) jobs")
        }
    }

    // MARK: - Report

    private func summarize(_ report: WorkerReport, enqueueSeconds: Double, cpuSeconds: Double) -> Result {
        let processSeconds = report.processSeconds ?? 0
        let enqueueRate = Double(options.jobs) / enqueueSeconds
        let processRate = processSeconds > 0 ? Double(options.jobs) / processSeconds : 0
        let claims = report.calls["claim"] ?? CallStats()
        let finishes = report.calls["finish"] ?? CallStats()
        let mode = options.processes ? "processes" : "tasks"
        let text = [
            "queue calls (enqueue: one connection; the rest: all \(options.workers) workers)",
            CallTable.render(report.calls),
            "enqueue: \(options.jobs) jobs in \(format(enqueueSeconds, 3)) s, batches of \(options.enqueueBatch)",
            "process: \(options.jobs) jobs in \(format(processSeconds, 3)) s (first claim to last result), \(options.workers) "
                + "workers as \(mode), concurrency \(worker.concurrency) each; "
                + "bench CPU \(format(cpuSeconds, 2)) s (\(format(cpuSeconds / max(processSeconds, 1e-9) * 100, 0))% of one core)",
            "exactly once: \(options.jobs) succeeded on attempt 1, \(report.accepted) results accepted, "
                + "handler ran \(report.handled) times",
        ].joined(separator: "\n")
        let line =
            "bench queue: backend=\(url.backendName) mode=\(mode) workers=\(options.workers) "
            + "concurrency=\(worker.concurrency) jobs=\(options.jobs) enqueue_per_s=\(format(enqueueRate, 0)) "
            + "process_per_s=\(format(processRate, 0)) enqueue_s=\(format(enqueueSeconds, 3)) "
            + "process_s=\(format(processSeconds, 3)) claims=\(claims.calls) "
            + "claim_batch=\(format(Double(claims.rows) / Double(max(claims.calls, 1)), 1)) "
            + "finishes=\(finishes.calls) finish_batch=\(format(Double(finishes.rows) / Double(max(finishes.calls, 1)), 1)) "
            + "cpu_s=\(format(cpuSeconds, 2))"
        return Result(report: text, line: line)
    }
}

/// The per-call table of the report.
enum CallTable {
    static let order = [
        "enqueue", "claim", "finish", "heartbeat", "release", "rescueExpired", "stats", "prune", "list", "job",
    ]

    static func render(_ calls: [String: CallStats]) -> String {
        let names = order.filter { calls[$0] != nil } + calls.keys.filter { !order.contains($0) }.sorted()
        let header = ["call", "calls", "rows/call", "total_s", "avg_ms", "p50_ms", "p99_ms", "max_ms", "errors"]
        let rows = names.map { name -> [String] in
            let stats = calls[name] ?? CallStats()
            let count = max(stats.calls, 1)
            return [
                name, "\(stats.calls)", format(Double(stats.rows) / Double(count), 1), format(stats.totalSeconds, 3),
                format(stats.totalSeconds * 1000 / Double(count), 3), format(stats.percentileMilliseconds(0.5), 3),
                format(stats.percentileMilliseconds(0.99), 3), format(stats.percentileMilliseconds(1), 3),
                "\(stats.errors)",
            ]
        }
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

/// CPU time (user + system) of this process, or of its waited-for children.
enum CPUTime {
    static func current(children: Bool) -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t((children ? RUSAGE_CHILDREN : RUSAGE_SELF).rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// `value` with `digits` decimals.
func format(_ value: Double, _ digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}
