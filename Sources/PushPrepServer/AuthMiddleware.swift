import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PushPrepCore
import Synchronization

/// Checks `Authorization: Bearer KEY` against the keys file, the key's scope against the
/// request, and the key's request rate: the middleware of the API's group of routes (and of
/// requests no route answers), so it sees no other route (``APIServer/router(configuration:queue:publicURL:registry:readiness:names:sweeper:)``).
/// Failed keys are counted per client address (``AuthFailureLimiter``), and a write without a
/// key (a server without keys) must not come from another site's page (``RequestOrigin``).
struct AuthMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    /// Nil: the server has no keys (it listens on loopback only) and every request has both
    /// scopes.
    let keys: APIKeyStore?
    let rateLimiter: RateLimiter?
    /// The names this server answers to, for the same-origin check of writes without a key.
    let names: ServerNames
    /// Failed keys per client address (shared with the console's logins).
    let failures: AuthFailureLimiter

    func handle(_ request: Request, context: APIRequestContext, next: Next) async throws -> Response {
        var context = context
        if let keys {
            guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
                throw Problem(.unauthorized, .unauthorized, "send an API key as Authorization: Bearer KEY")
            }
            if let wait = failures.retryAfter(context.remoteAddress) {
                throw Self.tooManyFailures(wait)
            }
            let presented = header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            guard let key = keys.authenticate(presented) else {
                failures.recordFailure(context.remoteAddress)
                throw Problem(.unauthorized, .unauthorized, "the API key is not known to this server")
            }
            context.apiKey = key
            context.logger[metadataKey: "key"] = "\(key.id)"
        }
        // A browser sends no key another site's page could use, but it does send a simple POST
        // (a text/plain or multipart form) to any address; only its Origin tells it apart.
        if context.apiKey == nil, !Self.isSafe(request.method), !RequestOrigin.isSameOrigin(request, names: names) {
            throw Problem(
                .forbidden, .forbidden,
                "a request from another site's page is refused; send it from a client (no Origin header) or with an API key"
            )
        }
        let needed = Self.scope(for: request)
        guard context.scopes.contains(needed) else {
            throw Problem(.forbidden, .forbidden, "this API key lacks the \(needed.rawValue) scope")
        }
        if let rateLimiter, let wait = rateLimiter.take(context.apiKey?.id ?? "anonymous") {
            throw Problem(
                .tooManyRequests, .rateLimited, "too many requests for this API key; retry in \(wait) s",
                retryAfter: wait)
        }
        return try await next(request, context)
    }

    /// Methods that change nothing (RFC 9110 §9.2.1).
    static func isSafe(_ method: HTTPRequest.Method) -> Bool {
        [.get, .head, .options].contains(method)
    }

    /// The answer to an address that failed to authenticate too often.
    static func tooManyFailures(_ wait: Int) -> Problem {
        Problem(
            .tooManyRequests, .rateLimited,
            "too many failed authentications from this address; retry in \(wait) s", retryAfter: wait)
    }

    /// `read` for GET and HEAD and for the endpoints that only compute (`payload`,
    /// `preflight`); `write` for everything that creates or changes a job.
    static func scope(for request: Request) -> APIKey.Scope {
        switch request.method {
        case .get, .head, .options: return .read
        default:
            return ["/v1/payload", "/v1/preflight"].contains(request.uri.path) ? .read : .write
        }
    }
}

/// A token bucket per API key: `rate` requests a second on average, bursts up to `burst`.
final class RateLimiter: Sendable {
    private let buckets: Mutex<TokenBuckets>

    /// Buckets kept at most (``TokenBuckets``), so many keys cannot grow the table without bound.
    static let maxBuckets = 10_000

    /// A limiter of `rate` requests a second, bursts up to `burst` (at least 1).
    init(rate: Double, burst: Double) {
        buckets = Mutex(TokenBuckets(capacity: max(burst, 1), rate: rate, maxKeys: Self.maxBuckets))
    }

    /// Takes a token for `key`: nil when there was one, else the whole seconds until there is.
    func take(_ key: String, now: ContinuousClock.Instant = .now) -> Int? {
        buckets.withLock { buckets in
            let tokens = buckets.tokens(key, now: now)
            guard tokens >= 1 else {
                buckets.set(key, tokens: tokens, now: now)
                return buckets.secondsUntilToken(from: tokens)
            }
            buckets.set(key, tokens: tokens - 1, now: now)
            return nil
        }
    }
}
