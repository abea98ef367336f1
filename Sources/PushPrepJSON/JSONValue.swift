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
