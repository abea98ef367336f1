public import Foundation
public import PushPrepCore

/// A client's idempotency key for ``IdempotentEnqueue/enqueue(_:idempotency:)``, as Stripe's API takes
/// them: a request sent again with the same key (a retry after a timeout) gets the jobs of the
/// first request instead of a second set.
public struct IdempotencyKey: Sendable, Equatable {
    /// Whose key it is (an API client or tenant): keys of different scopes never collide.
    public var scope: String
    /// The key the client sent.
    public var key: String
    /// A digest of the request: the same key with another fingerprint is a client bug and is
    /// refused with `idempotency_conflict` rather than answered with unrelated jobs.
    public var fingerprint: String
    /// How long the key is remembered.
    public var retention: Duration

    public init(scope: String, key: String, fingerprint: String, retention: Duration = Self.defaultRetention) {
        self.scope = scope
        self.key = key
        self.fingerprint = fingerprint
        self.retention = retention
    }

    /// The retention the HTTP API uses, and after which the worker's maintenance prunes keys:
    /// 24 hours, as Stripe keeps them.
    public static let defaultRetention: Duration = .seconds(86_400)

    /// `retention`'s range in seconds: 1 second to 30 days.
    public static let retentionSeconds: ClosedRange<Double> = 1...2_592_000

    /// Refuses a key with control characters or line separators in it (`invalid_request`,
    /// ``UntrustedText``: a conflict's message quotes it), then a retention out of range
    /// (`invalid_settings`). The queues check it before recording anything.
    public func validate() throws(PushPrepError) {
        try UntrustedText.check(key, field: "an idempotency key")
        try UntrustedText.check(scope, field: "an idempotency key's scope")
        guard retention.isWithin(seconds: Self.retentionSeconds) else {
            throw PushPrepError(
                .invalidSettings, "an idempotency key's retention must be in 1...2592000 seconds, got \(retention)")
        }
    }
}

/// Enqueueing under a client's idempotency key (``IdempotencyKey``): a ``JobQueue`` capability.
public protocol IdempotentEnqueue: Sendable {
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
    func enqueue(_ specs: [JobSpec], idempotency: IdempotencyKey) async throws(PushPrepError) -> IdempotentEnqueueResult

    /// The replay of ``enqueue(_:idempotency:)`` without enqueueing: the jobs recorded under
    /// `idempotency`'s scope and key within its retention (in their recorded order and current
    /// state, `created` false, `replayed` true), or nil when the key is not recorded (or
    /// expired). Lets a caller answer a replay before admission control (a full queue must not
    /// refuse a request whose jobs already exist).
    ///
    /// - Throws: `idempotency_conflict` when the key was recorded for another fingerprint;
    ///   `job_not_found` when a recorded job was pruned.
    func recordedEnqueue(_ idempotency: IdempotencyKey) async throws(PushPrepError) -> IdempotentEnqueueResult?

    /// Deletes the idempotency keys recorded before `before` whose own retention has passed (a
    /// key still within its retention is kept whatever `before` says, so that a replay never
    /// turns into a second set of jobs); returns how many.
    func pruneIdempotencyKeys(before: Date) async throws(PushPrepError) -> Int
}

/// The answer to ``IdempotentEnqueue/enqueue(_:idempotency:)``.
public struct IdempotentEnqueueResult: Sendable, Equatable {
    /// One per spec; on a replay, the recorded jobs in their recorded order with `created` false.
    public var results: [EnqueueResult]
    /// Whether the key had been recorded and nothing was enqueued.
    public var replayed: Bool

    public init(results: [EnqueueResult], replayed: Bool) {
        self.results = results
        self.replayed = replayed
    }
}

extension IdempotencyKey {
    /// The `idempotency_conflict` error for this key.
    static func conflict(_ key: IdempotencyKey) -> PushPrepError {
        PushPrepError(
            .idempotencyConflict,
            "the idempotency key '\(key.key)' was used within its retention for a different request")
    }

    /// The `queue_unavailable` error for a record of `key` that no PushPrep wrote (edited by
    /// hand): a NULL or non-text column, job ids that are not a JSON array of numbers.
    static func unreadable(_ key: IdempotencyKey) -> PushPrepError {
        PushPrepError(
            .queueUnavailable,
            "the queue holds an idempotency record for the key '\(key.key)' whose job ids are not all numbers "
                + "in a JSON array (edited by hand?)")
    }

    /// The job ids of a record stored as JSON text (SQLite's `job_ids`), or nil when `json` is
    /// not an array of integers.
    static func jobIDs(json: String) -> [JobID]? {
        try? JSONDecoder().decode([JobID].self, from: Data(json.utf8))
    }

    /// The error of a replay that finds recorded job `id` pruned.
    static func pruned(_ id: JobID) -> PushPrepError {
        PushPrepError(.jobNotFound, "job \(id), recorded under this idempotency key, was pruned")
    }

    /// Checks every spec (``QueueRules/validate(_:)``), then this key, before anything is
    /// looked up or recorded.
    func validate(_ specs: [JobSpec]) throws(PushPrepError) {
        try QueueRules.validate(specs)
        try validate()
    }

    /// The job ids of this key's record, from its two columns as the backend could read them:
    /// ``unreadable(_:)`` when either could not be (a record edited by hand),
    /// ``conflict(_:)`` when the record is another request's (another fingerprint).
    func recordedIDs(fingerprint: String?, ids: [JobID]?) throws(PushPrepError) -> [JobID] {
        guard let fingerprint, let ids else { throw Self.unreadable(self) }
        guard fingerprint == self.fingerprint else { throw Self.conflict(self) }
        return ids
    }

    /// The replay of a record: its jobs in their recorded order, each with its current stored
    /// state (nil: the job was pruned, ``pruned(_:)``), `created` false, `replayed` true.
    static func replay(_ jobs: [(JobID, String?)]) throws(PushPrepError) -> IdempotentEnqueueResult {
        var results: [EnqueueResult] = []
        for (id, state) in jobs {
            guard let state else { throw pruned(id) }
            results.append(EnqueueResult(id: id, created: false, state: try JobState(stored: state)))
        }
        return IdempotentEnqueueResult(results: results, replayed: true)
    }
}
