/// A parsed JSON document.
public struct JSONDocument: Sendable {
    public var value: JSONValue
    /// Members whose key repeated an earlier key of the same object (the later occurrence).
    public var duplicateKeys: [JSONPath]
}

/// Why a document is not JSON, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// Byte offset of the problem.
    public var offset: Int
    /// 1-based line.
    public var line: Int
    /// 1-based column, in bytes.
    public var column: Int

    public var description: String { "line \(line), column \(column): \(message)" }
}

extension JSONValue {
    /// Parses a whole document strictly (RFC 8259): no comments, no trailing commas, no BOM,
    /// nothing after the value but whitespace, at most 256 levels of nesting.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONDocument {
        var parser = JSONParser(bytes: bytes)
        return try parser.document()
    }
}

/// A recursive-descent parser over UTF-8 bytes; the depth limit bounds the recursion.
struct JSONParser {
    static let maxDepth = 256

    private let bytes: [UInt8]
    private var position = 0
    private var duplicates: [JSONPath] = []

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func document() throws(JSONParseError) -> JSONDocument {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { throw error("byte order mark before the JSON text") }
        skipWhitespace()
        guard position < bytes.count else { throw error("empty document") }
        let value = try parseValue(path: .root, depth: 0)
        skipWhitespace()
        guard position == bytes.count else { throw error("unexpected text after the JSON value") }
        return JSONDocument(value: value, duplicateKeys: duplicates)
    }

    // MARK: - Values

    private mutating func parseValue(path: JSONPath, depth: Int) throws(JSONParseError) -> JSONValue {
        guard position < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(path: path, depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(path: path, depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character \(describe(bytes[position])), expected a value")
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let utf8 = Array(word.utf8)
        guard bytes.count - position >= utf8.count, Array(bytes[position..<position + utf8.count]) == utf8 else {
            throw error("invalid literal, expected \(word)")
        }
        position += utf8.count
        return value
    }

    private mutating func parseObject(path: JSONPath, depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        position += 1
        var object = JSONObject()
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            position += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw error("expected ':' after an object key") }
            position += 1
            skipWhitespace()
            let memberPath = path.appending(key)
            let value = try parseValue(path: memberPath, depth: depth)
            if object[key] != nil { duplicates.append(memberPath) }
            object[key] = value
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(object)
            default: throw error("expected ',' or '}' after an object member")
            }
        }
    }

    private mutating func parseArray(path: JSONPath, depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(path: path.appending(index: elements.count), depth: depth))
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(elements)
            default: throw error("expected ',' or ']' after an array element")
            }
        }
    }

    // MARK: - Numbers

    /// The literal of a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func parseNumber() throws(JSONParseError) -> String {
        let start = position
        if peek == UInt8(ascii: "-") { position += 1 }
        guard let first = peek, isDigit(first) else { throw error("expected a digit in a number") }
        position += 1
        if first == UInt8(ascii: "0"), let next = peek, isDigit(next) {
            throw error("a number cannot have a leading zero")
        }
        skipDigits()
        if peek == UInt8(ascii: ".") {
            position += 1
            guard let next = peek, isDigit(next) else { throw error("expected a digit after the decimal point") }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            position += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
            guard let next = peek, isDigit(next) else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private mutating func skipDigits() {
        while let byte = peek, isDigit(byte) { position += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    // MARK: - Strings

    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        var scalars = String.UnicodeScalarView()
        var runStart = position
        while true {
            guard position < bytes.count else { throw error("unterminated string") }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                try appendRun(runStart..<position, to: &scalars)
                position += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try appendRun(runStart..<position, to: &scalars)
                position += 1
                scalars.append(try parseEscape())
                runStart = position
            case 0..<0x20:
                throw error("control character \(describe(byte)) in a string must be escaped")
            default:
                position += 1
            }
        }
    }

    /// Appends raw UTF-8 bytes, validated.
    private func appendRun(_ range: Range<Int>, to scalars: inout String.UnicodeScalarView) throws(JSONParseError) {
        guard !range.isEmpty else { return }
        guard let text = String(validating: bytes[range], as: UTF8.self) else {
            throw JSONParseError.at(range.lowerBound, in: bytes, "invalid UTF-8 in a string")
        }
        scalars.append(contentsOf: text.unicodeScalars)
    }

    private mutating func parseEscape() throws(JSONParseError) -> Unicode.Scalar {
        guard let byte = peek else { throw error("unterminated escape") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"): return try parseUnicodeEscape()
        default:
            position -= 1
            throw error("invalid escape \\\(describe(byte))")
        }
    }

    private mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let high = try hex4()
        switch high {
        case 0xD800...0xDBFF:
            guard bytes.count - position >= 2, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u")
            else { throw error("unpaired surrogate in a \\u escape") }
            position += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in a \\u escape") }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
        case 0xDC00...0xDFFF:
            throw error("unpaired surrogate in a \\u escape")
        default:
            return Unicode.Scalar(high)!
        }
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw error("expected four hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("expected four hex digits after \\u")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    // MARK: - Helpers

    private var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let byte = peek,
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            position += 1
        }
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16)
    }

    private func error(_ message: String) -> JSONParseError {
        JSONParseError.at(min(position, bytes.count), in: bytes, message)
    }
}

extension JSONParseError {
    /// An error at a byte offset, with its line and column.
    static func at(_ offset: Int, in bytes: [UInt8], _ message: String) -> JSONParseError {
        var line = 1
        var lineStart = 0
        for index in 0..<offset where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return JSONParseError(message: message, offset: offset, line: line, column: offset - lineStart + 1)
    }
}
