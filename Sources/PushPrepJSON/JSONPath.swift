/// A location in a JSON document: the member keys and array indexes leading to a value.
///
/// Its ``pointer`` (and ``description``) is the RFC 6901 JSON Pointer: `""` for the root,
/// `/aps/mutable-content`, `/attachments/0/url`; inside a key `~` is written `~0` and `/` is
/// written `~1`.
///
/// A path is never written as a bare string literal: `value["aps"]` always names a member, and
/// a pointer is parsed with ``init(pointer:)``.
///
/// How a step applies to a value (see ``JSONValue/subscript(path:)``): a ``Component/key(_:)``
/// names an object member and never matches an array element, even when its text is numeric;
/// an ``Component/index(_:)`` names an array element, or, applied to an object, the member whose
/// key is the index in decimal (as RFC 6901 reads `/0` on an object).
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    /// One step: an object member or an array element.
    public enum Component: Sendable, Hashable {
        /// The member with this key.
        case key(String)
        /// The element at this zero-based index (or the member with this decimal key).
        case index(Int)
    }

    /// The steps from the root, outermost first.
    public var components: [Component]

    /// A path of these steps; no steps is the root.
    public init(_ components: [Component] = []) {
        self.components = components
    }

    /// The whole document.
    public static let root = JSONPath()

    /// Parses a JSON Pointer such as `/a/0/b~1c`.
    ///
    /// Tokens that are canonical non-negative integers (`0`, `12`; not `01`, `-1` or `+1`)
    /// become ``Component/index(_:)``, every other token a ``Component/key(_:)``. Nil when the
    /// pointer is neither empty nor starts with `/`, or has a `~` that is not followed by `0`
    /// or `1`.
    public init?(pointer: String) {
        let utf8 = Array(pointer.utf8)
        guard let first = utf8.first else {
            self.init()
            return
        }
        guard first == UInt8(ascii: "/") else { return nil }
        var components: [Component] = []
        for token in utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard let text = Self.unescape(token) else { return nil }
            components.append(Self.isCanonicalIndex(token) ? .index(Int(text)!) : .key(text))
        }
        self.init(components)
    }

    /// The RFC 6901 JSON Pointer: `""` for the root, otherwise `/` before each escaped step.
    public var pointer: String {
        var text = ""
        for component in components {
            text += "/"
            switch component {
            case .key(let key): Self.appendEscaped(key, to: &text)
            case .index(let index): text += String(index)
            }
        }
        return text
    }

    public var description: String { pointer }

    /// This path followed by the member `key`.
    public func appending(_ key: String) -> JSONPath { JSONPath(components + [.key(key)]) }

    /// This path followed by the array element at `index`.
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

    // MARK: - Escaping

    /// Appends `key` with `~` as `~0` and `/` as `~1`. Works on Unicode scalars, not
    /// characters, so a `/` or `~` followed by a combining mark is still escaped.
    private static func appendEscaped(_ key: String, to text: inout String) {
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else {
            text += key
            return
        }
        for scalar in key.unicodeScalars {
            switch scalar {
            case "~": text += "~0"
            case "/": text += "~1"
            default: text.unicodeScalars.append(scalar)
            }
        }
    }

    /// The key a pointer token stands for; nil when a `~` is not followed by `0` or `1`.
    private static func unescape(_ token: ArraySlice<UInt8>) -> String? {
        guard token.contains(UInt8(ascii: "~")) else { return String(decoding: token, as: UTF8.self) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(token.count)
        var index = token.startIndex
        while index < token.endIndex {
            let byte = token[index]
            index += 1
            guard byte == UInt8(ascii: "~") else {
                bytes.append(byte)
                continue
            }
            guard index < token.endIndex else { return nil }
            switch token[index] {
            case UInt8(ascii: "0"): bytes.append(UInt8(ascii: "~"))
            case UInt8(ascii: "1"): bytes.append(UInt8(ascii: "/"))
            default: return nil
            }
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether a token is `0` or a digit 1–9 followed by digits, small enough for an `Int`.
    private static func isCanonicalIndex(_ token: ArraySlice<UInt8>) -> Bool {
        guard let first = token.first, token.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return false }
        guard first != UInt8(ascii: "0") else { return token.count == 1 }
        return Int(String(decoding: token, as: UTF8.self)) != nil
    }
}
