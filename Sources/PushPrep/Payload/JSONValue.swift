/// A JSON value that keeps object member order and number literals, so that a payload can be
/// checked, edited and written back as it was (Foundation's `JSONSerialization` loses the order,
/// the literal, and the difference between `true` and `1`, which APNs cares about).
public enum JSONValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    /// The number's JSON literal exactly as parsed or written (`1`, `0.5`, `-2e3`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// An integer.
    public init(_ int: Int) { self = .number(String(int)) }

    /// A finite double, written in its shortest form without a trailing `.0` (`1.0` is `1`).
    public init(_ double: Double) {
        precondition(double.isFinite, "JSON has no NaN or infinity")
        if double == double.rounded(), abs(double) < 1e15 {
            self = .number(String(Int(double)))
        } else {
            self = .number("\(double)")
        }
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value of a JSON `true` or `false` (never of a number).
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The value of a number.
    public var doubleValue: Double? {
        if case .number(let literal) = self { return Double(literal) }
        return nil
    }

    /// The value of a number that is an exact integer (`1`, `1.0`, `1e2`; not `1.5`).
    public var intValue: Int? {
        guard case .number(let literal) = self else { return nil }
        if let int = Int(literal) { return int }
        guard let double = Double(literal), double == double.rounded(), abs(double) < 9e15 else { return nil }
        return Int(double)
    }

    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The JSON type's name, for messages: null, boolean, number, string, array, object.
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

    /// An object's member; nil for other values.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The value at `path`; nil when a step is missing or of the wrong type. Setting creates the
    /// objects missing on the way (replacing non-objects), and setting nil removes the member or
    /// element; an index out of range is ignored on set.
    public subscript(path: JSONPath) -> JSONValue? {
        get { value(at: path.components[...]) }
        set { set(newValue, at: path.components[...]) }
    }

    private func value(at components: ArraySlice<JSONPath.Component>) -> JSONValue? {
        guard let first = components.first else { return self }
        let child: JSONValue?
        switch (self, first) {
        case (.object(let object), .key(let key)): child = object[key]
        case (.object(let object), .index(let index)): child = object[String(index)]
        case (.array(let array), .index(let index)): child = array.indices.contains(index) ? array[index] : nil
        default: child = nil
        }
        return child?.value(at: components.dropFirst())
    }

    private mutating func set(_ newValue: JSONValue?, at components: ArraySlice<JSONPath.Component>) {
        guard let first = components.first else {
            self = newValue ?? .null
            return
        }
        let rest = components.dropFirst()
        switch (self, first) {
        case (.array(var array), .index(let index)):
            guard array.indices.contains(index) else { return }
            if rest.isEmpty, newValue == nil {
                array.remove(at: index)
            } else {
                array[index].set(newValue, at: rest)
            }
            self = .array(array)
        default:
            let key: String
            switch first {
            case .key(let name): key = name
            case .index(let index): key = String(index)
            }
            var object = objectValue ?? JSONObject()
            if rest.isEmpty {
                object[key] = newValue
            } else {
                guard newValue != nil || object[key] != nil else { return }
                var child = object[key] ?? .object(JSONObject())
                child.set(newValue, at: rest)
                object[key] = child
            }
            self = .object(object)
        }
    }
}

/// An object's members in document order, keys unique: setting an existing key replaces its
/// value in place, a new key is appended, and setting nil removes.
public struct JSONObject: Sendable, Equatable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Member = (key: String, value: JSONValue)

    private var keyList: [String] = []
    private var values: [String: JSONValue] = [:]

    /// An empty object.
    public init() {}

    /// Members in order; a later duplicate replaces the earlier value at the earlier position.
    public init(_ members: [Member]) {
        for member in members { self[member.key] = member.value }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    /// The keys in order.
    public var keys: [String] { keyList }
    public var count: Int { keyList.count }
    public var isEmpty: Bool { keyList.isEmpty }

    public subscript(key: String) -> JSONValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { keyList.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keyList.removeAll { $0 == key }
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[Member]> {
        keyList.map { (key: $0, value: values[$0]!) }.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.keyList == rhs.keyList && lhs.values == rhs.values
    }

    public func hash(into hasher: inout Hasher) {
        for key in keyList {
            hasher.combine(key)
            hasher.combine(values[key])
        }
    }
}

// MARK: - Writing

extension JSONValue {
    /// The JSON text: compact (no whitespace) or pretty (two-space indent, `"key": value`).
    /// Only `"`, `\` and control characters are escaped; `/` and non-ASCII are written as
    /// they are (APNs counts UTF-8 bytes, and escapes would cost more).
    public func serialized(pretty: Bool = false) -> String {
        var output = ""
        write(to: &output, pretty: pretty, indent: 0)
        return output
    }

    /// The size of the compact text in UTF-8 bytes: what counts against a payload limit.
    public var compactByteCount: Int { serialized().utf8.count }

    private func write(to output: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let literal): output += literal
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            guard !elements.isEmpty else {
                output += "[]"
                return
            }
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                Self.newline(&output, pretty: pretty, indent: indent + 1)
                element.write(to: &output, pretty: pretty, indent: indent + 1)
            }
            Self.newline(&output, pretty: pretty, indent: indent)
            output += "]"
        case .object(let object):
            guard !object.isEmpty else {
                output += "{}"
                return
            }
            output += "{"
            for (index, member) in object.enumerated() {
                if index > 0 { output += "," }
                Self.newline(&output, pretty: pretty, indent: indent + 1)
                Self.writeString(member.key, to: &output)
                output += pretty ? ": " : ":"
                member.value.write(to: &output, pretty: pretty, indent: indent + 1)
            }
            Self.newline(&output, pretty: pretty, indent: indent)
            output += "}"
        }
    }

    private static func newline(_ output: inout String, pretty: Bool, indent: Int) {
        guard pretty else { return }
        output += "\n"
        output += String(repeating: "  ", count: indent)
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
