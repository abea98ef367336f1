import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1, port 0, in the test process, serving fixtures through
/// routes that misbehave in the ways remote sources do.
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
package final class TestHTTPServer: Sendable {
    private let channel: any Channel
    private let box: StateBox
    /// The port the server listens on.
    package let port: Int

    struct State {
        var files: [String: [UInt8]]
        package var hits: [String: Int] = [:]
        package var conditionalHits: [String: Int] = [:]
        var etag = "\"v1\""
        /// The answers `/held/<key>/` requests wait for, by key.
        var held: [String: [@Sendable () -> Void]] = [:]
        /// The keys ``release(_:)`` has released: their requests are answered at once.
        var released: Set<String> = []
    }

    private init(channel: any Channel, box: StateBox) {
        self.channel = channel
        self.box = box
        self.port = channel.localAddress?.port ?? 0
    }

    /// Starts a server serving `files` (name to bytes).
    package static func start(files: [String: [UInt8]]) async throws -> TestHTTPServer {
        let box = StateBox(State(files: files))
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(box: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return TestHTTPServer(channel: channel, box: box)
    }

    /// Runs `body` with a server serving `files`, and stops the server however `body` ends.
    package static func with<Result>(
        files: [String: [UInt8]], _ body: (TestHTTPServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(files: files)
        do {
            let result = try await body(server)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Requests received for `path` (without the query).
    package func hits(_ path: String) -> Int { box.state.withLock { $0.hits[path, default: 0] } }

    /// Requests for `path` that carried `If-None-Match` or `If-Modified-Since`.
    package func conditionalHits(_ path: String) -> Int { box.state.withLock { $0.conditionalHits[path, default: 0] } }

    /// Serves `bytes` as `name` from now on.
    func addFile(_ name: String, bytes: [UInt8]) { box.state.withLock { $0.files[name] = bytes } }

    /// Changes the ETag every `/files/` response carries (the content "changed").
    package func setETag(_ etag: String) { box.state.withLock { $0.etag = etag } }

    /// Answers the `/held/<key>/` requests waiting, and from now on every such request at once.
    package func release(_ key: String) {
        let answers = box.state.withLock { state in
            state.released.insert(key)
            return state.held.removeValue(forKey: key) ?? []
        }
        for answer in answers { answer() }
    }

    /// Stops listening and closes the listening socket.
    package func shutdown() async {
        try? await channel.close()
    }
}

/// The shared state, a reference so that every connection's handler sees the same counters.
final class StateBox: Sendable {
    let state: Mutex<TestHTTPServer.State>
    init(_ state: TestHTTPServer.State) { self.state = Mutex(state) }
}

private final class Handler: ChannelInboundHandler, @unchecked Sendable {
    // One instance per connection, used only on that connection's event loop.
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let box: StateBox
    private var head: HTTPRequestHead?

    init(box: StateBox) { self.box = box }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            if let head { route(head, context: context) }
            head = nil
        }
    }

    private func fixture(_ name: String) -> [UInt8]? { box.state.withLock { $0.files[name] } }

    private static func contentType(_ name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        default: "application/octet-stream"
        }
    }

    private func route(_ request: HTTPRequestHead, context: ChannelHandlerContext) {
        let components = URLComponents(string: request.uri)
        let path = components?.path ?? request.uri
        let conditional =
            request.headers.contains(name: "if-none-match") || request.headers.contains(name: "if-modified-since")
        let hit = box.state.withLock { state -> Int in
            state.hits[path, default: 0] += 1
            if conditional { state.conditionalHits[path, default: 0] += 1 }
            return state.hits[path]!
        }
        let parts = path.split(separator: "/").map(String.init)
        guard let first = parts.first else { return respond(context, status: .notFound) }
        let last = parts.last ?? ""
        switch first {
        case "files" where parts.count == 2:
            guard let bytes = fixture(last) else { return respond(context, status: .notFound) }
            let etag = box.state.withLock { $0.etag }
            let lastModified = "Tue, 01 Apr 2025 10:00:00 GMT"
            if request.headers.first(name: "if-none-match") == etag {
                return respond(context, status: .notModified, headers: [("ETag", etag)], body: nil)
            }
            respond(
                context, status: .ok,
                headers: [("Content-Type", Self.contentType(last)), ("ETag", etag), ("Last-Modified", lastModified)],
                body: bytes)
        case "noext" where parts.count == 2, "wrong-type" where parts.count == 2:
            guard let bytes = fixture(last) ?? fixture(last + ".jpg") else {
                return respond(context, status: .notFound)
            }
            respond(
                context, status: .ok,
                headers: [("Content-Type", first == "wrong-type" ? "image/png" : Self.contentType(last))], body: bytes)
        case "slow-first-byte" where parts.count == 3:
            guard let bytes = fixture(last), let delay = Int64(parts[1]) else {
                return respond(context, status: .notFound)
            }
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(delay)) {
                let (handler, context) = loopBound.value
                handler.respond(context, status: .ok, headers: [("Content-Type", Self.contentType(last))], body: bytes)
            }
        case "hold-first" where parts.count == 4:
            guard let bytes = fixture(last), let delay = Int64(parts[1]) else {
                return respond(context, status: .notFound)
            }
            let headers = [("Content-Type", Self.contentType(last))]
            guard hit == 1 else { return respond(context, status: .ok, headers: headers, body: bytes) }
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(delay)) {
                let (handler, context) = loopBound.value
                guard context.channel.isActive else { return }
                handler.respond(context, status: .ok, headers: headers, body: bytes)
            }
        case "held" where parts.count == 3:
            guard let bytes = fixture(last) else { return respond(context, status: .notFound) }
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            let answer: @Sendable () -> Void = {
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    guard context.channel.isActive else { return }
                    handler.respond(
                        context, status: .ok, headers: [("Content-Type", Self.contentType(last))], body: bytes)
                }
            }
            let now = box.state.withLock { state -> Bool in
                guard !state.released.contains(parts[1]) else { return true }
                state.held[parts[1], default: []].append(answer)
                return false
            }
            if now { answer() }
        case "trickle" where parts.count == 2:
            guard let bytes = fixture(last) else { return respond(context, status: .notFound) }
            var head = HTTPResponseHead(version: .http1_1, status: .ok)
            head.headers.add(name: "Content-Type", value: Self.contentType(last))
            head.headers.add(name: "Transfer-Encoding", value: "chunked")
            context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            trickle(context, bytes: bytes, offset: 0)
        case "lying-length" where parts.count == 3:
            guard let bytes = fixture(last), let declared = Int(parts[1]) else {
                return respond(context, status: .notFound)
            }
            var head = HTTPResponseHead(version: .http1_1, status: .ok)
            head.headers.add(name: "Content-Type", value: Self.contentType(last))
            head.headers.add(name: "Content-Length", value: "\(declared)")
            head.headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
        case "short-body" where parts.count == 2:
            guard let bytes = fixture(last) else { return respond(context, status: .notFound) }
            var head = HTTPResponseHead(version: .http1_1, status: .ok)
            head.headers.add(name: "Content-Type", value: Self.contentType(last))
            head.headers.add(name: "Content-Length", value: "\(bytes.count)")
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes.prefix(bytes.count / 2))))))
                .whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
        case "chunked" where parts.count == 2:
            guard let bytes = fixture(last) else { return respond(context, status: .notFound) }
            var head = HTTPResponseHead(version: .http1_1, status: .ok)
            head.headers.add(name: "Content-Type", value: Self.contentType(last))
            head.headers.add(name: "Transfer-Encoding", value: "chunked")
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 65_536, bytes.count)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes[offset..<end])))), promise: nil)
                offset = end
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case "redirect" where parts.count == 3:
            guard let remaining = Int(parts[1]) else { return respond(context, status: .notFound) }
            let location = remaining <= 1 ? "/files/\(last)" : "/redirect/\(remaining - 1)/\(last)"
            respond(context, status: .found, headers: [("Location", location)], body: Array("moved".utf8))
        case "redirect-to":
            let location = components?.queryItems?.first { $0.name == "location" }?.value ?? "/"
            respond(context, status: .temporaryRedirect, headers: [("Location", location)], body: nil)
        case "loop" where parts.count == 2:
            respond(context, status: .found, headers: [("Location", last == "a" ? "/loop/b" : "/loop/a")], body: nil)
        case "status" where parts.count == 2:
            respond(
                context, status: HTTPResponseStatus(statusCode: Int(last) ?? 500), body: Array("status \(last)".utf8))
        case "fail-then-ok" where parts.count == 4:
            guard let bytes = fixture(last), let code = Int(parts[1]) else {
                return respond(context, status: .notFound)
            }
            if hit == 1 {
                return respond(context, status: HTTPResponseStatus(statusCode: code), body: Array("no".utf8))
            }
            respond(context, status: .ok, headers: [("Content-Type", Self.contentType(last))], body: bytes)
        case "retry-after" where parts.count == 4:
            guard let bytes = fixture(last) else { return respond(context, status: .notFound) }
            if hit == 1 {
                return respond(
                    context, status: .tooManyRequests, headers: [("Retry-After", parts[1])],
                    body: Array("slow down".utf8))
            }
            respond(context, status: .ok, headers: [("Content-Type", Self.contentType(last))], body: bytes)
        case "big-header" where parts.count == 3:
            guard let bytes = fixture(last), let size = Int(parts[1]) else {
                return respond(context, status: .notFound)
            }
            respond(
                context, status: .ok,
                headers: [
                    ("Content-Type", Self.contentType(last)), ("X-Padding", String(repeating: "a", count: size)),
                ],
                body: bytes)
        case "big-location" where parts.count == 2:
            guard let size = Int(last) else { return respond(context, status: .notFound) }
            let location = "/files/small.jpg?" + String(repeating: "a", count: max(0, size - 17))
            respond(context, status: .found, headers: [("Location", location)], body: nil)
        default:
            respond(context, status: .notFound, body: Array("not found".utf8))
        }
    }

    private func trickle(_ context: ChannelHandlerContext, bytes: [UInt8], offset: Int) {
        guard context.channel.isActive else { return }
        guard offset < min(bytes.count, 600) else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: [bytes[offset]])))), promise: nil)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(100)) {
            let (handler, context) = loopBound.value
            handler.trickle(context, bytes: bytes, offset: offset + 1)
        }
    }

    private func respond(
        _ context: ChannelHandlerContext, status: HTTPResponseStatus, headers: [(String, String)] = [],
        body: [UInt8]? = nil
    ) {
        var head = HTTPResponseHead(version: .http1_1, status: status)
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if status != .notModified { head.headers.add(name: "Content-Length", value: "\(body?.count ?? 0)") }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body, !body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
