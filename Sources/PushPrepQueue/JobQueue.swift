public import Foundation
public import PushPrepCore
import PushPrepJSON

/// A job's id: assigned by the queue, increasing.
public typealias JobID = Int64

/// Where a job is in its life.
///
/// `queued` jobs wait for `runAt` (a delayed start or a retry's backoff); `running` jobs hold a
/// lease; the other four are final and are pruned after the retention.
public enum JobState: String, Sendable, Codable, CaseIterable {
    case queued, running, succeeded, failed, dead, cancelled

    /// Whether the job will not run again (unless retried by hand).
    public var isFinished: Bool {
        switch self {
        case .queued, .running: false
        case .succeeded, .failed, .dead, .cancelled: true
        }
    }

    /// A state read back from a queue's storage. A value no PushPrep writes (a hand-edited row,
    /// a newer version's state) is `queue_unavailable`, never a crash: every backend and the
    /// webhook snapshots read states through this one place.
    package init(stored text: String) throws(PushPrepError) {
        guard let state = JobState(rawValue: text) else {
            throw PushPrepError(.queueUnavailable, "the queue holds a job in an unknown state '\(text)'")
        }
        self = state
    }
}

extension JobState {
    /// Whether ``JobQueueAdmin/retry(_:)`` takes a job in this state: `failed`, `dead` or
    /// `cancelled` (a finished job that did not succeed).
    package var isRetryable: Bool {
        switch self {
        case .failed, .dead, .cancelled: true
        case .queued, .running, .succeeded: false
        }
    }
}

/// A durable job queue shared by any number of worker processes.
///
/// At-least-once: a claim leases a job to one worker until the lease expires; a lease that
/// expires (the worker died or stalled) is rescued by any worker's next claim, and the attempt
/// counts. Every write that concerns a running job carries its ``Lease`` and is refused when the
/// token is no longer current. Methods that take many items do them in one transaction.
///
/// This is what a worker needs; the opt-in capabilities are ``JobQueueAdmin``,
/// ``IdempotentEnqueue``, ``WebhookOutbox`` and ``ConsoleQueries`` (``JobQueueBackend`` is all of
/// them, as both backends implement).
///
/// Errors are ``PushPrepError``s: `queue_unavailable` when the database cannot be used,
/// `job_not_found` and `invalid_job_state` for requests about one job.
public protocol JobQueue: Sendable {
    /// A name for logs, such as `sqlite:/var/lib/pushprep.db`, without credentials.
    var description: String { get }

    /// Adds jobs, or returns the queued or running job with the same dedup key. One transaction.
    func enqueue(_ specs: [JobSpec]) async throws(PushPrepError) -> [EnqueueResult]

    /// Leases up to `limit` ready jobs to `worker` for `lease`, highest priority first, then
    /// oldest `runAt`. Before claiming, running jobs with an expired lease are rescued: queued
    /// again, or `dead` when that was their last attempt.
    func claim(worker: String, limit: Int, lease: Duration) async throws(PushPrepError) -> [ClaimedJob]

    /// Extends the leases still held by `lease` from now.
    func heartbeat(_ leases: [Lease], lease: Duration) async throws(PushPrepError) -> HeartbeatResult

    /// Records how attempts ended; returns the ids whose lease was current (the others are
    /// ignored: another claim owns the job now).
    func finish(_ outcomes: [JobOutcome]) async throws(PushPrepError) -> Set<JobID>

    /// Gives leased jobs back without counting the attempt: queued again, ready now. Returns
    /// the ids whose lease was current.
    func release(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID>

    /// Rescues running jobs whose lease expired (see ``claim(worker:limit:lease:)``); returns
    /// how many.
    func rescueExpired() async throws(PushPrepError) -> Int

    /// Ends these leases now, because their holder is known to be gone (a worker of this host
    /// whose process no longer exists): the next ``rescueExpired()`` treats the jobs as any
    /// expired lease, attempt counted. A lease whose token moved on is left alone. Returns the
    /// ids whose lease was current.
    func expire(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID>

    /// Returns when new work may be ready (a notification) or after `timeout`, whichever is
    /// first.
    func waitForWork(timeout: Duration) async
}

/// Managing the jobs of a ``JobQueue``: listing, reading, retrying, cancelling, pruning and
/// counting them, and the queries about the files they name. Errors as ``JobQueue``'s.
public protocol JobQueueAdmin: Sendable {
    /// Up to `limit` jobs, newest first (id descending), optionally in one state, and only
    /// those older than the job `before` when given: the next page after a page whose last id is
    /// `before` (keyset pagination on the primary key, so pages stay stable while jobs are added).
    func list(state: JobState?, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord]

    /// One job, or nil.
    func job(_ id: JobID) async throws(PushPrepError) -> JobRecord?

    /// Queues a `failed`, `dead` or `cancelled` job again with a fresh set of attempts.
    /// Throws `invalid_job_state` for a job that is queued, running or succeeded.
    func retry(_ id: JobID) async throws(PushPrepError) -> JobRecord

    /// Cancels a queued job at once; asks a running one to stop (its worker sees the request at
    /// its next heartbeat or poll and stops at the next pipeline step). Throws
    /// `invalid_job_state` for a finished job.
    func cancel(_ id: JobID) async throws(PushPrepError) -> JobRecord

    /// Deletes finished jobs that finished before `before`, and the webhook deliveries created
    /// before `before` that are no longer pending; returns how many jobs.
    func prune(finishedBefore before: Date) async throws(PushPrepError) -> Int

    /// Counts by state.
    func stats() async throws(PushPrepError) -> QueueStats

    /// The distinct sources of the queued and running jobs that begin with `prefix` (an
    /// uploads directory and `/`): the uploads an unfinished job still needs, read in one
    /// statement, so a file absent from the answer was needed by no unfinished job when it ran.
    func unfinishedSources(withPrefix prefix: String) async throws(PushPrepError) -> Set<String>

    /// Deletes what ``prune(finishedBefore:)`` deletes, in one transaction, and returns each
    /// pruned job's source and result: the files `jobs prune --delete-files` may delete.
    func pruneReturningFiles(finishedBefore before: Date) async throws(PushPrepError) -> [PrunedJob]

    /// Of `texts` (output file names), those that occur in the result of a job still in the
    /// queue, in any state: files another job still names.
    func namedInResults(_ texts: [String]) async throws(PushPrepError) -> Set<String>
}

/// What a library user does with a queue: enqueue (idempotently too), and look after jobs; what
/// ``JobQueues/withQueue(_:logger:_:)`` opens.
public typealias QueueClient = JobQueue & JobQueueAdmin & IdempotentEnqueue

/// Every capability of a queue, as ``SQLiteJobQueue`` and ``PostgresJobQueue`` implement them:
/// what ``JobQueues/withBackend(_:logger:_:)`` opens. Consumers take the narrowest part they need.
package typealias JobQueueBackend = JobQueue & JobQueueAdmin & IdempotentEnqueue & WebhookOutbox & ConsoleQueries

/// What ``QueueWorker`` uses: claims and leases, pruning, idempotency keys' pruning, and its
/// registration for the console.
package typealias WorkerQueue = JobQueue & JobQueueAdmin & IdempotentEnqueue & ConsoleQueries

extension JobQueueAdmin {
    /// The newest `limit` jobs, optionally in one state (the first page of
    /// ``list(state:limit:before:)``).
    public func list(state: JobState?, limit: Int) async throws(PushPrepError) -> [JobRecord] {
        try await list(state: state, limit: limit, before: nil)
    }
}
