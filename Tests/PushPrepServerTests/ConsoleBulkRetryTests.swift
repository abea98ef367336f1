import Foundation
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// The console's bulk retry past one batch of the queue's ``JobFilter/retryLimit``.
struct ConsoleBulkRetryTests {
    /// More failed jobs than one batch takes, the newest two sharing a dedup key: the first
    /// batch leaves the older of the two alone and so retries fewer than the limit, yet the
    /// older jobs past the batch are retried too; only the one whose key is taken stays failed.
    @Test func bulkRetryGoesPastABatchThatSkippedAJob() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let browser = ConsoleBrowser(baseURL: server.baseURL)
        defer { Task { try? await browser.shutdown() } }
        let count = JobFilter.retryLimit + 2
        let keyed = try await JobQueues.withBackend(ConsoleQueue.url(dir), logger: .quiet) { queue in
            func fail(_ specs: [JobSpec]) async throws -> [JobID] {
                let ids = try await queue.enqueue(specs).map(\.id)
                let claimed = try await queue.claim(worker: "bulk-test", limit: specs.count, lease: .seconds(60))
                _ = try await queue.finish(
                    claimed.map { JobOutcome(job: $0, kind: .failed(code: .fetchFailed, message: "gone")) })
                return ids
            }
            _ = try await fail(
                (0..<count).map {
                    JobSpec(source: "https://media.example.com/\($0).jpg", payload: "{}", maxAttempts: 1)
                })
            let older = try await fail([
                JobSpec(source: "https://media.example.com/k-old.jpg", payload: "{}", dedupKey: "k", maxAttempts: 1)
            ])
            _ = try await fail([
                JobSpec(source: "https://media.example.com/k-new.jpg", payload: "{}", dedupKey: "k", maxAttempts: 1)
            ])
            #expect(try await queue.count(filter: JobFilter(states: [.failed])) == count + 2)
            return older[0]
        }

        let page = try await browser.get("/jobs?state=failed")
        let csrf = try ConsoleBrowser.csrf(in: page.text)
        let bulk = try await browser.post("/jobs/bulk-retry", form: [("csrf", csrf), ("state", "failed")])
        #expect(bulk.status == 303)
        #expect(bulk.header("Location") == "/jobs?state=failed&notice=bulk")
        try await JobQueues.withBackend(ConsoleQueue.url(dir), logger: .quiet) { queue in
            let left = try await queue.list(filter: JobFilter(states: [.failed]), limit: 10, before: nil).map(\.id)
            #expect(left == [keyed], "every failed job but the one whose key a newer retried job took")
            #expect(try await queue.count(filter: JobFilter(states: [.queued])) == count + 1)
        }
    }
}
