import Foundation
package import HTTPTypes
package import Hummingbird
package import PushPrepCore
package import PushPrepJSON

/// An error as every endpoint answers it: RFC 9457 problem details
/// (`application/problem+json`) with PushPrep's stable `code`, the same codes the CLI reports.
///
/// `type` is `urn:pushprep:problem:<code>`, so a client can branch on either; `title` is the
/// code in words; `detail` says what happened to this request. Extra members carry what a
/// client needs to act: the job ids of a `504` from `POST /v1/process`, for instance.
package struct Problem: Error, Sendable, HTTPResponseError {
    package var status: HTTPResponse.Status
    package var code: PushPrepError.Code
    package var detail: String
    /// Seconds, sent as `Retry-After` (429, 503).
    package var retryAfter: Int?
    /// Members besides the standard ones (encoded after them).
    package var extensions: [String: JSONValue]

    package init(
        _ status: HTTPResponse.Status, _ code: PushPrepError.Code, _ detail: String, retryAfter: Int? = nil,
        extensions: [String: JSONValue] = [:]
    ) {
        self.status = status
        self.code = code
        self.detail = detail
        self.retryAfter = retryAfter
        self.extensions = extensions
    }

    /// The problem for a PushPrep error, with the status its code maps to; a `503` (the queue
    /// or the store cannot be reached) says when to try again.
    package init(_ error: PushPrepError) {
        let status = Self.status(for: error.code)
        self.init(
            status, error.code, error.message, retryAfter: status == .serviceUnavailable ? Self.unavailableRetry : nil)
    }

    /// Seconds a `503` asks clients to wait: about what a PostgreSQL restart or a dropped
    /// connection to the store takes to mend.
    package static let unavailableRetry = 2

    /// The HTTP status of each code: the client's mistake (4xx) or the server's trouble (5xx).
    package static func status(for code: PushPrepError.Code) -> HTTPResponse.Status {
        switch code {
        case .invalidRequest: .badRequest
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound, .jobNotFound: .notFound
        case .invalidJobState: .conflict
        case .requestTooLarge, .payloadTooLarge, .inputTooLarge: .contentTooLarge
        case .rateLimited, .queueFull: .tooManyRequests
        case .queueUnavailable, .storageUnavailable: .serviceUnavailable
        case .timeout: .gatewayTimeout
        case .fetchFailed: .badGateway
        case .ioError: .internalServerError
        // What the request asked for is understood but cannot be done: settings out of range,
        // a payload that is not one, a source that is refused, a reused idempotency key.
        default: .unprocessableContent
        }
    }

    /// `unsupported_type` → "Unsupported type".
    static func title(for code: PushPrepError.Code) -> String {
        let words = code.rawValue.replacingOccurrences(of: "_", with: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"pushprep\"" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body())))
    }

    /// The JSON body: the standard members first, then the extensions by name. Built as a
    /// ``JSONValue``, so writing it cannot fail on the error path.
    package func body() -> [UInt8] {
        var members: [(key: String, value: JSONValue)] = [
            ("type", .string("urn:pushprep:problem:\(code.rawValue)")),
            ("title", .string(Self.title(for: code))),
            ("status", JSONValue(status.code)),
            ("detail", .string(detail)),
            ("code", .string(code.rawValue)),
        ]
        members += extensions.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value) }
        return Array(JSONValue.object(JSONObject(members)).serialized().utf8)
    }
}
