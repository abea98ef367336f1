import Foundation
import NIOCore
import Synchronization

/// Routes of a ``TestServer`` that serve fixtures the ways remote sources misbehave.
///
/// Routes (every `<key>` makes a route's state independent between tests):
/// - `/files/<name>`: a fixture with its Content-Type, an ETag and Last-Modified; 304 on a match.
/// - `/noext/<stem>`: the fixture `<stem>.jpg` under a path with no extension, no Content-Type of use.
/// - `/wrong-type/<name>`: a fixture with `Content-Type: image/png` whatever it is.
/// - `/slow-first-byte/<ms>/<name>`: waits before the response head.
/// - `/hold-first/<ms>/<key>/<name>`: holds the first request `<ms>` before answering; later
///   requests are answered at once (a source that is slow only for the first worker to try it).
/// - `/held/<key>/<name>`: holds every request until the test calls ``release(_:)`` with `<key>`
///   (a source that answers when the test has seen what it waits for, not after a fixed time).
/// - `/trickle/<name>`: a chunked body, one byte every 100 ms (at most 600 bytes).
/// - `/lying-length/<declared>/<name>`: says `Content-Length: <declared>`, then sends the whole fixture.
/// - `/short-body/<name>`: says the fixture's length, sends half and closes.
/// - `/chunked/<name>`: the fixture chunked in 64 KiB pieces, no Content-Length.
/// - `/redirect/<n>/<name>`: a chain of `n` redirects ending at `/files/<name>`.
/// - `/redirect-to?location=<url>`: one redirect to any location.
/// - `/loop/a`, `/loop/b`: redirect to each other.
/// - `/status/<code>`: that status, a short text body.
/// - `/fail-then-ok/<code>/<key>/<name>`: `<code>` on the first request, then the fixture.
/// - `/retry-after/<seconds>/<key>/<name>`: 429 with `Retry-After: <seconds>` first, then the fixture.
/// - `/big-header/<bytes>/<name>`: the fixture with an `X-Padding` header `<bytes>` long.
/// - `/big-location/<bytes>`: a redirect whose `Location` is `<bytes>` long.
package final class SourceFixtures: TestServerRoutes {
    struct State {
        var files: [String: [UInt8]]
        /// Requests answered so far, by path.
        var hits: [String: Int] = [:]
        var etag = "\"v1\""
        /// The answers `/held/<key>/` requests wait for, by key.
        var held: [String: [@Sendable () -> Void]] = [:]
        /// The keys ``release(_:)`` has released: their requests are answered at once.
        var released: Set<String> = []
    }

    private let state: Mutex<State>

    /// Routes serving `files` (name to bytes).
    package init(files: [String: [UInt8]]) { state = Mutex(State(files: files)) }

    /// Changes the ETag every `/files/` response carries (the content "changed").
    package func setETag(_ etag: String) { state.withLock { $0.etag = etag } }

    /// Answers the `/held/<key>/` requests waiting, and from now on every such request at once.
    package func release(_ key: String) {
        let answers = state.withLock { state in
            state.released.insert(key)
            return state.held.removeValue(forKey: key) ?? []
        }
        for answer in answers { answer() }
    }

    private func fixture(_ name: String) -> [UInt8]? { state.withLock { $0.files[name] } }

    private static func contentType(_ name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        default: "application/octet-stream"
        }
    }

    /// Answers `request` by its path (see the type's routes).
    package func respond(
        to request: TestServer<SourceFixtures>.Request, exchange: Void, reply: TestServer<SourceFixtures>.Reply
    ) {
        let path = request.path
        let hit = state.withLock { state -> Int in
            state.hits[path, default: 0] += 1
            return state.hits[path]!
        }
        let notFound = { reply.send(404) }
        let parts = path.split(separator: "/").map(String.init)
        guard let first = parts.first else { return notFound() }
        let last = parts.last ?? ""
        let typeHeader = ("Content-Type", Self.contentType(last))
        switch first {
        case "files" where parts.count == 2:
            guard let bytes = fixture(last) else { return notFound() }
            let etag = state.withLock { $0.etag }
            if request.headers["if-none-match"] == etag { return reply.send(304, headers: [("ETag", etag)]) }
            reply.send(
                200, headers: [typeHeader, ("ETag", etag), ("Last-Modified", "Tue, 01 Apr 2025 10:00:00 GMT")],
                body: bytes)
        case "noext" where parts.count == 2, "wrong-type" where parts.count == 2:
            guard let bytes = fixture(last) ?? fixture(last + ".jpg") else { return notFound() }
            reply.send(200, headers: [first == "wrong-type" ? ("Content-Type", "image/png") : typeHeader], body: bytes)
        case "slow-first-byte" where parts.count == 3:
            guard let bytes = fixture(last), let delay = Int64(parts[1]) else { return notFound() }
            reply.send(200, headers: [typeHeader], body: bytes, after: .milliseconds(delay))
        case "hold-first" where parts.count == 4:
            guard let bytes = fixture(last), let delay = Int64(parts[1]) else { return notFound() }
            reply.send(200, headers: [typeHeader], body: bytes, after: hit == 1 ? .milliseconds(delay) : .zero)
        case "held" where parts.count == 3:
            guard let bytes = fixture(last) else { return notFound() }
            let answer: @Sendable () -> Void = { reply.send(200, headers: [typeHeader], body: bytes) }
            let now = state.withLock { state -> Bool in
                guard !state.released.contains(parts[1]) else { return true }
                state.held[parts[1], default: []].append(answer)
                return false
            }
            if now { answer() }
        case "trickle" where parts.count == 2:
            guard let bytes = fixture(last) else { return notFound() }
            reply.sendHead(200, headers: [typeHeader, ("Transfer-Encoding", "chunked")])
            reply.trickle(Array(bytes.prefix(600)), every: .milliseconds(100))
        case "lying-length" where parts.count == 3:
            guard let bytes = fixture(last), let declared = Int(parts[1]) else { return notFound() }
            reply.sendHead(200, headers: [typeHeader, ("Content-Length", "\(declared)"), ("Connection", "close")])
            reply.write(bytes)
            reply.end(close: true)
        case "short-body" where parts.count == 2:
            guard let bytes = fixture(last) else { return notFound() }
            reply.sendHead(200, headers: [typeHeader, ("Content-Length", "\(bytes.count)")])
            reply.write(bytes.prefix(bytes.count / 2))
            reply.drop()
        case "chunked" where parts.count == 2:
            guard let bytes = fixture(last) else { return notFound() }
            reply.sendHead(200, headers: [typeHeader, ("Transfer-Encoding", "chunked")])
            for start in stride(from: 0, to: bytes.count, by: 65_536) {
                reply.write(bytes[start..<min(start + 65_536, bytes.count)])
            }
            reply.end()
        case "redirect" where parts.count == 3:
            guard let remaining = Int(parts[1]) else { return notFound() }
            let location = remaining <= 1 ? "/files/\(last)" : "/redirect/\(remaining - 1)/\(last)"
            reply.send(302, headers: [("Location", location)], body: Array("moved".utf8))
        case "redirect-to":
            reply.send(307, headers: [("Location", request.query["location"] ?? "/")])
        case "loop" where parts.count == 2:
            reply.send(302, headers: [("Location", last == "a" ? "/loop/b" : "/loop/a")])
        case "status" where parts.count == 2:
            reply.send(Int(last) ?? 500, body: Array("status \(last)".utf8))
        case "fail-then-ok" where parts.count == 4:
            guard let bytes = fixture(last), let code = Int(parts[1]) else { return notFound() }
            if hit == 1 { return reply.send(code, body: Array("no".utf8)) }
            reply.send(200, headers: [typeHeader], body: bytes)
        case "retry-after" where parts.count == 4:
            guard let bytes = fixture(last) else { return notFound() }
            if hit == 1 { return reply.send(429, headers: [("Retry-After", parts[1])], body: Array("slow down".utf8)) }
            reply.send(200, headers: [typeHeader], body: bytes)
        case "big-header" where parts.count == 3:
            guard let bytes = fixture(last), let size = Int(parts[1]) else { return notFound() }
            reply.send(200, headers: [typeHeader, ("X-Padding", String(repeating: "a", count: size))], body: bytes)
        case "big-location" where parts.count == 2:
            guard let size = Int(last) else { return notFound() }
            reply.send(
                302, headers: [("Location", "/files/small.jpg?" + String(repeating: "a", count: max(0, size - 17)))])
        default:
            reply.send(404, body: Array("not found".utf8))
        }
    }
}

extension TestServer where Routes == SourceFixtures {
    /// Starts a server serving `files` (name to bytes) through ``SourceFixtures``.
    package static func start(files: [String: [UInt8]]) async throws -> TestServer {
        try await start(SourceFixtures(files: files))
    }

    /// Runs `body` with a server serving `files`, and stops the server however `body` ends.
    package static func with<Value>(
        files: [String: [UInt8]], _ body: (TestServer) async throws -> Value
    ) async throws -> Value {
        try await with(SourceFixtures(files: files), body)
    }

    /// Changes the ETag every `/files/` response carries.
    package func setETag(_ etag: String) { routes.setETag(etag) }

    /// Answers the `/held/<key>/` requests waiting, and every later one at once.
    package func release(_ key: String) { routes.release(key) }
}
