package import Foundation

/// HTTP `Retry-After` (RFC 9110 §10.2.3): how long a server asks a client to wait before it
/// tries again, as delta-seconds or an HTTP-date. One parser for every HTTP client of the
/// package: the remote fetcher's and the S3 client's (a 503 `SlowDown` or a 429 may carry it).
package enum RetryAfter {
    /// The wait `value` asks for, measured from `now` for a date (a date in the past is no
    /// wait). Nil when absent, negative, or neither form.
    package static func parse(_ value: String?, now: Date = Date()) -> Duration? {
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
