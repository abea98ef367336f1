import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// The retry-or-dead rule (``QueueRules/resolve(_:)``) at its boundary, on both backends: a retry
/// on attempt `maxAttempts - 1` queues the job again, on attempt `maxAttempts` ends it `dead`,
/// and either applies only to the lease that holds the job.
extension QueueConformanceTests {
    @Test(
        "a retry on attempt maxAttempts - 1 queues the job again; on attempt maxAttempts it ends dead",
        arguments: QueueBackend.testedBackends, [1, 2, 3])
    func retryOrDeadAtTheBoundary(_ backend: QueueBackend, _ maxAttempts: Int) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a", maxAttempts: maxAttempts))
            for attempt in 1..<maxAttempts {
                let claimed = try await claimOne(queue, worker: "worker-a")
                #expect(claimed.attempt == attempt && claimed.maxAttempts == maxAttempts)
                #expect(try await queue.finish([retry(claimed, delay: .zero)]) == [id])
                let record = try await stored(queue, id)
                #expect(record.state == .queued, "attempt \(attempt) of \(maxAttempts)")
                #expect(record.finishedAt == nil && record.leaseOwner == nil)
            }
            let last = try await claimOne(queue, worker: "worker-a")
            #expect(last.attempt == maxAttempts)
            let runAt = try await stored(queue, id).runAt
            // A late report of the same attempt under an older token changes nothing.
            let stale = JobOutcome(
                lease: Lease(id: id, token: last.lease.token - 1), attempt: last.attempt, maxAttempts: maxAttempts,
                kind: .retry(code: "fetch_failed", message: "late", delay: .zero))
            #expect(try await queue.finish([stale]).isEmpty)
            #expect(try await stored(queue, id).state == .running)

            #expect(try await queue.finish([retry(last, delay: .seconds(60))]) == [id])
            let record = try await stored(queue, id)
            #expect(record.state == .dead)
            #expect(record.errorCode == "fetch_failed" && record.errorMessage == "HTTP 503")
            #expect(record.finishedAt != nil && record.leaseOwner == nil && record.leaseExpiresAt == nil)
            #expect(record.runAt == runAt, "a dead job keeps its run_at; the backoff is not applied")
            #expect(record.attempt == maxAttempts)
            #expect(try await queue.claim(worker: "worker-a", limit: 1, lease: lease).isEmpty)
        }
    }

    /// One batch holding both sides of the boundary: each job is decided from its own attempt.
    @Test(
        "one finish batch queues a job on attempt max - 1 and ends one on attempt max",
        arguments: QueueBackend.testedBackends)
    func retryOrDeadInOneBatch(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let early = try await enqueueOne(queue, spec("early", priority: 2, maxAttempts: 2))
            let last = try await enqueueOne(queue, spec("last", priority: 1, maxAttempts: 1))
            let claimed = try await queue.claim(worker: "worker-a", limit: 2, lease: lease)
            #expect(claimed.map(\.id) == [early, last], "claimed in priority order")
            #expect(claimed.map(\.attempt) == [1, 1])
            #expect(try await queue.finish(claimed.map { retry($0, delay: .zero) }) == [early, last])
            #expect(try await stored(queue, early).state == .queued)
            #expect(try await stored(queue, last).state == .dead)
        }
    }

    @Test("QueueRules: retry-or-dead from the claim's attempt, other outcomes as they are")
    func resolveRules() {
        let lease = Lease(id: 1, token: 1)
        func resolved(_ attempt: Int, of maxAttempts: Int, _ kind: JobOutcome.Kind) -> QueueRules.Resolution {
            QueueRules.resolve(JobOutcome(lease: lease, attempt: attempt, maxAttempts: maxAttempts, kind: kind))
        }
        let retry = JobOutcome.Kind.retry(code: "c", message: "m", delay: .seconds(5))
        #expect(resolved(4, of: 5, retry) == .requeued(code: "c", message: "m", delay: .seconds(5)))
        #expect(resolved(5, of: 5, retry) == .ended(state: .dead, code: "c", message: "m"))
        #expect(resolved(6, of: 5, retry) == .ended(state: .dead, code: "c", message: "m"))
        #expect(
            resolved(1, of: 5, .retry(code: "c", message: "m", delay: .seconds(-3)))
                == .requeued(code: "c", message: "m", delay: .zero))
        #expect(
            resolved(1, of: 5, .failed(code: .corruptInput, message: "m"))
                == .ended(state: .failed, code: "corrupt_input", message: "m"))
        #expect(resolved(5, of: 5, .cancelled(message: "m")) == .cancelled(message: "m"))
        #expect(
            resolved(5, of: 5, .succeeded(result: #"{"kind":"video"}"#))
                == .succeeded(result: #"{"kind":"video"}"#, kind: .video))
        #expect(JobState.allCases.filter(\.isRetryable) == [.failed, .dead, .cancelled])
    }
}
