import Foundation
public import PushPrepCore

/// How a worker claims and runs jobs.
public struct WorkerConfiguration: Sendable {
    /// This worker's id in leases and logs: `host:pid:random`.
    public var workerID: String
    /// Jobs run at once.
    public var concurrency: Int
    /// How long a claim holds a job without a heartbeat; heartbeats come every third of it.
    public var lease: Duration
    /// How often an idle worker looks for work when no notification wakes it.
    public var pollInterval: Duration
    /// On SIGTERM/SIGINT, how long running jobs may take to finish before their leases are
    /// given back.
    public var drainTimeout: Duration
    /// The timeout of jobs enqueued without one.
    public var defaultJobTimeout: Duration
    /// The wait before a failed job's next attempt.
    public var backoff: Backoff
    /// Finished jobs older than this are pruned (every `pruneInterval`), nil to keep them.
    public var retention: Duration?
    public var pruneInterval: Duration
    /// How often expired leases are rescued (besides every claim) and queue-wide gauges
    /// refreshed.
    public var statsInterval: Duration
    /// Whether the maintenance loop counts jobs by state for the queue gauges (a query over the
    /// whole table: only worth it when metrics are exported).
    public var recordsQueueStats: Bool

    public init(
        workerID: String = WorkerConfiguration.makeWorkerID(),
        concurrency: Int = ProcessingSettings.defaultJobs,
        lease: Duration = .seconds(60),
        pollInterval: Duration = .seconds(1),
        drainTimeout: Duration = .seconds(30),
        defaultJobTimeout: Duration = .seconds(600),
        backoff: Backoff = Backoff(base: .seconds(15), cap: .seconds(3600)),
        retention: Duration? = .seconds(7 * 86_400),
        pruneInterval: Duration = .seconds(3600),
        statsInterval: Duration = .seconds(5),
        recordsQueueStats: Bool = false
    ) {
        self.workerID = workerID
        self.concurrency = concurrency
        self.lease = lease
        self.pollInterval = pollInterval
        self.drainTimeout = drainTimeout
        self.defaultJobTimeout = defaultJobTimeout
        self.backoff = backoff
        self.retention = retention
        self.pruneInterval = pruneInterval
        self.statsInterval = statsInterval
        self.recordsQueueStats = recordsQueueStats
    }

    /// Heartbeats renew leases every third of the lease.
    public var heartbeatInterval: Duration { lease / 3 }

    /// `host:pid:random` (the host as ``WorkerHost/current`` names it), with only characters
    /// that are safe in a file name.
    public static func makeWorkerID() -> String {
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        return "\(WorkerHost.current):\(ProcessInfo.processInfo.processIdentifier):\(suffix)"
    }

    /// `text` with every character but letters, digits and `-` replaced by `_`.
    package static func fileNameSafe(_ text: String) -> String {
        String(text.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
    }

    /// `lease`'s range in seconds: 1 second to 1 day (Oban's rescue and Sidekiq Pro's
    /// reliable fetch wait minutes for a lost job; heartbeats come every third of the lease).
    public static let leaseSeconds: ClosedRange<Double> = 1...86_400
    /// `pollInterval`'s range in seconds: 10 ms to 1 hour.
    public static let pollIntervalSeconds: ClosedRange<Double> = 0.01...3600
    /// `drainTimeout`'s range in seconds: none to 1 day.
    public static let drainTimeoutSeconds: ClosedRange<Double> = 0...86_400
    /// `backoff.base`'s range in seconds: 0.1 s to 1 day.
    public static let retryBaseSeconds: ClosedRange<Double> = 0.1...86_400
    /// `backoff.cap`'s range in seconds: up to 30 days (Sidekiq's 25 retries span about 21 days).
    public static let retryMaxSeconds: ClosedRange<Double> = 0.1...2_592_000
    /// `retention`'s range in days: up to 10 years.
    public static let retentionDays: ClosedRange<Double> = 0...3650

    /// Refuses values that cannot work.
    public func validate() throws(PushPrepError) {
        func require(_ condition: Bool, _ message: String) throws(PushPrepError) {
            if !condition { throw PushPrepError(.invalidSettings, message) }
        }
        try require((1...256).contains(concurrency), "--concurrency must be in 1...256, got \(concurrency)")
        try require(lease.isWithin(seconds: Self.leaseSeconds), "--lease must be in 1...86400 seconds, got \(lease)")
        try require(
            pollInterval.isWithin(seconds: Self.pollIntervalSeconds),
            "--poll-interval must be in 0.01...3600 seconds, got \(pollInterval)")
        try require(
            drainTimeout.isWithin(seconds: Self.drainTimeoutSeconds),
            "--drain-timeout must be in 0...86400 seconds, got \(drainTimeout)")
        try require(
            defaultJobTimeout.isWithin(seconds: JobSpec.timeoutSeconds),
            "--job-timeout must be in 1...86400 seconds, got \(defaultJobTimeout)")
        try require(
            backoff.base.isWithin(seconds: Self.retryBaseSeconds),
            "--retry-base must be in 0.1...86400 seconds, got \(backoff.base)")
        try require(
            backoff.cap.isWithin(seconds: Self.retryMaxSeconds) && backoff.cap >= backoff.base,
            "--retry-max must be in --retry-base...2592000 seconds, got \(backoff.cap)")
        if let retention {
            try require(
                retention.isWithin(
                    seconds: (Self.retentionDays.lowerBound * 86_400)...(Self.retentionDays.upperBound * 86_400)),
                "--retention must be in 0...3650 days, got \(retention)")
        }
    }
}
