import PushPrepCore

/// When and how long to wait before trying a request again: exponential backoff with full
/// jitter for transient failures, `Retry-After` (``RetryAfter``) honoured when it fits in the deadline.
package struct RetryPolicy: Sendable {
    /// Tries in all, the first included.
    var maxTries: Int
    /// The wait before the second try, before jitter; doubled for each further try.
    var baseDelay: Duration = .milliseconds(200)
    /// No computed wait is longer than this.
    var maxDelay: Duration = .seconds(5)

    /// Statuses worth another try: rate limiting and a struggling upstream.
    static let transientStatuses: Set<UInt> = [429, 502, 503, 504]

    /// Whether a source's final HTTP status says that no later try can succeed: a client error
    /// (`4xx`: not found, gone, unauthorized, forbidden, ...), except `408 Request Timeout` and
    /// `429 Too Many Requests`, which say "not now". A queued job failing with such a status
    /// fails at once instead of being retried for minutes; `5xx`, `408`, `429` and network
    /// errors stay retryable.
    package static func isPermanent(status: Int) -> Bool {
        (400...499).contains(status) && status != 408 && status != 429
    }

    /// The wait before try number `nextTry` (2, 3, ...): full jitter over the exponential
    /// backoff, so that many clients hitting one server do not retry in lockstep.
    func backoff(beforeTry nextTry: Int, random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) })
        -> Duration
    {
        // At least a tenth of the ceiling, so a retry never hammers the server instantly.
        Backoff(base: baseDelay, cap: maxDelay, minimumFraction: 0.1).delay(afterFailure: nextTry - 1, random: random)
    }
}
