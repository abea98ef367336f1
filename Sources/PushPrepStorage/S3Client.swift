import AsyncHTTPClient
import Crypto
package import Foundation
package import Logging
package import NIOCore
import NIOFileSystem
import NIOHTTP1
package import PushPrepCore
import Synchronization

/// Publishes files to one S3-compatible bucket: correct (the server verifies every byte against
/// its SHA-256) and cheap (an object already stored with the same SHA-256 is not sent again).
///
/// - ``head(_:)`` tells whether a key exists, its size, its `x-amz-meta-sha256` and the
///   server's own `x-amz-checksum-sha256` (asked for with `x-amz-checksum-mode: ENABLED`);
///   ``ObjectInfo/evidence(sha256:size:)`` is the one place that decides whether those show an
///   object to hold given bytes.
/// - ``publish(file:key:contentType:sha256:)`` sends `HEAD` first and skips the upload when the
///   object is already there with the same SHA-256 (keys are content-addressed, so a second
///   publication of a job is harmless); otherwise one streamed `PUT` up to
///   ``S3Configuration/Limits/multipartThreshold``, a parallel multipart upload above it (see
///   `S3Multipart.swift`).
///
/// Bodies stream from the file in 64 KiB chunks read off the event loops (NIOFileSystem), so an
/// upload holds a few hundred KiB per request in memory whatever the file's size. Every request
/// is signed with ``SigV4Signer`` when it is sent (a retry is signed anew, with a new date, and
/// re-reads its body from the file), retried with exponential backoff and full jitter on 5xx,
/// 429, `SlowDown`, `RequestTimeout`, `InternalError` and connection failures (waiting what a
/// `Retry-After` on the answer asks instead, up to the backoff's cap), and bounded by a
/// connect timeout and a per-request deadline. Failures are ``PushPrepError``s: `storage_denied`,
/// `storage_unavailable` (see ``S3ErrorResponse``), `io_error` for the local file,
/// `invalid_settings` for a key or hash PushPrep would not send. No secret appears in an error or
/// a log line: the signer's headers are never logged, and server messages are scrubbed of the
/// secret and the session token before they are quoted.
///
/// The client owns its `HTTPClient` (the connect timeout is a client setting); call
/// ``shutdown()`` once done, or use ``withClient(_:logger:_:)``.
package final class S3Client: Sendable {
    /// What HEAD found.
    package struct ObjectInfo: Sendable, Equatable {
        /// `Content-Length`: the object's size.
        package var size: Int
        /// `x-amz-meta-sha256`, the hex SHA-256 PushPrep stored with the object (nil for an
        /// object stored by something else).
        package var sha256: String?
        /// The `ETag`.
        package var etag: String?
        /// The stored `Content-Type`.
        package var contentType: String?
        /// `x-amz-checksum-sha256` as the server gave it with checksum mode on: the base64
        /// SHA-256 of the whole object for a single PUT, `<base64>-<parts>` (a checksum of the
        /// parts' checksums) for a multipart object; nil when the object has no SHA-256 checksum
        /// or the server keeps none.
        package var checksumSHA256: String? = nil
        /// `x-amz-checksum-type`: `COMPOSITE` or `FULL_OBJECT`, when the server says.
        package var checksumType: String? = nil

        /// What the HEAD shows about whether the object holds the bytes whose SHA-256 is
        /// `sha256` (lowercase hex) and whose size is `size`.
        ///
        /// Every piece of evidence present must agree, and the strongest decides how sure the
        /// answer is:
        /// 1. `x-amz-checksum-sha256` of the whole object: computed by the server from the bytes
        ///    it received (and checked against the one PushPrep sent), so it speaks for the
        ///    stored bytes themselves;
        /// 2. `x-amz-meta-sha256`: what the uploader said the bytes were (PushPrep has each part
        ///    of its own uploads verified, but anyone with write access may set it to anything);
        /// 3. `Content-Length`: only the size, the weakest evidence, accepted alone when the
        ///    object carries neither digest (a store that keeps no metadata or checksums).
        ///
        /// A composite multipart checksum (`…-N`) says nothing about the whole object's SHA-256
        /// and is not used.
        package func evidence(sha256: String, size: Int) -> DigestEvidence {
            if self.size != size { return .mismatch("\(self.size) bytes") }
            var confirmed: DigestEvidence?
            if let checksum = wholeObjectChecksum {
                let expected = S3Client.digestBytes(hex: sha256).map { Data($0).base64EncodedString() }
                guard checksum == expected else {
                    let found = Data(base64Encoded: checksum).map { Array($0).hexString } ?? checksum
                    return .mismatch("x-amz-checksum-sha256 \(found.prefix(96))")
                }
                confirmed = .confirmed("x-amz-checksum-sha256")
            }
            if let stored = self.sha256 {
                guard stored == sha256 else { return .mismatch("x-amz-meta-sha256 \(stored)") }
                confirmed = confirmed ?? .confirmed("x-amz-meta-sha256")
            }
            return confirmed ?? .sizeOnly
        }

        /// `checksumSHA256` when it is the whole object's: not a composite, which a server
        /// marks with `-N`, or with `x-amz-checksum-type: COMPOSITE`, or (moto gives the
        /// composite bare) by the multipart object's ETag, `"<hex>-N"`.
        var wholeObjectChecksum: String? {
            guard let checksumSHA256, !checksumSHA256.contains("-"), checksumType?.uppercased() != "COMPOSITE"
            else { return nil }
            if let etag, let dash = etag.lastIndex(of: "-"),
                etag[etag.index(after: dash)...].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).allSatisfy(
                    \.isNumber)
            {
                return nil
            }
            return checksumSHA256
        }
    }

    /// What an object's HEAD says about its bytes (see ``ObjectInfo/evidence(sha256:size:)``).
    package enum DigestEvidence: Sendable, Equatable {
        /// A SHA-256 of the whole object matched: named is the header that did.
        case confirmed(String)
        /// Only the size could be compared, and it matched.
        case sizeOnly
        /// Something differs: what was found (`31 bytes`, `x-amz-meta-sha256 <hex>`).
        case mismatch(String)
    }

    /// What ``publish(file:key:contentType:sha256:)`` did.
    package struct Publication: Sendable, Equatable {
        /// Whether bytes were sent.
        package enum Outcome: String, Sendable, Equatable {
            /// The object was uploaded.
            case stored
            /// An object with the same SHA-256 was already there; nothing was sent.
            case alreadyStored = "already_stored"
        }

        /// Stored now, or already there.
        package var outcome: Outcome
        /// The key.
        package var key: String
        /// The object's size.
        package var bytes: Int
        /// Parts of a multipart upload; 0 for a single PUT or nothing sent.
        package var parts: Int
        /// HTTP requests sent, HEAD and retries included.
        package var attempts: Int
        /// Of those, requests sent again after a failure.
        package var retries: Int
    }

    /// The bucket, region, keys and limits.
    package let configuration: S3Configuration
    let http: HTTPClient
    let logger: Logger
    /// The signing time of each try (tests move it on to see that a retry is signed anew).
    let now: @Sendable () -> Date
    /// Waits between tries (tests record the waits instead of sleeping through them).
    let sleep: @Sendable (Duration) async throws -> Void

    /// Chunks a body is read in: large enough that the thread hops are few, small enough that
    /// NIOFileSystem's read-ahead (8 chunks) stays at half a MiB per request.
    static let chunkLength: ByteCount = .kibibytes(64)

    /// A client for `configuration`'s bucket, with its own connection pool on `eventLoopGroup`
    /// (by default async-http-client's shared one).
    package init(
        configuration: S3Configuration, logger: Logger, eventLoopGroup: (any EventLoopGroup)? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.configuration = configuration
        self.logger = logger
        self.now = now
        self.sleep = sleep
        var settings = HTTPClient.Configuration()
        settings.timeout = HTTPClient.Configuration.Timeout(connect: TimeAmount(configuration.limits.connectTimeout))
        // S3 answers a wrong-region request with a redirect; following it would sign for the
        // wrong host. The redirect is reported instead (storage_denied, naming the region).
        settings.redirectConfiguration = .disallow
        settings.decompression = .disabled
        // Connection failures are retried here, with backoff and a bound, not by the pool.
        settings.connectionPool.retryConnectionEstablishment = false
        http = HTTPClient(
            eventLoopGroup: eventLoopGroup ?? HTTPClient.defaultEventLoopGroup, configuration: settings,
            backgroundActivityLogger: logger)
    }

    /// Closes the connections; later requests fail with `storage_unavailable`.
    package func shutdown() async {
        try? await http.shutdown()
    }

    /// Runs `body` with a client for `configuration`, shut down however `body` ends.
    package static func withClient<Result: Sendable>(
        _ configuration: S3Configuration, logger: Logger,
        _ body: (S3Client) async throws(PushPrepError) -> Result
    ) async throws(PushPrepError) -> Result {
        try await withShutDown(
            S3Client(configuration: configuration, logger: logger), shutDown: { await $0.shutdown() }, body)
    }

    // MARK: - HEAD

    /// The object stored under `key`, or nil when there is none.
    ///
    /// A HEAD answer has no body, so a missing bucket also reads as nil here (the PUT that
    /// follows in ``publish(file:key:contentType:sha256:)`` then says `NoSuchBucket`), and a 403
    /// is `storage_denied` without S3's code.
    package func head(_ key: String) async throws(PushPrepError) -> ObjectInfo? {
        try S3Configuration.checkKey(key)
        switch try await headObject(key, counter: RequestCounter()) {
        case .found(let info): return info
        case .missing: return nil
        case .forbidden(let error): throw error
        }
    }

    enum HeadResult {
        case found(ObjectInfo)
        case missing
        case forbidden(PushPrepError)
    }

    func headObject(_ key: String, counter: RequestCounter) async throws(PushPrepError) -> HeadResult {
        // Checksum mode asks for the SHA-256 the server computed from the bytes it stored.
        let request = S3Request(
            method: .HEAD, key: key, headers: [("x-amz-checksum-mode", "ENABLED")],
            operation: "HEAD \(configuration.bucket)/\(key)", acceptedStatuses: [403, 404])
        let response = try await send(request, counter: counter)
        switch response.status {
        case 404:
            return .missing
        case 403:
            return .forbidden(
                S3ErrorResponse(status: 403, headers: response.headers, body: []).error(
                    operation: request.operation, signedRegion: configuration.region))
        default:
            let size = response.headers.first(name: "content-length").flatMap { Int($0) } ?? 0
            return .found(
                ObjectInfo(
                    size: size, sha256: response.headers.first(name: "x-amz-meta-sha256")?.lowercased(),
                    etag: response.headers.first(name: "etag"),
                    contentType: response.headers.first(name: "content-type"),
                    checksumSHA256: response.headers.first(name: "x-amz-checksum-sha256"),
                    checksumType: response.headers.first(name: "x-amz-checksum-type")))
        }
    }

    // MARK: - Publish

    /// Stores the file at `path` under `key`, unless an object with the same SHA-256 is already
    /// there.
    ///
    /// - Parameters:
    ///   - path: a local file; its bytes are streamed, never read whole.
    ///   - key: the object key (`PREFIX/<id>.<ext>`).
    ///   - contentType: stored as `Content-Type` (the detected type).
    ///   - sha256: the lowercase hex SHA-256 of the file: stored as `x-amz-meta-sha256`, compared
    ///     by the HEAD, and sent so that the server checks the body (`x-amz-checksum-sha256` and the
    ///     signed payload hash of a single PUT; each part's own hash in a multipart upload).
    package func publish(
        file path: String, key: String, contentType: String, sha256: String
    ) async throws(PushPrepError) -> Publication {
        try S3Configuration.checkKey(key)
        guard let digest = Self.digestBytes(hex: sha256) else {
            throw PushPrepError(.invalidSettings, "the SHA-256 to publish \(key) with is not 64 lowercase hex digits")
        }
        guard !contentType.isEmpty, contentType.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F })
        else {
            throw PushPrepError(.invalidSettings, "the Content-Type for \(key) is empty or not printable ASCII")
        }
        let size = try await Self.fileSize(path)
        let counter = RequestCounter()
        var headFailure: PushPrepError?
        switch try await headObject(key, counter: counter) {
        case .found(let existing) where Self.isConfirmed(existing.evidence(sha256: sha256, size: size)):
            logger.debug(
                "storage object already stored", metadata: ["key": "\(key)", "bytes": "\(existing.size)"])
            return Publication(
                outcome: .alreadyStored, key: key, bytes: existing.size, parts: 0, attempts: counter.attempts,
                retries: counter.retries)
        case .found, .missing:
            break
        case .forbidden(let error):
            // Without s3:ListBucket, S3 answers HEAD of a missing key with 403: the PUT decides.
            headFailure = error
        }
        let headers: [(name: String, value: String)] = [
            ("Content-Type", contentType), ("Cache-Control", configuration.cacheControl),
            ("x-amz-meta-sha256", sha256),
        ]
        let parts: Int
        do throws(PushPrepError) {
            if size > configuration.limits.multipartThreshold {
                parts = try await uploadMultipart(
                    file: path, key: key, size: size, sha256: sha256, headers: headers, counter: counter)
            } else {
                let request = S3Request(
                    method: .PUT, key: key,
                    headers: headers + [("x-amz-checksum-sha256", Data(digest).base64EncodedString())],
                    body: .file(path: path, range: 0..<Int64(size)), payloadHash: sha256,
                    operation: "PUT \(configuration.bucket)/\(key)")
                _ = try await send(request, counter: counter)
                parts = 0
            }
        } catch {
            if let headFailure, error.code == .storageDenied {
                logger.debug("storage HEAD was refused too", metadata: ["error": "\(headFailure.message)"])
            }
            throw error
        }
        logger.debug(
            "storage object stored",
            metadata: [
                "key": "\(key)", "bytes": "\(size)", "parts": "\(parts)", "attempts": "\(counter.attempts)",
            ])
        return Publication(
            outcome: .stored, key: key, bytes: size, parts: parts, attempts: counter.attempts,
            retries: counter.retries)
    }

    /// Whether `evidence` shows the bytes by their SHA-256 (the size alone does not).
    static func isConfirmed(_ evidence: DigestEvidence) -> Bool {
        if case .confirmed = evidence { return true }
        return false
    }

    static func fileSize(_ path: String) async throws(PushPrepError) -> Int {
        let info: FileInfo?
        do {
            info = try await FileSystem.shared.info(forFileAt: FilePath(path))
        } catch {
            throw PushPrepError(.ioError, "cannot read \(path): \(error)", cause: error)
        }
        guard let info else { throw PushPrepError(.notFound, "\(path) does not exist") }
        guard info.type == .regular else { throw PushPrepError(.ioError, "\(path) is not a regular file") }
        return Int(info.size)
    }

    /// The 32 bytes a lowercase hex SHA-256 stands for.
    static func digestBytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = hexDigitValue(digits[index]), let low = hexDigitValue(digits[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

}

/// Counts the HTTP requests of one publication, from however many parts run at once.
final class RequestCounter: Sendable {
    private let sent = Atomic<Int>(0)
    private let repeated = Atomic<Int>(0)

    var attempts: Int { sent.load(ordering: .relaxed) }
    var retries: Int { repeated.load(ordering: .relaxed) }

    func record(retry: Bool) {
        sent.add(1, ordering: .relaxed)
        if retry { repeated.add(1, ordering: .relaxed) }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
