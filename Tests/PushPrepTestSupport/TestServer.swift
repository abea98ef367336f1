package import Foundation
package import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// What a ``TestServer`` answers. The server calls these on the connection's event loop; the
/// routes keep whatever state they need across requests (in a `Mutex`: connections run in parallel).
package protocol TestServerRoutes: Sendable {
    /// What the routes keep about one request while its body arrives (`Void` when nothing).
    associatedtype Exchange = Void

    /// Called as a request's head arrives (its body is still empty).
    func begin(_ request: TestServer<Self>.Request) -> Exchange

    /// Called for each piece of a request's body as it arrives, before the server counts and keeps
    /// it; the piece may be altered. Returns what the server does with it.
    func receive(_ piece: inout ByteBuffer, of exchange: Exchange) -> TestServerBodyAction

    /// Called once the request's body has all arrived: answers it through `reply`, at once or later.
    func respond(to request: TestServer<Self>.Request, exchange: Exchange, reply: TestServer<Self>.Reply)

    /// Called when the connection closed, or the routes cut it, before the request's body ended.
    func cut(_ request: TestServer<Self>.Request, exchange: Exchange)
}

extension TestServerRoutes where Exchange == Void {
    /// Nothing to keep.
    package func begin(_ request: TestServer<Self>.Request) {}
}

extension TestServerRoutes {
    /// Keeps every piece of the body.
    package func receive(_ piece: inout ByteBuffer, of exchange: Exchange) -> TestServerBodyAction { .keep }
    /// Nothing to do.
    package func cut(_ request: TestServer<Self>.Request, exchange: Exchange) {}
}

/// What a ``TestServer`` does with a piece of a request's body.
package enum TestServerBodyAction: Sendable {
    /// Counts it and keeps its bytes in ``TestServer/Request/body``.
    case keep
    /// Counts it, keeps no bytes (a large upload measured, not stored).
    case skip
    /// Counts it, then closes the connection: the request is recorded unanswered.
    case cut
}

/// The one HTTP/1.1 server of the tests, in the test process, on a loopback address and port 0.
///
/// What it answers is given per request by its ``TestServerRoutes``, through a ``Reply``: a
/// status, headers and body, at once or after a delay; a head alone, then the body in pieces or
/// trickled a byte at a time; a dropped connection. It records every request it received, with
/// its headers, body and the status it was given, and counts the connections it accepted.
/// Closing it (``shutdown()``, ``stop()``, or dropping the last reference) closes the listening
/// socket and every connection still open, as a killed server would.
@dynamicMemberLookup
package final class TestServer<Routes: TestServerRoutes>: Sendable {
    /// One request as the server received it.
    package struct Request: Sendable {
        /// `GET`, `PUT`, …
        package var method: String
        /// The request target as sent: path and query.
        package var uri: String
        /// The path without the query, percent-decoded.
        package var path: String
        /// The query's items, percent-decoded (the last of a repeated name).
        package var query: [String: String]
        /// The header fields, by lower-case name (the last of a repeated name).
        package var headers: [String: String]
        /// The body's bytes the routes kept (see ``TestServerBodyAction``).
        package var body: [UInt8] = []
        /// How many body bytes arrived.
        package var bodyBytes = 0
        /// In how many pieces they arrived.
        package var bodyChunks = 0
        /// The status the routes answered (or decided before dropping the answer); nil when the
        /// request was cut or is not answered yet.
        package var status: Int?
    }

    /// The routes, with the state they keep.
    package let routes: Routes
    /// The address listened on (`127.0.0.1` unless given).
    package let host: String
    /// The port the server listens on.
    package let port: Int
    private let log: Log
    private let listener: any Channel

    private init(routes: Routes, host: String, listener: any Channel, log: Log) {
        self.routes = routes
        self.host = host
        self.listener = listener
        self.log = log
        self.port = listener.localAddress?.port ?? 0
    }

    deinit { stop() }

    /// Starts a server answering with `routes` on `host`, a loopback address (127.0.0.0/8 or ::1).
    package static func start(_ routes: Routes, host: String = "127.0.0.1") async throws -> TestServer {
        precondition(host.hasPrefix("127.") || host == "::1", "test servers listen on loopback addresses only")
        let log = Log()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                log.state.withLock { $0.connections.append(channel) }
                return channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Connection(routes: routes, log: log))
                }
            }
            .bind(host: host, port: 0)
            .get()
        return TestServer(routes: routes, host: host, listener: listener, log: log)
    }

    /// Runs `body` with a server answering with `routes`, and stops the server however `body` ends.
    package static func with<Value>(
        _ routes: Routes, host: String = "127.0.0.1", _ body: (TestServer) async throws -> Value
    ) async throws -> Value {
        let server = try await start(routes, host: host)
        let outcome: Result<Value, any Error>
        do { outcome = .success(try await body(server)) } catch { outcome = .failure(error) }
        await server.shutdown()
        return try outcome.get()
    }

    /// A property of the routes, read through the server (`server.bucket` for `server.routes.bucket`).
    package subscript<Value>(dynamicMember keyPath: KeyPath<Routes, Value>) -> Value { routes[keyPath: keyPath] }

    /// `http://<host>:<port><path>`, the host in brackets when it is IPv6.
    package func url(_ path: String) -> String {
        "http://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)"
    }

    /// `http://<host>:<port>`.
    package var endpoint: URL { URL(string: url(""))! }

    /// Every request received so far (answered or not), in the order their bodies ended.
    package var received: [Request] { log.state.withLock { $0.requests } }

    /// Requests received for `path` (without the query).
    package func hits(_ path: String) -> Int { received.filter { $0.path == path }.count }

    /// Requests for `path` that carried `If-None-Match` or `If-Modified-Since`.
    package func conditionalHits(_ path: String) -> Int {
        received.filter {
            $0.path == path && ($0.headers["if-none-match"] != nil || $0.headers["if-modified-since"] != nil)
        }.count
    }

    /// Connections accepted so far (with or without a request).
    package var connections: Int { log.state.withLock { $0.connections.count } }

    /// Closes the listening socket and every open connection, without waiting.
    package func stop() {
        listener.close(promise: nil)
        for connection in log.state.withLock({ $0.connections }) { connection.close(promise: nil) }
    }

    /// Closes the listening socket and every open connection.
    package func shutdown() async {
        try? await listener.close()
        for connection in log.state.withLock({ $0.connections }) { try? await connection.close() }
    }
}

extension TestServer {
    /// The server's record, shared by every connection's handler.
    final class Log: Sendable {
        struct State {
            var requests: [Request] = []
            var connections: [any Channel] = []
        }
        let state = Mutex(State())

        /// Records `request`, and returns where, for its status.
        func record(_ request: Request) -> Int {
            state.withLock { state in
                state.requests.append(request)
                return state.requests.count - 1
            }
        }

        func setStatus(_ status: Int, at index: Int) { state.withLock { $0.requests[index].status = status } }
    }

    /// How one request is answered; usable from any thread, at once or later. Every call runs
    /// on the connection's event loop, in the order made, and does nothing once the connection
    /// is closed.
    package struct Reply: Sendable {
        private let bound: NIOLoopBound<(Connection, ChannelHandlerContext)>
        private let log: Log
        private let index: Int

        init(_ connection: Connection, context: ChannelHandlerContext, log: Log, index: Int) {
            bound = NIOLoopBound((connection, context), eventLoop: context.eventLoop)
            self.log = log
            self.index = index
        }

        /// Runs `body` with the connection's context after `delay`, if the connection is still open.
        private func run(after delay: TimeAmount = .zero, _ body: @escaping @Sendable (ChannelHandlerContext) -> Void) {
            let bound = bound
            after(delay) {
                let (_, context) = bound.value
                guard context.channel.isActive else { return }
                body(context)
            }
        }

        private func write(_ context: ChannelHandlerContext, _ part: HTTPServerResponsePart, flush: Bool = false) {
            if flush {
                context.writeAndFlush(NIOAny(part), promise: nil)
            } else {
                context.write(NIOAny(part), promise: nil)
            }
        }

        /// Answers `status` with `headers` and `body`, after `delay`. `Content-Length` is the body's
        /// unless `headers` give one (a HEAD's), or the status is 304; a HEAD gets no body.
        package func send(
            _ status: Int, headers: [(String, String)] = [], body: [UInt8] = [], after delay: TimeAmount = .zero
        ) {
            log.setStatus(status, at: index)
            run(after: delay) { context in
                var head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status))
                for (name, value) in headers { head.headers.add(name: name, value: value) }
                if status != 304, !head.headers.contains(name: "Content-Length") {
                    head.headers.add(name: "Content-Length", value: "\(body.count)")
                }
                write(context, .head(head))
                if !body.isEmpty { write(context, .body(.byteBuffer(ByteBuffer(bytes: body)))) }
                write(context, .end(nil), flush: true)
            }
        }

        /// Runs `body` on the connection's event loop after `delay`, whether the connection is still
        /// open or not (after what was asked before with the same delay).
        package func after(_ delay: TimeAmount, _ body: @escaping @Sendable () -> Void) {
            if delay > .zero {
                bound.eventLoop.scheduleTask(in: delay, body)
            } else {
                bound.eventLoop.execute(body)
            }
        }

        /// Sends the answer's head alone, as given: the body follows with ``write(_:)``.
        package func sendHead(_ status: Int, headers: [(String, String)]) {
            log.setStatus(status, at: index)
            run { context in
                var head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status))
                for (name, value) in headers { head.headers.add(name: name, value: value) }
                write(context, .head(head), flush: true)
            }
        }

        /// Sends a piece of the body.
        package func write(_ bytes: some Collection<UInt8>) {
            let bytes = Array(bytes)
            run { context in write(context, .body(.byteBuffer(ByteBuffer(bytes: bytes))), flush: true) }
        }

        /// Ends the answer; with `close`, closes the connection once it is sent.
        package func end(close: Bool = false) {
            run { context in
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete {
                    [channel = context.channel] _ in
                    if close { channel.close(promise: nil) }
                }
            }
        }

        /// Closes the connection without (more of) an answer; `status` is recorded as the one that
        /// would have been given.
        package func drop(instead status: Int? = nil) {
            if let status { log.setStatus(status, at: index) }
            run { context in context.close(promise: nil) }
        }

        /// Sends `bytes` one at a time, one every `interval`, the first after `first`, then ends the
        /// answer (closing the connection with `close`). `ended` learns how many bytes were written
        /// and whether that was all of them (not when the client went away first).
        package func trickle(
            _ bytes: [UInt8], every interval: TimeAmount, first: TimeAmount = .zero, close: Bool = false,
            ended: (@Sendable (_ sent: Int, _ complete: Bool) -> Void)? = nil
        ) {
            let bound = bound
            @Sendable func next(_ offset: Int, after delay: TimeAmount) {
                self.after(delay) {
                    let (_, context) = bound.value
                    guard context.channel.isActive else { return ended?(offset, false) ?? () }
                    guard offset < bytes.count else {
                        ended?(offset, true)
                        return end(close: close)
                    }
                    write(context, .body(.byteBuffer(ByteBuffer(bytes: [bytes[offset]]))), flush: true)
                    next(offset + 1, after: interval)
                }
            }
            next(0, after: first)
        }
    }

    /// One connection's handler: it records each request and hands it to the routes. Used only on
    /// the connection's event loop.
    final class Connection: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let routes: Routes
        private let log: Log
        /// The request whose body is arriving, and what the routes keep about it.
        private var pending: (request: Request, exchange: Routes.Exchange)?

        init(routes: Routes, log: Log) {
            self.routes = routes
            self.log = log
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                let components = URLComponents(string: head.uri)
                var query: [String: String] = [:]
                for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
                var headers: [String: String] = [:]
                for (name, value) in head.headers { headers[name.lowercased()] = value }
                let request = Request(
                    method: head.method.rawValue, uri: head.uri, path: components?.path ?? head.uri, query: query,
                    headers: headers)
                pending = (request, routes.begin(request))
            case .body(var piece):
                guard let exchange = pending?.exchange, var request = pending?.request else { return }
                let action = routes.receive(&piece, of: exchange)
                request.bodyChunks += 1
                request.bodyBytes += piece.readableBytes
                if action == .keep { request.body += piece.readableBytesView }
                pending = (request, exchange)
                if action == .cut {
                    cutPending()
                    context.close(promise: nil)
                }
            case .end:
                guard let (request, exchange) = pending else { return }
                pending = nil
                let index = log.record(request)
                routes.respond(
                    to: request, exchange: exchange, reply: Reply(self, context: context, log: log, index: index))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            cutPending()
            context.fireChannelInactive()
        }

        /// Records the pending request unanswered and tells the routes.
        private func cutPending() {
            guard let (request, exchange) = pending else { return }
            pending = nil
            _ = log.record(request)
            routes.cut(request, exchange: exchange)
        }
    }
}
