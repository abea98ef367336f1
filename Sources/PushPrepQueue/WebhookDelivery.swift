public import Foundation

/// Where a webhook delivery is in its life.
public enum DeliveryState: String, Sendable, Codable, CaseIterable {
    /// Waiting for its `nextAttemptAt`, or claimed by a dispatcher until then.
    case pending
    /// The receiver answered with success.
    case delivered
    /// The dispatcher gave up.
    case failed
}

/// A webhook to POST because a job with a callback URL ended: one row of the queue's outbox.
///
/// The queue writes it in the transaction that ends the job, so a crash or a restart never loses
/// one; a dispatcher claims it with ``JobQueue/claimDeliveries(limit:lease:)`` and reports with
/// ``JobQueue/finishDelivery(_:attempt:outcome:)``. Delivery is at least once: a dispatcher
/// that dies after sending but before reporting has the delivery sent again after its lease.
public struct WebhookDelivery: Sendable, Equatable {
    public var id: Int64
    public var jobID: JobID
    /// The job's `callbackURL` when it ended.
    public var url: String
    /// `job.succeeded`, `job.failed`, `job.dead` or `job.cancelled` (see ``event(for:)``).
    public var event: String
    /// The job as it ended: a later manual retry of the job does not change what this delivery
    /// says.
    public var job: JobRecord
    public var state: DeliveryState
    /// Claims so far, including the current one: the fencing token of
    /// ``JobQueue/finishDelivery(_:attempt:outcome:)``.
    public var attempts: Int
    /// When a pending delivery is due (or its current claim's lease ends); nil once it is
    /// delivered or failed.
    public var nextAttemptAt: Date?
    /// The HTTP status of the last attempt, when there was an answer.
    public var lastStatus: Int?
    public var lastError: String?
    public var createdAt: Date
    public var deliveredAt: Date?

    public init(
        id: Int64, jobID: JobID, url: String, event: String, job: JobRecord, state: DeliveryState, attempts: Int,
        nextAttemptAt: Date?, lastStatus: Int?, lastError: String?, createdAt: Date, deliveredAt: Date?
    ) {
        self.id = id
        self.jobID = jobID
        self.url = url
        self.event = event
        self.job = job
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAt = createdAt
        self.deliveredAt = deliveredAt
    }

    /// The event of a job that ended in `state` (`job.` and the state), or nil for a state that
    /// is not final.
    public static func event(for state: JobState) -> String? {
        state.isFinished ? "job.\(state.rawValue)" : nil
    }
}

/// How one attempt to send a webhook went, reported with
/// ``JobQueue/finishDelivery(_:attempt:outcome:)``.
public enum DeliveryOutcome: Sendable, Equatable {
    /// The receiver accepted it: the delivery ends `delivered`.
    case delivered(status: Int)
    /// Failed for now: pending again, due after `after`.
    case retry(status: Int?, error: String, after: Duration)
    /// Failed for good: the delivery ends `failed`.
    case failed(status: Int?, error: String)
}
