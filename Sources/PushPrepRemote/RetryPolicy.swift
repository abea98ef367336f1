import Foundation
import PushPrepCore

/// When and how long to wait before trying a request again: exponential backoff with full
/// jitter for transient failures, `Retry-After` honoured when it fits in the deadline.
package struct RetryPolicy: Sendable {
    /// Tries in all, the first included.
    var maxTries: Int
    /// The wait before the second try, before jitter; doubled for each further try.
    var baseDelay: Duration = .milliseconds(200)
    /// No computed wait is longer than this.
    var maxDelay: Duration = .seconds(5)

    /// Statuses worth another try: rate limiting and a struggling upstream.
    static let transientStatuses: Set<UInt> = [429, 502, 503, 504]

    /// The wait before try number `nextTry` (2, 3, ...): full jitter over the exponential
    /// backoff, so that many clients hitting one server do not retry in lockstep.
    func backoff(beforeTry nextTry: Int, random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) })
        -> Duration
    {
        // At least a tenth of the ceiling, so a retry never hammers the server instantly.
        Backoff(base: baseDelay, cap: maxDelay, minimumFraction: 0.1).delay(afterFailure: nextTry - 1, random: random)
    }

    /// Parses `Retry-After`: delta-seconds or an HTTP-date. Nil when absent or unparseable.
    static func retryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return seconds >= 0 ? .seconds(seconds) : nil }
        for format in httpDateFormats {
            if let date = try? Date(value, strategy: format) {
                // Bounded before the conversion (a date some million years ahead is a date).
                let seconds = min(max(0, date.timeIntervalSince(now)), 9e12)
                return .milliseconds(Int64(seconds * 1000))
            }
        }
        return nil
    }

    /// The three forms of an HTTP-date a recipient must read (RFC 9110 §5.6.7), made once:
    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`). (This toolchain's Foundation has no
    /// `Date.HTTPFormatStyle`; these are its parse strategies, which are Sendable, unlike a
    /// `DateFormatter`.)
    private static let httpDateFormats: [Date.ParseStrategy] = {
        let posix = Locale(identifier: "en_US_POSIX")
        let formats: [Date.FormatString] = [
            """
            \(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \
            \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT
            """,
            """
            \(weekday: .wide), \(day: .twoDigits)-\(month: .abbreviated)-\(year: .twoDigits) \
            \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT
            """,
            """
            \(weekday: .abbreviated) \(month: .abbreviated) \(day: .defaultDigits) \
            \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) \
            \(year: .defaultDigits)
            """,
        ]
        return formats.map { Date.ParseStrategy(format: $0, locale: posix, timeZone: .gmt) }
    }()
}
