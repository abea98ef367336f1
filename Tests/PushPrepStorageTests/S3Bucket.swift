import Crypto
import Foundation
import NIOCore
import PushPrepTestSupport
import Synchronization

/// Routes of a ``TestServer`` that speak S3: one bucket, objects in memory, multipart uploads,
/// and faults scripted per operation.
///
/// It checks what the client cannot fake by signing: the body's SHA-256 against
/// `x-amz-checksum-sha256` (base64) and `x-amz-content-sha256` (hex), the access key id and the
/// region in the `Authorization` header's credential scope (a wrong region is answered as AWS
/// does: `AuthorizationHeaderMalformed` naming the bucket's region, or for HEAD a bare 400 with
/// `x-amz-bucket-region`). It does not recompute the signature: that would test the signer
/// against itself (moto does that, with its own implementation, in the integration tests).
///
/// Checksums as S3 keeps them: an upload created with `x-amz-checksum-algorithm: SHA256` takes
/// each part's `x-amz-checksum-sha256`, requires each part's `ChecksumSHA256` in the Complete
/// list, and answers with the composite checksum (`<base64 of the SHA-256 of the parts' digests>-N`);
/// a PUT's `x-amz-checksum-sha256` is kept; a HEAD with `x-amz-checksum-mode: ENABLED` gives
/// the object's. ``Verification`` makes it as lax as some S3-compatible servers are, and
/// ``Action/corruptBody`` alters a body on the way in.
///
/// The server records every request (headers, body bytes and chunks, status: see
/// `TestServer.requests(_:)` for those of one operation), and the bucket keeps the most
/// `UploadPart` requests in flight at once.
final class S3Bucket: TestServerRoutes {
    /// What a request asked for.
    enum Operation: String, Sendable {
        case headObject, putObject, deleteObject, createMultipart, uploadPart, completeMultipart, abortMultipart, other
    }

    /// What the server compares with the body it received.
    enum Verification: Sendable {
        /// `x-amz-content-sha256` and `x-amz-checksum-sha256`, as S3 does.
        case all
        /// Only `x-amz-checksum-sha256`: like the S3-compatible server that stored a part whose
        /// body differed from its signed payload hash.
        case checksumsOnly
        /// Nothing: whatever arrives is stored (its checksums are still computed and reported).
        case nothing
    }

    /// What a scripted fault does to a matching request.
    enum Action: Sendable {
        /// Answers with S3's XML error (a HEAD gets the status and headers only), with a
        /// `Retry-After` header when `retryAfter` is given.
        case error(
            status: Int, code: String, message: String = "scripted", region: String? = nil, retryAfter: String? = nil)
        /// Closes the connection once this many body bytes have arrived.
        case closeAfterBodyBytes(Int)
        /// Does what was asked, then closes the connection instead of answering (a lost answer).
        case loseAnswer
        /// Flips the bits of the body's first byte as it arrives, as a faulty link or proxy
        /// would: the server hashes and stores the altered bytes.
        case corruptBody
    }

    /// A fault for the next `times` requests of `operation` (and of `partNumber`, for parts).
    struct Fault: Sendable {
        var operation: Operation
        var partNumber: Int?
        var times: Int
        var action: Action
    }

    struct Object: Sendable {
        var bytes: [UInt8]?
        var size: Int
        var sha256: [UInt8]
        var headers: [String: String]
        /// How many times an upload stored this key.
        var writes: Int
        /// `x-amz-checksum-sha256` as a HEAD with checksum mode gives it: the base64 SHA-256 of
        /// a PUT sent with one, the composite `…-N` of a multipart upload created for SHA-256.
        var checksum: String? = nil
    }

    struct Upload: Sendable {
        var key: String
        var headers: [String: String]
        /// `x-amz-checksum-algorithm` of the CreateMultipartUpload.
        var checksumAlgorithm: String? = nil
        var parts: [Int: (bytes: [UInt8]?, size: Int, digest: [UInt8], etag: String)] = [:]
    }

    struct State {
        var objects: [String: Object] = [:]
        var uploads: [String: Upload] = [:]
        var faults: [Fault] = []
        var partsInFlight = 0
        var maxPartsInFlight = 0
        var nextUpload = 1
    }

    /// One request while its body arrives: what it asks, the fault it meets, its body's hash.
    /// Used only on its connection's event loop.
    final class Exchange: @unchecked Sendable {
        let operation: Operation
        let fault: Action?
        var hasher = SHA256()
        var received = 0

        init(operation: Operation, fault: Action?) {
            self.operation = operation
            self.fault = fault
        }
    }

    /// How the bucket is set up.
    struct Settings: Sendable {
        var bucket = "media"
        var region = "eu-west-3"
        var accessKeyID = "AKIDTESTKEY"
        /// Keep the bytes of stored objects (off for the memory test: only sizes and hashes).
        var retainBodies = true
        /// How long an `UploadPart` answer is held once its body is in, so that parallel parts overlap.
        var partDelay = TimeAmount.zero
        /// What the server checks the bodies against.
        var verification = Verification.all
    }

    let settings: Settings
    let state = Mutex(State())

    init(_ settings: Settings) { self.settings = settings }

    /// Starts a server on 127.0.0.1 answering as a bucket set up with `settings`.
    static func serve(_ settings: Settings = Settings()) async throws -> TestServer<S3Bucket> {
        try await TestServer.start(S3Bucket(settings))
    }

    func inject(_ fault: Fault) { state.withLock { $0.faults.append(fault) } }
    func object(_ key: String) -> Object? { state.withLock { $0.objects[key] } }
    /// Stores `bytes` under `key` as another client would: with `headers` (lowercase names)
    /// and no checksum unless `checksum` is given.
    func put(_ key: String, bytes: [UInt8], headers: [String: String] = [:], checksum: String? = nil) {
        state.withLock { state in
            state.objects[key] = Object(
                bytes: bytes, size: bytes.count, sha256: Array(SHA256.hash(data: bytes)), headers: headers,
                writes: (state.objects[key]?.writes ?? 0) + 1, checksum: checksum)
        }
    }
    var openUploads: Int { state.withLock { $0.uploads.count } }
    var partsInFlight: Int { state.withLock { $0.partsInFlight } }
    var maxPartsInFlight: Int { state.withLock { $0.maxPartsInFlight } }

    /// The operation a request asks for, from its method and query.
    static func operation(_ request: TestServer<S3Bucket>.Request) -> Operation {
        switch (request.method, request.query["uploads"] != nil, request.query["uploadId"] != nil) {
        case ("HEAD", _, _): .headObject
        case ("PUT", _, true): .uploadPart
        case ("PUT", _, false): .putObject
        case ("DELETE", _, false): .deleteObject
        case ("POST", true, _): .createMultipart
        case ("POST", _, true): .completeMultipart
        case ("DELETE", _, true): .abortMultipart
        default: .other
        }
    }

    /// Picks the fault the request meets; counts a part in flight.
    func begin(_ request: TestServer<S3Bucket>.Request) -> Exchange {
        let operation = Self.operation(request)
        let part = request.query["partNumber"].flatMap { Int($0) }
        let fault = state.withLock { state -> Action? in
            if operation == .uploadPart {
                state.partsInFlight += 1
                state.maxPartsInFlight = max(state.maxPartsInFlight, state.partsInFlight)
            }
            guard
                let index = state.faults.firstIndex(where: {
                    $0.operation == operation && $0.times > 0 && ($0.partNumber == nil || $0.partNumber == part)
                })
            else { return nil }
            state.faults[index].times -= 1
            return state.faults[index].action
        }
        return Exchange(operation: operation, fault: fault)
    }

    /// Corrupts, hashes and counts the body as it arrives; cuts it where the fault says.
    func receive(_ piece: inout ByteBuffer, of exchange: Exchange) -> TestServerBodyAction {
        if case .corruptBody = exchange.fault, exchange.received == 0, piece.readableBytes > 0,
            let first = piece.getInteger(at: piece.readerIndex, as: UInt8.self)
        {
            piece.setInteger(~first, at: piece.readerIndex)
        }
        exchange.received += piece.readableBytes
        piece.withUnsafeReadableBytes { exchange.hasher.update(bufferPointer: $0) }
        if case .closeAfterBodyBytes(let limit) = exchange.fault, exchange.received >= limit { return .cut }
        // Object bytes may be dropped (the memory test); a CompleteMultipartUpload list is always read.
        let object = exchange.operation == .putObject || exchange.operation == .uploadPart
        return settings.retainBodies || !object ? .keep : .skip
    }

    /// A part cut short is no longer in flight.
    func cut(_ request: TestServer<S3Bucket>.Request, exchange: Exchange) {
        if exchange.operation == .uploadPart { state.withLock { $0.partsInFlight -= 1 } }
    }

    /// Answers as S3 would (or loses the answer, as the fault says); a part's answer waits `partDelay`.
    func respond(to request: TestServer<S3Bucket>.Request, exchange: Exchange, reply: TestServer<S3Bucket>.Reply) {
        let answer = answer(request, exchange: exchange)
        let isPart = exchange.operation == .uploadPart
        if case .loseAnswer = exchange.fault {
            if isPart { state.withLock { $0.partsInFlight -= 1 } }
            return reply.drop(instead: answer.status)
        }
        let head = request.method == "HEAD"
        var headers = answer.headers
        if head, !headers.contains(where: { $0.0 == "Content-Length" }) { headers.append(("Content-Length", "0")) }
        let delay = isPart ? settings.partDelay : .zero
        reply.send(answer.status, headers: headers, body: head ? [] : answer.body, after: delay)
        if isPart { reply.after(delay) { self.state.withLock { $0.partsInFlight -= 1 } } }
    }
}

extension TestServer where Routes == S3Bucket {
    /// Scripts `fault` (see ``S3Bucket/inject(_:)``).
    func inject(_ fault: S3Bucket.Fault) { routes.inject(fault) }

    /// The object stored under `key`.
    func object(_ key: String) -> S3Bucket.Object? { routes.object(key) }

    /// Stores `bytes` under `key` as another client would (see ``S3Bucket/put(_:bytes:headers:checksum:)``).
    func put(_ key: String, bytes: [UInt8], headers: [String: String] = [:], checksum: String? = nil) {
        routes.put(key, bytes: bytes, headers: headers, checksum: checksum)
    }

    /// The requests received for `operation`, in order.
    func requests(_ operation: S3Bucket.Operation) -> [Request] {
        received.filter { S3Bucket.operation($0) == operation }
    }
}
