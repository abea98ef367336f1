import Crypto
import Foundation
import HTTPTypes
import Hummingbird
package import PushPrepCore

/// A console login: who (the API key's id, `anonymous` on a server without keys), what it may do
/// (the key's scopes when it logged in), until when, and a random nonce that the CSRF token is
/// derived from. Carried in a cookie as a token this process signed (HMAC-SHA256), never the key
/// itself, so a stolen cookie expires and cannot be turned back into the key.
struct ConsoleSession: Sendable, Equatable {
    var keyID: String
    var scopes: Set<APIKey.Scope>
    var expires: Date
    /// 16 random bytes as hex: binds the CSRF token to this session.
    var nonce: String

    /// The key id of sessions on a server without API keys.
    static let anonymous = "anonymous"
}

/// Signs and checks session tokens and CSRF tokens with one secret (per process unless
/// configured: a restart logs everyone out, which is the safe failure).
struct ConsoleSessions: Sendable {
    /// The HMAC key's bytes (`SymmetricKey` is not `Sendable`).
    let secretBytes: [UInt8]
    var secret: SymmetricKey { SymmetricKey(data: secretBytes) }
    /// The keys sessions must still belong to: a key removed from the keys file (and the server
    /// restarted) no longer opens the console. Nil: the server has no keys.
    let keys: APIKeyStore?
    /// How long a login lasts.
    let lifetime: TimeInterval

    /// The session cookie's name.
    static let cookieName = "pushprep_session"

    /// Sessions signed with `secret` (32 random bytes when nil: this process's own).
    init(secret: [UInt8]? = nil, keys: APIKeyStore?, lifetime: TimeInterval = 12 * 3600) {
        var generator = SystemRandomNumberGenerator()
        self.secretBytes = secret ?? (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        self.keys = keys
        self.lifetime = lifetime
    }

    /// A fresh session for `keyID` with `scopes`.
    func open(keyID: String, scopes: Set<APIKey.Scope>, now: Date = Date()) -> ConsoleSession {
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
        return ConsoleSession(keyID: keyID, scopes: scopes, expires: now + lifetime, nonce: nonce)
    }

    /// `v1|keyID|scopes|expiry|nonce`, base64url, a dot, and its HMAC, base64url.
    func token(for session: ConsoleSession) -> String {
        let scopes = session.scopes.sorted().map(\.rawValue).joined(separator: ",")
        let payload = "v1|\(session.keyID)|\(scopes)|\(Int(session.expires.timeIntervalSince1970))|\(session.nonce)"
        let mac = HMAC<SHA256>.authenticationCode(for: Array(payload.utf8), using: secret)
        return Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode(Array(mac))
    }

    /// The session a token stands for, or nil when it was not signed here, has expired, or its
    /// key is no longer configured. The scopes are narrowed to the key's current ones.
    func session(from token: String, now: Date = Date()) -> ConsoleSession? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 512, parts.count == 2, let payload = Base64URL.decode(parts[0]),
            let mac = Base64URL.decode(parts[1]),
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: payload, using: secret)
        else { return nil }
        let fields = String(decoding: payload, as: UTF8.self).split(separator: "|", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0] == "v1", let expiry = Int(fields[3]) else { return nil }
        let expires = Date(timeIntervalSince1970: TimeInterval(expiry))
        guard expires > now else { return nil }
        var scopes = Set(fields[2].split(separator: ",").compactMap { APIKey.Scope(rawValue: String($0)) })
        let keyID = String(fields[1])
        if let keys {
            guard let key = keys.keys.first(where: { $0.id == keyID }) else { return nil }
            scopes.formIntersection(key.scopes)
        } else {
            guard keyID == ConsoleSession.anonymous else { return nil }
        }
        return ConsoleSession(keyID: keyID, scopes: scopes, expires: expires, nonce: String(fields[4]))
    }

    /// The session of `request`'s cookie, if any is valid.
    func session(of request: Request, now: Date = Date()) -> ConsoleSession? {
        guard let token = Cookies.value(named: Self.cookieName, in: request.headers[values: .cookie]) else {
            return nil
        }
        return session(from: token, now: now)
    }

    /// The CSRF token of `session`: an HMAC of its nonce, so it is worthless without the cookie
    /// and changes with every login.
    func csrfToken(for session: ConsoleSession) -> String {
        Base64URL.encode(
            Array(HMAC<SHA256>.authenticationCode(for: Array("csrf|\(session.nonce)".utf8), using: secret)))
    }

    /// Whether `presented` is `session`'s CSRF token (compared in constant time).
    func checkCSRF(_ presented: String?, for session: ConsoleSession) -> Bool {
        guard let presented else { return false }
        return APIKeyStore.constantTimeEqual(Array(presented.utf8), Array(csrfToken(for: session).utf8))
    }

    /// The `Set-Cookie` value that stores `session` (HttpOnly, SameSite=Strict, Path=/, and
    /// Secure when the browser reached the server over https).
    func cookie(for session: ConsoleSession, secure: Bool, now: Date = Date()) -> String {
        let maxAge = max(0, Int(session.expires.timeIntervalSince(now)))
        return "\(Self.cookieName)=\(token(for: session)); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
    }

    /// The `Set-Cookie` value that clears the session.
    static func clearingCookie(secure: Bool) -> String {
        "\(cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }
}

/// `--console-secret-file`: the key of the console's session tokens.
package enum ConsoleSecret {
    /// The shortest secret accepted, in bytes (an HMAC-SHA256 key's own length).
    static let minimumBytes = 32

    /// The file's bytes without surrounding whitespace (`openssl rand -base64 48 > FILE` makes
    /// one); `invalid_settings` when it is shorter than 32 bytes.
    package static func read(path: String) throws(PushPrepError) -> [UInt8] {
        let contents = try InputFile.read(path: path, maxBytes: 4096) { _ in true }.contents ?? []
        let secret = Array(
            String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard secret.count >= minimumBytes else {
            throw PushPrepError(
                .invalidSettings,
                "\(path) must hold a secret of at least \(minimumBytes) bytes (openssl rand -base64 48)")
        }
        return secret
    }
}

/// Reads `Cookie` headers.
enum Cookies {
    /// The value of the first cookie called `name`.
    static func value(named name: String, in headers: [String]) -> String? {
        for header in headers {
            for pair in header.split(separator: ";") {
                let trimmed = pair.trimmingCharacters(in: .whitespaces)
                guard let equals = trimmed.firstIndex(of: "=") else { continue }
                if trimmed[..<equals] == name { return String(trimmed[trimmed.index(after: equals)...]) }
            }
        }
        return nil
    }
}

/// Base64url without padding (RFC 4648 §5).
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: Substring) -> [UInt8]? {
        guard
            text.utf8.allSatisfy({
                $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
                    || (0x61...0x7A).contains($0)
            })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}

/// Where a POST came from, by the headers browsers set and pages cannot forge: a request another
/// site's page made (`Sec-Fetch-Site: cross-site`/`same-site`, an `Origin` naming another host,
/// or `Origin: null`) is refused before its CSRF token is even looked at. Clients that send
/// neither header (curl, the tests) still need the token. The API's writes without a key go
/// through the same check (``AuthMiddleware``).
enum RequestOrigin {
    /// `Origin` must be `--public-url`'s origin, or the origin the request was sent to (its
    /// `Host`, over http or https) when that is a name this server answers to (``ServerNames``):
    /// `Host` alone is not trusted, since a page that had its own name resolve to this server
    /// sends that name as both `Host` and `Origin`.
    static func isSameOrigin(_ request: Request, names: ServerNames) -> Bool {
        if let site = request.headers[.secFetchSite], site != "same-origin" { return false }
        guard let text = request.headers[.origin] else { return true }
        guard let origin = ServerNames.origin(text),
            // An origin is scheme://host[:port], nothing after it.
            !text.dropFirst(origin.scheme.count + 3).contains(where: { $0 == "/" || $0 == "?" || $0 == "#" })
        else { return false }
        if let configured = names.publicOrigin, configured.scheme == origin.scheme,
            configured.authority == origin.authority
        {
            return true
        }
        guard let host = request.head.authority.flatMap({ HostAuthority($0) }), names.allows(host),
            names.allows(origin.authority)
        else { return false }
        return host.host == origin.authority.host && (host.port ?? origin.authority.port) == origin.authority.port
    }

    /// Whether the browser reached the server over https: directly (never, today: `serve` speaks
    /// plain HTTP) or through a proxy that says so.
    static func isSecure(_ request: Request, publicURL: String?) -> Bool {
        if request.headers[.xForwardedProto]?.lowercased() == "https" { return true }
        return publicURL?.lowercased().hasPrefix("https://") == true
    }
}

extension HTTPField.Name {
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let host = HTTPField.Name("Host")!
}
