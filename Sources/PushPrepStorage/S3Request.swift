import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFileSystem
import NIOHTTP1
import NIOPosix
import PushPrepCore
import PushPrepRemote

/// One S3 request as PushPrep means it, before signing: it can be signed and sent again as
/// often as a retry needs, because its body is a file range (re-read each time) or a few bytes.
struct S3Request: Sendable {
    enum Body: Sendable {
        case empty
        case bytes([UInt8])
        case file(path: String, range: Range<Int64>)
    }

    var method: HTTPMethod
    var key: String?
    /// Already encoded (`uploads=`, `partNumber=2&uploadId=…`).
    var query: String?
    /// Sent and signed.
    var headers: [(name: String, value: String)] = []
    var body: Body = .empty
    /// Hex SHA-256 of the body (of nothing for an empty one).
    var payloadHash = S3Request.emptyPayloadHash
    /// For messages: `PUT bucket/key`, `UploadPart 3 of bucket/key`.
    var operation: String
    /// Statuses answered to the caller instead of failing (404 for HEAD).
    var acceptedStatuses: Set<Int> = []
    /// S3 may answer CompleteMultipartUpload with 200 and an `<Error>` body; such a body is a
    /// failure.
    var errorMayHide200 = false

    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
}

/// A response: status, headers, and the body (bounded; S3's are small XML documents).
struct S3Response: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]
}

extension S3Client {
    /// The largest response body read: XML results and errors are a few KiB.
    static let maximumResponseBytes = 1024 * 1024

    /// A failed try, and whether another may succeed.
    private struct Failure: Error {
        var error: PushPrepError
        var retryable: Bool
        /// The server's `Retry-After` on a retryable answer (a 503 `SlowDown`, a 429).
        var retryAfter: Duration? = nil
    }

    /// The wait before the try after `attempt` failed with `failure`: the server's `Retry-After`
    /// when it gave one, bounded by the backoff's cap and by the request timeout (a server asking
    /// for an hour does not stall a publication for an hour; the wait then is the cap, and the
    /// tries still run out); otherwise the jittered backoff.
    func retryDelay(afterFailure attempt: Int, retryAfter: Duration?) -> Duration {
        let limits = configuration.limits
        guard let retryAfter else { return limits.backoff.delay(afterFailure: attempt) }
        return min(retryAfter, limits.backoff.cap, limits.requestTimeout)
    }

    /// Sends `request`, trying again with backoff while failures are transient, at most
    /// ``S3Configuration/Limits/maxAttempts`` times. Each try is signed at its own time and
    /// reads its body afresh.
    func send(_ request: S3Request, counter: RequestCounter) async throws(PushPrepError) -> S3Response {
        let limits = configuration.limits
        var attempt = 1
        while true {
            guard !Task.isCancelled else { throw Self.interrupted(request) }
            counter.record(retry: attempt > 1)
            let failure: Failure
            do throws(Failure) {
                return try await sendOnce(request)
            } catch {
                failure = error
            }
            guard failure.retryable, attempt < limits.maxAttempts else {
                if failure.retryable, attempt > 1 {
                    throw PushPrepError(
                        failure.error.code, "\(failure.error.message) (after \(attempt) tries)",
                        cause: failure.error.cause)
                }
                throw failure.error
            }
            guard !Task.isCancelled else { throw Self.interrupted(request) }
            let delay = retryDelay(afterFailure: attempt, retryAfter: failure.retryAfter)
            var metadata: Logger.Metadata = [
                "operation": "\(request.operation)", "attempt": "\(attempt)", "delay": "\(delay)",
                "reason": "\(failure.error.message)",
            ]
            if let retryAfter = failure.retryAfter { metadata["retry_after"] = "\(retryAfter)" }
            logger.debug("storage request retried", metadata: metadata)
            do {
                try await sleep(delay)
            } catch {
                throw Self.interrupted(request)
            }
            attempt += 1
        }
    }

    private static func interrupted(_ request: S3Request) -> PushPrepError {
        PushPrepError(.storageUnavailable, "\(request.operation): interrupted (the task was cancelled)")
    }

    /// One signed try.
    private func sendOnce(_ request: S3Request) async throws(Failure) -> S3Response {
        let url: URL
        let signed: [(name: String, value: String)]
        do throws(PushPrepError) {
            url = try configuration.url(key: request.key, query: request.query)
            signed = try configuration.signer.authorizationHeaders(
                method: request.method.rawValue, url: url, headers: request.headers, payloadHash: request.payloadHash,
                date: now())
        } catch {
            throw Failure(error: error, retryable: false)
        }
        var http = HTTPClientRequest(url: url.absoluteString)
        http.method = request.method
        for header in request.headers + signed { http.headers.add(name: header.name, value: header.value) }
        let deadline = NIODeadline.now() + TimeAmount(configuration.limits.requestTimeout)
        let response: S3Response
        do {
            switch request.body {
            case .empty:
                if request.method == .PUT || request.method == .POST { http.body = .bytes(ByteBuffer()) }
                response = try await execute(http, deadline: deadline)
            case .bytes(let bytes):
                http.body = .bytes(ByteBuffer(bytes: bytes))
                response = try await execute(http, deadline: deadline)
            case .file(let path, let range):
                response = try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
                    http.body = .stream(
                        handle.readChunks(in: range, chunkLength: Self.chunkLength), length: .known(Int64(range.count)))
                    return try await execute(http, deadline: deadline)
                }
            }
        } catch {
            throw classify(error, request: request)
        }
        if (200..<300).contains(response.status) {
            // S3's advice for a 200 carrying <Error> is to retry: it is read as a 5xx.
            if request.errorMayHide200, S3XML.root(of: response.body) == "Error" {
                let answer = S3ErrorResponse(status: 500, headers: response.headers, body: response.body)
                throw Failure(
                    error: scrubbed(
                        answer.error(operation: request.operation, signedRegion: configuration.region, server: server)),
                    retryable: answer.isRetryable)
            }
            return response
        }
        if request.acceptedStatuses.contains(response.status) { return response }
        let answer = S3ErrorResponse(status: response.status, headers: response.headers, body: response.body)
        let error = answer.error(operation: request.operation, signedRegion: configuration.region, server: server)
        let retryAfter =
            answer.isRetryable ? RetryAfter.parse(response.headers.first(name: "retry-after"), now: now()) : nil
        throw Failure(error: scrubbed(error), retryable: answer.isRetryable, retryAfter: retryAfter)
    }

    private func execute(_ request: HTTPClientRequest, deadline: NIODeadline) async throws -> S3Response {
        let response = try await http.execute(request, deadline: deadline, logger: logger)
        let limit =
            (200..<300).contains(response.status.code) ? Self.maximumResponseBytes : S3ErrorResponse.maximumBodyBytes
        var body: [UInt8] = []
        // Read to the end (so the connection can be reused) but keep only the first bytes.
        for try await chunk in response.body where body.count < limit {
            body += chunk.readableBytesView.prefix(limit - body.count)
        }
        return S3Response(status: Int(response.status.code), headers: response.headers, body: body)
    }

    /// The store's `host:port` as messages name it.
    private var server: String {
        NetworkFailure.endpoint(host: configuration.endpoint.host ?? "?", port: configuration.endpoint.port)
    }

    /// A transport failure as a code, and whether another try may succeed.
    private func classify(_ error: any Error, request: S3Request) -> Failure {
        let operation = request.operation
        if error is CancellationError || Task.isCancelled {
            return Failure(error: Self.interrupted(request), retryable: false)
        }
        if let error = error as? PushPrepError { return Failure(error: error, retryable: false) }
        if let error = error as? FileSystemError {
            let path: String
            if case .file(let file, _) = request.body { path = file } else { path = "the body" }
            return Failure(
                error: PushPrepError(.ioError, "\(operation): cannot read \(path): \(error.message)"), retryable: false)
        }
        let unavailable = { (text: String) in
            Failure(error: PushPrepError(.storageUnavailable, "\(operation): \(text)"), retryable: true)
        }
        if let failure = NetworkFailure(error) {
            // The library's own text, for whoever debugs; the message is the mapping's sentence.
            logger.debug("storage request failed", metadata: ["operation": "\(operation)", "error": "\(error)"])
            let sentence = failure.connecting(
                to: configuration.endpoint.host ?? "?", port: configuration.endpoint.port)
            // A TLS mismatch is a setting to fix, not a passing failure.
            guard failure.kind != .tls, failure.kind != .notTLS else {
                return Failure(
                    error: PushPrepError(.storageUnavailable, "\(operation): \(sentence)", cause: error),
                    retryable: false)
            }
            return unavailable(sentence)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout:
                return unavailable("could not connect to \(server) within \(configuration.limits.connectTimeout)")
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return unavailable("no answer from \(server) within \(configuration.limits.requestTimeout)")
            case .remoteConnectionClosed:
                return unavailable("\(server) closed the connection")
            case .bodyLengthMismatch:
                return Failure(
                    error: PushPrepError(.ioError, "\(operation): the file changed size while it was uploaded"),
                    retryable: false)
            case .alreadyShutdown:
                return Failure(
                    error: PushPrepError(.storageUnavailable, "\(operation): the storage client was shut down"),
                    retryable: false)
            case .cancelled:
                return unavailable("the request to \(server) was cancelled")
            default:
                return Failure(
                    error: PushPrepError(.storageUnavailable, "\(operation): \(server): \(error)", cause: error),
                    retryable: false)
            }
        }
        if error is NIOConnectionError || error is ChannelError || error is IOError {
            return unavailable("cannot reach \(server): \(error)")
        }
        return Failure(
            error: PushPrepError(.storageUnavailable, "\(operation): \(server): \(error)"), retryable: false)
    }

    /// The error with the secret and the session token cut out of its message: a server may
    /// echo what it was sent (a canonical request holds the token).
    func scrubbed(_ error: PushPrepError) -> PushPrepError {
        let credentials = configuration.signer.credentials
        var message = error.message
        for secret in [credentials.secretAccessKey, credentials.sessionToken ?? ""] where secret.count >= 8 {
            message = message.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return message == error.message ? error : PushPrepError(error.code, message, cause: error.cause)
    }
}
