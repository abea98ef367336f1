import Foundation
import PushPrepCore

/// A signing time in the two forms SigV4 writes it: `yyyyMMdd'T'HHmmss'Z'` and its day.
///
/// Formatted from the whole seconds since 1970 with the proleptic Gregorian calendar in UTC,
/// without a `DateFormatter` (whose locale, calendar and time zone are settings to get wrong,
/// and which costs an allocation per request).
struct SigningTime {
    let amzDate: String
    var day: String { String(amzDate.prefix(8)) }

    init(_ date: Date) throws(PushPrepError) {
        let interval = date.timeIntervalSince1970
        // 0001-01-01T00:00:00Z ... 9999-12-31T23:59:59Z: four-digit years, as the format needs.
        guard interval.isFinite, interval >= -62_135_596_800, interval < 253_402_300_800 else {
            throw PushPrepError(.invalidSettings, "the signing time is outside the years 1 to 9999")
        }
        let seconds = Int64(interval.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        amzDate =
            digits(year, 4) + digits(month, 2) + digits(day, 2) + "T" + digits(secondOfDay / 3600, 2)
            + digits(secondOfDay / 60 % 60, 2) + digits(secondOfDay % 60, 2) + "Z"
    }
}
