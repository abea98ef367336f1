package import AsyncHTTPClient
package import Logging
import NIOCore
package import PushPrepCore
import Synchronization

/// HTTP clients that connect only to addresses already checked with ``AddressCheck`` (by the
/// fetcher, or by the webhook sender).
///
/// async-http-client resolves host names itself when it opens a connection, which would let a
/// DNS answer change between PushPrep's check and the connect. Instead each client here is made
/// for one (host, checked address) pair with `dnsOverride = [host: address]`: the connection
/// goes to that literal address and no resolution happens, while the `Host` header, TLS SNI
/// and certificate validation still use the host name. URLs whose host is an IP literal need no
/// override. Clients are kept per pair so connections to the same place are reused.
package final class PinnedClients: Sendable {
    private struct Key: Hashable {
        let host: String
        let address: IPAddress
    }

    private let connectTimeout: Duration
    private let readTimeout: Duration
    private let logger: Logger
    private let clients = Mutex<[Key: HTTPClient]>([:])
    private let closed = Mutex(false)

    /// Clients with these timeouts; call ``shutdown()`` when done.
    package init(connectTimeout: Duration, readTimeout: Duration, logger: Logger) {
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.logger = logger
    }

    /// The client that sends the request for `url` to `address`, and nowhere else.
    ///
    /// The override is keyed by `url.host`, the spelling PushPrep resolved and checked; the
    /// client looks it up by the host it reads from the request's URL text. Should the two ever
    /// differ, the client would resolve the name itself, so the request is refused instead.
    package func client(for url: RemoteURL, address: IPAddress) throws(PushPrepError) -> HTTPClient {
        let host = url.host
        guard RemoteURL.requestHost(of: url.text) == host else {
            throw PushPrepError(
                .fetchFailed,
                "refused to send \(url): the request would name host \(RemoteURL.requestHost(of: url.text) ?? "(none)"), "
                    + "not the checked \(host)")
        }
        let key = Key(host: host, address: address)
        let made: HTTPClient? = clients.withLock { clients in
            if let existing = clients[key] { return existing }
            guard !closed.withLock({ $0 }) else { return nil }
            var configuration = HTTPClient.Configuration()
            // Redirects are followed by RemoteFetcher so that every hop is resolved and checked.
            configuration.redirectConfiguration = .disallow
            configuration.timeout = HTTPClient.Configuration.Timeout(
                connect: TimeAmount(connectTimeout), read: TimeAmount(readTimeout))
            // Compressed bodies would make the byte cap meaningless (a small gzip bomb).
            configuration.decompression = .disabled
            configuration.proxy = nil
            // RemoteFetcher retries with its own backoff and deadline; AHC's retrying of failed
            // connection attempts would hide the failure until the deadline.
            configuration.connectionPool.retryConnectionEstablishment = false
            if IPAddress(host) == nil {
                configuration.dnsOverride = [host: address.description]
            }
            let client = HTTPClient(
                eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                configuration: configuration,
                backgroundActivityLogger: logger
            )
            clients[key] = client
            return client
        }
        guard let made else { throw PushPrepError(.fetchFailed, "the fetcher has been shut down") }
        return made
    }

    /// Shuts every client down; later calls to ``client(for:address:)`` fail.
    package func shutdown() async {
        closed.withLock { $0 = true }
        let all = clients.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in all {
            try? await client.shutdown()
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
