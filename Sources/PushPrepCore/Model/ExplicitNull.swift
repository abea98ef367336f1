/// An optional field of the manifest that is written as an explicit `null` when it has no value
/// (the manifest's format requires the key: an attachment's `url`, `urlExpires`, `width`,
/// `height`, `duration` and `frames`), and read as nil when the key is absent or null.
///
/// Synthesized coding writes the wrapper (its `null`) and reads it through
/// `KeyedDecodingContainer.decode(_:forKey:)` below, which takes an absent key as nil; so the
/// types that carry such fields need no hand-written `encode(to:)` listing every key.
@propertyWrapper
public struct ExplicitNull<Value: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    /// The value, or nil.
    public var wrappedValue: Value?

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    /// The value, or nil for a JSON `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    /// The value, or a JSON `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    /// An ``ExplicitNull`` field: nil when the key is absent or null.
    public func decode<Value>(_ type: ExplicitNull<Value>.Type, forKey key: Key) throws -> ExplicitNull<Value> {
        ExplicitNull(wrappedValue: try decodeIfPresent(Value.self, forKey: key))
    }
}
