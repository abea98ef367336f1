import Foundation

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

    /// Parses and checks a URL; throws `fetch_failed` for anything PushPrep will not fetch. The
    /// error is permanent (``PushPrepError/isPermanent``): the same text fails the same way on
    /// every try. Messages quote the URL with its credentials hidden and its control characters
    /// escaped (``URLCredentials``, ``UntrustedText``).
    ///
    /// The host has one spelling everywhere: its ASCII form, lowercased (an international name
    /// as IDNA punycode, `bücher.example` as `xn--bcher-kva.example`). That is the form the
    /// request goes out with, so the name PushPrep resolves, checks and pins is the name the HTTP
    /// client connects to; a second spelling would let the client resolve a name nobody checked.
    package init(_ text: String) throws(PushPrepError) {
        let quoted = UntrustedText.escaped(URLCredentials.redacted(text))
        func refuse(_ reason: String) -> PushPrepError {
            PushPrepError(.fetchFailed, "\(reason): \(quoted)", permanent: true)
        }
        // A control character is no part of a URL (RFC 3986); Foundation would percent-encode
        // some and keep others, and the text would reach terminals and logs as it is.
        guard !UntrustedText.hasControl(text) else { throw refuse("the URL holds a control character") }
        guard var components = URLComponents(string: text), components.url != nil else {
            throw refuse("not a valid URL")
        }
        let scheme = (components.scheme ?? "").lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw refuse("only http and https URLs are fetched, not \(scheme.isEmpty ? "this" : scheme)")
        }
        // Credentials in a URL end up in logs and manifests, and are a classic way to smuggle a
        // different host past a naive parser (http://good.example@evil.example/).
        guard components.user == nil, components.password == nil else {
            throw refuse("URLs with credentials (user:password@) are refused")
        }
        guard let encodedHost = components.encodedHost, !encodedHost.isEmpty else {
            throw refuse("the URL has no host")
        }
        guard let host = Self.asciiHost(encodedHost) else {
            throw refuse("the URL's host is not a host name or an IP address")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw refuse("the URL's port \(port) is out of range")
        }
        components.scheme = scheme
        components.encodedHost = host.contains(":") ? "[\(host)]" : host
        guard let url = components.url else { throw refuse("not a valid URL") }
        // The HTTP client takes the host from the URL text again; refuse a URL whose text it
        // would read with another host than the one checked and pinned.
        guard Self.requestHost(of: url.absoluteString) == host else {
            throw refuse("the URL's host cannot be written unambiguously")
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
            throw PushPrepError(
                .fetchFailed,
                "redirect to an invalid location \(UntrustedText.escaped(URLCredentials.redacted(location))) "
                    + "from \(text)", permanent: true)
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
}
