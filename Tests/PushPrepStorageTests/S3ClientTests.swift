import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PushPrepCore
import PushPrepTestSupport
import Synchronization
import Testing

@testable import PushPrepStorage

/// The S3 client against a test server speaking S3 (``S3Bucket``): what is stored, what is skipped, what is retried,
/// what is reported, and that nothing secret is ever shown.
@Suite("S3 client")
struct S3ClientTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY"
    static let token = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN"

    /// A file of `size` seeded random bytes, written 1 MiB at a time, and its hex SHA-256.
    static func makeFile(size: Int, seed: UInt64 = 1) throws -> (path: String, sha256: String) {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("s3-\(UUID().uuidString).bin").path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var generator = SplitMix64(seed: seed)
        var hasher = SHA256()
        var written = 0
        while written < size {
            let count = min(1024 * 1024, size - written)
            var chunk = [UInt8](repeating: 0, count: count)
            for index in 0..<count { chunk[index] = UInt8(truncatingIfNeeded: generator.next()) }
            hasher.update(data: chunk)
            try handle.write(contentsOf: chunk)
            written += count
        }
        return (path, hasher.finalize().map { String(format: "%02x", $0) }.joined())
    }

    static func configuration(
        _ server: TestServer<S3Bucket>, bucket: String? = nil, region: String? = nil,
        limits: S3Configuration.Limits? = nil
    ) throws(PushPrepError) -> S3Configuration {
        try S3Configuration(
            endpoint: server.endpoint, bucket: bucket ?? server.settings.bucket,
            region: region ?? server.settings.region,
            credentials: AWSCredentials(
                accessKeyID: server.settings.accessKeyID, secretAccessKey: secret, sessionToken: token),
            limits: limits ?? fastLimits)
    }

    /// Short backoff and timeouts, so that fault tests take milliseconds.
    static var fastLimits: S3Configuration.Limits {
        var limits = S3Configuration.Limits()
        limits.backoff = Backoff(base: .milliseconds(5), cap: .milliseconds(20), minimumFraction: 0)
        limits.connectTimeout = .seconds(2)
        limits.requestTimeout = .seconds(30)
        return limits
    }

    /// Runs `body` with a server and a client on it, both stopped afterwards.
    static func withServer(
        partDelay: TimeAmount = .zero, retainBodies: Bool = true, bucket: String? = nil, region: String? = nil,
        limits: S3Configuration.Limits? = nil, log: CapturedLog = CapturedLog(),
        _ body: (TestServer<S3Bucket>, S3Client) async throws -> Void
    ) async throws {
        let server = try await S3Bucket.serve(.init(retainBodies: retainBodies, partDelay: partDelay))
        let client = S3Client(
            configuration: try configuration(server, bucket: bucket, region: region, limits: limits),
            logger: log.logger(level: .trace))
        do {
            try await body(server, client)
        } catch {
            await client.shutdown()
            await server.shutdown()
            throw error
        }
        await client.shutdown()
        await server.shutdown()
    }

    /// The error `body` throws, or nil.
    static func failure(_ body: () async throws -> Void) async -> PushPrepError? {
        do {
            try await body()
            return nil
        } catch let error as PushPrepError {
            return error
        } catch {
            Issue.record("not a PushPrepError: \(error)")
            return nil
        }
    }

    /// Nothing in the error or any log line holds the secret or the token.
    static func expectNoSecrets(
        _ error: PushPrepError?, _ log: CapturedLog, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var texts = [error.map { "\($0)" } ?? ""]
        for line in log.lines { texts.append(line.message + " " + line.metadata.description) }
        for text in texts {
            #expect(!text.contains(secret), "a secret in: \(text)", sourceLocation: sourceLocation)
            #expect(!text.contains(token), "a token in: \(text)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Single PUT and HEAD

    @Test("a small file is PUT once with its type, Cache-Control and SHA-256; publishing again sends only HEAD")
    func storesThenSkips() async throws {
        let file = try Self.makeFile(size: 300_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer { server, client in
            let first = try await client.publish(
                file: file.path, key: "push/img-1.jpg", contentType: "image/jpeg", sha256: file.sha256)
            #expect(first.outcome == .stored && first.bytes == 300_000 && first.parts == 0)
            #expect(first.attempts == 2 && first.retries == 0)
            let stored = try #require(server.object("push/img-1.jpg"))
            #expect(stored.bytes == Array(try Data(contentsOf: URL(fileURLWithPath: file.path))))
            #expect(stored.headers["content-type"] == "image/jpeg")
            #expect(stored.headers["cache-control"] == "public, max-age=31536000, immutable")
            #expect(stored.headers["x-amz-meta-sha256"] == file.sha256)
            #expect(stored.headers["content-disposition"] == nil)
            let put = try #require(server.requests(.putObject).first)
            #expect(
                put.headers["x-amz-checksum-sha256"]
                    == Data(S3Client.digestBytes(hex: file.sha256)!).base64EncodedString())
            #expect(put.headers["x-amz-content-sha256"] == file.sha256)
            #expect(put.headers["content-length"] == "300000")

            let info = try #require(try await client.head("push/img-1.jpg"))
            #expect(info.size == 300_000 && info.sha256 == file.sha256 && info.contentType == "image/jpeg")
            #expect(try await client.head("push/absent.jpg") == nil)

            let second = try await client.publish(
                file: file.path, key: "push/img-1.jpg", contentType: "image/jpeg", sha256: file.sha256)
            #expect(second.outcome == .alreadyStored && second.attempts == 1 && second.bytes == 300_000)
            #expect(server.requests(.putObject).count == 1, "the second publication sent no PUT")
            #expect(server.object("push/img-1.jpg")?.writes == 1)
        }
    }

    @Test("an object under the key with another SHA-256 is replaced")
    func replacesDifferentContent() async throws {
        let old = try Self.makeFile(size: 1000, seed: 1)
        let new = try Self.makeFile(size: 2000, seed: 2)
        defer { for path in [old.path, new.path] { try? FileManager.default.removeItem(atPath: path) } }
        try await Self.withServer { server, client in
            _ = try await client.publish(file: old.path, key: "k.png", contentType: "image/png", sha256: old.sha256)
            let result = try await client.publish(
                file: new.path, key: "k.png", contentType: "image/png", sha256: new.sha256)
            #expect(result.outcome == .stored)
            #expect(server.object("k.png")?.size == 2000 && server.object("k.png")?.writes == 2)
        }
    }

    @Test("a SHA-256 that is not the file's is refused by the server's check: io_error, not retried")
    func wrongHashIsCaught() async throws {
        let file = try Self.makeFile(size: 5000)
        let other = try Self.makeFile(size: 10, seed: 9)
        defer { for path in [file.path, other.path] { try? FileManager.default.removeItem(atPath: path) } }
        try await Self.withServer { server, client in
            let error = await Self.failure {
                _ = try await client.publish(
                    file: file.path, key: "x.jpg", contentType: "image/jpeg", sha256: other.sha256)
            }
            #expect(error?.code == .ioError)
            #expect(error?.message.contains("XAmzContentSHA256Mismatch") == true)
            #expect(server.requests(.putObject).count == 1)
            #expect(server.object("x.jpg") == nil)
        }
    }

    // MARK: - Faults

    @Test("503 SlowDown twice, then success: retried, stored once, the body re-sent whole each time")
    func slowDownIsRetried() async throws {
        let file = try Self.makeFile(size: 200_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer { server, client in
            server.inject(.init(operation: .putObject, times: 2, action: .error(status: 503, code: "SlowDown")))
            let result = try await client.publish(
                file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            #expect(result.outcome == .stored && result.retries == 2 && result.attempts == 4)
            let puts = server.requests(.putObject)
            #expect(puts.map(\.bodyBytes) == [200_000, 200_000, 200_000])
            #expect(server.object("a.jpg")?.writes == 1)
            #expect(server.object("a.jpg")?.bytes?.count == 200_000)
        }
    }

    @Test("each try is signed anew, at its own time")
    func retriesAreResigned() async throws {
        let file = try Self.makeFile(size: 1000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let server = try await S3Bucket.serve()
        server.inject(.init(operation: .putObject, times: 2, action: .error(status: 500, code: "InternalError")))
        // A clock that moves a minute on each reading: a reused signature would show one date.
        let ticks = Mutex(0)
        let clock: @Sendable () -> Date = {
            Date(
                timeIntervalSince1970: 1_700_000_000 + 60
                    * Double(
                        ticks.withLock { tick in
                            tick += 1
                            return tick
                        }))
        }
        let client = S3Client(configuration: try Self.configuration(server), logger: CapturedLog().logger(), now: clock)
        let result = await Self.failure {
            _ = try await client.publish(file: file.path, key: "r.jpg", contentType: "image/jpeg", sha256: file.sha256)
        }
        await client.shutdown()
        await server.shutdown()
        #expect(result == nil)
        let puts = server.requests(.putObject)
        #expect(puts.count == 3)
        #expect(Set(puts.compactMap { $0.headers["x-amz-date"] }).count == 3)
        #expect(Set(puts.compactMap { $0.headers["authorization"] }).count == 3)
    }

    @Test("503 SlowDown with Retry-After: 1, then success: the client waits the second asked, not its backoff")
    func retryAfterIsHonoured() async throws {
        let file = try Self.makeFile(size: 1000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        // The backoff alone would wait at most 20 ms; a cap of 5 s lets the server's second through.
        var limits = Self.fastLimits
        limits.backoff = Backoff(base: .milliseconds(5), cap: .seconds(5), minimumFraction: 0)
        let log = CapturedLog()
        try await Self.withServer(limits: limits, log: log) { server, client in
            server.inject(
                .init(operation: .putObject, times: 1, action: .error(status: 503, code: "SlowDown", retryAfter: "1")))
            let start = ContinuousClock.now
            let result = try await client.publish(
                file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            let waited = ContinuousClock.now - start
            #expect(result.outcome == .stored && result.retries == 1)
            #expect(waited >= .milliseconds(950), "waited \(waited), not the second the server asked for")
            #expect(server.object("a.jpg")?.writes == 1)
            let retried = log.lines.filter { $0.message == "storage request retried" }
            #expect(retried.map { $0.metadata["retry_after"] } == ["\(Duration.seconds(1))"])
            #expect(retried.map { $0.metadata["delay"] } == ["\(Duration.seconds(1))"])
        }
    }

    @Test("Retry-After as seconds or an HTTP date is waited, capped by the backoff's cap and the request timeout")
    func retryAfterIsCapped() async throws {
        let file = try Self.makeFile(size: 1000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let server = try await S3Bucket.serve()
        var limits = Self.fastLimits
        limits.backoff = Backoff(base: .milliseconds(5), cap: .seconds(2), minimumFraction: 0)
        limits.maxAttempts = 5
        // Tue, 01 Apr 2025 10:00:00 GMT, for the HTTP date; the waits are recorded, not slept.
        let now = Date(timeIntervalSince1970: 1_743_501_600)
        let waits = Mutex<[Duration]>([])
        let client = S3Client(
            configuration: try Self.configuration(server, limits: limits), logger: CapturedLog().logger(),
            now: { now }, sleep: { delay in waits.withLock { $0.append(delay) } })
        for (status, code, retryAfter) in [
            (503, "SlowDown", "86400"), (429, "TooManyRequests", "Tue, 01 Apr 2025 10:00:01 GMT"),
            (503, "SlowDown", "soon"), (503, "SlowDown", "Tue, 01 Apr 2025 09:00:00 GMT"),
        ] {
            server.inject(
                .init(
                    operation: .putObject, times: 1,
                    action: .error(status: status, code: code, retryAfter: retryAfter)))
        }
        let result = await Self.failure {
            _ = try await client.publish(file: file.path, key: "c.jpg", contentType: "image/jpeg", sha256: file.sha256)
        }
        #expect(result == nil)
        let recorded = waits.withLock { $0 }
        try #require(recorded.count == 4, "\(recorded)")
        #expect(recorded[0] == .seconds(2), "a day asked, the cap waited")
        #expect(recorded[1] == .seconds(1), "an HTTP date a second ahead")
        #expect(recorded[2] <= .milliseconds(20), "unreadable: the jittered backoff (at most 20 ms here)")
        #expect(recorded[3] == .zero, "a date in the past: no wait")
        #expect(server.object("c.jpg")?.writes == 1)
        // A request timeout shorter than the cap bounds the wait too.
        var short = limits
        short.requestTimeout = .milliseconds(500)
        let bounded = S3Client(
            configuration: try Self.configuration(server, limits: short), logger: CapturedLog().logger())
        #expect(bounded.retryDelay(afterFailure: 1, retryAfter: .seconds(30)) == .milliseconds(500))
        await bounded.shutdown()
        await client.shutdown()
        await server.shutdown()
    }

    @Test("SlowDown on every try: storage_unavailable after the configured tries")
    func slowDownForever() async throws {
        let file = try Self.makeFile(size: 1000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        var limits = Self.fastLimits
        limits.maxAttempts = 3
        try await Self.withServer(limits: limits) { server, client in
            server.inject(
                .init(operation: .putObject, times: 100, action: .error(status: 503, code: "SlowDown")))
            let error = await Self.failure {
                _ = try await client.publish(
                    file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            }
            #expect(error?.code == .storageUnavailable)
            #expect(error?.message.contains("SlowDown") == true && error?.message.contains("after 3 tries") == true)
            #expect(server.requests(.putObject).count == 3)
        }
    }

    @Test("403 SignatureDoesNotMatch: storage_denied at once, no retry, and the secret never shown")
    func signatureMismatchIsDenied() async throws {
        let file = try Self.makeFile(size: 1000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let log = CapturedLog()
        try await Self.withServer(log: log) { server, client in
            // A server that echoes what it was given (S3 echoes the canonical request, which holds the token).
            let echo = "The request signature we calculated does not match. secret=\(Self.secret) token=\(Self.token)"
            server.inject(
                .init(operation: .headObject, times: 1, action: .error(status: 403, code: "SignatureDoesNotMatch")))
            server.inject(
                .init(
                    operation: .putObject, times: 5,
                    action: .error(status: 403, code: "SignatureDoesNotMatch", message: echo)))
            let error = await Self.failure {
                _ = try await client.publish(
                    file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            }
            #expect(error?.code == .storageDenied)
            #expect(error?.message.contains("SignatureDoesNotMatch") == true)
            #expect(error?.message.contains("<redacted>") == true)
            #expect(server.requests(.putObject).count == 1, "a 403 is not retried")
            Self.expectNoSecrets(error, log)
        }
        #expect(PushPrepError.Code.storageDenied.isPermanent)
    }

    @Test("an unknown access key is storage_denied (InvalidAccessKeyId)")
    func unknownKey() async throws {
        let file = try Self.makeFile(size: 100)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let server = try await S3Bucket.serve(.init(accessKeyID: "AKIDOTHER"))
        let configuration = try S3Configuration(
            endpoint: server.endpoint, bucket: server.settings.bucket, region: server.settings.region,
            credentials: AWSCredentials(accessKeyID: "AKIDWRONG", secretAccessKey: Self.secret), limits: Self.fastLimits
        )
        let log = CapturedLog()
        let error = await Self.failure {
            _ = try await S3Client.withClient(configuration, logger: log.logger()) { client throws(PushPrepError) in
                try await client.publish(file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            }
        }
        #expect(error?.code == .storageDenied)
        #expect(error?.message.contains("InvalidAccessKeyId") == true)
        #expect(server.requests(.putObject).count == 1)
        Self.expectNoSecrets(error, log)
        await server.shutdown()
    }

    @Test("signed for the wrong region: storage_denied naming the bucket's region, from HEAD's header or PUT's XML")
    func wrongRegion() async throws {
        let file = try Self.makeFile(size: 100)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        // The server is in eu-west-3; the client signs for us-east-1. HEAD gets a bare 400.
        try await Self.withServer(region: "us-east-1") { server, client in
            let error = await Self.failure {
                _ = try await client.publish(
                    file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            }
            #expect(error?.code == .storageDenied)
            #expect(error?.message.contains("the bucket is in region eu-west-3, not us-east-1") == true)
            #expect(server.requests(.headObject).count == 1 && server.requests(.putObject).isEmpty)
        }
        // The PUT's answer: AuthorizationHeaderMalformed with <Region>.
        try await Self.withServer { server, client in
            server.inject(
                .init(
                    operation: .putObject, times: 1,
                    action: .error(status: 400, code: "AuthorizationHeaderMalformed", region: "ap-south-2")))
            let error = await Self.failure {
                _ = try await client.publish(
                    file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            }
            #expect(error?.code == .storageDenied)
            #expect(error?.message.contains("region ap-south-2") == true)
            #expect(error?.message.contains("AuthorizationHeaderMalformed") == true)
            #expect(server.requests(.putObject).count == 1)
        }
    }

    @Test("a missing bucket: storage_unavailable (NoSuchBucket), not retried")
    func missingBucket() async throws {
        let file = try Self.makeFile(size: 100)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer(bucket: "no-such-bucket") { server, client in
            let error = await Self.failure {
                _ = try await client.publish(
                    file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            }
            #expect(error?.code == .storageUnavailable)
            #expect(error?.message.contains("NoSuchBucket") == true)
            #expect(server.requests(.putObject).count == 1)
        }
        #expect(!PushPrepError.Code.storageUnavailable.isPermanent)
    }

    @Test("the connection closed mid-upload: the PUT is sent again from the file and the object stored whole")
    func closedMidUpload() async throws {
        let file = try Self.makeFile(size: 3 * 1024 * 1024)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer { server, client in
            server.inject(.init(operation: .putObject, times: 1, action: .closeAfterBodyBytes(1024 * 1024)))
            let result = try await client.publish(
                file: file.path, key: "v.mp4", contentType: "video/mp4", sha256: file.sha256)
            #expect(result.outcome == .stored && result.retries == 1)
            #expect(
                server.object("v.mp4")?.bytes == Array(try Data(contentsOf: URL(fileURLWithPath: file.path))))
            #expect(server.object("v.mp4")?.writes == 1)
        }
    }

    @Test("nothing listens: storage_unavailable after every try, quickly")
    func connectionRefused() async throws {
        let file = try Self.makeFile(size: 100)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let server = try await S3Bucket.serve()
        await server.shutdown()
        let log = CapturedLog()
        let started = ContinuousClock.now
        let error = await Self.failure {
            _ = try await S3Client.withClient(try Self.configuration(server), logger: log.logger()) {
                client throws(PushPrepError) in
                try await client.publish(file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            }
        }
        #expect(error?.code == .storageUnavailable)
        #expect(error?.message.contains("HEAD media/a.jpg") == true && error?.message.contains("after 4 tries") == true)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(log.lines.filter { $0.message == "storage request retried" }.count == 3)
        Self.expectNoSecrets(error, log)
    }

    // MARK: - Multipart

    @Test("just above the threshold: parts in parallel whose concatenation is the file, metadata from Create")
    func multipart() async throws {
        var limits = Self.fastLimits
        limits.multipartThreshold = 10 * 1024 * 1024
        limits.partSize = 5 * 1024 * 1024
        let file = try Self.makeFile(size: limits.multipartThreshold + 1)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer(partDelay: .milliseconds(300), limits: limits) { server, client in
            let result = try await client.publish(
                file: file.path, key: "push/vid-9.mp4", contentType: "video/mp4", sha256: file.sha256)
            #expect(result.outcome == .stored && result.parts == 3 && result.bytes == limits.multipartThreshold + 1)
            let stored = try #require(server.object("push/vid-9.mp4"))
            #expect(stored.bytes == Array(try Data(contentsOf: URL(fileURLWithPath: file.path))))
            #expect(stored.headers["content-type"] == "video/mp4")
            #expect(stored.headers["cache-control"] == "public, max-age=31536000, immutable")
            #expect(stored.headers["x-amz-meta-sha256"] == file.sha256)
            let parts = server.requests(.uploadPart)
            #expect(parts.map(\.bodyBytes).sorted() == [1, 5 * 1024 * 1024, 5 * 1024 * 1024])
            #expect(parts.allSatisfy { $0.headers["x-amz-content-sha256"]?.count == 64 })
            #expect(server.maxPartsInFlight > 1, "parts are sent in parallel")
            #expect(server.requests(.completeMultipart).count == 1 && server.openUploads == 0)
            #expect(server.requests(.abortMultipart).isEmpty)
        }
    }

    @Test("a part that fails on every try: the upload is aborted and the server holds no parts")
    func failingPartAborts() async throws {
        var limits = Self.fastLimits
        limits.multipartThreshold = 5 * 1024 * 1024
        limits.partSize = 5 * 1024 * 1024
        limits.maxAttempts = 2
        let file = try Self.makeFile(size: 12 * 1024 * 1024)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer(limits: limits) { server, client in
            server.inject(
                .init(
                    operation: .uploadPart, partNumber: 2, times: 100,
                    action: .error(status: 500, code: "InternalError")))
            let error = await Self.failure {
                _ = try await client.publish(
                    file: file.path, key: "big.mp4", contentType: "video/mp4", sha256: file.sha256)
            }
            #expect(error?.code == .storageUnavailable)
            #expect(error?.message.contains("UploadPart 2") == true && error?.message.contains("InternalError") == true)
            #expect(server.requests(.abortMultipart).count == 1)
            #expect(server.openUploads == 0 && server.object("big.mp4") == nil)
            #expect(server.requests(.completeMultipart).isEmpty)
        }
    }

    @Test("parts that get no answer within the request deadline: tried again, then storage_unavailable, aborted")
    func requestDeadline() async throws {
        var limits = Self.fastLimits
        limits.multipartThreshold = 5 * 1024 * 1024
        limits.partSize = 5 * 1024 * 1024
        limits.requestTimeout = .milliseconds(400)
        limits.maxAttempts = 2
        let file = try Self.makeFile(size: 6 * 1024 * 1024)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let started = ContinuousClock.now
        try await Self.withServer(partDelay: .seconds(3), limits: limits) { server, client in
            let error = await Self.failure {
                _ = try await client.publish(
                    file: file.path, key: "d.mp4", contentType: "video/mp4", sha256: file.sha256)
            }
            #expect(error?.code == .storageUnavailable)
            #expect(error?.message.contains("no answer") == true && error?.message.contains("after 2 tries") == true)
            #expect(server.requests(.abortMultipart).count == 1 && server.openUploads == 0)
        }
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    @Test("cancelled while parts are in flight: the upload is still aborted")
    func cancellationAborts() async throws {
        var limits = Self.fastLimits
        limits.multipartThreshold = 5 * 1024 * 1024
        limits.partSize = 5 * 1024 * 1024
        let file = try Self.makeFile(size: 11 * 1024 * 1024)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer(partDelay: .seconds(5), limits: limits) { server, client in
            let upload = Task { () async -> PushPrepError? in
                await Self.failure {
                    _ = try await client.publish(
                        file: file.path, key: "c.mp4", contentType: "video/mp4", sha256: file.sha256)
                }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while server.requests(.createMultipart).isEmpty || server.partsInFlight == 0,
                ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            upload.cancel()
            let error = await upload.value
            #expect(error?.code == .storageUnavailable)
            #expect(error?.message.contains("interrupted") == true || error?.message.contains("cancelled") == true)
            #expect(server.requests(.abortMultipart).count == 1)
            #expect(server.openUploads == 0)
        }
    }

    @Test("CompleteMultipartUpload answered 200 with an <Error> body is a failure, retried")
    func completeErrorIn200() async throws {
        var limits = Self.fastLimits
        limits.multipartThreshold = 5 * 1024 * 1024
        limits.partSize = 5 * 1024 * 1024
        let file = try Self.makeFile(size: 6 * 1024 * 1024)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer(limits: limits) { server, client in
            server.inject(
                .init(operation: .completeMultipart, times: 1, action: .error(status: 200, code: "InternalError")))
            let result = try await client.publish(
                file: file.path, key: "m.mp4", contentType: "video/mp4", sha256: file.sha256)
            #expect(result.parts == 2 && result.retries == 1)
            #expect(
                server.requests(.completeMultipart).count == 2 && server.object("m.mp4")?.size == 6 * 1024 * 1024
            )
        }
    }

    @Test("the answer to a Complete that succeeded is lost: the retry finds no upload, HEAD finds the object: stored")
    func completeAnswerLost() async throws {
        var limits = Self.fastLimits
        limits.multipartThreshold = 5 * 1024 * 1024
        limits.partSize = 5 * 1024 * 1024
        let file = try Self.makeFile(size: 6 * 1024 * 1024)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer(limits: limits) { server, client in
            server.inject(.init(operation: .completeMultipart, times: 1, action: .loseAnswer))
            let result = try await client.publish(
                file: file.path, key: "l.mp4", contentType: "video/mp4", sha256: file.sha256)
            #expect(result.outcome == .stored && result.parts == 2)
            #expect(server.requests(.completeMultipart).map(\.status) == [200, 404])
            #expect(server.requests(.headObject).count == 2 && server.requests(.abortMultipart).isEmpty)
            #expect(
                server.object("l.mp4")?.bytes == Array(try Data(contentsOf: URL(fileURLWithPath: file.path))))
        }
    }

    @Test("parts: 5 MiB minimum, raised in whole MiB beyond 10,000 parts, the last one shorter")
    func partLayout() {
        let parts = S3Client.parts(size: 17 * 1024 * 1024, partSize: 8 * 1024 * 1024)
        #expect(parts.map(\.range.count) == [8 * 1024 * 1024, 8 * 1024 * 1024, 1024 * 1024])
        #expect(parts.map(\.number) == [1, 2, 3])
        let huge = S3Client.parts(size: 100 * 1024 * 1024 * 1024, partSize: 5 * 1024 * 1024)
        #expect(huge.count <= 10_000 && huge[0].range.count == 11 * 1024 * 1024)
        let end: Int64 = 100 << 30
        #expect(huge.last.map(\.range.upperBound) == end)
    }

    // MARK: - Settings

    @Test("settings PushPrep cannot use are refused with invalid_settings, naming no secret")
    func invalidSettings() {
        let credentials = AWSCredentials(accessKeyID: "AKID", secretAccessKey: Self.secret)
        let local = URL(string: "http://127.0.0.1:9000")!
        func limits(partSize: Int = 8 << 20, parallel: Int = 4) -> S3Configuration.Limits {
            var limits = S3Configuration.Limits()
            limits.partSize = partSize
            limits.parallelParts = parallel
            return limits
        }
        let cases: [(URL, String, String, S3Configuration.Limits)] = [
            (local, "media", "us-east-1", limits(partSize: 4 << 20)),
            (local, "media", "us-east-1", limits(parallel: 0)),
            (local, "Media_Bucket", "us-east-1", limits()),
            (URL(string: "ftp://host")!, "media", "us-east-1", limits()),
            (URL(string: "https://host/path")!, "media", "us-east-1", limits()),
            (local, "media", "us east", limits()),
        ]
        for (endpoint, bucket, region, limits) in cases {
            do {
                _ = try S3Configuration(
                    endpoint: endpoint, bucket: bucket, region: region, credentials: credentials, limits: limits)
                Issue.record("accepted \(endpoint) \(bucket) \(region)")
            } catch {
                #expect(error.code == .invalidSettings)
                #expect(!error.message.contains(Self.secret))
            }
        }
        #expect(throws: PushPrepError.self) { try S3Configuration.checkKey("a/../b.jpg") }
        #expect(throws: PushPrepError.self) { try S3Configuration.checkKey("a\nb.jpg") }
    }

    @Test("virtual-hosted and path-style URLs; keys are encoded per segment")
    func urls() throws {
        let credentials = AWSCredentials(accessKeyID: "AKID", secretAccessKey: Self.secret)
        let path = try S3Configuration(
            endpoint: URL(string: "https://s3.example.com:8443")!, bucket: "media", region: "auto",
            credentials: credentials)
        #expect(try path.url(key: "p/a b+c.jpg").absoluteString == "https://s3.example.com:8443/media/p/a%20b%2Bc.jpg")
        let hosted = try S3Configuration(
            endpoint: URL(string: "https://s3.eu-west-3.amazonaws.com")!, bucket: "media", region: "eu-west-3",
            pathStyle: false, credentials: credentials)
        #expect(
            try hosted.url(key: "p/x.jpg", query: "uploads=").absoluteString
                == "https://media.s3.eu-west-3.amazonaws.com/p/x.jpg?uploads=")
        #expect(throws: PushPrepError.self) {
            try S3Configuration(
                endpoint: URL(string: "https://s3.example.com")!, bucket: "a.b.media", region: "auto",
                pathStyle: false, credentials: credentials)
        }
    }

    @Test("the client's configuration is built from the resolved one: its URLs are the bucket address's")
    func configurationFromResolved() throws {
        guard case .s3(let location) = try StoreLocation(parsing: "s3://media/push?region=eu-west-3") else {
            Issue.record("not an s3 store")
            return
        }
        let aws = try AWSConfiguration.resolve(
            for: location, environment: ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": Self.secret]
        ) { _ throws(PushPrepError) in nil }
        let configuration = try S3Configuration(aws, location: location)
        let key = try location.key(forFile: "img-1.jpg")
        #expect(try configuration.url(key: key) == (try aws.address(of: location)).objectURL(key: key))
        #expect(
            try configuration.url(key: key).absoluteString == "https://media.s3.eu-west-3.amazonaws.com/push/img-1.jpg")
        #expect(configuration.region == "eu-west-3")
    }

    @Test("S3 error bodies: code, message and region read; codes mapped; a hostile body quoted safely")
    func errorMapping() {
        let body = Array(
            "<?xml version=\"1.0\"?><Error><Code>AuthorizationHeaderMalformed</Code><Message>wrong\nregion</Message><Region>eu-central-1</Region></Error>"
                .utf8)
        let parsed = S3ErrorResponse(status: 400, headers: [:], body: body)
        #expect(parsed.code == "AuthorizationHeaderMalformed" && parsed.region == "eu-central-1")
        #expect(parsed.message == "wrong region")
        let denied = parsed.error(operation: "PUT b/k", signedRegion: "us-east-1")
        #expect(denied.code == .storageDenied && denied.message.contains("eu-central-1"))
        let hostile = S3ErrorResponse(
            status: 403, headers: [:],
            body: Array("<Error><Code>Bad\nCode</Code><Region>x\ny</Region></Error>".utf8))
        #expect(hostile.code == nil && hostile.region == nil)
        #expect(
            S3ErrorResponse(status: 404, headers: [:], body: []).error(operation: "x", signedRegion: "r").code
                == .storageUnavailable)
        #expect(S3ErrorResponse(status: 429, headers: [:], body: []).isRetryable)
        #expect(!S3ErrorResponse(status: 400, headers: [:], body: []).isRetryable)
        let timeout = S3ErrorResponse(status: 400, code: "RequestTimeout", message: nil, region: nil)
        #expect(timeout.isRetryable)
        #expect(S3XML.fields(of: Array("not xml".utf8), root: "Error", names: ["Code"]) == nil)
    }
}
