package import Foundation
package import Hummingbird
import Logging
package import NIOCore
import PushPrepQueue
import Synchronization

/// What one request carries through the middleware to its handler: the request id (which
/// follows a job into the worker's logs) and the API key that authenticated it.
package struct APIRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// `X-Request-Id` as sent (when it is a sane token), else one generated here.
    package var requestID: String = ""
    /// The key the request authenticated with, or nil when the server has no keys. Recorded in
    /// ``notes`` too, for the access log written by the middleware outside the one that sets it.
    package var apiKey: APIKey? {
        didSet { notes.keyID.withLock { $0 = apiKey?.id } }
    }
    /// What inner steps tell outer ones about this request (middleware pass the context down
    /// by value, so a change made inside is not seen outside but through a reference).
    let notes = RequestNotes()
    /// The address of the connection's peer (the client, or the proxy in front), which failed
    /// authentications are counted by.
    package let remoteAddress: SocketAddress?

    /// The client's IP address (the TCP peer), nil when the connection has none (a Unix socket):
    /// long polls are bounded per client by it when no key is presented.
    package var clientAddress: String? { remoteAddress?.ipAddress }

    package init(source: Source) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// Request bodies are read with explicit caps by each endpoint; this is the cap of
    /// Hummingbird's own `decode` (unused by the API).
    package var maxUploadSize: Int { 1 << 20 }

    package var requestDecoder: JSONDecoder { JSONDecoder() }

    package var responseEncoder: JSONEncoder { APICoding.encoder() }

    /// The scope of whoever made the request: the key's, or both when the server has no keys
    /// (it then listens on loopback only).
    package var scopes: Set<APIKey.Scope> { apiKey?.scopes ?? Set(APIKey.Scope.allCases) }

    /// The idempotency keys' owner: the key's id, so two clients never share a key space.
    var idempotencyScope: String { apiKey?.id ?? "anonymous" }

    /// Who a request's long poll counts against (``JobWatch/withSlot(client:_:)``): its API
    /// key, or its address on a server without keys.
    var waitClient: String { apiKey.map { "key:\($0.id)" } ?? "address:\(clientAddress ?? "unknown")" }
}

/// See ``APIRequestContext/notes``.
final class RequestNotes: Sendable {
    /// The id of the API key that authenticated the request.
    let keyID = Mutex<String?>(nil)
}
