import Foundation
public import PushPrepCore

/// The answer to one enqueued spec.
public struct EnqueueResult: Sendable, Equatable, Codable {
    public var id: JobID
    /// False when an identical job was already queued or running and is returned instead.
    public var created: Bool
    public var state: JobState
}

/// A lease on a running job: the job and the fencing token of the claim that holds it.
///
/// Every claim increments the token; heartbeats, results and releases carry it and are refused
/// once another claim has taken the job.
public struct Lease: Sendable, Hashable, Codable {
    public var id: JobID
    public var token: Int64

    public init(id: JobID, token: Int64) {
        self.id = id
        self.token = token
    }
}

/// A job handed to a worker by a claim.
public struct ClaimedJob: Sendable, Equatable {
    public var lease: Lease
    public var source: String
    public var payload: String
    /// This claim's attempt, from 1.
    public var attempt: Int
    public var maxAttempts: Int
    public var timeout: Duration?
    /// The HTTP request that created the job (`X-Request-Id`), for the worker's logs.
    public var requestID: String?
    /// Why the job cannot run as stored (its row's timeout is not a finite number of seconds in
    /// ``JobSpec/timeoutSeconds``), or nil: the worker fails such a job with `invalid_settings`
    /// without running it.
    public var invalidSettings: String?

    public var id: JobID { lease.id }
}

extension ClaimedJob {
    /// A job as a queue row stores it: `timeoutSeconds` is checked (a row written by hand or by
    /// another program may hold `Infinity`, `NaN` or `1e300`), never trusted.
    package init(
        lease: Lease, source: String, payload: String, attempt: Int, maxAttempts: Int, timeoutSeconds: Double?,
        requestID: String? = nil
    ) {
        self.init(
            lease: lease, source: source, payload: payload, attempt: attempt, maxAttempts: maxAttempts, timeout: nil)
        self.requestID = requestID
        guard let timeoutSeconds else { return }
        do {
            timeout = try Duration.seconds(checking: timeoutSeconds, in: JobSpec.timeoutSeconds, "the job's timeout")
        } catch {
            invalidSettings = error.message
        }
    }
}

/// How an attempt ended, reported with its lease.
public struct JobOutcome: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Done; `result` is the job's result as JSON text (for PushPrep jobs: the manifest entry).
        case succeeded(result: String)
        /// Failed for good: the job ends `failed` without retries, with the error's stable code.
        case failed(code: PushPrepError.Code, message: String)
        /// Failed for now: queued again after `delay`, or `dead` when this was the last attempt.
        case retry(code: String, message: String, delay: Duration)
        /// Stopped because it was cancelled: the job ends `cancelled`.
        case cancelled(message: String)
    }

    public var lease: Lease
    public var kind: Kind
    /// The claim's attempt, from 1 (``ClaimedJob/attempt``): fixed for as long as the lease is
    /// current, since only a new claim (a new token) counts one.
    public var attempt: Int
    /// The job's tries (``ClaimedJob/maxAttempts``): a `retry` on attempt `maxAttempts` ends the
    /// job `dead` (``QueueRules/resolve(_:)``).
    public var maxAttempts: Int

    /// How the attempt of `job`, as claimed, ended.
    public init(job: ClaimedJob, kind: Kind) {
        self.init(lease: job.lease, attempt: job.attempt, maxAttempts: job.maxAttempts, kind: kind)
    }

    /// How the attempt `attempt` of `maxAttempts` that holds `lease` ended.
    public init(lease: Lease, attempt: Int, maxAttempts: Int, kind: Kind) {
        self.lease = lease
        self.kind = kind
        self.attempt = attempt
        self.maxAttempts = maxAttempts
    }
}

/// The answer to a heartbeat.
public struct HeartbeatResult: Sendable, Equatable {
    /// Leases still held, now extended.
    public var held: Set<Lease>
    /// Held leases whose job was asked to stop (`jobs cancel`).
    public var cancelRequested: Set<Lease>

    package init(held: Set<Lease>, cancelRequested: Set<Lease>) {
        self.held = held
        self.cancelRequested = cancelRequested
    }
}
