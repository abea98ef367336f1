import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PushPrepCore
import PushPrepQueue
import Synchronization

extension RouterMiddleware {
    /// The rest of the chain, which a middleware's `handle` calls with the request it passes
    /// on: the one signature every middleware of this server spells, named once here.
    typealias Next = (Request, Context) async throws -> Response
}

/// The outermost step: gives the request its id (`X-Request-Id` when the client sent a sane
/// one, else a new one), puts it on the logger and the response, turns every error into a
/// problem (so no handler can answer anything but problem JSON), and writes one access-log
/// line per request: method, route, status, duration, key id. Never the key, the query (it may
/// hold a signature) or a body.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    /// The longest URL (path and query) accepted: longer ones are refused with 414.
    let maxURLBytes: Int
    /// The routes, to answer 405 (with `Allow`) rather than 404 for a known path with another
    /// method. Filled once every route is registered.
    let routes: RouteTable

    func handle(_ request: Request, context: APIRequestContext, next: Next) async throws -> Response {
        var context = context
        let start = ContinuousClock.now
        context.requestID = Self.sanitized(request.headers[.xRequestID]) ?? Self.makeID()
        context.logger[metadataKey: "request_id"] = "\(context.requestID)"
        var response: Response
        if request.uri.string.utf8.count > maxURLBytes {
            response = Self.problemResponse(
                Problem(.uriTooLong, .requestTooLarge, "the URL is longer than \(maxURLBytes) bytes"), request,
                context)
        } else {
            do {
                response = try await next(request, context)
            } catch let error as HTTPError where error.status == .notFound {
                let allowed = routes.methods(for: request.uri.path)
                if allowed.isEmpty {
                    response = Self.problemResponse(Self.problem(for: error), request, context)
                } else {
                    response = Self.problemResponse(
                        Problem(
                            .methodNotAllowed, .invalidRequest,
                            "\(request.method) is not allowed here; use \(allowed.joined(separator: ", "))"),
                        request, context)
                    response.headers[.allow] = allowed.joined(separator: ", ")
                }
            } catch {
                response = Self.problemResponse(Self.problem(for: error), request, context)
            }
        }
        response.headers[.xRequestID] = context.requestID
        var metadata: Logger.Metadata = [
            "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
            "duration_ms": "\(Self.milliseconds(ContinuousClock.now - start))",
        ]
        if let key = context.notes.keyID.withLock({ $0 }) { metadata["key"] = "\(key)" }
        context.logger.info("request", metadata: metadata)
        return response
    }

    /// Any error as a problem: ours as they are, PushPrep's by their code, Hummingbird's by
    /// their status (404 for no route, 405, 413 ...), anything else as a 500 that says nothing
    /// of its internals.
    static func problem(for error: any Error) -> Problem {
        switch error {
        case let problem as Problem:
            return problem
        case let error as PushPrepError:
            return Problem(error)
        case let error as any HTTPResponseError:
            let code: PushPrepError.Code =
                switch error.status {
                case .notFound: .notFound
                case .contentTooLarge: .requestTooLarge
                case .unauthorized: .unauthorized
                case .forbidden: .forbidden
                case .tooManyRequests: .rateLimited
                default: error.status.code < 500 ? .invalidRequest : .ioError
                }
            let detail =
                error.status == .notFound ? "no such endpoint or resource" : error.status.reasonPhrase.lowercased()
            return Problem(error.status, code, detail)
        default:
            return Problem(.internalServerError, .ioError, "the server failed to answer this request")
        }
    }

    private static func problemResponse(_ problem: Problem, _ request: Request, _ context: APIRequestContext)
        -> Response
    {
        // A 500 is the server's fault; a 503 or 504 (the queue down, jobs not done in time) is a
        // state the operator may want to see, not an error of this request.
        let metadata: Logger.Metadata = ["code": "\(problem.code)", "detail": "\(problem.detail)"]
        if problem.status == .internalServerError {
            context.logger.error("request failed", metadata: metadata)
        } else if problem.status.code >= 500 {
            context.logger.notice("request not served", metadata: metadata)
        }
        return (try? problem.response(from: request, context: context))
            ?? Response(status: .internalServerError)
    }

    /// A client's id when it is 1–128 visible ASCII characters (it goes into logs and the
    /// job's record), else nil.
    static func sanitized(_ value: String?) -> String? {
        guard let value, (1...128).contains(value.utf8.count),
            value.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { return nil }
        return value
    }

    /// 16 random bytes as 32 hex digits.
    static func makeID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
    }

    static func milliseconds(_ duration: Duration) -> String {
        String(
            format: "%.1f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
    }
}

/// A deadline for each request's handler (reading the request's body included; writing the
/// response's body, such as a long download, is not bounded by it): past `timeout`, the handler
/// is cancelled and the client gets `408 timeout`. A client trickling an upload cannot hold a
/// connection and a file open for ever.
///
/// The deadline is ``withDeadline(_:_:)``'s alarm, which nothing outlives: a `Task.sleep` raced
/// against the handler stayed scheduled, with its task, for the whole `--request-timeout` after
/// every request, so the server's memory grew with its request rate (issue 32).
struct DeadlineMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let timeout: Duration

    func handle(_ request: Request, context: APIRequestContext, next: Next) async throws -> Response {
        let timeout = timeout
        return try await withoutActuallyEscaping(next) { next in
            let request = UnsafeTransfer(request)
            let next = UnsafeTransfer(next)
            guard let response = try await withDeadline(timeout, { try await next.value(request.value, context) })
            else {
                throw Problem(.requestTimeout, .timeout, "the request took longer than \(timeout) to handle")
            }
            return response
        }
    }
}

/// Carries a value the compiler cannot prove sendable into a child task that ends before the
/// function that made it returns (the task group of ``withDeadline(_:_:)``): the request and the rest of the chain
/// are used by that one task only.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The registered routes' paths and methods, for 405 answers.
final class RouteTable: Sendable {
    private let entries = Mutex<[(pattern: [Substring], method: String)]>([])

    /// Records `routes` (``Router/routes``: paths with `:name` parameters).
    func record(_ routes: [(path: String, method: String)]) {
        entries.withLock { entries in
            entries = routes.map { (Self.components($0.path), $0.method) }
        }
    }

    /// The methods of the routes whose pattern matches `path` (HEAD with GET), sorted.
    func methods(for path: String) -> [String] {
        let parts = Self.components(path)
        var methods = Set<String>()
        entries.withLock { entries in
            for entry in entries where entry.pattern.count == parts.count {
                let matches = zip(entry.pattern, parts).allSatisfy { pattern, part in
                    pattern.hasPrefix(":") || pattern.hasPrefix("{") ? !part.isEmpty : pattern == part
                }
                if matches {
                    methods.insert(entry.method)
                    if entry.method == "GET" { methods.insert("HEAD") }
                }
            }
        }
        return methods.sorted()
    }

    private static func components(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }
}

extension HTTPField.Name {
    static let allow = HTTPField.Name("Allow")!
    static let xRequestID = HTTPField.Name("X-Request-Id")!
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
    static let link = HTTPField.Name("Link")!
    /// `POST /v1/payload`'s notes on what a payload leaves out for a platform, one per header.
    static let pushPrepNote = HTTPField.Name("PushPrep-Note")!
    /// `POST /v1/payload`'s word on which attachment it took by default, when there were more.
    static let pushPrepSelection = HTTPField.Name("PushPrep-Selection")!
}
