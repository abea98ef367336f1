import Crypto
import Foundation
import PushPrep
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// `pushprep worker --store s3://…` against moto with IAM auth on: a job succeeds only once its
/// output is in the bucket (read back with boto3), a refused key fails the job at once
/// (`storage_denied` is permanent), and an unreachable store sends it back to the queue
/// (`storage_unavailable` is retried).
@Suite(.serialized, MotoS3Server.required)
struct WorkerStoreTests {
    /// The server's key in `AWS_*` (the secret replaced by `secret` when given), over this
    /// process's environment, whose `HOME` (and `~/.aws`) it hides.
    private static func environment(_ server: MotoS3Server, secret: String? = nil) async throws -> [String: String] {
        try await server.pushprepEnvironment(secret: secret).merging(["HOME": "/nonexistent"]) { $1 }
    }

    @Test("a worker with an s3:// store publishes the job's output to the bucket, then marks it succeeded")
    func publishesToTheBucket() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let store = try await server.storeURL(prefix: "jobs", bucket: bucket)
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let inputs = try TinyBMP.write(count: 1, into: dir)
        try await QueueFixture.withQueue(.sqlite) { queue, url in
            let id = try WorkerProcessTests.enqueue(
                inputs.map(\.path), queue: url.commandLineArgument, in: dir)[0]
            let worker = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir.appendingPathComponent("unused"), store: store,
                environment: try await Self.environment(server), in: dir)
            let done = try await WorkerProcessTests.waitUntilFinished(
                id, on: queue, within: .seconds(120), worker: worker)
            try #require(done.state == .succeeded, "job ended \(done.state): \(done.errorMessage ?? "")")
            let attachment = try WorkerProcessTests.attachment(of: done)
            let stored = try #require(try await server.readBack("jobs/\(attachment.file)", bucket: bucket))
            #expect(SHA256.hash(data: stored.body).hexString == attachment.sha256)
            #expect(stored.contentType == attachment.mime)
            #expect(stored.metadata == ["sha256": attachment.sha256])
            let endpoint = try await server.endpoint.absoluteString
            #expect(attachment.url == "\(endpoint)/\(bucket)/jobs/\(attachment.file)")
            #expect(attachment.operations.last == "stored jobs/\(attachment.file)")
            // Nothing is written to a local out directory.
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("unused").path))
            try await WorkerProcessTests.stop(worker)
        }
    }

    @Test("a refused key fails the job at once with storage_denied; an unreachable store retries it")
    func storageErrorsFollowTheRetryRules() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let inputs = try TinyBMP.write(count: 2, into: dir)
        try await QueueFixture.withQueue(.sqlite) { queue, url in
            // One job at a time: the refusing worker would fail every job it finds.
            var ids = try WorkerProcessTests.enqueue([inputs[0].path], queue: url.commandLineArgument, in: dir)
            let denied = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir, store: try await server.storeURL(prefix: "x", bucket: bucket),
                environment: try await Self.environment(server, secret: "wrongSecretWrongSecretWrongSecret1"),
                in: dir, options: ["--retry-base", "300", "--retry-max", "300"])
            let first = try await WorkerProcessTests.waitUntilFinished(
                ids[0], on: queue, within: .seconds(120), worker: denied)
            #expect(first.state == .failed, "\(first.state): \(first.errorMessage ?? "")")
            #expect(first.errorCode == "storage_denied")
            #expect(first.attempt == 1)
            try await WorkerProcessTests.stop(denied)

            ids += try WorkerProcessTests.enqueue([inputs[1].path], queue: url.commandLineArgument, in: dir)
            let port = try PostgresTestServer.freePort()
            let unreachable = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir,
                store: "s3://\(bucket)/x?region=us-east-1&endpoint=http://127.0.0.1:\(port)",
                environment: try await Self.environment(server), in: dir,
                options: ["--retry-base", "300", "--retry-max", "300"])
            let retried = try await Poll.value(
                "job \(ids[1]) is back in the queue", within: .seconds(120), diagnostics: { unreachable.logTail() }
            ) { () -> JobRecord? in
                guard let job = try await queue.job(ids[1]), job.state == .queued, job.attempt == 1 else { return nil }
                return job
            }
            #expect(retried.errorCode == "storage_unavailable")
            try await WorkerProcessTests.stop(unreachable)
        }
    }
}
