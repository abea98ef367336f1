import OrderedCollections

/// A JSON value that keeps object member order and number literals.
///
/// Push payloads are read, checked, edited and written back, so this type keeps what
/// Foundation's `JSONSerialization` loses: the order of object members, a number's literal
/// exactly as written (`1.0` stays `1.0`), and the difference between `true` and `1` (APNs
/// wants `"mutable-content": 1`). Parse with ``parse(_:)``, write with ``serialized(pretty:)``.
///
/// Equality is structural and exact: member order and number literals count, so `1` and `1.0`
/// are different values, as are `{"a":1,"b":2}` and `{"b":2,"a":1}`.
public enum JSONValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    /// The number's JSON literal exactly as parsed or written, e.g. `1`, `0.5`, `-2e3`. It is
    /// written out unchanged, so one made by hand must be a valid JSON number.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// An integer: `.number("42")`.
    public init(_ int: Int) {
        self = .number(String(int))
    }

    /// A finite double, written as the shortest text that reads back as the same double.
    ///
    /// Integral values have no `.0` (`1.0` is `1`, `-0.0` is `-0`); very large and very small
    /// magnitudes use an exponent without leading zeros (`1e+21`, `1e-7`).
    public init(_ double: Double) {
        precondition(double.isFinite, "JSON has no NaN or infinity")
        self = .number(Self.literal(for: double))
    }

    /// The text of a string; nil for other values.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value of `true` or `false`; nil for other values (a number is never a boolean).
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The nearest double to a number's literal; nil for other values. A literal beyond the
    /// double range (`1e999`) gives an infinity.
    public var doubleValue: Double? {
        if case .number(let literal) = self { return Double(literal) }
        return nil
    }

    /// The integer a number's literal denotes exactly: 1 for `1`, `1.0` or `0.1e1`, 0 for `-0`,
    /// 25 for `2.50e1`. Nil for a literal with a fractional part (`1.5`, `25e-1`), outside
    /// `Int`'s range, and for values that are not numbers (`true` is not 1).
    public var intValue: Int? {
        guard case .number(let literal) = self else { return nil }
        return JSONNumberLiteral.exactInteger(literal)
    }

    /// The members of an object; nil for other values.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements of an array; nil for other values.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The JSON type's name for messages: `null`, `boolean`, `number`, `string`, `array` or
    /// `object`.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// An object's member; nil when the member is absent or the value is not an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The value at `path`.
    ///
    /// Getting walks the steps (see ``JSONPath`` for how keys and indexes match) and is nil
    /// when a step is absent or meets a value of the wrong type.
    ///
    /// Setting a value changes one place and leaves the rest as it was:
    /// - an object's member is replaced in place, or appended when new;
    /// - a missing member on the way, or a null, boolean, number or string on the way, is
    ///   replaced by a new object holding the rest of the path;
    /// - an array element is replaced only when the index is in range, and a key step never
    ///   applies to an array: both cases change nothing;
    /// - setting the root replaces the whole value.
    ///
    /// Setting `nil` removes the member or element the path names (later elements move up);
    /// nothing changes when the path does not lead to a value, and removing the root leaves
    /// `null`.
    ///
    /// A string in brackets always names a member (`value["aps"]` is ``subscript(key:)``); a
    /// pointer is spelled out: `value[JSONPath(pointer: "/aps/alert")!]`.
    public subscript(path: JSONPath) -> JSONValue? {
        get { value(at: path.components[...]) }
        set {
            if let newValue {
                assign(newValue, at: path.components[...])
            } else {
                remove(at: path.components[...])
            }
        }
    }

    private func value(at steps: ArraySlice<JSONPath.Component>) -> JSONValue? {
        var current = self
        for step in steps {
            switch (current, step) {
            case (.object(let object), _):
                guard let member = object[step.memberKey] else { return nil }
                current = member
            case (.array(let elements), .index(let index)):
                guard elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    private mutating func assign(_ newValue: JSONValue, at steps: ArraySlice<JSONPath.Component>) {
        guard let step = steps.first else {
            self = newValue
            return
        }
        let rest = steps.dropFirst()
        switch (self, step) {
        case (.object(var object), _):
            self = .null  // Leaves `object` the only reference, so it changes in place.
            object.modifyValue(forKey: step.memberKey, default: .object(JSONObject())) { member in
                member.assign(newValue, at: rest)
            }
            self = .object(object)
        case (.array(var elements), .index(let index)):
            guard elements.indices.contains(index) else { return }
            self = .null
            elements[index].assign(newValue, at: rest)
            self = .array(elements)
        case (.array, .key):
            return
        default:
            var member = JSONValue.object(JSONObject())
            member.assign(newValue, at: rest)
            self = .object(JSONObject([(key: step.memberKey, value: member)]))
        }
    }

    private mutating func remove(at steps: ArraySlice<JSONPath.Component>) {
        guard let step = steps.first else {
            self = .null
            return
        }
        let rest = steps.dropFirst()
        switch (self, step) {
        case (.object(var object), _):
            let key = step.memberKey
            guard object[key] != nil else { return }
            self = .null
            if rest.isEmpty {
                object[key] = nil
            } else {
                object.modifyValue(forKey: key, default: .null) { member in member.remove(at: rest) }
            }
            self = .object(object)
        case (.array(var elements), .index(let index)):
            guard elements.indices.contains(index) else { return }
            self = .null
            if rest.isEmpty {
                elements.remove(at: index)
            } else {
                elements[index].remove(at: rest)
            }
            self = .array(elements)
        default:
            return
        }
    }
}

extension JSONPath.Component {
    /// The member key this step names in an object: the key, or an index in decimal.
    fileprivate var memberKey: String {
        switch self {
        case .key(let key): key
        case .index(let index): String(index)
        }
    }
}

// MARK: - Objects

/// An object's members in document order.
///
/// Keys are unique: setting an existing key replaces its value where it stands, setting a new
/// key appends it, and setting `nil` removes the member. A parsed object keeps the first
/// position and the last value of a repeated key (the parser reports the repetition in
/// ``JSONDocument/duplicateKeys``). Equality takes the order into account.
public struct JSONObject: Sendable, Equatable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One member: its key and its value.
    public typealias Member = (key: String, value: JSONValue)

    /// The members in order, by key (swift-collections keeps small objects, nearly all of a
    /// payload's, without a hash table).
    private(set) var members: OrderedDictionary<String, JSONValue> = [:]

    /// An empty object.
    public init() {}

    /// These members in order; a later duplicate replaces the earlier value at the earlier
    /// position.
    public init(_ members: [(key: String, value: JSONValue)]) {
        self.members.reserveCapacity(members.count)
        for member in members { self.members[member.key] = member.value }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    /// The keys in order.
    public var keys: [String] { Array(members.keys) }

    /// The number of members.
    public var count: Int { members.count }

    public var isEmpty: Bool { members.isEmpty }

    public var underestimatedCount: Int { members.count }

    /// The value of the member `key`. Setting replaces the value in place or appends a new
    /// member; setting `nil` removes the member, keeping the order of the others.
    public subscript(key: String) -> JSONValue? {
        get { members[key] }
        set { members[key] = newValue }
    }

    /// The members in order.
    public func makeIterator() -> Iterator {
        Iterator(base: members.elements.makeIterator())
    }

    /// Iterates over the members in order.
    public struct Iterator: IteratorProtocol {
        var base: OrderedDictionary<String, JSONValue>.Elements.Iterator

        public mutating func next() -> Member? { base.next() }
    }

    /// Sets a member and returns the value it replaced (nil when the key is new and was
    /// appended).
    @discardableResult
    mutating func updateValue(_ value: JSONValue, forKey key: String) -> JSONValue? {
        members.updateValue(value, forKey: key)
    }

    /// Removes a member, keeping the order of the others, and returns its value.
    @discardableResult
    mutating func removeValue(forKey key: String) -> JSONValue? {
        members.removeValue(forKey: key)
    }

    /// Changes a member's value in place, appending the member with `defaultValue` first when
    /// it is missing.
    mutating func modifyValue(
        forKey key: String, default defaultValue: @autoclosure () -> JSONValue, _ body: (inout JSONValue) -> Void
    ) {
        body(&members[key, default: defaultValue()])
    }
}

// MARK: - Writing

extension JSONValue {
    /// The JSON text, compact (no whitespace at all) or pretty (two-space indentation,
    /// `"key": value`, one member or element per line, empty `{}` and `[]` inline, no final
    /// newline).
    ///
    /// Strings escape only `"`, `\` and control characters (U+0000–U+001F, as `\n`, `\t`,
    /// `\r`, `\b`, `\f` or `\u00XX`); `/` and non-ASCII characters are written as raw UTF-8,
    /// which is what APNs counts against its size limit. Numbers are written as their literal.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The size in UTF-8 bytes of the compact text: what counts against a payload size limit.
    public var compactByteCount: Int { serializedBytes(pretty: false).count }

    /// The JSON text as UTF-8 bytes (see ``serialized(pretty:)``).
    func serializedBytes(pretty: Bool) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        writer.write(self, indent: 0)
        return writer.output
    }
}

/// Writes JSON text into a byte buffer.
private struct JSONWriter {
    let pretty: Bool
    var output: [UInt8] = []

    init(pretty: Bool) {
        self.pretty = pretty
    }

    mutating func write(_ value: JSONValue, indent: Int) {
        switch value {
        case .null: writeRaw("null")
        case .bool(let value): writeRaw(value ? "true" : "false")
        case .number(let literal): writeRaw(literal)
        case .string(let text): writeString(text)
        case .array(let elements):
            writeContainer(open: "[", close: "]", count: elements.count, indent: indent) { writer, index in
                writer.write(elements[index], indent: indent + 1)
            }
        case .object(let object):
            let members = object.members.elements
            writeContainer(open: "{", close: "}", count: members.count, indent: indent) { writer, index in
                let member = members[index]
                writer.writeString(member.key)
                writer.writeRaw(writer.pretty ? ": " : ":")
                writer.write(member.value, indent: indent + 1)
            }
        }
    }

    /// Writes the brackets around `count` items, with separators and, when pretty, line breaks
    /// and indentation; `writeItem` writes the item at an index.
    private mutating func writeContainer(
        open: Unicode.Scalar, close: Unicode.Scalar, count: Int, indent: Int,
        writeItem: (inout JSONWriter, Int) -> Void
    ) {
        output.append(UInt8(ascii: open))
        for index in 0..<count {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            newline(indent: indent + 1)
            writeItem(&self, index)
        }
        if count > 0 { newline(indent: indent) }
        output.append(UInt8(ascii: close))
    }

    private mutating func newline(indent: Int) {
        guard pretty else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    /// Writes a quoted string, copying the runs that need no escape in one go.
    private mutating func writeString(_ text: String) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output += utf8[runStart..<index]
                appendEscape(for: byte)
                runStart = index + 1
            }
            output += utf8[runStart...]
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Writes text that needs no escaping (a number literal).
    private mutating func writeRaw(_ text: String) {
        var text = text
        text.withUTF8 { output += $0 }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    private mutating func appendEscape(for byte: UInt8) {
        let short: Unicode.Scalar? =
            switch byte {
            case UInt8(ascii: "\""): "\""
            case UInt8(ascii: "\\"): "\\"
            case UInt8(ascii: "\n"): "n"
            case UInt8(ascii: "\r"): "r"
            case UInt8(ascii: "\t"): "t"
            case 0x08: "b"
            case 0x0C: "f"
            default: nil
            }
        output.append(UInt8(ascii: "\\"))
        if let short {
            output.append(UInt8(ascii: short))
        } else {
            writeRaw("u00")
            output.append(Self.hexDigit(byte >> 4))
            output.append(Self.hexDigit(byte & 0xF))
        }
    }
}

// MARK: - Number literals

extension JSONValue {
    /// The shortest round-trip text of a finite double, without `.0` and without leading zeros
    /// in the exponent.
    fileprivate static func literal(for double: Double) -> String {
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
private enum JSONNumberLiteral {
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
