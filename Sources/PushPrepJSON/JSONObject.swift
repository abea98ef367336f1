import OrderedCollections

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
