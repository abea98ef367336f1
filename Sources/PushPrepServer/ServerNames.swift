import Foundation
import HTTPTypes
import Hummingbird
import PushPrepCore
import PushPrepRemote
import Synchronization

/// A request's `Host` (or an `Origin`'s authority), parsed: the host (a name, lowercased and
/// without a trailing dot, or an IP address) and the port when one was written.
///
/// Parsing is strict and never guesses: IPv6 only in square brackets and without a zone, IPv4 only
/// as four decimal parts (`127.1` is not an address, and no name either), a name only of letters,
/// digits, `-`, `_` and dots between non-empty labels, a port of 1–5 digits up to 65535. Anything
/// else is not a host this server answers to.
struct HostAuthority: Hashable, Sendable {
    /// A host: a DNS name or an address.
    enum Host: Hashable, Sendable {
        /// Lowercased, without the trailing dot of a fully qualified name (`Example.COM.` is
        /// `example.com`).
        case name(String)
        case address(IPAddress)
    }

    /// The host.
    var host: Host
    /// The port written after the host, or nil when none was.
    var port: Int?

    /// The longest authority read (a DNS name has at most 253 characters).
    static let maxLength = 300

    /// Parses `host[:port]`, as a `Host` header, an `Origin`'s authority or an `--allowed-host`
    /// writes it.
    init?(_ text: some StringProtocol) {
        let text = String(text)
        guard !text.isEmpty, text.utf8.count <= Self.maxLength else { return nil }
        var hostText: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostText = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
            // Only IPv6 goes in brackets, and a zone (`%25eth0`) names no host of this server.
            guard hostText.contains(":"), !hostText.contains("%"), let address = IPAddress(String(hostText)),
                case .v6 = address
            else { return nil }
            host = .address(address)
        } else {
            let colons = text.filter { $0 == ":" }.count
            guard colons <= 1 else { return nil }  // IPv6 must be in brackets
            if let colon = text.firstIndex(of: ":") {
                hostText = text[..<colon]
                portText = text[text.index(after: colon)...]
            } else {
                hostText = text[...]
            }
            if hostText.hasSuffix(".") { hostText = hostText.dropLast() }
            guard !hostText.isEmpty else { return nil }
            if let address = IPAddress(String(hostText)) {
                host = .address(address)
            } else {
                let lowered = hostText.lowercased()
                let labels = lowered.split(separator: ".", omittingEmptySubsequences: false)
                let allowed = { (byte: UInt8) in
                    (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
                }
                guard labels.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 63 && $0.utf8.allSatisfy(allowed) }),
                    // Four numeric labels that are not an address (`1.2.3.999`) are no name either.
                    !labels.allSatisfy({ $0.utf8.allSatisfy { (0x30...0x39).contains($0) } })
                else { return nil }
                host = .name(lowered)
            }
        }
        if let portText {
            guard (1...5).contains(portText.utf8.count), portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let port = Int(portText), port <= 65535
            else { return nil }
            self.port = port
        }
    }

    /// An authority from its parts.
    init(host: Host, port: Int?) {
        self.host = host
        self.port = port
    }

    /// The host as a URL writes it (IPv6 in brackets).
    var hostText: String {
        switch host {
        case .name(let name): name
        case .address(let address): address.urlHost
        }
    }
}

/// The names this server answers to, and the check of each request's `Host` against them: a
/// page on another site that had its own name resolve to this server's address (DNS rebinding)
/// sends its own name as `Host`, and is refused before any route sees it.
///
/// A `Host` is this server's when it is
/// - the address the server is bound to, with the port it listens on (a wildcard address, `0.0.0.0`
///   or `::`, stands for every address of the machine: any IP literal with that port; a rebinding
///   page never sends an address, always its own name);
/// - `localhost`, with that port;
/// - the host and port of `--public-url` (the port its scheme implies when it names none);
/// - an `--allowed-host` (`NAME` for any port, `NAME:PORT` for that one).
///
/// A `Host` without a port stands for port 80 or 443 (the defaults of http and https). Names
/// compare without case and without a trailing dot; addresses compare as addresses (`[0:0::1]`
/// is `[::1]`).
final class ServerNames: Sendable {
    /// One name this server answers to; `port` nil: any port.
    struct Entry: Sendable, Hashable {
        enum Match: Sendable, Hashable {
            case host(HostAuthority.Host)
            /// Any IPv4 literal (bound to `0.0.0.0`), or any IP literal (bound to `::`).
            case anyAddress(ipv6: Bool)
        }

        /// What the host must be.
        var match: Match
        /// The port it must come with; nil: any.
        var port: Int?
    }

    /// The configured entries; the ones that take the bound port are completed by ``bound(port:)``.
    private let fixed: [Entry]
    private let boundHost: Entry.Match?
    private let boundPort: Mutex<Int?>
    /// The origin (`scheme://host:port`) of `--public-url`, for the console's same-origin check.
    let publicOrigin: (scheme: String, authority: HostAuthority)?

    /// The names of a server configured as `configuration` (its port, when 0, is learned from
    /// ``bound(port:)`` once it listens).
    init(_ configuration: ServerConfiguration) {
        var fixed: [Entry] = []
        var publicOrigin: (scheme: String, authority: HostAuthority)?
        if let url = configuration.publicURL, let origin = Self.origin(url) {
            fixed.append(Entry(match: .host(origin.authority.host), port: origin.authority.port))
            publicOrigin = origin
        }
        for text in configuration.allowedHosts {
            if let authority = HostAuthority(text) {
                fixed.append(Entry(match: .host(authority.host), port: authority.port))
            }
        }
        self.fixed = fixed
        self.publicOrigin = publicOrigin
        boundHost = Self.boundMatch(configuration.host)
        boundPort = Mutex(configuration.port == 0 ? nil : configuration.port)
    }

    /// What the bound address matches: a wildcard's any-address, else the host itself.
    private static func boundMatch(_ host: String) -> Entry.Match? {
        switch IPAddress(host) {
        case .v4(0)?: return .anyAddress(ipv6: false)
        case .v6(let address)? where address.high == 0 && address.low == 0: return .anyAddress(ipv6: true)
        default:
            return HostAuthority(host.hasPrefix("[") || !host.contains(":") ? host : "[\(host)]").map { .host($0.host) }
        }
    }

    /// Records the port the server listens on (the configured one, unless that was 0).
    func bound(port: Int) {
        boundPort.withLock { $0 = port }
    }

    /// Every entry, the bound address and `localhost` with the bound port included.
    var entries: [Entry] {
        var entries = fixed
        if let port = boundPort.withLock({ $0 }) {
            if let boundHost { entries.append(Entry(match: boundHost, port: port)) }
            entries.append(Entry(match: .host(.name("localhost")), port: port))
        }
        return entries
    }

    /// Whether `authority` names this server. A missing port is the default of either scheme
    /// (80 straight to this server, 443 through a TLS proxy that passes the `Host` on).
    func allows(_ authority: HostAuthority) -> Bool {
        let ports = authority.port.map { [$0] } ?? [80, 443]
        return entries.contains { entry in
            if let wanted = entry.port, !ports.contains(wanted) { return false }
            switch entry.match {
            case .host(let host): return host == authority.host
            case .anyAddress(let ipv6):
                guard case .address(let address) = authority.host else { return false }
                if case .v4 = address { return true }
                return ipv6
            }
        }
    }

    /// The request's `Host` checked: nil when it names this server, else the problem to answer.
    /// A missing, repeated or malformed `Host` is `400 invalid_request` (RFC 9112 §3.2); a
    /// well-formed one this server does not answer to is `421 invalid_request` (RFC 9110
    /// §15.5.20: the request was sent to a server that is not authoritative for its name). The
    /// status tells the two apart; the code is the class of fault, as for `405` and `414`.
    func problem(for request: Request) -> Problem? {
        // The first Host becomes the authority; one left among the fields is a second one.
        guard let text = request.head.authority, request.headers[.host] == nil else {
            return Problem(.badRequest, .invalidRequest, "send exactly one Host header")
        }
        guard let authority = HostAuthority(text) else {
            return Problem(.badRequest, .invalidRequest, "the Host header is not a host name or address with a port")
        }
        guard allows(authority) else {
            return Problem(
                .misdirectedRequest, .invalidRequest,
                "this server does not answer to the name in the Host header; an operator can add it with --allowed-host"
            )
        }
        return nil
    }

    /// The scheme and authority of an `http` or `https` URL (or an `Origin`), the port its scheme
    /// implies filled in.
    static func origin(_ url: String) -> (scheme: String, authority: HostAuthority)? {
        let lowered = url.lowercased()
        let scheme: String
        if lowered.hasPrefix("http://") {
            scheme = "http"
        } else if lowered.hasPrefix("https://") {
            scheme = "https"
        } else {
            return nil
        }
        let rest = url.dropFirst(scheme.count + 3)
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        guard var authority = HostAuthority(rest[..<end]) else { return nil }
        if authority.port == nil { authority.port = scheme == "https" ? 443 : 80 }
        return (scheme, authority)
    }
}

/// Refuses, before anything else looks at it, a request whose `Host` does not name this server
/// (``ServerNames``): on every route, the console's pages included, with problem JSON.
struct HostMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let names: ServerNames

    func handle(_ request: Request, context: APIRequestContext, next: Next) async throws -> Response {
        if let problem = names.problem(for: request) { throw problem }
        return try await next(request, context)
    }
}
