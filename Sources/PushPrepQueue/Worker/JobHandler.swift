public import Logging
public import PushPrepCore

/// Runs one claimed job. The worker owns the lease: it heartbeats, enforces the job's timeout
/// through `context.control`, and reports the returned outcome with the job's lease.
public protocol JobHandler: Sendable {
    /// Runs the job and says how it ended. Must return soon after `context.control` is stopped.
    func handle(_ job: ClaimedJob, context: JobContext) async -> JobOutcome.Kind
}

/// What a handler gets besides its job.
public struct JobContext: Sendable {
    /// Stopped when the job is cancelled, its timeout passes, its lease is lost or the worker
    /// shuts down.
    public let control: ProcessingControl
    /// The worker's logger with the job's metadata.
    public let logger: Logger
    /// The wait before the next attempt if this one fails for now.
    public let retryDelay: Duration
    /// The worker's id (safe in a file name).
    public let workerID: String
    /// Checks that the lease is still held, extending it, right before publishing outputs.
    /// False means another worker owns the job now: publish nothing.
    public let confirmLease: @Sendable () async -> Bool

    public init(
        control: ProcessingControl, logger: Logger, retryDelay: Duration, workerID: String,
        confirmLease: @escaping @Sendable () async -> Bool
    ) {
        self.control = control
        self.logger = logger
        self.retryDelay = retryDelay
        self.workerID = workerID
        self.confirmLease = confirmLease
    }
}
