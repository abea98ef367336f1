import Foundation
import Logging
import NIOCore
import NIOPosix
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepStorage

/// Issue 28: what the S3 client says when the store does not implement a request or cannot be
/// reached, against a real HTTP server on 127.0.0.1 (``S3Bucket``'s routes) and a real closed port.
extension S3ClientTests {
    @Test("501 NotImplemented: storage_denied (permanent) at once, one request, a sentence naming the server")
    func notImplementedIsPermanent() async throws {
        let file = try Self.makeFile(size: 1000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        var limits = Self.fastLimits
        limits.maxAttempts = 4
        try await Self.withServer(limits: limits) { server, client in
            server.inject(
                .init(operation: .putObject, times: 100, action: .error(status: 501, code: "NotImplemented")))
            let error = await Self.failure {
                _ = try await client.publish(
                    file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
            }
            #expect(error?.code == .storageDenied)
            #expect(error?.code.isPermanent == true, "a queued job fails at once")
            #expect(server.requests(.putObject).count == 1, "a 501 is not retried")
            let message = try #require(error?.message)
            #expect(
                message.contains("127.0.0.1:\(server.endpoint.port ?? 0) does not implement this request"), "\(message)"
            )
            #expect(!message.contains("tries"), "\(message)")
        }
    }

    @Test("a store on a closed port: the mapping's sentence, not NIO's errno text")
    func refusedConnectionIsASentence() async throws {
        let file = try Self.makeFile(size: 1000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let port = try await ClosedPort.find()
        var limits = Self.fastLimits
        limits.maxAttempts = 2
        let configuration = try S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(port)")!, bucket: "pushprep-closed", region: "us-east-1",
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: Self.secret), limits: limits)
        let client = S3Client(configuration: configuration, logger: .quiet)
        let error = await Self.failure {
            _ = try await client.publish(file: file.path, key: "a.jpg", contentType: "image/jpeg", sha256: file.sha256)
        }
        await client.shutdown()
        let message = try #require(error?.message)
        #expect(error?.code == .storageUnavailable)
        #expect(message.contains("nothing accepts connections at 127.0.0.1:\(port)"), "\(message)")
        #expect(!message.contains("errno") && !message.contains("error set"), "\(message)")
    }
}

/// A port of 127.0.0.1 nothing listens on: bound to find a free one, then closed.
enum ClosedPort {
    static func find() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        return port
    }
}
