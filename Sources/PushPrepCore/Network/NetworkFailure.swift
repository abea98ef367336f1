import Foundation
import NIOCore
import NIOPosix

/// A network failure as people read it: one sentence that names the host or port and says what
/// to do, in place of the networking library's own text (`handshakeFailed(NIOSSL.BoringSSLError
/// …WRONG_VERSION_NUMBER…)`, `bind(descriptor:ptr:bytes:): Address already in use (errno: 98)`,
/// `connection reset (error set): Connection refused (errno: 111)`). The one mapping every
/// connection PushPrep makes or accepts goes through: remote sources, webhooks, S3, PostgreSQL
/// and `serve`'s listener. Callers keep the library's text for their debug log.
package struct NetworkFailure: Sendable, Equatable {
    /// The class of failure.
    package enum Kind: Sendable, Equatable {
        /// The TLS handshake failed because the other side does not speak TLS on that port
        /// (an `https://` URL to a plain-HTTP port: `WRONG_VERSION_NUMBER`).
        case notTLS
        /// The TLS handshake failed otherwise (a certificate not trusted, no common protocol).
        case tls
        /// Nothing accepts connections there (`ECONNREFUSED`).
        case refused
        /// The other side reset or dropped the connection (`ECONNRESET`, `EPIPE`).
        case reset
        /// No route to the host or its network (`EHOSTUNREACH`, `ENETUNREACH`).
        case unreachable
        /// The name does not resolve.
        case dns
        /// Listening: the address and port are taken by another socket (`EADDRINUSE`).
        case addressInUse
        /// Listening: not permitted (`EACCES`, `EPERM`: a port below 1024 without privileges).
        case permissionDenied
        /// Listening: the address is not one of this machine's (`EADDRNOTAVAIL`).
        case addressNotAvailable
    }

    /// The class.
    package let kind: Kind

    /// The class of `error`, or nil when it is not a network failure this mapping knows (the
    /// caller keeps its own message then). Looks through NIO's connection errors to the failure
    /// of the last address tried.
    package init?(_ error: any Error) {
        guard let kind = Self.kind(of: error) else { return nil }
        self.kind = kind
    }

    /// A failure of this class.
    package init(kind: Kind) {
        self.kind = kind
    }

    private static func kind(of error: any Error) -> Kind? {
        switch error {
        case let error as IOError:
            return kind(errno: error.errnoCode)
        case let error as NIOConnectionError:
            if let last = error.connectionErrors.last { return kind(of: last.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return .dns }
            return nil
        case is SocketAddressError.UnknownHost:
            return .dns
        case let error as SocketAddressError:
            if case .failedToParseIPString = error { return nil }
            if case .unsupported = error { return nil }
            if case .unixDomainSocketPathTooLong = error { return nil }
            return .dns
        case let error as ChannelError:
            if case .ioOnClosedChannel = error { return .reset }
            if case .eof = error { return .reset }
            return nil
        default:
            // NIOSSL is not linked here: its errors are known by their module. Its text is the
            // only place that tells a plain-HTTP port from a certificate problem.
            if String(reflecting: type(of: error)).hasPrefix("NIOSSL.") {
                return String(describing: error).contains("WRONG_VERSION_NUMBER") ? .notTLS : .tls
            }
            return nil
        }
    }

    private static func kind(errno code: CInt) -> Kind? {
        switch code {
        case ECONNREFUSED: .refused
        case ECONNRESET, EPIPE, ECONNABORTED: .reset
        case EHOSTUNREACH, ENETUNREACH, ENETDOWN, EHOSTDOWN: .unreachable
        case EADDRINUSE: .addressInUse
        case EACCES, EPERM: .permissionDenied
        case EADDRNOTAVAIL: .addressNotAvailable
        default: nil
        }
    }

    /// `host:port` as a sentence names it (IPv6 in brackets).
    package static func endpoint(host: String, port: Int?) -> String {
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return port.map { "\(shownHost):\($0)" } ?? shownHost
    }

    /// The sentence for a connection this process opened to `host` (`port` when known).
    package func connecting(to host: String, port: Int?) -> String {
        let target = Self.endpoint(host: host, port: port)
        return switch kind {
        case .notTLS:
            "\(target) does not speak TLS on that port: use http:// for a plain-HTTP port, or the port that serves https"
        case .tls:
            "the TLS handshake with \(target) failed: check that its certificate is valid for \(host) and trusted here"
        case .refused:
            "nothing accepts connections at \(target) (connection refused): check the host and port, and that the server is running"
        case .reset:
            "\(target) closed the connection: check that it speaks the expected protocol on that port, then try again"
        case .unreachable:
            "\(target) cannot be reached (no route to it): check the address and this machine's network"
        case .dns:
            "the name \(host) does not resolve: check its spelling and this machine's DNS"
        case .addressInUse, .permissionDenied, .addressNotAvailable:
            "cannot connect to \(target): this machine refused to open the connection (check its network settings)"
        }
    }

    /// The sentence for a listener this process could not open on `host`:`port`.
    package func listening(on host: String, port: Int) -> String {
        let target = Self.endpoint(host: host, port: port)
        return switch kind {
        case .addressInUse:
            "port \(port) is already in use on \(host): stop what listens on \(target), or choose another --port"
        case .permissionDenied:
            "not permitted to listen on \(target) (ports below 1024 need privileges): choose a --port of 1024 or above"
        case .addressNotAvailable:
            "cannot listen on \(target): \(host) is not an address of this machine (check --host)"
        case .dns:
            "cannot listen on \(target): the name \(host) does not resolve (check --host)"
        case .notTLS, .tls, .refused, .reset, .unreachable:
            "cannot listen on \(target): check --host and --port"
        }
    }
}
