public import Foundation
public import PushPrepCore
import PushPrepJSON

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
