import Foundation

/// Durations written by people on a command line: a whole number with an optional unit, `s`,
/// `m`, `h` or `d` (`3600`, `3600s`, `90m`, `24h`, `7d`). One reader for every option that takes
/// one (`--presign`, `--attachment-url-ttl`), so they all accept the same spellings.
package enum DurationText {
    /// `text` in whole seconds, within `range`; `invalid_settings` naming `option` otherwise.
    package static func seconds(
        parsing text: String, option: String, in range: ClosedRange<Int>, limit: String? = nil
    ) throws(PushPrepError) -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        var digits = Substring(trimmed)
        var unit = 1
        if let last = trimmed.last, let factor = units[last] {
            digits = trimmed.dropLast()
            unit = factor
        }
        // Nine digits at most: even in days the product stays far inside Int.
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), digits.count <= 9,
            let count = Int(digits)
        else {
            throw PushPrepError(
                .invalidSettings,
                "\(option) takes a duration like 7d, 24h, 90m or 3600s, not \(String(reflecting: text))")
        }
        let seconds = count * unit
        guard range.contains(seconds) else {
            throw PushPrepError(
                .invalidSettings,
                "\(option) must be \(range.lowerBound) s to \(range.upperBound) s\(limit.map { " (\($0))" } ?? ""), not \(seconds) s"
            )
        }
        return seconds
    }
}
