import Crypto
import Foundation
package import PushPrepCore

/// One API key the server accepts, as it keeps it: the SHA-256 of the key, never the key.
/// Described by its id and scopes only.
package struct APIKey: Sendable, Equatable, CustomStringConvertible {
    /// What a key may do: `read` (GET, HEAD, and the computing endpoints `payload` and
    /// `preflight`), `write` (everything that creates or changes a job).
    package enum Scope: String, Sendable, CaseIterable, Comparable {
        case read, write

        package static func < (a: Scope, b: Scope) -> Bool { a.rawValue < b.rawValue }
    }

    /// The first 12 hex digits of the key's SHA-256: a name for logs, metrics and the owner of
    /// idempotency keys that says nothing usable about the key.
    package var id: String
    /// SHA-256 of the key's UTF-8 bytes.
    var digest: [UInt8]
    package var scopes: Set<Scope>

    package var description: String { "APIKey(\(id), \(scopes.sorted().map(\.rawValue).joined(separator: ",")))" }
}

/// The keys of `--api-keys-file`.
///
/// One key per line, optionally followed by its scopes (`read`, `write` or `read,write`;
/// both when none are given); blank lines and lines starting with `#` are skipped. A key may
/// be written as `sha256:<64 hex digits>` (the hash of the key, so the file need not hold the
/// key itself; `printf %s KEY | sha256sum`); otherwise it is hashed when read and only the hash
/// is kept.
package struct APIKeyStore: Sendable {
    package let keys: [APIKey]

    /// The longest keys file read (a few thousand keys).
    static let maxFileBytes = 1 << 20
    /// Keys shorter than this are refused: a key must not be guessable.
    static let minimumKeyLength = 16

    package init(keys: [APIKey]) {
        self.keys = keys
    }

    /// Reads and parses `path`; `invalid_settings` names the line at fault (never its key).
    package init(path: String) throws(PushPrepError) {
        let contents = try InputFile.read(path: path, maxBytes: Self.maxFileBytes) { _ in true }.contents ?? []
        try self.init(parsing: String(decoding: contents, as: UTF8.self), source: path)
    }

    /// Parses a keys file's text.
    package init(parsing text: String, source: String = "the API keys file") throws(PushPrepError) {
        var keys: [APIKey] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces.union(.init(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            let where_ = "\(source), line \(index + 1)"
            guard fields.count <= 2 else {
                throw PushPrepError(.invalidSettings, "\(where_): expected a key and optionally its scopes")
            }
            var scopes = Set(APIKey.Scope.allCases)
            if fields.count == 2 {
                scopes = []
                for name in fields[1].split(separator: ",") {
                    guard let scope = APIKey.Scope(rawValue: String(name)) else {
                        throw PushPrepError(
                            .invalidSettings,
                            "\(where_): scopes are read and write (the second field is neither; it is not shown: it may be a key)"
                        )
                    }
                    scopes.insert(scope)
                }
            }
            let digest = try Self.digest(of: fields[0], at: where_)
            keys.append(APIKey(id: digest.prefix(6).hexString, digest: digest, scopes: scopes))
        }
        guard !keys.isEmpty else { throw PushPrepError(.invalidSettings, "\(source) holds no keys") }
        self.init(keys: keys)
    }

    private static func digest(of field: Substring, at where_: String) throws(PushPrepError) -> [UInt8] {
        if field.hasPrefix("sha256:") {
            let hex = Array(field.dropFirst("sha256:".count).utf8)
            guard hex.count == 64 else {
                throw PushPrepError(.invalidSettings, "\(where_): sha256: must be followed by 64 hex digits")
            }
            var bytes: [UInt8] = []
            for index in stride(from: 0, to: 64, by: 2) {
                guard let high = hexDigitValue(hex[index]), let low = hexDigitValue(hex[index + 1]) else {
                    throw PushPrepError(.invalidSettings, "\(where_): sha256: must be followed by 64 hex digits")
                }
                bytes.append(high << 4 | low)
            }
            return bytes
        }
        guard field.count >= minimumKeyLength else {
            throw PushPrepError(.invalidSettings, "\(where_): a key must have at least \(minimumKeyLength) characters")
        }
        return Array(SHA256.hash(data: Array(field.utf8)))
    }

    /// The key whose hash is the hash of `presented`, compared in constant time against every
    /// key (no early exit), so the time taken tells nothing about how close a guess was.
    package func authenticate(_ presented: some StringProtocol) -> APIKey? {
        let digest = Array(SHA256.hash(data: Array(presented.utf8)))
        var match: APIKey?
        for key in keys where Self.constantTimeEqual(key.digest, digest) {
            match = key
        }
        return match
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
