import Crypto
import Foundation
import NIOCore
import PushPrepTestSupport
import Synchronization

/// Routes of a ``TestServer`` that receive webhooks: each request's Standard Webhooks signature
/// is checked here, with swift-crypto's HMAC on the spec's own terms (the secret's `whsec_`
/// base64, `{id}.{timestamp}.{body}`, any of the `v1,` signatures), nothing of PushPrep's
/// signing; the server records what it got.
///
/// The answer is 500 to the first `failFirst` POSTs and `status` after, each after `delay`.
/// With `trickle`, the answer's head announces a body of `trickle` bytes, which then follow one
/// at a time, one every `trickleInterval` (a receiver that answers at once and holds the
/// connection); once the body is sent or the client has gone, ``TestServer/responses`` says how
/// far it got. Other methods are answered 501.
final class WebhookReceiver: TestServerRoutes {
    /// One request as the receiver saw it.
    struct Request: Equatable {
        var method: String
        var path: String
        var id: String
        var timestamp: String
        var signature: String
        var contentType: String
        var userAgent: String
        var body: String
        var verified: Bool
        var status: Int
    }

    /// How far one trickled answer got: noted once the body is sent or the client has gone.
    struct Response: Equatable {
        var id: String
        /// Body bytes written (the last one or two may have gone to a connection already closed).
        var sent: Int
        /// Whether the whole announced body was written.
        var complete: Bool
    }

    /// How the receiver answers (see the type).
    struct Settings: Sendable {
        var failFirst = 0
        var status = 200
        var delay = 0.0
        var trickle = 0
        var trickleInterval = 1.0
    }

    /// The secret's key (`whsec_` and base64, or base64).
    let key: [UInt8]
    let settings: Settings
    private let state = Mutex((posts: 0, responses: [Response]()))

    init(secret: String, settings: Settings) {
        key = Array(Data(base64Encoded: secret.hasPrefix("whsec_") ? String(secret.dropFirst(6)) : secret) ?? Data())
        self.settings = settings
    }

    /// Starts a receiver on `host` (a loopback address) checking signatures with `secret`.
    static func start(
        secret: String, failFirst: Int = 0, status: Int = 200, delay: Double = 0, host: String = "127.0.0.1",
        trickle: Int = 0, trickleInterval: Double = 1
    ) async throws -> TestServer<WebhookReceiver> {
        let settings = Settings(
            failFirst: failFirst, status: status, delay: delay, trickle: trickle, trickleInterval: trickleInterval)
        return try await TestServer.start(WebhookReceiver(secret: secret, settings: settings), host: host)
    }

    /// Whether one of the space-separated `v1,` signatures is the base64 HMAC-SHA256 of
    /// `{id}.{timestamp}.{body}`.
    func verify(id: String, timestamp: String, body: [UInt8], signature: String) -> Bool {
        let expected = Data(
            HMAC<SHA256>.authenticationCode(
                for: Array("\(id).\(timestamp).".utf8) + body, using: SymmetricKey(data: key))
        ).base64EncodedString()
        return signature.split(separator: " ").contains { $0 == "v1,\(expected)" }
    }

    /// 500 to the first `failFirst` POSTs, `status` after; 501 to other methods.
    func respond(
        to request: TestServer<WebhookReceiver>.Request, exchange: Void, reply: TestServer<WebhookReceiver>.Reply
    ) {
        guard request.method == "POST" else { return reply.send(501) }
        let number = state.withLock { state in
            state.posts += 1
            return state.posts
        }
        let status = number <= settings.failFirst ? 500 : settings.status
        let delay = TimeAmount.nanoseconds(Int64(settings.delay * 1e9))
        let trickle = settings.trickle
        guard trickle > 0 else {
            return reply.send(status, body: Array((status < 300 ? "ok\n" : "no\n").utf8), after: delay)
        }
        let id = request.headers["webhook-id"] ?? ""
        let interval = TimeAmount.nanoseconds(Int64(settings.trickleInterval * 1e9))
        reply.after(delay) {
            reply.sendHead(status, headers: [("Content-Length", "\(trickle)")])
            reply.trickle(
                Array(repeating: UInt8(ascii: "."), count: trickle), every: interval, first: interval, close: true
            ) { sent, complete in
                self.state.withLock { $0.responses.append(Response(id: id, sent: sent, complete: complete)) }
            }
        }
    }

    /// The trickled answers that ended so far, in order.
    var responses: [Response] { state.withLock { $0.responses } }
}

extension TestServer where Routes == WebhookReceiver {
    /// A URL on this receiver (`/hook` unless given).
    func url() -> String { url("/hook") }

    /// The POSTs received so far, in order, as the receiver checked them.
    var requests: [WebhookReceiver.Request] {
        get throws {
            received.filter { $0.method == "POST" }.map { request in
                let id = request.headers["webhook-id"] ?? ""
                let timestamp = request.headers["webhook-timestamp"] ?? ""
                let signature = request.headers["webhook-signature"] ?? ""
                return WebhookReceiver.Request(
                    method: request.method, path: request.uri, id: id, timestamp: timestamp, signature: signature,
                    contentType: request.headers["content-type"] ?? "", userAgent: request.headers["user-agent"] ?? "",
                    body: String(decoding: request.body, as: UTF8.self),
                    verified: routes.verify(id: id, timestamp: timestamp, body: request.body, signature: signature),
                    status: request.status ?? 0)
            }
        }
    }

    /// The trickled answers that ended so far, in order.
    var responses: [WebhookReceiver.Response] { get throws { routes.responses } }

    /// What the receiver got, a line a request, for a failure message.
    var output: String {
        ((try? requests) ?? []).map { "\($0.method) \($0.path) \($0.id) \($0.status) verified: \($0.verified)" }
            .joined(separator: "\n")
    }
}
