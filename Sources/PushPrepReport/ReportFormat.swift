import Foundation

/// Numbers as the pages write them for people.
package enum ReportFormat {
    /// Decimal units, as Apple's limits are given (10 MB is 10,000,000 bytes): `812 bytes`,
    /// `45.3 kB`, `2.41 MB`, three significant digits.
    package static func bytes(_ count: Int) -> String {
        if count < 1000 { return "\(count) byte\(count == 1 ? "" : "s")" }
        let units: [(String, Double)] = [("kB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12)]
        let value = Double(count)
        var index = units.lastIndex { value >= $0.1 } ?? 0
        // The unit is picked after rounding: 999,999 bytes is `1 MB`, not `1000 kB`.
        if index + 1 < units.count, significant(value / units[index].1) == "1000" { index += 1 }
        return "\(significant(value / units[index].1)) \(units[index].0)"
    }

    /// Three significant digits, no trailing zeros: 2.41, 45.3, 812.
    static func significant(_ value: Double) -> String {
        let decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2
        var text = String(format: "%.\(decimals)f", value)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text
    }

    /// A share as a percentage with at most one decimal below 10 %: `0.4 %`, `37 %`, `< 0.1 %`.
    package static func percent(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "–" }
        let value = Double(part) / Double(whole) * 100
        // "0 %" would read as nothing at all.
        if part > 0 && value < 0.1 { return "< 0.1 %" }
        let text = value < 10 ? String(format: "%.1f", value) : String(format: "%.0f", value)
        return "\(text.hasSuffix(".0") ? String(text.dropLast(2)) : text) %"
    }

    /// Seconds of wall time: `0.42 s`, `3.1 s`, `2 min 05 s`.
    package static func seconds(_ value: Double) -> String {
        guard value.isFinite, value >= 0 else { return "–" }
        // Below a minute unless it rounds to one: 59.99 s is `1 min 00 s`, not `60 s`.
        if value < 60, case let text = significant(value), text != "60" { return "\(text) s" }
        let total = Int(value.rounded())
        let secs = total % 60
        return "\(total / 60) min \(secs < 10 ? "0" : "")\(secs) s"
    }

    /// The last path component of a source (a URL's too, without its query): what a preview
    /// titles an input by, in the report and in the console.
    package static func name(of source: String) -> String {
        let path = source.split(separator: "?", maxSplits: 1).first.map(String.init) ?? source
        return path.split(separator: "/").last.map(String.init) ?? source
    }

    /// Width × height, or nil when either is unknown.
    package static func dimensions(_ width: Int?, _ height: Int?) -> String? {
        guard let width, let height else { return nil }
        return "\(width)×\(height)"
    }
}
