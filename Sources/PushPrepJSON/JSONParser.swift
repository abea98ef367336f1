/// A parsed JSON document: its value and the keys that were repeated inside an object.
public struct JSONDocument: Sendable {
    /// The document's value. Of a repeated key only the last value is kept, at the position of
    /// the first occurrence.
    public var value: JSONValue
    /// Where a member's key repeated an earlier key of the same object: the path of the later
    /// occurrence, such as `/aps/alert`, in document order; the first
    /// ``maximumRecordedDuplicates`` only.
    public var duplicateKeys: [JSONPath]
    /// How many keys repeated an earlier key, recorded or not.
    public var duplicateKeyCount: Int

    /// Paths recorded at most: each is a copy of up to 256 steps, and a 16 MiB text can repeat
    /// a key millions of times.
    public static let maximumRecordedDuplicates = 100

    /// A document with this value and these duplicate keys (`count`: all of them, when more
    /// were found than recorded).
    public init(value: JSONValue, duplicateKeys: [JSONPath] = [], count: Int? = nil) {
        self.value = value
        self.duplicateKeys = duplicateKeys
        self.duplicateKeyCount = count ?? duplicateKeys.count
    }
}

/// Why a text is not JSON, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `unexpected ']', expected a value`.
    public var message: String
    /// The byte offset of the problem from the start of the text.
    public var offset: Int
    /// The 1-based line of the problem; lines end with LF.
    public var line: Int
    /// The 1-based column of the problem, in bytes from the start of its line.
    public var column: Int

    /// `line 3, column 7: ` and the message.
    public var description: String { "line \(line), column \(column): \(message)" }

    /// An error at `offset` in `bytes`, with its line and column worked out.
    init(_ message: String, at offset: Int, in bytes: [UInt8]) {
        var line = 1
        var lineStart = 0
        for index in 0..<offset where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        self.message = message
        self.offset = offset
        self.line = line
        self.column = offset - lineStart + 1
    }
}

extension JSONValue {
    /// The deepest nesting of arrays and objects ``parse(_:)`` accepts.
    public static let maximumNestingDepth = 256

    /// Parses a whole document strictly by RFC 8259.
    ///
    /// Refused: a leading UTF-8 byte order mark, comments, trailing commas, single quotes,
    /// unquoted keys, `NaN` and `Infinity`, numbers with leading zeros or without digits around
    /// the decimal point or in the exponent, raw control characters and invalid UTF-8 in
    /// strings, `\u` escapes of unpaired surrogates, whitespace other than space, tab, LF and
    /// CR, anything but whitespace after the value, and nesting deeper than
    /// ``maximumNestingDepth`` levels. Objects keep their member order and numbers their
    /// literal; repeated keys are reported in ``JSONDocument/duplicateKeys``.
    ///
    /// Runs in time linear in the input, with recursion bounded by the nesting limit.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONDocument {
        var parser = JSONParser(bytes: bytes)
        return try parser.document()
    }
}

/// A recursive-descent parser over UTF-8 bytes; the nesting limit bounds the recursion.
private struct JSONParser {
    private let bytes: [UInt8]
    private var position = 0
    private var depth = 0
    /// The steps from the root to the value being parsed, turned into a path only when a
    /// duplicate key is found.
    private var steps: [JSONPath.Component] = []
    private var duplicateKeys: [JSONPath] = []
    private var duplicateKeyCount = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func document() throws(JSONParseError) -> JSONDocument {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { throw error("byte order mark before the JSON text") }
        skipWhitespace()
        guard position < bytes.count else { throw error("empty document") }
        let value = try parseValue()
        skipWhitespace()
        if let byte = peek { throw error("unexpected \(Self.describe(byte)) after the JSON value") }
        return JSONDocument(value: value, duplicateKeys: duplicateKeys, count: duplicateKeyCount)
    }

    // MARK: - Values

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard let byte = peek else { throw expected("a value") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw expected("a value")
        }
    }

    private mutating func parseLiteral(_ word: StaticString, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let length = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { expected in
            bytes.count - position >= length && expected.indices.allSatisfy { bytes[position + $0] == expected[$0] }
        }
        guard matches else { throw error("invalid literal, expected \(word)") }
        position += length
        return value
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        var object = JSONObject()
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            return leaveContainer(.object(object))
        }
        steps.append(.key(""))
        var expectedKey = "a string key or '}'"
        while true {
            guard peek == UInt8(ascii: "\"") else { throw expected(expectedKey) }
            let key = try parseString()
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw expected("':' after an object key") }
            position += 1
            skipWhitespace()
            steps[steps.count - 1] = .key(key)
            if object.updateValue(try parseValue(), forKey: key) != nil {
                duplicateKeyCount += 1
                if duplicateKeys.count < JSONDocument.maximumRecordedDuplicates {
                    duplicateKeys.append(JSONPath(steps))
                }
            }
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
                expectedKey = "a string key after ','"
            case UInt8(ascii: "}"):
                steps.removeLast()
                return leaveContainer(.object(object))
            default:
                throw expected("',' or '}' after an object member")
            }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            return leaveContainer(.array(elements))
        }
        steps.append(.index(0))
        while true {
            steps[steps.count - 1] = .index(elements.count)
            elements.append(try parseValue())
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                steps.removeLast()
                return leaveContainer(.array(elements))
            default:
                throw expected("',' or ']' after an array element")
            }
        }
    }

    /// Steps over an opening bracket, one level deeper.
    private mutating func enterContainer() throws(JSONParseError) {
        guard depth < JSONValue.maximumNestingDepth else {
            throw error("nesting deeper than \(JSONValue.maximumNestingDepth) levels")
        }
        depth += 1
        position += 1
    }

    /// Steps over a closing bracket, one level up, and returns the container.
    private mutating func leaveContainer(_ container: JSONValue) -> JSONValue {
        depth -= 1
        position += 1
        return container
    }

    // MARK: - Numbers

    /// The literal of a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func parseNumber() throws(JSONParseError) -> String {
        let start = position
        if peek == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        let integerDigits = skipDigits()
        guard integerDigits > 0 else { throw expected("a digit in a number") }
        if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
            throw error("a number cannot have a leading zero", at: integerStart)
        }
        if peek == UInt8(ascii: ".") {
            position += 1
            guard skipDigits() > 0 else { throw expected("a digit after the decimal point") }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            position += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() > 0 else { throw expected("a digit in the exponent") }
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// Steps over ASCII digits and returns how many there were.
    private mutating func skipDigits() -> Int {
        let start = position
        while position < bytes.count, Self.isDigit(bytes[position]) { position += 1 }
        return position - start
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    // MARK: - Strings

    /// A string from its opening quote through its closing quote. Strings without escapes are
    /// built straight from the input bytes.
    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        let start = position
        var isASCII = try skipPlainRun()
        let text: String?
        if peek == UInt8(ascii: "\"") {
            let raw = bytes[start..<position]
            text = isASCII ? String(decoding: raw, as: UTF8.self) : String(validating: raw, as: UTF8.self)
        } else {
            var utf8 = Array(bytes[start..<position])
            while peek == UInt8(ascii: "\\") {
                position += 1
                try appendEscape(to: &utf8)
                let runStart = position
                isASCII = try skipPlainRun() && isASCII
                utf8 += bytes[runStart..<position]
            }
            // Escapes always append whole, valid sequences: only the raw runs need checking.
            text = isASCII ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
        }
        guard let text else { throw invalidUTF8(in: start..<position) }
        position += 1
        return text
    }

    /// Steps over string bytes up to the next quote or backslash; returns whether they were all
    /// ASCII. Throws for a control character or the end of the input.
    private mutating func skipPlainRun() throws(JSONParseError) -> Bool {
        var bits: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return bits < 0x80 }
            if byte < 0x20 { throw error("control character \(Self.describe(byte)) in a string must be escaped") }
            bits |= byte
            position += 1
        }
        throw error("unterminated string")
    }

    /// The error for the first ill-formed UTF-8 sequence in the string bytes `range`. Escapes
    /// are ASCII, so the raw bytes of a string are valid UTF-8 exactly when its text is.
    private func invalidUTF8(in range: Range<Int>) -> JSONParseError {
        var index = range.lowerBound
        while index < range.upperBound {
            let length = UTF8Validation.sequenceLength(in: bytes, at: index, end: range.upperBound)
            if length == 0 { break }
            index += length
        }
        return error("invalid UTF-8 in a string", at: index)
    }

    /// Reads the escape after a backslash and appends its UTF-8.
    private mutating func appendEscape(to utf8: inout [UInt8]) throws(JSONParseError) {
        guard let byte = peek else { throw error("unterminated string") }
        let simple: UInt8? =
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "n"): UInt8(ascii: "\n")
            case UInt8(ascii: "r"): UInt8(ascii: "\r")
            case UInt8(ascii: "t"): UInt8(ascii: "\t")
            default: nil
            }
        if let simple {
            position += 1
            utf8.append(simple)
        } else if byte == UInt8(ascii: "u") {
            let escapeStart = position - 1
            position += 1
            utf8 += try parseUnicodeEscape(escapeStart: escapeStart).utf8
        } else {
            throw error("invalid escape: '\\' followed by \(Self.describe(byte))", at: position - 1)
        }
    }

    /// The scalar of `XXXX` after `\u`, or of a surrogate pair `\uD83D\uDE00`.
    private mutating func parseUnicodeEscape(escapeStart: Int) throws(JSONParseError) -> Unicode.Scalar {
        let first = try hex4()
        if let scalar = Unicode.Scalar(first) { return scalar }
        // A surrogate: only a high one followed by a `\u` low one is allowed.
        guard first < 0xDC00, bytes[position...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
            throw error("unpaired surrogate in a \\u escape", at: escapeStart)
        }
        position += 2
        let second = try hex4()
        guard (0xDC00...0xDFFF).contains(second) else {
            throw error("unpaired surrogate in a \\u escape", at: escapeStart)
        }
        return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let digit: UInt8
            switch peek {
            case let byte? where Self.isDigit(byte): digit = byte - UInt8(ascii: "0")
            case let byte? where (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20):
                digit = (byte | 0x20) - UInt8(ascii: "a") + 10
            default: throw expected("four hex digits after \\u")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    // MARK: - Helpers

    private var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Steps over JSON whitespace: space, tab, LF and CR only.
    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): position += 1
            default: return
            }
        }
    }

    /// A byte for a message: printable ASCII as itself (quoted), anything else in hex.
    private static func describe(_ byte: UInt8) -> String {
        guard (0x21..<0x7F).contains(byte) else { return "byte 0x" + String(byte, radix: 16, uppercase: true) }
        return "'\(Unicode.Scalar(byte))'"
    }

    /// The error for a missing `what` at the current position, naming what is there instead.
    private func expected(_ what: String) -> JSONParseError {
        guard let byte = peek else { return error("unexpected end of input, expected \(what)") }
        return error("unexpected \(Self.describe(byte)), expected \(what)")
    }

    private func error(_ message: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(message, at: min(offset ?? position, bytes.count), in: bytes)
    }
}

/// Well-formed UTF-8 by RFC 3629 (no overlong forms, surrogates or values past U+10FFFF).
private enum UTF8Validation {
    /// The length of the well-formed sequence starting at `index` and ending before `end`, or 0
    /// when the bytes there are ill-formed or cut short.
    static func sequenceLength(in bytes: [UInt8], at index: Int, end: Int) -> Int {
        let lead = bytes[index]
        // The allowed range of the second byte, and the sequence length, by lead byte.
        let second: ClosedRange<UInt8>
        let length: Int
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: (second, length) = (0x80...0xBF, 2)
        case 0xE0: (second, length) = (0xA0...0xBF, 3)
        case 0xE1...0xEC, 0xEE...0xEF: (second, length) = (0x80...0xBF, 3)
        case 0xED: (second, length) = (0x80...0x9F, 3)
        case 0xF0: (second, length) = (0x90...0xBF, 4)
        case 0xF1...0xF3: (second, length) = (0x80...0xBF, 4)
        case 0xF4: (second, length) = (0x80...0x8F, 4)
        default: return 0
        }
        guard end - index >= length, second.contains(bytes[index + 1]) else { return 0 }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) {
            return 0
        }
        return length
    }
}
