public import Foundation
public import PushPrep
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

/// What to enqueue. The queue stores `source` and `payload` as they are and never reads them.
public struct JobSpec: Sendable, Equatable {
    /// The input, a path or a URL, as given.
    public var source: String
    /// The job's settings as JSON text (for PushPrep jobs: ``ProcessingSettings``).
    public var payload: String
    /// While a job with the same key is queued or running, enqueueing returns that job.
    public var dedupKey: String?
    /// Higher runs first.
    public var priority: Int
    /// Not before this delay after enqueueing.
    public var delay: Duration
    /// Tries before the job ends `dead`.
    public var maxAttempts: Int
    /// A deadline for one attempt, or nil for the worker's default.
    public var timeout: Duration?
    /// Where to POST a webhook when the job ends, or nil for none: each final state writes a
    /// ``WebhookDelivery`` in the transaction that ends the job.
    public var callbackURL: String?
    /// The client's own JSON object as text, stored and returned as given; the queue never reads
    /// it (nor does it count towards dedup).
    public var metadata: String?
    /// The id of the HTTP request that created the job, for logs.
    public var requestID: String?

    public init(
        source: String, payload: String, dedupKey: String? = nil, priority: Int = 0, delay: Duration = .zero,
        maxAttempts: Int = 5, timeout: Duration? = nil, callbackURL: String? = nil, metadata: String? = nil,
        requestID: String? = nil
    ) {
        self.source = source
        self.payload = payload
        self.dedupKey = dedupKey
        self.priority = priority
        self.delay = delay
        self.maxAttempts = maxAttempts
        self.timeout = timeout
        self.callbackURL = callbackURL
        self.metadata = metadata
        self.requestID = requestID
    }

    /// `delay`'s range in seconds: up to 30 days (a Sidekiq `perform_in` or an Oban
    /// `schedule_in` further out is a calendar entry, not a queue job).
    public static let delaySeconds: ClosedRange<Double> = 0...2_592_000
    /// `timeout`'s range in seconds: 1 second to 1 day, like the processing `--timeout`.
    public static let timeoutSeconds: ClosedRange<Double> = 1...86_400
    /// `priority`'s range.
    public static let priorities: ClosedRange<Int> = -1000...1000
    /// `maxAttempts`'s range: Sidekiq retries 25 times over about 20 days by default.
    public static let attempts: ClosedRange<Int> = 1...100

    /// Refuses text that is printed by `jobs`, the console and the logs when it holds control
    /// characters or line separators (`invalid_request`, ``UntrustedText``): the source, the
    /// dedup key, the callback URL, the request id and the keys of the metadata object. Then
    /// refuses numbers out of range (`invalid_settings`). The queues check every spec before
    /// writing any, so that no way of enqueueing (the CLI, the HTTP API, a library caller)
    /// skips it; a NUL byte in particular, which SQLite would store and PostgreSQL refuse, is
    /// refused the same way by both.
    public func validate() throws(PushPrepError) {
        try UntrustedText.check(source, field: "a job's source")
        if let dedupKey { try UntrustedText.check(dedupKey, field: "a job's dedup key") }
        if let callbackURL { try UntrustedText.check(callbackURL, field: "a job's callback_url") }
        if let requestID { try UntrustedText.check(requestID, field: "a job's request id") }
        if let metadata { try Self.checkMetadataKeys(metadata) }
        guard delay.isWithin(seconds: Self.delaySeconds) else {
            throw PushPrepError(
                .invalidSettings, "a job's delay must be in 0...2592000 seconds (30 days), got \(delay)")
        }
        if let timeout, !timeout.isWithin(seconds: Self.timeoutSeconds) {
            throw PushPrepError(.invalidSettings, "a job's timeout must be in 1...86400 seconds, got \(timeout)")
        }
        guard Self.priorities.contains(priority) else {
            throw PushPrepError(.invalidSettings, "a job's priority must be in -1000...1000, got \(priority)")
        }
        guard Self.attempts.contains(maxAttempts) else {
            throw PushPrepError(.invalidSettings, "a job's attempts must be in 1...100, got \(maxAttempts)")
        }
    }
}

extension JobSpec {
    /// Refuses a metadata object with a control character in one of its keys, at any depth.
    /// The queue does not otherwise read metadata: text that is not JSON is left as it is.
    static func checkMetadataKeys(_ text: String) throws(PushPrepError) {
        // Only text that holds a backslash or a control character can spell one in a key.
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 >= 0x80 }),
            let document = try? JSONValue.parse(Array(text.utf8))
        else { return }
        var pending = [document.value]
        while let value = pending.popLast() {
            switch value {
            case .object(let object):
                for (key, member) in object {
                    try UntrustedText.check(key, field: "a metadata key")
                    pending.append(member)
                }
            case .array(let elements):
                pending += elements
            default:
                continue
            }
        }
    }
}

/// The answer to one enqueued spec.
public struct EnqueueResult: Sendable, Equatable, Codable {
    public var id: JobID
    /// False when an identical job was already queued or running and is returned instead.
    public var created: Bool
    public var state: JobState

    public init(id: JobID, created: Bool, state: JobState) {
        self.id = id
        self.created = created
        self.state = state
    }
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

    public init(lease: Lease, source: String, payload: String, attempt: Int, maxAttempts: Int, timeout: Duration?) {
        self.lease = lease
        self.source = source
        self.payload = payload
        self.attempt = attempt
        self.maxAttempts = maxAttempts
        self.timeout = timeout
    }

    /// A job as a queue row stores it: `timeoutSeconds` is checked (a row written by hand or by
    /// another program may hold `Infinity`, `NaN` or `1e300`), never trusted.
    public init(
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

    public init(lease: Lease, kind: Kind) {
        self.lease = lease
        self.kind = kind
    }
}

/// The answer to a heartbeat.
public struct HeartbeatResult: Sendable, Equatable {
    /// Leases still held, now extended.
    public var held: Set<Lease>
    /// Held leases whose job was asked to stop (`jobs cancel`).
    public var cancelRequested: Set<Lease>

    public init(held: Set<Lease>, cancelRequested: Set<Lease>) {
        self.held = held
        self.cancelRequested = cancelRequested
    }
}

/// Everything the queue knows about a job.
public struct JobRecord: Sendable, Equatable, Codable {
    public var id: JobID
    public var state: JobState
    public var source: String
    public var payload: String
    public var dedupKey: String?
    public var priority: Int
    /// Claims so far, including the running one.
    public var attempt: Int
    public var maxAttempts: Int
    /// Seconds, or nil for the worker's default.
    public var timeoutSeconds: Double?
    /// Not claimed before this time.
    public var runAt: Date
    public var createdAt: Date
    public var updatedAt: Date
    public var finishedAt: Date?
    /// The worker holding the lease, while running.
    public var leaseOwner: String?
    /// The token of the latest claim (0 before the first).
    public var leaseToken: Int64
    public var leaseExpiresAt: Date?
    public var cancelRequested: Bool
    public var errorCode: String?
    public var errorMessage: String?
    /// The result as JSON text, once succeeded.
    public var result: String?
    /// See ``JobSpec/callbackURL``.
    public var callbackURL: String?
    /// See ``JobSpec/metadata``.
    public var metadata: String?
    /// See ``JobSpec/requestID``.
    public var requestID: String?
    /// What a succeeded job produced (from its result), else `unknown`.
    public var kind: JobKind

    public init(
        id: JobID, state: JobState, source: String, payload: String, dedupKey: String?, priority: Int, attempt: Int,
        maxAttempts: Int, timeoutSeconds: Double?, runAt: Date, createdAt: Date, updatedAt: Date, finishedAt: Date?,
        leaseOwner: String?, leaseToken: Int64, leaseExpiresAt: Date?, cancelRequested: Bool, errorCode: String?,
        errorMessage: String?, result: String?, callbackURL: String? = nil, metadata: String? = nil,
        requestID: String? = nil, kind: JobKind = .unknown
    ) {
        self.id = id
        self.state = state
        self.source = source
        self.payload = payload
        self.dedupKey = dedupKey
        self.priority = priority
        self.attempt = attempt
        self.maxAttempts = maxAttempts
        self.timeoutSeconds = timeoutSeconds
        self.runAt = runAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.finishedAt = finishedAt
        self.leaseOwner = leaseOwner
        self.leaseToken = leaseToken
        self.leaseExpiresAt = leaseExpiresAt
        self.cancelRequested = cancelRequested
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.result = result
        self.callbackURL = callbackURL
        self.metadata = metadata
        self.requestID = requestID
        self.kind = kind
    }
}

/// Counts for `jobs stats` and the queue-depth metric.
public struct QueueStats: Sendable, Equatable, Codable {
    /// Jobs in each state (every state present, zero when none).
    public var byState: [JobState: Int]
    /// Queued jobs whose `runAt` is still in the future (delayed or waiting for a retry).
    public var scheduled: Int
    /// Running jobs whose lease has expired and that a worker will rescue.
    public var expiredLeases: Int
    /// Age in seconds of the oldest job that is ready to run, or nil when none is.
    public var oldestReadyAge: Double?
    /// Webhook deliveries waiting to be sent or retried, or nil when not counted.
    public var pendingDeliveries: Int?
    /// Webhook deliveries that gave up, or nil when not counted.
    public var failedDeliveries: Int?

    public init(
        byState: [JobState: Int], scheduled: Int, expiredLeases: Int, oldestReadyAge: Double?,
        pendingDeliveries: Int? = nil, failedDeliveries: Int? = nil
    ) {
        self.byState = byState
        self.scheduled = scheduled
        self.expiredLeases = expiredLeases
        self.oldestReadyAge = oldestReadyAge
        self.pendingDeliveries = pendingDeliveries
        self.failedDeliveries = failedDeliveries
    }

    /// Queued jobs ready to be claimed now.
    public var ready: Int { (byState[.queued] ?? 0) - scheduled }
}

/// A durable job queue shared by any number of worker processes.
///
/// At-least-once: a claim leases a job to one worker until the lease expires; a lease that
/// expires (the worker died or stalled) is rescued by any worker's next claim, and the attempt
/// counts. Every write that concerns a running job carries its ``Lease`` and is refused when the
/// token is no longer current. Methods that take many items do them in one transaction.
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

    /// Returns when new work may be ready (a notification) or after `timeout`, whichever is
    /// first.
    func waitForWork(timeout: Duration) async

    // MARK: - Idempotency keys

    /// Enqueues `specs` once per idempotency key, in one transaction.
    ///
    /// When `idempotency`'s scope and key were recorded less than its retention ago, nothing is
    /// enqueued: with the same fingerprint the recorded jobs are returned in their recorded
    /// order, in their current state, with `created` false and `replayed` true; with another
    /// fingerprint the call throws `idempotency_conflict`. Otherwise (never recorded, or
    /// expired) the specs are enqueued as ``enqueue(_:)`` does and the key is recorded with
    /// their job ids. Concurrent calls with one key yield one set of jobs.
    ///
    /// - Throws: `idempotency_conflict`; `job_not_found` when a replay finds a recorded job
    ///   pruned; what ``enqueue(_:)`` throws.
    func enqueue(_ specs: [JobSpec], idempotency: IdempotencyKey) async throws(PushPrepError) -> IdempotentEnqueue

    /// The replay of ``enqueue(_:idempotency:)`` without enqueueing: the jobs recorded under
    /// `idempotency`'s scope and key within its retention (in their recorded order and current
    /// state, `created` false, `replayed` true), or nil when the key is not recorded (or
    /// expired). Lets a caller answer a replay before admission control (a full queue must not
    /// refuse a request whose jobs already exist).
    ///
    /// - Throws: `idempotency_conflict` when the key was recorded for another fingerprint;
    ///   `job_not_found` when a recorded job was pruned.
    func recordedEnqueue(_ idempotency: IdempotencyKey) async throws(PushPrepError) -> IdempotentEnqueue?

    /// Deletes the idempotency keys recorded before `before` whose own retention has passed (a
    /// key still within its retention is kept whatever `before` says, so that a replay never
    /// turns into a second set of jobs); returns how many.
    func pruneIdempotencyKeys(before: Date) async throws(PushPrepError) -> Int

    // MARK: - Webhook deliveries

    /// Leases up to `limit` due pending deliveries (`nextAttemptAt` passed), oldest first, at most
    /// as many per receiver host as `slots` leaves room for (a host without room is skipped, so
    /// newer deliveries to other hosts are not held up behind it): each one's `attempts` is
    /// incremented and its `nextAttemptAt` pushed to now + `lease`, so a dispatcher that dies
    /// while sending has the delivery claimed again after the lease. Concurrent claimers (other
    /// processes or hosts) never get the same delivery.
    func claimDeliveries(limit: Int, lease: Duration, slots: ReceiverSlots) async throws(PushPrepError)
        -> [WebhookDelivery]

    /// Records how the send of claim `attempt` of delivery `id` went, while it is pending. A
    /// `retry` or `failed` applies only while `attempt` is the delivery's current
    /// ``WebhookDelivery/attempts`` (a claim that outlived its lease was superseded); `delivered`
    /// applies for the current claim or an earlier one, since a receiver that answered 2xx has
    /// the event whichever claim sent it, and sending it again would be a duplicate. Returns
    /// whether it applied.
    func finishDelivery(_ id: Int64, attempt: Int, outcome: DeliveryOutcome) async throws(PushPrepError) -> Bool

    /// The deliveries of one job, oldest first (a job retried by hand that ends again has one
    /// per ending).
    func deliveries(job: JobID) async throws(PushPrepError) -> [WebhookDelivery]

    /// Up to `limit` deliveries, newest first, optionally in one state.
    func listDeliveries(state: DeliveryState?, limit: Int) async throws(PushPrepError) -> [WebhookDelivery]

    // MARK: - Console (schema version 3)

    /// Up to `limit` (clamped to ``JobFilter/pageLimit``) jobs matching `filter`, newest first,
    /// older than the job `before` when given (the same keyset pages as
    /// ``list(state:limit:before:)``).
    ///
    /// - Throws: `invalid_request` for a filter text past its length.
    func list(filter: JobFilter, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord]

    /// How many jobs match `filter` (for the pager; exact, so a source filter reads the table).
    func count(filter: JobFilter) async throws(PushPrepError) -> Int

    /// Retries the `failed`, `dead` and `cancelled` jobs matching `filter` (other states in the
    /// filter are ignored) as ``retry(_:)`` does, in one transaction; returns how many.
    ///
    /// At most the newest ``JobFilter/retryLimit`` matching jobs are considered per call: call
    /// again while it returns more than zero (a call that leaves some of its jobs alone returns
    /// fewer than the limit with more to do). A job whose dedup key belongs to a queued or running
    /// job, or to a newer job retried in the same call, is left as it is (``retry(_:)`` would
    /// refuse it).
    func retry(matching filter: JobFilter) async throws(PushPrepError) -> Int

    /// The jobs that finished from `since` until now, counted per `bucket` (see
    /// ``ActivityBucket``): every bucket present, oldest first, at most
    /// ``ActivityBucket/maximumCount`` (the newest).
    func activity(since: Date, bucket: Duration) async throws(PushPrepError) -> [ActivityBucket]

    /// Registers a worker, or refreshes its last-seen time when it is registered (its start stays).
    /// Registrations not seen for ``WorkerRecord/forgottenAfter`` are deleted on the way.
    func recordWorker(_ worker: WorkerRegistration) async throws(PushPrepError)

    /// Removes a worker's registration (a clean stop); nothing when there is none.
    func removeWorker(id: String) async throws(PushPrepError)

    /// The workers seen since `date` (most recently seen first, at most
    /// ``WorkerRecord/listLimit``), each with the running jobs whose lease it holds. A worker
    /// killed without a clean stop stays until it is no longer seen since `date`.
    func workers(seenSince date: Date) async throws(PushPrepError) -> [WorkerRecord]

    /// The attempts of one job, oldest first (the newest ``JobAttempt/listLimit``); empty for a
    /// job without any (or pruned: attempts are deleted with their job).
    func attempts(job: JobID) async throws(PushPrepError) -> [JobAttempt]
}

extension JobQueue {
    /// Leases up to `limit` due pending deliveries, oldest first, whatever their receiver host.
    public func claimDeliveries(limit: Int, lease: Duration) async throws(PushPrepError) -> [WebhookDelivery] {
        try await claimDeliveries(limit: limit, lease: lease, slots: .unbounded)
    }

    /// The newest `limit` jobs, optionally in one state (the first page of
    /// ``list(state:limit:before:)``).
    public func list(state: JobState?, limit: Int) async throws(PushPrepError) -> [JobRecord] {
        try await list(state: state, limit: limit, before: nil)
    }
}

/// A job ``JobQueue/pruneReturningFiles(finishedBefore:)`` deleted: the files it named.
public struct PrunedJob: Sendable, Equatable {
    /// The job's source (an upload's path for an uploaded file).
    public var source: String
    /// Its result as JSON text (the manifest entry naming its output files), when it succeeded.
    public var result: String?

    public init(source: String, result: String?) {
        self.source = source
        self.result = result
    }
}
