extension JSONValue {
    /// The shortest round-trip text of a finite double, without `.0` and without leading zeros
    /// in the exponent.
    static func literal(for double: Double) -> String {
        var text = double.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        guard let exponentMark = text.firstIndex(of: "e") else { return text }
        var exponent = text[text.index(after: exponentMark)...]
        let sign = exponent.first == "-" || exponent.first == "+" ? String(exponent.removeFirst()) : ""
        let digits = exponent.drop { $0 == "0" }
        return String(text[...exponentMark]) + sign + (digits.isEmpty ? "0" : String(digits))
    }
}

/// Reads the value of a number literal exactly.
enum JSONNumberLiteral {
    /// Exponents are clamped to this magnitude: far beyond any `Int`, and safe from overflow.
    private static let exponentLimit = 1 << 40

    /// The integer `literal` denotes, when it denotes one that fits an `Int`; nil for a
    /// fraction, an overflow or text that is not a JSON number.
    static func exactInteger(_ literal: String) -> Int? {
        if let int = Int(literal), literal.utf8.first != UInt8(ascii: "+") { return int }
        guard let (negative, digits, exponent) = decompose(Array(literal.utf8)) else { return nil }
        // The value is digits × 10^scale; drop the zeros that only a negative scale divides off.
        var significant = digits.drop { $0 == UInt8(ascii: "0") }
        guard !significant.isEmpty else { return 0 }
        var scale = exponent
        while scale < 0, significant.last == UInt8(ascii: "0") {
            significant.removeLast()
            scale += 1
        }
        guard scale >= 0, significant.count + scale <= 19 else { return nil }
        // Accumulate negatively so that Int.min fits.
        var value = 0
        for digit in significant.map({ Int($0 - UInt8(ascii: "0")) }) + repeatElement(0, count: scale) {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, underflow) = shifted.subtractingReportingOverflow(digit)
            guard !overflow, !underflow else { return nil }
            value = next
        }
        if negative { return value }
        return value == Int.min ? nil : -value
    }

    /// Splits `-? int (. frac)? (e [+-]? exp)?` into its sign, its significand's digits and the
    /// power of ten they are multiplied by; nil when the text is not a JSON number.
    private static func decompose(_ bytes: [UInt8]) -> (negative: Bool, digits: ArraySlice<UInt8>, scale: Int)? {
        var index = 0
        func digitRun() -> Range<Int> {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            return start..<index
        }
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { index += 1 }
        let integer = digitRun()
        guard !integer.isEmpty else { return nil }
        var digits = bytes[integer]
        var scale = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fraction = digitRun()
            guard !fraction.isEmpty else { return nil }
            digits = bytes[integer.lowerBound..<integer.upperBound] + bytes[fraction]
            scale = -fraction.count
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            let exponentNegative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                index += 1
            }
            let exponentDigits = digitRun()
            guard !exponentDigits.isEmpty else { return nil }
            var exponent = 0
            for byte in bytes[exponentDigits] {
                exponent = min(exponent * 10 + Int(byte - UInt8(ascii: "0")), exponentLimit)
            }
            scale += exponentNegative ? -exponent : exponent
        }
        guard index == bytes.count else { return nil }
        return (negative, digits, scale)
    }
}
