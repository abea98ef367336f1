import Foundation
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// The queue as a library user opens it: by URL, through ``JobQueues/withQueue(_:logger:_:)``,
/// which hands out the jobs' side (``QueueClient``) and keeps the console's queries and the
/// webhook outbox to PushPrep's own server.
@Suite struct QueueClientTests {
    @Test(
        "a library user opens a queue by URL, enqueues once under an idempotency key, and a job it claims ends as reported",
        arguments: QueueBackend.testedBackends)
    func openedByURL(_ backend: QueueBackend) async throws {
        try await Self.withURL(backend) { url in
            let first = try await JobQueues.withQueue(url, logger: .quiet) { queue in
                let key = IdempotencyKey(scope: "library", key: "order-17", fingerprint: "photo.jpg")
                let enqueued = try await queue.enqueue([JobSpec(source: "photo.jpg", payload: "{}")], idempotency: key)
                let again = try await queue.enqueue([JobSpec(source: "photo.jpg", payload: "{}")], idempotency: key)
                #expect(!enqueued.replayed && again.replayed)
                #expect(again.results.map(\.id) == enqueued.results.map(\.id))

                let claimed = try await queue.claim(worker: "library-worker", limit: 5, lease: .seconds(30))
                #expect(claimed.map(\.source) == ["photo.jpg"])
                let job = try #require(claimed.first)
                let finished = try await queue.finish([JobOutcome(job: job, kind: .succeeded(result: #"{"ok":1}"#))])
                #expect(finished == [job.id])
                return job.id
            }
            // A second opening of the same URL sees what the first left.
            try await JobQueues.withQueue(url, logger: .quiet) { queue in
                let record = try #require(try await queue.job(first))
                #expect(record.state == .succeeded && record.result == #"{"ok":1}"#)
                #expect(try await queue.list(state: .succeeded, limit: 10).map(\.id) == [first])
            }
        }
    }

    /// Runs `body` with the URL of a fresh, empty queue on `backend`.
    static func withURL(_ backend: QueueBackend, _ body: (QueueURL) async throws -> Void) async throws {
        switch backend {
        case .sqlite:
            let directory = try TestTools.temporaryDirectory()
            defer { TestTools.removeDirectory(directory) }
            try await body(.sqlite(path: directory.appendingPathComponent("queue.db").path))
        case .postgres:
            try await PostgresTestServer.shared.withFreshDatabase { url in try await body(url) }
        }
    }
}
