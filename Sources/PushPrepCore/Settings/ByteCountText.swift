import Foundation

/// Sizes written by people on a command line: a number with an optional unit, decimal (`kB`,
/// `MB`, `GB`, `TB`, or Kubernetes' `k`, `M`, `G`, `T`) or binary (`KiB`, `MiB`, `GiB`, `TiB`, or
/// Kubernetes' `Ki`, `Mi`, `Gi`, `Ti`), with an optional `B`: `500MB`, `2GiB`, `1.5G`, `512Mi`,
/// `300000000`. Case does not matter. One reader for every option that takes a size
/// (`--memory-limit`), so they all accept the same spellings, including what a container's
/// resources say.
package enum ByteCountText {
    /// The units, lowercased, without their optional trailing `b`.
    private static let units: [String: Double] = [
        "": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
        "ki": 1024, "mi": 1_048_576, "gi": 1_073_741_824, "ti": 1_099_511_627_776,
    ]

    /// `text` in whole bytes (rounded down), within `range`; `invalid_settings` naming `option`
    /// otherwise.
    package static func bytes(parsing text: String, option: String, in range: ClosedRange<Int>) throws(PushPrepError)
        -> Int
    {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let number = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        var unit = trimmed.dropFirst(number.count).trimmingCharacters(in: .whitespaces)
        if unit.hasSuffix("b") { unit.removeLast() }
        // Fifteen digits at most: a Double holds them exactly, and even in TiB the product is
        // checked against Int's range below.
        guard !number.isEmpty, number.count <= 15, number.filter({ $0 == "." }).count <= 1,
            number.first != ".", number.last != ".", let value = Double(number), let factor = units[unit]
        else {
            throw PushPrepError(
                .invalidSettings,
                "\(option) takes a size like 500MB, 2GiB, 512Mi or a number of bytes, not \(String(reflecting: text))")
        }
        let product = (value * factor).rounded(.down)
        guard product < Double(Int.max), range.contains(Int(product)) else {
            let bounds =
                range.upperBound == .max
                ? "at least \(describe(range.lowerBound))"
                : "\(describe(range.lowerBound)) to \(describe(range.upperBound))"
            throw PushPrepError(.invalidSettings, "\(option) must be \(bounds), not \(text)")
        }
        return Int(product)
    }

    /// `bytes` for people, in the unit it is a whole number of ("16 MiB", "500 MB"), else in
    /// decimal megabytes or gigabytes with a decimal ("12.6 GB").
    package static func describe(_ bytes: Int) -> String {
        let units: [(String, Int)] = [
            ("TiB", 1 << 40), ("TB", 1_000_000_000_000), ("GiB", 1 << 30), ("GB", 1_000_000_000), ("MiB", 1 << 20),
            ("MB", 1_000_000),
        ]
        if let (name, size) = units.first(where: { bytes >= $0.1 && bytes % $0.1 == 0 }) {
            return "\(bytes / size) \(name)"
        }
        if bytes >= 1_000_000_000 { return String(format: "%.1f GB", Double(bytes) / 1e9) }
        if bytes >= 1_000_000 { return String(format: "%.1f MB", Double(bytes) / 1e6) }
        return "\(bytes) bytes"
    }
}
