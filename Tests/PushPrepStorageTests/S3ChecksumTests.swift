import Crypto
import Foundation
import Logging
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepStorage

/// Issue 26 §1.9 and §1.10: every byte of a multipart upload is verified by the server through
/// S3's own checksums, not only the signed payload hash (which some S3-compatible servers never
/// compare with the body), and an object is taken for an entry's only on evidence of its bytes.
@Suite("S3 checksums")
struct S3ChecksumTests {
    private typealias Client = S3ClientTests

    /// Limits that make a 12 MiB file three parts of 5, 5 and 2 MiB.
    private static var multipartLimits: S3Configuration.Limits {
        var limits = Client.fastLimits
        limits.multipartThreshold = 5 * 1024 * 1024
        limits.partSize = 5 * 1024 * 1024
        limits.maxAttempts = 2
        return limits
    }

    /// Runs `body` with a fault server checking `verification` and a client on it.
    private static func withServer(
        verification: S3Bucket.Verification, limits: S3Configuration.Limits = multipartLimits,
        log: CapturedLog = CapturedLog(), _ body: (TestServer<S3Bucket>, S3Client) async throws -> Void
    ) async throws {
        let server = try await S3Bucket.serve(.init(verification: verification))
        let client = S3Client(
            configuration: try Client.configuration(server, limits: limits), logger: log.logger(level: .trace))
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

    /// S3's composite checksum of `path` cut into `partSize` parts, computed here from the file.
    private static func composite(of path: String, partSize: Int) throws -> String {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        var digests: [UInt8] = []
        var count = 0
        for start in stride(from: 0, to: bytes.count, by: partSize) {
            digests += SHA256.hash(data: bytes[start..<min(start + partSize, bytes.count)])
            count += 1
        }
        return "\(Data(SHA256.hash(data: digests)).base64EncodedString())-\(count)"
    }

    @Test(
        "a part altered on the way to a server that ignores the signed payload hash: its checksum is refused (io_error), the upload aborted, no object stored"
    )
    func alteredPartIsRefused() async throws {
        let file = try Client.makeFile(size: 12 * 1024 * 1024)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer(verification: .checksumsOnly) { server, client in
            server.inject(.init(operation: .uploadPart, partNumber: 2, times: 100, action: .corruptBody))
            let error = await Client.failure {
                _ = try await client.publish(
                    file: file.path, key: "push/big.mp4", contentType: "video/mp4", sha256: file.sha256)
            }
            #expect(error?.code == .ioError)
            #expect(error?.message.contains("UploadPart 2") == true, "\(String(describing: error))")
            #expect(error?.message.contains("BadDigest") == true, "\(String(describing: error))")
            #expect(error?.message.contains("altered on the way") == true, "\(String(describing: error))")
            #expect(server.object("push/big.mp4")?.size == nil)
            #expect(server.requests(.completeMultipart).isEmpty)
            #expect(server.requests(.abortMultipart).count == 1 && server.openUploads == 0)
        }
    }

    @Test(
        "multipart: Create names SHA256, each part carries its x-amz-checksum-sha256, Complete lists them, and the object's composite checksum is the file's parts'"
    )
    func partsCarryChecksums() async throws {
        let limits = Self.multipartLimits
        let file = try Client.makeFile(size: 12 * 1024 * 1024, seed: 3)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer(verification: .checksumsOnly) { server, client in
            let result = try await client.publish(
                file: file.path, key: "push/vid.mp4", contentType: "video/mp4", sha256: file.sha256)
            #expect(result.outcome == .stored && result.parts == 3)
            #expect(server.requests(.createMultipart).first?.headers["x-amz-checksum-algorithm"] == "SHA256")
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file.path)))
            for part in server.requests(.uploadPart) {
                let number = try #require(part.query["partNumber"].flatMap { Int($0) })
                let start = (number - 1) * limits.partSize
                let expected = Data(SHA256.hash(data: bytes[start..<min(start + limits.partSize, bytes.count)]))
                #expect(part.headers["x-amz-checksum-sha256"] == expected.base64EncodedString(), "part \(number)")
                // The new header is signed like the others.
                #expect(part.headers["authorization"]?.contains("x-amz-checksum-sha256") == true)
            }
            let stored = try #require(server.object("push/vid.mp4"))
            // Set only when Complete listed each part's ChecksumSHA256 equal to the server's own.
            #expect(stored.checksum == (try Self.composite(of: file.path, partSize: limits.partSize)))
            #expect(stored.bytes.map { Array(SHA256.hash(data: $0)) } == Array(SHA256.hash(data: bytes)))
            // Publishing again finds it by its x-amz-meta-sha256 (the composite is no whole-object SHA-256).
            let again = try await client.publish(
                file: file.path, key: "push/vid.mp4", contentType: "video/mp4", sha256: file.sha256)
            #expect(again.outcome == .alreadyStored)
        }
    }

    @Test(
        "a server that checks nothing keeps an altered part: Complete's composite checksum gives it away, storage_unavailable, and the wrong object is deleted"
    )
    func compositeCatchesALaxServer() async throws {
        let file = try Client.makeFile(size: 12 * 1024 * 1024, seed: 4)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        try await Self.withServer(verification: .nothing) { server, client in
            server.inject(.init(operation: .uploadPart, partNumber: 1, times: 100, action: .corruptBody))
            let error = await Client.failure {
                _ = try await client.publish(
                    file: file.path, key: "push/lax.mp4", contentType: "video/mp4", sha256: file.sha256)
            }
            #expect(error?.code == .storageUnavailable)
            #expect(error?.message.contains("the server holds other bytes than were sent") == true)
            #expect(server.requests(.deleteObject).count == 1)
            #expect(server.object("push/lax.mp4")?.size == nil)
        }
    }

    @Test(
        "moto (signatures checked by IAM): a multipart upload with checksums is accepted, moto keeps the SHA-256 composite of the parts, and boto3 reads back the file",
        MotoS3Server.required)
    func motoKeepsTheComposite() async throws {
        let limits = Self.multipartLimits
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let file = try Client.makeFile(size: 12 * 1024 * 1024, seed: 5)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let configuration = try S3Configuration(
            endpoint: try await server.endpoint, bucket: bucket, region: server.region,
            credentials: try await server.credentials, limits: limits)
        try await S3Client.withClient(configuration, logger: CapturedLog().logger(level: .debug)) {
            (client) throws(PushPrepError) in
            let result = try await client.publish(
                file: file.path, key: "push/moto.mp4", contentType: "video/mp4", sha256: file.sha256)
            #expect(result.outcome == .stored && result.parts == 3)
            let info = try await client.head("push/moto.mp4")
            // Without x-amz-checksum-algorithm on Create, moto keeps a CRC64NVME and gives no SHA-256.
            // Its HEAD gives the composite without S3's `-3`; the ETag still says multipart.
            #expect(
                info?.checksumSHA256.map { $0.hasSuffix("-3") ? $0 : "\($0)-3" }
                    == (try? Self.composite(of: file.path, partSize: limits.partSize)))
            #expect(info?.etag?.hasSuffix("-3\"") == true, "\(String(describing: info?.etag))")
            #expect(info.map { S3Client.isConfirmed($0.evidence(sha256: file.sha256, size: result.bytes)) } == true)
        }
        let stored = try await server.readBack("push/moto.mp4", bucket: bucket)
        #expect(stored?.body == (try Data(contentsOf: URL(fileURLWithPath: file.path))))
    }

    @Test(
        "HEAD asks for the server's checksum; evidence: the whole-object checksum, then x-amz-meta-sha256, then the size alone; any mismatch is one"
    )
    func evidenceOrder() async throws {
        let bytes = Array("the attachment's own bytes".utf8)
        let hex = SHA256.hash(data: bytes).hexString
        let base64 = Data(SHA256.hash(data: bytes)).base64EncodedString()
        let other = SHA256.hash(data: Array("other".utf8)).hexString
        try await Self.withServer(verification: .all) { server, client in
            // Stored by PushPrep's PUT: both digests.
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("evidence-\(UUID()).txt").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            _ = try await client.publish(file: path, key: "a", contentType: "text/plain", sha256: hex)
            let published = try #require(try await client.head("a"))
            #expect(server.requests(.headObject).last?.headers["x-amz-checksum-mode"] == "ENABLED")
            #expect(published.checksumSHA256 == base64 && published.sha256 == hex)
            #expect(published.evidence(sha256: hex, size: bytes.count) == .confirmed("x-amz-checksum-sha256"))
            // Only the metadata.
            server.put("b", bytes: bytes, headers: ["x-amz-meta-sha256": hex])
            #expect(
                try await client.head("b")?.evidence(sha256: hex, size: bytes.count) == .confirmed("x-amz-meta-sha256"))
            // Only the checksum, and it says other bytes although the metadata agrees.
            server.put(
                "c", bytes: bytes, headers: ["x-amz-meta-sha256": hex],
                checksum: Data(SHA256.hash(data: Array("other".utf8))).base64EncodedString())
            #expect(
                try await client.head("c")?.evidence(sha256: hex, size: bytes.count)
                    == .mismatch("x-amz-checksum-sha256 \(other)"))
            // Nothing but the size.
            server.put("d", bytes: bytes)
            #expect(try await client.head("d")?.evidence(sha256: hex, size: bytes.count) == .sizeOnly)
            #expect(
                try await client.head("d")?.evidence(sha256: hex, size: 28_441) == .mismatch("\(bytes.count) bytes"))
            // A composite checksum is not a whole-object SHA-256: the metadata decides.
            server.put("e", bytes: bytes, headers: ["x-amz-meta-sha256": other], checksum: "\(base64)-3")
            #expect(
                try await client.head("e")?.evidence(sha256: hex, size: bytes.count)
                    == .mismatch("x-amz-meta-sha256 \(other)"))
            // Nor is one given bare, as moto does, when the ETag says the object is multipart.
            let bare = S3Client.ObjectInfo(
                size: bytes.count, sha256: hex, etag: "\"0f343b0931126a20f133d67c2b018a3b-3\"", contentType: nil,
                checksumSHA256: base64 + "x")
            #expect(bare.evidence(sha256: hex, size: bytes.count) == .confirmed("x-amz-meta-sha256"))
            let typed = S3Client.ObjectInfo(
                size: bytes.count, sha256: nil, etag: "\"e\"", contentType: nil, checksumSHA256: base64 + "x",
                checksumType: "COMPOSITE")
            #expect(typed.evidence(sha256: hex, size: bytes.count) == .sizeOnly)
        }
    }
}
