import Foundation
package import PushPrepCore

/// A source URL checked for what PushPrep fetches: `http` or `https`, a host, no credentials.
package struct RemoteURL: Sendable, Equatable, CustomStringConvertible {
    /// The URL as it will be requested.
    package let text: String
    /// `http` or `https`, lowercase.
    package let scheme: String
    /// The host in its one canonical spelling (lowercase ASCII, IDNA punycode for international
    /// names, without IPv6 brackets): resolved, checked, pinned, requested and logged as such.
    package let host: String
    /// The port, explicit or the scheme's default.
    package let port: Int
    /// The host as an address when it is an IP literal.
    package let literalAddress: IPAddress?

    package var description: String { text }

    /// Parses and checks a URL; throws `fetch_failed` for anything PushPrep will not fetch.
    ///
    /// The host has one spelling everywhere: its ASCII form, lowercased (an international name
    /// as IDNA punycode, `bücher.example` as `xn--bcher-kva.example`). That is the form the
    /// request goes out with, so the name PushPrep resolves, checks and pins is the name the HTTP
    /// client connects to; a second spelling would let the client resolve a name nobody checked.
    package init(_ text: String) throws(PushPrepError) {
        guard var components = URLComponents(string: text), components.url != nil else {
            throw PushPrepError(.fetchFailed, "not a valid URL: \(Self.redacted(text))")
        }
        let scheme = (components.scheme ?? "").lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw PushPrepError(
                .fetchFailed, "only http and https URLs are fetched, not \(scheme.isEmpty ? "this" : scheme): \(text)")
        }
        // Credentials in a URL end up in logs and manifests, and are a classic way to smuggle a
        // different host past a naive parser (http://good.example@evil.example/).
        guard components.user == nil, components.password == nil else {
            throw PushPrepError(
                .fetchFailed, "URLs with credentials (user:password@) are refused: \(Self.redacted(text))")
        }
        guard let encodedHost = components.encodedHost, !encodedHost.isEmpty else {
            throw PushPrepError(.fetchFailed, "the URL has no host: \(text)")
        }
        guard let host = Self.asciiHost(encodedHost) else {
            throw PushPrepError(.fetchFailed, "the URL's host is not a host name or an IP address: \(text)")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw PushPrepError(.fetchFailed, "the URL's port \(port) is out of range: \(text)")
        }
        components.scheme = scheme
        components.encodedHost = host.contains(":") ? "[\(host)]" : host
        guard let url = components.url else { throw PushPrepError(.fetchFailed, "not a valid URL: \(text)") }
        // The HTTP client takes the host from the URL text again; refuse a URL whose text it
        // would read with another host than the one checked and pinned.
        guard Self.requestHost(of: url.absoluteString) == host else {
            throw PushPrepError(.fetchFailed, "the URL's host cannot be written unambiguously: \(text)")
        }
        self.text = url.absoluteString
        self.scheme = scheme
        self.host = host
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
        self.literalAddress = IPAddress(host)
    }

    /// The canonical spelling of a host as written in a URL or given with `--allow-host`:
    /// lowercase ASCII (international names as IDNA punycode), without IPv6 brackets; nil for
    /// anything that is neither a DNS name nor an IP literal (percent-encoded names, zone ids,
    /// spaces, other punctuation).
    package static func asciiHost(_ spelling: String) -> String? {
        var spelling = spelling
        if spelling.hasPrefix("[") && spelling.hasSuffix("]") {
            let literal = String(spelling.dropFirst().dropLast())
            guard case .v6 = IPAddress(literal) else { return nil }
            return IPAddress(literal)?.description
        }
        if !spelling.allSatisfy(\.isASCII) {
            // Foundation applies IDNA (UTS #46) when it serializes a host.
            guard let encoded = URLComponents(string: "http://\(spelling)/")?.encodedHost else { return nil }
            spelling = encoded
        }
        let host = spelling.lowercased()
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-._")
        guard !host.isEmpty, host.utf8.count <= 253, host.allSatisfy({ allowed.contains($0) }) else { return nil }
        return host
    }

    /// The host async-http-client will connect to for a request URL: it parses the text with
    /// `URL(string:)` and takes `host` without IPv6 brackets. Nil when it would find none.
    package static func requestHost(of text: String) -> String? {
        guard var host = URL(string: text)?.host, !host.isEmpty else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// Resolves a `Location` header against this URL, then checks the result like any source.
    package func redirected(to location: String) throws(PushPrepError) -> RemoteURL {
        guard let base = URL(string: text), let target = URL(string: location, relativeTo: base)?.absoluteURL else {
            throw PushPrepError(.fetchFailed, "redirect to an invalid location \(location) from \(text)")
        }
        return try RemoteURL(target.absoluteString)
    }

    /// The extension of the URL path's last component (lowercase, letters and digits only), or "".
    package var pathExtension: String {
        guard let path = URLComponents(string: text)?.path else { return "" }
        let ext = PathName.lowercasedExtension(of: path)
        guard (1...8).contains(ext.count), ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            return ""
        }
        return ext
    }

    /// `scheme://host:port`, the unit of per-host concurrency.
    package var origin: String { "\(scheme)://\(literalAddress?.urlHost ?? host.lowercased()):\(port)" }

    /// The URL with any credentials replaced, for messages.
    package static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text) else { return "(unparseable URL)" }
        if components.user != nil { components.user = "***" }
        if components.password != nil { components.password = "***" }
        return components.string ?? "(unparseable URL)"
    }
}
