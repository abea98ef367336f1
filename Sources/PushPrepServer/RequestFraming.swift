import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import PushPrepCore

/// Refuses a body framed in a way this server does not read, before any handler reads it: a
/// `Transfer-Encoding` whose last coding is not `chunked` leaves the body's length unknown (RFC
/// 9112 §6.3), and a coding besides `chunked` (`gzip, chunked`) is one this server does not
/// decode. Both are `400 invalid_request` (RFC 9112 §6.1 suggests `501` for the second, but a
/// client's bad request is never a 5xx here: monitoring counts those as the server's faults),
/// and the connection is closed after the answer.
struct TransferEncodingMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    /// Passes a request with no `Transfer-Encoding` or `chunked` alone; answers any other.
    func handle(_ request: Request, context: APIRequestContext, next: Next) async throws -> Response {
        let values = request.headers[values: .transferEncoding]
        guard !values.isEmpty else { return try await next(request, context) }
        let codings = values.joined(separator: ",").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        if codings == ["chunked"] { return try await next(request, context) }
        let problem =
            codings.last == "chunked"
            ? Problem(
                .badRequest, .invalidRequest,
                "this server decodes no transfer coding but chunked; send the body as it is")
            : Problem(
                .badRequest, .invalidRequest,
                "Transfer-Encoding must end with chunked, or be left out for a body with a Content-Length")
        var response = try problem.response(from: request, context: context)
        response.headers[.connection] = "close"
        return response
    }
}

/// Answers a request NIO's HTTP/1.1 parser refused (headers over the limits of
/// ``APIServer/channelConfiguration(_:)``, a malformed request line or header, a broken chunk)
/// with problem JSON and closes the connection, where Hummingbird would send a bare `400` with no
/// body.
///
/// It sits behind the parser: when the error comes while a request's body is being read, the
/// handler reading it gets the problem as that body's error (``RequestIDMiddleware`` answers it),
/// and the connection's loop then ends on it, never writing a second answer. When it comes with
/// no request in progress, this handler writes the answer itself; when a response is still being
/// written (a pipelined request), right after that response.
final class ParserErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A head came and its end has not.
    private var readingBody = false
    /// Requests whose response has not ended.
    private var unanswered = 0
    /// The answer to write once the response in progress has ended.
    private var pending: Problem?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            readingBody = true
            unanswered += 1
        case .end:
            readingBody = false
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ended: Bool
        if case .end = unwrapOutboundIn(data) { ended = true } else { ended = false }
        context.write(data, promise: promise)
        if ended {
            unanswered = max(unanswered - 1, 0)
            if unanswered == 0, let pending {
                self.pending = nil
                answer(pending, context: context)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        let problem = Self.problem(for: parserError)
        if readingBody {
            readingBody = false
            context.fireErrorCaught(problem)
        } else if unanswered == 0 {
            answer(problem, context: context)
        } else {
            pending = problem
        }
    }

    /// Writes `problem` as the connection's last answer and closes it.
    private func answer(_ problem: Problem, context: ChannelHandlerContext) {
        let body = problem.body()
        let head = HTTPResponse(
            status: problem.status,
            headerFields: [
                .contentType: "application/problem+json", .contentLength: String(body.count), .connection: "close",
            ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// The problem for a parser error: `431 request_too_large` for headers over the limits,
    /// `400 invalid_request` for anything else.
    static func problem(for error: HTTPParserError) -> Problem {
        switch error {
        case .headerOverflow:
            return Problem(
                .requestHeaderFieldsTooLarge, .requestTooLarge,
                "the request's headers are too large (at most 16 KiB a field, 32 KiB and 100 fields in all)")
        default:
            return Problem(.badRequest, .invalidRequest, "the request is not well-formed HTTP/1.1 (\(error))")
        }
    }
}
