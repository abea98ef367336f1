import Crypto
import Foundation
import PushPrepCore
import PushPrepStorage
import PushPrepTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The moto harness itself: the IAM server really checks signatures (ours pass, a wrong secret
/// or none does not), boto3 reads back what was stored, and a presigned URL of ours downloads
/// with plain curl from the server without IAM auth. The storage tests rely on all three.
@Suite(MotoS3Server.required) struct MotoHarnessTests {
    /// A small object and the headers a PushPrep upload sends with it.
    private static let body = Data("PushPrep harness check: ✓\n".utf8)
    private static let contentType = "text/plain; charset=utf-8"
    private static let cacheControl = "public, max-age=31536000, immutable"

    private static func hex(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// PUTs ``body`` to `url` with URLSession, signed with `credentials` (not signed when nil).
    private static func put(
        _ url: URL, credentials: AWSCredentials?, region: String
    ) async throws -> (status: Int, body: String) {
        try await put(url, signer: try credentials.map { try SigV4Signer(credentials: $0, region: region) })
    }

    /// PUTs ``body`` to `url` with URLSession, signed by `signer` (not signed when nil).
    private static func put(_ url: URL, signer: SigV4Signer?) async throws -> (status: Int, body: String) {
        let hash = hex(body)
        let headers = [
            (name: "Content-Type", value: contentType), (name: "Cache-Control", value: cacheControl),
            (name: "x-amz-meta-sha256", value: hash),
        ]
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        request.httpBody = body
        var sent = headers
        if let signer {
            sent += try signer.authorizationHeaders(
                method: "PUT", url: url, headers: headers, payloadHash: hash, date: Date())
        }
        for (name, value) in sent { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = try #require(response as? HTTPURLResponse).statusCode
        return (status, String(decoding: data, as: UTF8.self))
    }

    @Test("a PUT signed by SigV4Signer with the IAM user's key is stored as sent (read back with boto3)")
    func signedPutIsStored() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let url = try await server.url(key: "harness/signed.txt", bucket: bucket)
        let response = try await Self.put(url, credentials: try await server.credentials, region: server.region)
        #expect(response.status == 200, "\(response.body)")

        let stored = try #require(try await server.readBack("harness/signed.txt", bucket: bucket))
        #expect(stored.body == Self.body)
        #expect(stored.contentType == Self.contentType)
        #expect(stored.cacheControl == Self.cacheControl)
        #expect(stored.metadata == ["sha256": Self.hex(Self.body)])
        #expect(stored.contentDisposition == nil)
    }

    @Test("a --store URL for the server resolves, with the key in the environment, to where a signed PUT lands")
    func storeURLReachesTheServer() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let text = try await server.storeURL(prefix: "push/2026", bucket: bucket)
        guard case .s3(let location) = try StoreLocation(parsing: text) else {
            Issue.record("\(text) is not an s3:// store")
            return
        }
        // No HOME: the test's own ~/.aws must not matter.
        let configuration = try AWSConfiguration.resolve(for: location, environment: try await server.environment) {
            _ throws(PushPrepError) in nil
        }
        let address = try configuration.address(of: location)
        #expect(address.pathStyle)
        let key = try location.key(forFile: "ab cd+é.txt")
        let response = try await Self.put(
            address.objectURL(key: key), signer: try configuration.signer())
        #expect(response.status == 200, "\(response.body)")
        let stored = try #require(try await server.readBack("push/2026/ab cd+é.txt", bucket: bucket))
        #expect(stored.body == Self.body)
        #expect(stored.metadata == ["sha256": Self.hex(Self.body)])
    }

    @Test("the same PUT signed with a wrong secret is refused: 403 SignatureDoesNotMatch, nothing stored")
    func wrongSecretIsRefused() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.bucket
        let key = "harness/wrong-secret-\(UUID().uuidString).txt"
        let url = try await server.url(key: key, bucket: bucket)
        let right = try await server.credentials
        let wrong = AWSCredentials(accessKeyID: right.accessKeyID, secretAccessKey: right.secretAccessKey + "x")
        let response = try await Self.put(url, credentials: wrong, region: server.region)
        #expect(response.status == 403)
        #expect(response.body.contains("<Code>SignatureDoesNotMatch</Code>"), "\(response.body)")
        #expect(try await server.readBack(key, bucket: bucket) == nil)
    }

    @Test("an unsigned PUT is refused: the setup spent every unsigned call moto allows")
    func unsignedIsRefused() async throws {
        let server = MotoS3Server.shared
        let key = "harness/unsigned-\(UUID().uuidString).txt"
        let response = try await Self.put(try await server.url(key: key), credentials: nil, region: server.region)
        // AWS answers 403 AccessDenied; moto 5.2 with IAM auth on answers a request without an
        // Authorization header with a bare 500. Either way: not stored.
        #expect(!(200..<300).contains(response.status), "\(response.body)")
        #expect(try await server.readBack(key) == nil)
    }

    @Test(
        "a presigned GET made by SigV4Signer downloads with plain curl (moto without IAM auth)",
        .enabled(if: TestTools.programAvailable("curl"), "needs curl"))
    func presignedGetDownloadsWithCurl() async throws {
        let server = MotoS3Server.withoutIAM
        let credentials = try await server.credentials
        let url = try await server.url(key: "harness/presigned%20file.txt")
        let response = try await Self.put(url, credentials: credentials, region: server.region)
        #expect(response.status == 200, "\(response.body)")
        #expect(try await server.readBack("harness/presigned file.txt")?.body == Self.body)

        let signer = try SigV4Signer(credentials: credentials, region: server.region)
        let presigned = try signer.presignedURL(method: "GET", url: url, expires: 600, date: Date())
        #expect(presigned.query?.contains("X-Amz-Signature=") == true)
        let curl = try TestTools.run(
            "curl", ["--silent", "--show-error", "--fail", "--globoff", presigned.absoluteString], timeout: .seconds(30)
        )
        #expect(curl.status == 0, "\(String(decoding: curl.stderr, as: UTF8.self))")
        #expect(curl.stdout == Self.body)
    }
}
