/// A location in a JSON document. Its ``pointer`` is the RFC 6901 JSON Pointer: `""` for the
/// root, `/aps/mutable-content`, `/attachments/0/url`; `~` is written `~0` and `/` is `~1`.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    /// One step: an object member or an array element.
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    /// A path of these steps.
    public init(_ components: [Component] = []) {
        self.components = components
    }

    /// The whole document.
    public static let root = JSONPath()

    /// Parses a JSON Pointer. Tokens that are canonical non-negative integers (`0`, `12`, not
    /// `01`) become ``Component/index(_:)``; a get through an index on an object looks the
    /// decimal text up as a key. Nil when the pointer is not empty and does not start with `/`,
    /// or has a `~` not followed by `0` or `1`.
    public init?(pointer: String) {
        guard !pointer.isEmpty else {
            self.init()
            return
        }
        guard pointer.hasPrefix("/") else { return nil }
        var components: [Component] = []
        for token in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let key = Self.unescape(token) else { return nil }
            if let index = Int(key), index >= 0, String(index) == key {
                components.append(.index(index))
            } else {
                components.append(.key(key))
            }
        }
        self.init(components)
    }

    /// The JSON Pointer.
    public var pointer: String {
        components.map { component in
            switch component {
            case .key(let key): "/" + key.replacingAll("~", with: "~0").replacingAll("/", with: "~1")
            case .index(let index): "/\(index)"
            }
        }.joined()
    }

    public var description: String { pointer }

    /// This path and then a member.
    public func appending(_ key: String) -> JSONPath { JSONPath(components + [.key(key)]) }

    /// This path and then an element.
    public func appending(index: Int) -> JSONPath { JSONPath(components + [.index(index)]) }

    /// The path one step up; nil for the root.
    public var parent: JSONPath? { components.isEmpty ? nil : JSONPath(Array(components.dropLast())) }

    /// The last step as text (a key, or an index in decimal); nil for the root.
    public var lastKey: String? {
        switch components.last {
        case .key(let key)?: key
        case .index(let index)?: String(index)
        case nil: nil
        }
    }

    private static func unescape(_ token: Substring) -> String? {
        guard token.contains("~") else { return String(token) }
        var result = ""
        var iterator = token.makeIterator()
        while let character = iterator.next() {
            guard character == "~" else {
                result.append(character)
                continue
            }
            switch iterator.next() {
            case "0": result.append("~")
            case "1": result.append("/")
            default: return nil
            }
        }
        return result
    }
}

extension String {
    /// Every occurrence of `target` replaced (Foundation-free).
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
