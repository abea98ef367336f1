import Crypto
import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

#if canImport(Glibc)
    import Glibc
#endif

/// `pushprep worker --store s3://…` against moto with IAM auth on: a job succeeds only once its
/// output is in the bucket (read back with boto3), a refused key fails the job at once
/// (`storage_denied` is permanent), and an unreachable store sends it back to the queue
/// (`storage_unavailable` is retried), and a worker killed in the middle of a multipart upload
/// leaves no object behind while the job it held is published once by the worker that rescues it.
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
            // The attachment, then its Android rendition (the default platforms).
            let android = try #require(attachment.renditions.android)
            #expect(
                attachment.operations.suffix(2) == ["stored jobs/\(attachment.file)", "stored jobs/\(android.file)"])
            let storedAndroid = try #require(try await server.readBack("jobs/\(android.file)", bucket: bucket))
            #expect(SHA256.hash(data: storedAndroid.body).hexString == android.sha256)
            #expect(android.url == "\(endpoint)/\(bucket)/jobs/\(android.file)")
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
            let port = try ChildProcessTools.freePort()
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

    /// Worker A stores through ``HoldProxy`` with every output going up in parts (threshold
    /// 0): it creates the multipart upload, its part upload is held, and it is killed there.
    /// Then the key names no object (only the unfinished upload, as S3 shows it), worker B
    /// (straight to moto) rescues the job once A's lease has expired and publishes it once: one
    /// object, whose bytes have the manifest entry's SHA-256. A's upload stays listed: nothing
    /// is left to abort it, and S3 keeps it (and bills its parts) until the bucket's lifecycle
    /// rule (`AbortIncompleteMultipartUpload`, see the README) removes it.
    @Test("a worker killed mid multipart upload leaves no object; the rescued job is published once")
    func workerKilledMidMultipartUpload() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let inputs = try TinyBMP.write(count: 1, into: dir)
        let motoPort = try #require(try await server.endpoint.port)
        let proxy = try HoldProxy(upstreamPort: motoPort, log: dir.appendingPathComponent("proxy.log"))
        defer { proxy.stop() }
        let proxyPort = try await proxy.port()
        let held = "s3://\(bucket)/jobs?region=\(server.region)&endpoint=http://127.0.0.1:\(proxyPort)"
        let direct = try await server.storeURL(prefix: "jobs", bucket: bucket)
        // Every output, however small, goes up as a multipart upload (parts of S3's minimum 5 MiB).
        let multipart = ["--multipart-threshold", "0", "--part-size", "\(5 * 1024 * 1024)"]
        let environment = try await Self.environment(server)
        try await QueueFixture.withQueue(.sqlite) { queue, url in
            let id = try WorkerProcessTests.enqueue(inputs.map(\.path), queue: url.commandLineArgument, in: dir)[0]
            let workerA = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir, store: held, environment: environment, in: dir,
                options: multipart)
            let request = try await Poll.value(
                "worker A sends a part", within: .seconds(120),
                diagnostics: { workerA.logTail() + "\nproxy:\n" + proxy.output }
            ) { proxy.heldRequests.first }
            #expect(request.hasPrefix("PUT /\(bucket)/jobs/") && request.contains("uploadId="), "\(request)")
            let inFlight = try await WorkerProcessTests.listing(of: bucket, prefix: "jobs/", on: server)
            #expect(inFlight.keys.isEmpty, "nothing stored while the part is in flight: \(inFlight.keys)")
            try #require(inFlight.uploads.count == 1, "worker A's upload is under way: \(inFlight.uploads)")
            let running = try #require(try await queue.job(id))
            #expect(WorkerProcessTests.isOwned(running, by: workerA), "A holds the job while it uploads: \(running)")

            let killed = try await workerA.kill()
            #expect(killed.signal == SIGKILL, "worker A ended before the kill: \(killed)")
            let afterKill = try await WorkerProcessTests.listing(of: bucket, prefix: "jobs/", on: server)
            #expect(afterKill.keys.isEmpty, "no half object: \(afterKill.keys)")
            #expect(afterKill.uploads == inFlight.uploads)
            #expect(try await server.readBack(inFlight.uploads[0], bucket: bucket) == nil, "GET finds no object")

            let workerB = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir, store: direct, environment: environment, in: dir,
                options: multipart)
            let done = try await WorkerProcessTests.waitUntilFinished(
                id, on: queue, within: .seconds(120), worker: workerB)
            try #require(done.state == .succeeded, "job ended \(done.state): \(done.errorMessage ?? "")")
            #expect(done.attempt == 2 && done.leaseToken == 2, "A's attempt and B's: \(done)")
            let attachment = try WorkerProcessTests.attachment(of: done)
            let key = "jobs/\(attachment.file)"
            #expect(inFlight.uploads == [key], "A was uploading the same content-addressed key")
            let stored = try #require(try await server.readBack(key, bucket: bucket))
            #expect(SHA256.hash(data: stored.body).hexString == attachment.sha256)
            #expect(stored.body.count == attachment.bytes)
            let listing = try await WorkerProcessTests.listing(of: bucket, prefix: "jobs/", on: server)
            #expect(
                listing.keys == ([key] + attachment.companionFiles.map { "jobs/\($0.file)" }).sorted(),
                "one object and its renditions, published once")
            // A's upload is orphaned: S3 keeps it until a lifecycle rule aborts it.
            #expect(listing.uploads == [key], "the killed worker's upload is left unfinished")
            #expect(proxy.heldRequests.count == 1, "B did not go through the proxy")
            try await WorkerProcessTests.stop(workerB)
        }
    }
}
