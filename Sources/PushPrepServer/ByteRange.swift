/// What a `Range` header asks of a file of a known size (RFC 9110 §14.1.2, §14.2), reduced to
/// what this server answers: the whole file, one range, or nothing it can satisfy.
enum ByteRange: Equatable {
    /// No range, a unit other than `bytes` (which must be ignored), or several ranges, which
    /// RFC 9110 lets a server answer with the whole representation: `200`.
    case whole
    /// One satisfiable range, clamped to the file: `206` with `Content-Range`.
    case part(ClosedRange<Int64>)
    /// A `bytes` range that is malformed or starts past the end: `416` with
    /// `Content-Range: bytes */size`.
    case unsatisfiable

    /// The range `header` asks of a file of `size` bytes.
    static func parse(_ header: String?, size: Int64) -> ByteRange {
        guard let header else { return .whole }
        let trimmed = header.trimmingASCIISpaces
        guard let equals = trimmed.firstIndex(of: "="),
            trimmed[..<equals].trimmingASCIISpaces.lowercased() == "bytes"
        else { return .whole }
        let set = trimmed[trimmed.index(after: equals)...]
        if set.contains(",") { return .whole }
        let spec = set.trimmingASCIISpaces
        guard let dash = spec.firstIndex(of: "-") else { return .unsatisfiable }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            // A suffix: the last n bytes (all of them when n is larger).
            guard let count = Self.number(last), count > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - count)...(size - 1))
        }
        guard let start = Self.number(first) else { return .unsatisfiable }
        var end = size - 1
        if !last.isEmpty {
            guard let requested = Self.number(last), requested >= start else { return .unsatisfiable }
            end = min(requested, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .part(start...end)
    }

    /// Decimal digits as a number, saturating at `Int64.max` (a position past any file); nil
    /// for anything but digits.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        guard text.utf8.count <= 18 else { return Int64.max }
        return Int64(text)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingASCIISpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let text = self[...]
        guard let start = text.firstIndex(where: { !isSpace($0) }),
            let end = text.lastIndex(where: { !isSpace($0) })
        else { return Substring() }
        return Substring(text[start...end])
    }
}
