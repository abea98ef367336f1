package import Foundation

/// When a signed URL stops working, read from its query string.
///
/// A push can wait at APNs for a device that is offline, and the phone downloads the attachment
/// only when the push arrives: a URL that expires before then shows no attachment, silently.
/// `preflight` and `payload` warn about such URLs; this reads their expiry from the forms object
/// stores and CDNs sign with:
/// - AWS Signature Version 4 presigned URLs (S3 and every S3-compatible store, PushPrep's own
///   `--presign`): `X-Amz-Date` (`yyyyMMdd'T'HHmmss'Z'`) plus `X-Amz-Expires` seconds;
/// - Google Cloud Storage V4 signed URLs: `X-Goog-Date` plus `X-Goog-Expires`;
/// - Azure shared access signatures: `se` (ISO 8601), with a `sig`;
/// - CloudFront canned-policy URLs and S3's older signature: `Expires` (Unix seconds), with a
///   `Signature`;
/// - `pushprep serve --sign-attachments`: `expires` (Unix seconds), with a `signature`.
///
/// Nil when the URL carries none of these (an unsigned URL, or a signature whose expiry is not in
/// the URL, such as a CloudFront custom policy).
package enum SignedURLExpiry {
    /// URLs that expire sooner than this from now are worth a warning: a day, as long as a push
    /// commonly waits for an offline phone, and the shortest `--presign` PushPrep advises.
    package static let warningWindow: TimeInterval = 86_400

    package static func expiry(of url: String) -> Date? {
        guard let items = URLComponents(string: url)?.queryItems, !items.isEmpty else { return nil }
        func value(_ name: String) -> String? {
            items.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
        if let date = value("X-Amz-Date"), let seconds = value("X-Amz-Expires") {
            return signedAt(date, plus: seconds)
        }
        if let date = value("X-Goog-Date"), let seconds = value("X-Goog-Expires") {
            return signedAt(date, plus: seconds)
        }
        if let end = items.first(where: { $0.name == "se" })?.value, items.contains(where: { $0.name == "sig" }) {
            return iso8601(end)
        }
        if let epoch = items.first(where: { $0.name == "Expires" })?.value,
            items.contains(where: { $0.name == "Signature" }), let seconds = Int64(epoch), seconds > 0
        {
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        // `pushprep serve --sign-attachments`: `expires` (Unix seconds) with a `signature`.
        if let epoch = items.first(where: { $0.name == "expires" })?.value,
            items.contains(where: { $0.name == "signature" }), let seconds = Int64(epoch), seconds > 0
        {
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        return nil
    }

    /// `basicDate` (`20130524T000000Z`) plus `seconds`; nil when either is malformed.
    private static func signedAt(_ basicDate: String, plus seconds: String) -> Date? {
        guard let start = basicUTC(basicDate), let seconds = Int(seconds), (0...31_536_000).contains(seconds) else {
            return nil
        }
        return start.addingTimeInterval(TimeInterval(seconds))
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC, checked field by field.
    private static func basicUTC(_ text: String) -> Date? {
        let scalars = Array(text.utf8)
        guard scalars.count == 16, scalars[8] == UInt8(ascii: "T"), scalars[15] == UInt8(ascii: "Z") else {
            return nil
        }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in scalars[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day
        else { return nil }
        return date
    }

    /// An ISO 8601 date-time (`2026-11-26T10:00:00Z`, with or without a fraction) or date
    /// (`2026-11-26`, the start of that day in UTC), as Azure writes `se`.
    private static func iso8601(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        return try? Date(text, strategy: Date.ISO8601FormatStyle().year().month().day())
    }

    /// What a URL's expiry means for a push sent at `now`: nil when it is unsigned or lasts
    /// longer than ``warningWindow``.
    package enum Concern: Sendable, Equatable {
        /// The expiry has passed: the phone's download is refused.
        case expired(Date)
        /// It expires within ``warningWindow``, after `left` seconds.
        case expiresSoon(Date, left: TimeInterval)

        /// The concern in words, for a report line.
        package var message: String {
            switch self {
            case .expired(let date):
                "the signed URL expired at \(SignedURLExpiry.text(date)): the phone's download is refused; sign it again"
            case .expiresSoon(let date, let left):
                "the signed URL expires at \(SignedURLExpiry.text(date)), in \(Self.duration(left)): a push held for"
                    + " an offline phone may arrive after that; sign for at least a day"
            }
        }

        /// Whole hours, or minutes under two hours.
        private static func duration(_ seconds: TimeInterval) -> String {
            seconds < 7200 ? "\(Int(seconds / 60)) min" : "\(Int(seconds / 3600)) h"
        }
    }

    /// The concern about `url` for a push sent at `now`.
    package static func concern(about url: String, now: Date) -> Concern? {
        guard let expires = expiry(of: url) else { return nil }
        let left = expires.timeIntervalSince(now)
        if left <= 0 { return .expired(expires) }
        return left < warningWindow ? .expiresSoon(expires, left: left) : nil
    }

    /// `date` as pre-flight and `payload` write it: `2026-11-26T10:00:00Z`.
    package static func text(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
