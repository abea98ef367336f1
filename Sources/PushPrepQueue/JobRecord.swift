public import Foundation
package import PushPrepCore

/// Everything the queue knows about a job.
///
/// Its JSON (`Encodable`) is the queue's bookkeeping: the columns in ``CodingKeys`` (identity,
/// state, schedule, attempts and lease), under their Swift names, absent when nil. What the job
/// holds (its payload, result and error, the client's callback, metadata and request id) is not
/// in it: a view shows those decoded (``settings``, ``entry``, ``lastError``) or not at all.
public struct JobRecord: Sendable, Equatable, Encodable {
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

    package init(
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

    /// The columns the record's JSON holds.
    enum CodingKeys: String, CodingKey {
        case id, state, source, priority, attempt, maxAttempts, timeoutSeconds, runAt, createdAt, updatedAt
        case finishedAt, leaseOwner, leaseToken, leaseExpiresAt, cancelRequested
    }
}

extension JobRecord {
    /// The last error: why the job failed, or why its previous attempt did; nil when none.
    package var lastError: JobError? {
        errorCode.map { JobError(code: $0, message: errorMessage ?? "") }
    }

    /// The settings the payload holds, or nil when this build cannot read them (a payload
    /// written by another version).
    package var settings: ProcessingSettings? {
        try? JSONDecoder().decode(ProcessingSettings.self, from: Data(payload.utf8))
    }

    /// The manifest entry the result holds, once succeeded; nil without a result or when this
    /// build cannot read it (written by another version).
    package var entry: ManifestEntry? {
        result.flatMap { try? JSONDecoder().decode(ManifestEntry.self, from: Data($0.utf8)) }
    }
}

/// A job's last error, as views show it: its code and message.
package struct JobError: Sendable, Codable, Equatable {
    /// A ``PushPrepError/Code`` as text (as the queue stores it).
    package var code: String
    /// What went wrong, in words.
    package var message: String
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

    /// Queued jobs ready to be claimed now.
    public var ready: Int { (byState[.queued] ?? 0) - scheduled }
}

/// A job ``JobQueueAdmin/pruneReturningFiles(finishedBefore:)`` deleted: the files it named.
public struct PrunedJob: Sendable, Equatable {
    /// The job's source (an upload's path for an uploaded file).
    public var source: String
    /// Its result as JSON text (the manifest entry naming its output files), when it succeeded.
    public var result: String?

    package init(source: String, result: String?) {
        self.source = source
        self.result = result
    }
}
