/// `JSONValue` through `Codable`, for JSON an API carries without reading (a job's metadata).
///
/// Decoding keeps what `Decoder` can tell apart: integers that fit 64 bits stay integers, other
/// numbers become their shortest `Double` text, and members come in the order the decoder
/// gives them (Foundation's does not keep the text's). Encoding writes an integer literal as an
/// integer and any other number as a `Double`, members in order. To keep literals and order
/// exactly, parse with ``JSONValue/parse(_:)`` instead.
extension JSONValue: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            var members: [(key: String, value: JSONValue)] = []
            for key in object.allKeys {
                members.append((key.stringValue, try object.decode(JSONValue.self, forKey: key)))
            }
            self = .object(JSONObject(members))
            return
        }
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? single.decode(Int64.self) {
            self = .number(String(int))
        } else if let double = try? single.decode(Double.self) {
            self = JSONValue(double)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let bool):
            var single = encoder.singleValueContainer()
            try single.encode(bool)
        case .number(let literal):
            var single = encoder.singleValueContainer()
            if let int = Int64(literal) {
                try single.encode(int)
            } else {
                try single.encode(Double(literal) ?? 0)
            }
        case .string(let string):
            var single = encoder.singleValueContainer()
            try single.encode(string)
        case .array(let values):
            var array = encoder.unkeyedContainer()
            for value in values { try array.encode(value) }
        case .object(let object):
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in object { try container.encode(value, forKey: Key(stringValue: key)) }
        }
    }
}
