import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// The queue semantics every backend implements identically, checked on real databases: a
/// SQLite file in a temporary directory, and a fresh database on a PostgreSQL server.
///
/// Times: leases that must expire are 0.2 s and the tests wait 0.5 s past them, so a loaded
/// machine does not turn a pass into a failure; a timestamp is checked to fall between the moments
/// just before and just after the operation that set it.
@Suite("Job queue conformance")
struct QueueConformanceTests {
    /// A lease no test outlives.
    let lease: Duration = .seconds(30)
    /// A lease a test lets expire.
    let shortLease: Duration = .milliseconds(200)
    /// How long a test waits for a short lease to pass.
    let pastShortLease: Duration = .milliseconds(500)
    /// A delay long enough that the checks made before it passes finish first, even on a busy
    /// machine running the whole suite in parallel.
    let delay: Duration = .milliseconds(1500)

    // MARK: - Enqueue and claim

    @Test(
        "enqueue returns increasing ids; a claim takes priority first, then run_at, then id",
        arguments: QueueBackend.testedBackends)
    func claimOrder(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let specs = [
                spec("a"), spec("b", priority: 5), spec("c"), spec("d", priority: 5), spec("e", priority: -3),
            ]
            let results = try await queue.enqueue(specs)
            #expect(results.map(\.created) == Array(repeating: true, count: 5))
            #expect(results.map(\.state) == Array(repeating: .queued, count: 5))
            #expect(results.map(\.id) == results.map(\.id).sorted())
            #expect(Set(results.map(\.id)).count == 5)

            let first = try await queue.claim(worker: "worker-a", limit: 2, lease: lease)
            #expect(first.map(\.source) == ["b", "d"])
            let rest = try await queue.claim(worker: "worker-a", limit: 10, lease: lease)
            #expect(rest.map(\.source) == ["a", "c", "e"])
            #expect(try await queue.claim(worker: "worker-a", limit: 10, lease: lease).isEmpty)
        }
    }

    @Test("at equal priority an earlier run_at goes first, whatever the ids", arguments: QueueBackend.testedBackends)
    func runAtBeforeID(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            _ = try await queue.enqueue([spec("late", delay: .milliseconds(300)), spec("early")])
            try await Task.sleep(for: pastShortLease)
            let claimed = try await queue.claim(worker: "worker-a", limit: 2, lease: lease)
            #expect(claimed.map(\.source) == ["early", "late"])
        }
    }

    @Test("a claim hands out the job as enqueued, with attempt 1 and token 1", arguments: QueueBackend.testedBackends)
    func claimedFields(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let job = JobSpec(
                source: "https://example.com/a.jpg", payload: #"{"maxBytes":1000}"#, dedupKey: "key-a", priority: 7,
                maxAttempts: 3, timeout: .milliseconds(2500))
            let id = try await enqueueOne(queue, job)
            let before = Date()
            let claimed = try await claimOne(queue, worker: "worker-a")
            let after = Date()
            #expect(claimed.lease == Lease(id: id, token: 1))
            #expect(claimed.source == job.source)
            #expect(claimed.payload == job.payload)
            #expect(claimed.attempt == 1)
            #expect(claimed.maxAttempts == 3)
            #expect(claimed.timeout == .milliseconds(2500))

            let record = try await stored(queue, id)
            #expect(record.state == .running)
            #expect(record.leaseOwner == "worker-a")
            #expect(record.leaseToken == 1)
            #expect(record.attempt == 1)
            expectDuring(record.leaseExpiresAt, before, after, plus: 30)
        }
    }

    @Test(
        "a delayed job is scheduled, not claimed before its run_at, then claimed",
        arguments: QueueBackend.testedBackends)
    func delayedJob(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("later", delay: delay))
            let record = try await stored(queue, id)
            #expect(abs(record.runAt.timeIntervalSince(record.createdAt) - 1.5) < 0.01)
            // On a starved machine the delay may pass before the claim runs: then the job must
            // be claimed, and only then.
            let early = try await queue.claim(worker: "worker-a", limit: 10, lease: lease)
            guard early.isEmpty else {
                #expect(Date() >= record.runAt, "claimed before its run_at")
                #expect(early.map(\.id) == [id])
                return
            }
            let stats = try await queue.stats()
            if Date() < record.runAt {
                #expect(stats.scheduled == 1)
                #expect(stats.ready == 0)
            }

            try await sleep(until: record.runAt)
            #expect(try await queue.claim(worker: "worker-a", limit: 10, lease: lease).map(\.id) == [id])
        }
    }

    @Test("enqueue refuses bad settings and adds nothing from the batch", arguments: QueueBackend.testedBackends)
    func invalidSpecs(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            await expectError(.invalidSettings) { try await queue.enqueue([spec("ok"), spec("bad", maxAttempts: 0)]) }
            await expectError(.invalidSettings) { try await queue.enqueue([spec("bad", priority: 1001)]) }
            await expectError(.invalidSettings) { try await queue.enqueue([spec("bad", priority: -1001)]) }
            _ = try await queue.enqueue([spec("edge", priority: 1000), spec("edge", priority: -1000, maxAttempts: 1)])
            #expect(try await queue.list(state: nil, limit: 10).map(\.source) == ["edge", "edge"])
        }
    }

    @Test("empty batches and a zero limit do nothing", arguments: QueueBackend.testedBackends)
    func emptyRequests(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            #expect(try await queue.enqueue([]).isEmpty)
            _ = try await enqueueOne(queue, spec("a"))
            #expect(try await queue.claim(worker: "worker-a", limit: 0, lease: lease).isEmpty)
            #expect(try await queue.heartbeat([], lease: lease) == HeartbeatResult(held: [], cancelRequested: []))
            #expect(try await queue.finish([]).isEmpty)
            #expect(try await queue.release([]).isEmpty)
            #expect(try await queue.stats().ready == 1)
        }
    }

    // MARK: - Dedup

    @Test(
        "a dedup key returns the queued or running job, and a new job once it finished",
        arguments: QueueBackend.testedBackends)
    func dedup(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let first = try await queue.enqueue([spec("a", key: "k"), spec("a", key: "k")])
            #expect(first[0].created && !first[1].created)
            #expect(first[1].id == first[0].id)
            let id = first[0].id

            #expect(
                try await queue.enqueue([spec("a", key: "k")]) == [
                    EnqueueResult(id: id, created: false, state: .queued)
                ])
            let claimed = try await claimOne(queue, worker: "worker-a")
            #expect(
                try await queue.enqueue([spec("a", key: "k")]) == [
                    EnqueueResult(id: id, created: false, state: .running)
                ])

            #expect(try await queue.finish([succeeded(claimed)]) == [id])
            let again = try await queue.enqueue([spec("a", key: "k")])
            #expect(again[0].created)
            #expect(again[0].id > id)
            #expect(again[0].state == .queued)
            #expect(try await queue.list(state: nil, limit: 10).count == 2)
        }
    }

    @Test("jobs without a dedup key never dedup; different keys do not collide", arguments: QueueBackend.testedBackends)
    func noDedupKey(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let results = try await queue.enqueue([spec("a"), spec("a"), spec("a", key: "x"), spec("a", key: "y")])
            #expect(results.allSatisfy { $0.created })
            #expect(Set(results.map(\.id)).count == 4)
        }
    }

    // MARK: - Leases

    @Test("every claim increments the attempt and the token", arguments: QueueBackend.testedBackends)
    func claimCounts(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a"))
            let first = try await claimOne(queue, worker: "worker-a")
            #expect(try await queue.finish([retry(first, delay: .zero)]) == [id])
            let second = try await claimOne(queue, worker: "worker-b")
            #expect(second.lease == Lease(id: id, token: 2))
            #expect(second.attempt == 2)
            let record = try await stored(queue, id)
            #expect(record.attempt == 2)
            #expect(record.leaseOwner == "worker-b")
        }
    }

    @Test(
        "a heartbeat extends held leases, reports cancel requests and refuses stale tokens",
        arguments: QueueBackend.testedBackends)
    func heartbeat(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            _ = try await queue.enqueue([spec("a"), spec("b")])
            let claimed = try await queue.claim(worker: "worker-a", limit: 2, lease: lease)
            try #require(claimed.count == 2)
            let (a, b) = (claimed[0].lease, claimed[1].lease)
            let before = try await stored(queue, a.id).leaseExpiresAt

            let stale = Lease(id: a.id, token: a.token + 1)
            let unknown = Lease(id: b.id + 1000, token: 1)
            let result = try await queue.heartbeat([a, b, stale, unknown], lease: .seconds(120))
            #expect(result == HeartbeatResult(held: [a, b], cancelRequested: []))
            let after = try #require(try await stored(queue, a.id).leaseExpiresAt)
            #expect(after.timeIntervalSince(try #require(before)) > 60)

            _ = try await queue.cancel(b.id)
            #expect(
                try await queue.heartbeat([a, b], lease: lease) == HeartbeatResult(held: [a, b], cancelRequested: [b]))
        }
    }

    @Test(
        "fencing: after a lease expires and another worker claims, the first worker is refused",
        arguments: QueueBackend.testedBackends)
    func fencing(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a"))
            let first = try await claimOne(queue, worker: "worker-a", lease: shortLease)
            try await Task.sleep(for: pastShortLease)
            let second = try await claimOne(queue, worker: "worker-b")
            #expect(second.lease == Lease(id: id, token: 2))
            #expect(second.attempt == 2)

            let owned = try await stored(queue, id)
            #expect(owned.leaseOwner == "worker-b")
            #expect(try await queue.heartbeat([first.lease], lease: lease).held.isEmpty)
            #expect(try await queue.finish([succeeded(first, result: "stale")]).isEmpty)
            #expect(try await queue.finish([failed(first)]).isEmpty)
            #expect(try await queue.release([first.lease]).isEmpty)
            #expect(try await stored(queue, id) == owned)

            #expect(try await queue.heartbeat([second.lease], lease: lease).held == [second.lease])
            #expect(try await queue.finish([succeeded(second, result: "fresh")]) == [id])
            let done = try await stored(queue, id)
            #expect(done.state == .succeeded)
            #expect(done.result == "fresh")
            #expect(done.leaseToken == 2)
            #expect(done.leaseOwner == nil)
            #expect(done.leaseExpiresAt == nil)
            #expect(try await queue.finish([succeeded(second)]).isEmpty, "a finished job takes no second result")
        }
    }

    // MARK: - Outcomes

    @Test("success stores the result and clears the last error and the lease", arguments: QueueBackend.testedBackends)
    func success(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a"))
            _ = try await queue.finish([retry(try await claimOne(queue, worker: "worker-a"), delay: .zero)])
            let before = Date()
            #expect(
                try await queue.finish([succeeded(try await claimOne(queue, worker: "worker-a"), result: "{}")]) == [id]
            )
            let after = Date()
            let record = try await stored(queue, id)
            #expect(record.state == .succeeded)
            #expect(record.result == "{}")
            #expect(record.errorCode == nil && record.errorMessage == nil)
            #expect(record.leaseOwner == nil && record.leaseExpiresAt == nil)
            expectDuring(record.finishedAt, before, after)
            #expect(record.attempt == 2)
        }
    }

    @Test(
        "a retry outcome queues the job again after its backoff, keeping the error",
        arguments: QueueBackend.testedBackends)
    func retryBackoff(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a"))
            let claimed = try await claimOne(queue, worker: "worker-a")
            let before = Date()
            let outcome = JobOutcome(
                job: claimed, kind: .retry(code: "fetch_failed", message: "HTTP 503", delay: delay))
            #expect(try await queue.finish([outcome]) == [id])

            let record = try await stored(queue, id)
            #expect(record.state == .queued)
            #expect(record.runAt > before.addingTimeInterval(1))
            #expect(record.errorCode == "fetch_failed")
            #expect(record.errorMessage == "HTTP 503")
            #expect(record.finishedAt == nil)
            #expect(record.leaseOwner == nil && record.leaseExpiresAt == nil)
            #expect(record.leaseToken == 1)
            // As for delayed jobs: claimed only once the backoff has passed.
            let early = try await queue.claim(worker: "worker-a", limit: 1, lease: lease)
            guard early.isEmpty else {
                #expect(Date() >= record.runAt, "claimed before its backoff ended")
                #expect(early.map(\.attempt) == [2])
                return
            }
            let scheduled = try await queue.stats().scheduled
            if Date() < record.runAt { #expect(scheduled == 1) }

            try await sleep(until: record.runAt)
            #expect(try await claimOne(queue, worker: "worker-a").attempt == 2)
        }
    }

    @Test("a retry outcome on the last attempt ends the job dead", arguments: QueueBackend.testedBackends)
    func retryExhausted(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a", maxAttempts: 2))
            _ = try await queue.finish([retry(try await claimOne(queue, worker: "worker-a"), delay: .zero)])
            let last = try await claimOne(queue, worker: "worker-a")
            #expect(last.attempt == 2)
            #expect(try await queue.finish([retry(last, delay: .zero)]) == [id])

            let record = try await stored(queue, id)
            #expect(record.state == .dead)
            #expect(record.errorCode == "fetch_failed")
            #expect(record.finishedAt != nil)
            #expect(record.leaseOwner == nil)
            #expect(try await queue.claim(worker: "worker-a", limit: 1, lease: lease).isEmpty)
        }
    }

    @Test("a permanent failure ends the job failed, attempts left or not", arguments: QueueBackend.testedBackends)
    func permanentFailure(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a", maxAttempts: 5))
            #expect(try await queue.finish([failed(try await claimOne(queue, worker: "worker-a"))]) == [id])
            let record = try await stored(queue, id)
            #expect(record.state == .failed)
            #expect(record.errorCode == "corrupt_input")
            #expect(record.errorMessage == "truncated JPEG")
            #expect(record.finishedAt != nil)
            #expect(try await queue.claim(worker: "worker-a", limit: 1, lease: lease).isEmpty)
        }
    }

    @Test("a cancelled outcome ends the job cancelled with its message", arguments: QueueBackend.testedBackends)
    func cancelledOutcome(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a"))
            let claimed = try await claimOne(queue, worker: "worker-a")
            _ = try await queue.cancel(id)
            let outcome = JobOutcome(job: claimed, kind: .cancelled(message: "stopped after decoding"))
            #expect(try await queue.finish([outcome]) == [id])
            let record = try await stored(queue, id)
            #expect(record.state == .cancelled)
            #expect(record.errorCode == "cancelled")
            #expect(record.errorMessage == "stopped after decoding")
            #expect(record.finishedAt != nil)
        }
    }

    @Test("one finish records a batch; only current leases count", arguments: QueueBackend.testedBackends)
    func finishBatch(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            _ = try await queue.enqueue((0..<4).map { spec("job-\($0)") })
            let claimed = try await queue.claim(worker: "worker-a", limit: 4, lease: lease)
            try #require(claimed.count == 4)
            let stale = JobOutcome(
                lease: Lease(id: claimed[3].id, token: 7), attempt: 1, maxAttempts: 5, kind: .succeeded(result: "{}"))
            let matched = try await queue.finish([
                succeeded(claimed[0]), failed(claimed[1]), retry(claimed[2], delay: .zero), stale,
            ])
            #expect(matched == [claimed[0].id, claimed[1].id, claimed[2].id])
            #expect(try await stored(queue, claimed[0].id).state == .succeeded)
            #expect(try await stored(queue, claimed[1].id).state == .failed)
            #expect(try await stored(queue, claimed[2].id).state == .queued)
            #expect(try await stored(queue, claimed[3].id).state == .running)
        }
    }

    // MARK: - Rescue and release

    @Test(
        "expired leases are rescued: queued again, dead on the last attempt, cancelled when asked",
        arguments: QueueBackend.testedBackends)
    func rescue(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            // Claimed first: a claim made after the short leases expired would rescue them.
            let kept = try await enqueueOne(queue, spec("kept"))
            // A lease far longer than the test, even when a loaded machine starves it for a while.
            _ = try await claimOne(queue, worker: "worker-b", lease: .seconds(600))
            let ids = try await queue.enqueue([
                spec("again", priority: 3, maxAttempts: 3), spec("dies", priority: 2, maxAttempts: 1),
                spec("cancelled", priority: 1),
            ]).map(\.id)
            let claimed = try await queue.claim(worker: "worker-a", limit: 3, lease: shortLease)
            #expect(claimed.map(\.id) == ids)
            _ = try await queue.cancel(ids[2])
            try await Task.sleep(for: pastShortLease)

            #expect(try await queue.stats().expiredLeases == 3)
            #expect(try await queue.rescueExpired() == 3)
            #expect(try await queue.rescueExpired() == 0)

            let again = try await stored(queue, ids[0])
            #expect(again.state == .queued)
            #expect(again.attempt == 1)
            #expect(again.leaseToken == 1)
            #expect(again.leaseOwner == nil && again.leaseExpiresAt == nil)
            #expect(again.errorCode == "lease_expired")
            #expect(again.errorMessage?.contains("attempt 1 of 3") == true)
            #expect(again.finishedAt == nil)

            let dead = try await stored(queue, ids[1])
            #expect(dead.state == .dead)
            #expect(dead.errorCode == "lease_expired")
            #expect(dead.errorMessage?.contains("attempt 1 of 1") == true)
            #expect(dead.finishedAt != nil)

            let cancelled = try await stored(queue, ids[2])
            #expect(cancelled.state == .cancelled)
            #expect(cancelled.errorCode == "cancelled")
            #expect(cancelled.finishedAt != nil)

            #expect(try await stored(queue, kept).state == .running, "a live lease is not rescued")
            let reclaimed = try await claimOne(queue, worker: "worker-b")
            #expect(reclaimed.lease == Lease(id: ids[0], token: 2))
            #expect(reclaimed.attempt == 2)
        }
    }

    @Test("a claim rescues expired leases before it claims", arguments: QueueBackend.testedBackends)
    func claimRescues(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a", maxAttempts: 1))
            _ = try await claimOne(queue, worker: "worker-a", lease: shortLease)
            try await Task.sleep(for: pastShortLease)
            #expect(try await queue.claim(worker: "worker-b", limit: 1, lease: lease).isEmpty)
            #expect(try await stored(queue, id).state == .dead)
        }
    }

    @Test("release gives the job back without counting the attempt", arguments: QueueBackend.testedBackends)
    func release(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a", maxAttempts: 1))
            let first = try await claimOne(queue, worker: "worker-a")
            #expect(try await queue.release([Lease(id: id, token: 9)]).isEmpty)
            #expect(try await queue.release([first.lease]) == [id])
            #expect(try await queue.release([first.lease]).isEmpty, "a released lease is gone")

            let record = try await stored(queue, id)
            #expect(record.state == .queued)
            #expect(record.attempt == 0)
            #expect(record.leaseToken == 1)
            #expect(record.leaseOwner == nil && record.leaseExpiresAt == nil)
            #expect(record.runAt <= Date().addingTimeInterval(1))

            let second = try await claimOne(queue, worker: "worker-b")
            #expect(second.lease == Lease(id: id, token: 2))
            #expect(second.attempt == 1)
        }
    }

    @Test("releasing a job asked to stop cancels it", arguments: QueueBackend.testedBackends)
    func releaseCancelRequested(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(queue, spec("a"))
            let claimed = try await claimOne(queue, worker: "worker-a")
            _ = try await queue.cancel(id)
            #expect(try await queue.release([claimed.lease]) == [id])
            let record = try await stored(queue, id)
            #expect(record.state == .cancelled)
            #expect(record.finishedAt != nil)
            #expect(try await queue.claim(worker: "worker-a", limit: 1, lease: lease).isEmpty)
        }
    }

    // MARK: - Cancel and retry by hand

    @Test(
        "cancel: a queued job at once, a running one by request, a finished one never",
        arguments: QueueBackend.testedBackends)
    func cancel(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue([spec("running", priority: 1), spec("queued")]).map(\.id)
            let running = try await claimOne(queue, worker: "worker-a")
            #expect(running.id == ids[0])

            let queued = try await queue.cancel(ids[1])
            #expect(queued.state == .cancelled)
            #expect(queued.errorCode == "cancelled")
            #expect(queued.errorMessage == "cancelled before it ran")
            #expect(queued.finishedAt != nil)
            #expect(try await stored(queue, ids[1]) == queued)

            let requested = try await queue.cancel(ids[0])
            #expect(requested.state == .running)
            #expect(requested.cancelRequested)
            #expect(requested.leaseToken == running.lease.token)
            #expect(try await queue.claim(worker: "worker-b", limit: 1, lease: lease).isEmpty)

            await expectError(.invalidJobState, mentioning: "job \(ids[1])") { try await queue.cancel(ids[1]) }
            _ = try await queue.finish([succeeded(running)])
            await expectError(.invalidJobState) { try await queue.cancel(ids[0]) }
            await expectError(.jobNotFound, mentioning: "no job \(ids[1] + 100)") {
                try await queue.cancel(ids[1] + 100)
            }
        }
    }

    @Test(
        "retry by hand: failed, dead and cancelled jobs run again with fresh attempts",
        arguments: QueueBackend.testedBackends)
    func manualRetry(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue([
                spec("failed", priority: 3), spec("dead", priority: 2, maxAttempts: 1), spec("cancelled"),
            ]).map(\.id)
            let claimed = try await queue.claim(worker: "worker-a", limit: 2, lease: lease)
            _ = try await queue.finish([failed(claimed[0]), retry(claimed[1], delay: .zero)])
            _ = try await queue.cancel(ids[2])

            for id in ids {
                let before = Date()
                let record = try await queue.retry(id)
                let after = Date()
                #expect(record.state == .queued)
                #expect(record.attempt == 0)
                #expect(record.finishedAt == nil)
                #expect(!record.cancelRequested)
                #expect(record.result == nil)
                #expect(record.errorCode != nil, "the last error is kept")
                expectDuring(record.runAt, before, after)
                #expect(try await stored(queue, id) == record)
            }
            let again = try await queue.claim(worker: "worker-a", limit: 3, lease: lease)
            #expect(Set(again.map(\.id)) == Set(ids))
            #expect(again.allSatisfy { $0.attempt == 1 })
        }
    }

    @Test(
        "retry by hand is refused for queued, running and succeeded jobs and unknown ids",
        arguments: QueueBackend.testedBackends)
    func manualRetryRefused(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue([spec("running", priority: 1), spec("queued")]).map(\.id)
            let running = try await claimOne(queue, worker: "worker-a")
            await expectError(
                .invalidJobState,
                mentioning: "job \(ids[0]) is running; only failed, dead or cancelled jobs can be retried"
            ) { try await queue.retry(ids[0]) }
            await expectError(.invalidJobState, mentioning: "job \(ids[1]) is queued") { try await queue.retry(ids[1]) }
            _ = try await queue.finish([succeeded(running)])
            await expectError(.invalidJobState, mentioning: "job \(ids[0]) is succeeded") {
                try await queue.retry(ids[0])
            }
            await expectError(.jobNotFound, mentioning: "no job \(ids[1] + 100)") {
                try await queue.retry(ids[1] + 100)
            }
        }
    }

    @Test(
        "retry by hand is refused while another job with the same dedup key is active",
        arguments: QueueBackend.testedBackends)
    func manualRetryDedupConflict(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let old = try await enqueueOne(queue, spec("a", key: "k"))
            _ = try await queue.finish([failed(try await claimOne(queue, worker: "worker-a"))])
            let new = try await queue.enqueue([spec("a", key: "k")])[0]
            #expect(new.created)

            await expectError(
                .invalidJobState, mentioning: "job \(new.id) with the same source and settings is already queued"
            ) { try await queue.retry(old) }
            #expect(try await stored(queue, old).state == .failed)

            _ = try await queue.cancel(new.id)
            #expect(try await queue.retry(old).state == .queued)
        }
    }

    // MARK: - Reading and pruning

    @Test(
        "prune deletes finished jobs that finished before the cutoff, and nothing else",
        arguments: QueueBackend.testedBackends)
    func prune(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue([
                spec("succeeded", priority: 4), spec("failed", priority: 3), spec("running", priority: 2),
                spec("cancelled", priority: 1), spec("queued"),
            ]).map(\.id)
            let claimed = try await queue.claim(worker: "worker-a", limit: 3, lease: lease)
            _ = try await queue.finish([succeeded(claimed[0]), failed(claimed[1])])
            _ = try await queue.cancel(ids[3])

            #expect(try await queue.prune(finishedBefore: Date().addingTimeInterval(-60)) == 0)
            #expect(try await queue.prune(finishedBefore: Date().addingTimeInterval(60)) == 3)
            #expect(try await queue.job(ids[0]) == nil)
            #expect(try await queue.list(state: nil, limit: 10).map(\.id) == [ids[4], ids[2]])
            #expect(try await queue.prune(finishedBefore: Date().addingTimeInterval(60)) == 0)
        }
    }

    @Test(
        "the files of jobs: unfinished sources by prefix (no wildcard), prune returning the pruned jobs' sources and results, names searched in results",
        arguments: QueueBackend.testedBackends)
    func filesOfJobs(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            _ = try await queue.enqueue([
                JobSpec(source: "/up/a.bmp", payload: "{}", priority: 3),
                JobSpec(source: "/up/b.bmp", payload: "{}", priority: 2),
                JobSpec(source: "/up_x/c.bmp", payload: "{}", priority: 1),
                JobSpec(source: "https://media.example/up/d.bmp", payload: "{}"),
            ])
            let claimed = try await queue.claim(worker: "worker-a", limit: 2, lease: lease)
            #expect(claimed.map(\.source) == ["/up/a.bmp", "/up/b.bmp"])
            #expect(try await queue.unfinishedSources(withPrefix: "/up/") == ["/up/a.bmp", "/up/b.bmp"])
            let result = #"{"file":"img-1.jpg","poster":{"file":"img-1-poster.jpg"}}"#
            _ = try await queue.finish([succeeded(claimed[0], result: result), failed(claimed[1])])
            #expect(try await queue.unfinishedSources(withPrefix: "/up/") == [])
            // `_` is no wildcard: /up/ does not begin with /up_.
            #expect(try await queue.unfinishedSources(withPrefix: "/up_") == ["/up_x/c.bmp"])
            #expect(try await queue.namedInResults(["\"img-1.jpg\"", "\"img-2.jpg\""]) == ["\"img-1.jpg\""])
            #expect(try await queue.pruneReturningFiles(finishedBefore: Date().addingTimeInterval(-60)).isEmpty)
            let pruned = try await queue.pruneReturningFiles(finishedBefore: Date().addingTimeInterval(60))
            #expect(Set(pruned.map(\.source)) == ["/up/a.bmp", "/up/b.bmp"])
            #expect(pruned.first { $0.source == "/up/a.bmp" }?.result == result)
            #expect(pruned.first { $0.source == "/up/b.bmp" }?.result == nil)
            #expect(try await queue.namedInResults(["\"img-1.jpg\""]).isEmpty)
            #expect(try await queue.list(state: nil, limit: 10).count == 2)
        }
    }

    @Test(
        "stats count every state, scheduled jobs, expired leases and the oldest ready job's age",
        arguments: QueueBackend.testedBackends)
    func stats(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let empty = try await queue.stats()
            #expect(empty.byState == Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) }))
            #expect(empty.scheduled == 0 && empty.expiredLeases == 0 && empty.oldestReadyAge == nil)

            let ids = try await queue.enqueue([
                spec("dead", priority: 9, maxAttempts: 1), spec("failed", priority: 8), spec("succeeded", priority: 7),
                spec("running", priority: 6), spec("expired", priority: 5), spec("cancelled", priority: 4),
                spec("ready"), spec("ready"), spec("delayed", delay: .seconds(60)),
            ]).map(\.id)
            let finished = try await queue.claim(worker: "worker-a", limit: 3, lease: lease)
            _ = try await queue.finish([retry(finished[0], delay: .zero), failed(finished[1]), succeeded(finished[2])])
            _ = try await claimOne(queue, worker: "worker-a")
            _ = try await claimOne(queue, worker: "worker-a", lease: shortLease)
            _ = try await queue.cancel(ids[5])
            try await Task.sleep(for: pastShortLease)

            let stats = try await queue.stats()
            #expect(
                stats.byState == [.queued: 3, .running: 2, .succeeded: 1, .failed: 1, .dead: 1, .cancelled: 1])
            #expect(stats.scheduled == 1)
            #expect(stats.ready == 2)
            #expect(stats.expiredLeases == 1)
            let age = try #require(stats.oldestReadyAge)
            #expect(age >= 0.4 && age < 60)
        }
    }

    @Test(
        "list is newest first, filters by state and honours the limit; job(id) finds one",
        arguments: QueueBackend.testedBackends)
    func listAndJob(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let before = Date()
            let job = JobSpec(
                source: "/data/in.png", payload: #"{"a":1}"#, dedupKey: "key", priority: 2, maxAttempts: 4,
                timeout: .milliseconds(1500))
            let ids = try await queue.enqueue([job, spec("b"), spec("c"), spec("d")]).map(\.id)
            let after = Date()
            _ = try await claimOne(queue, worker: "worker-a")

            #expect(try await queue.list(state: nil, limit: 10).map(\.id) == ids.reversed())
            #expect(try await queue.list(state: nil, limit: 2).map(\.id) == [ids[3], ids[2]])
            #expect(try await queue.list(state: .queued, limit: 10).map(\.id) == [ids[3], ids[2], ids[1]])
            #expect(try await queue.list(state: .running, limit: 10).map(\.id) == [ids[0]])
            #expect(try await queue.list(state: .dead, limit: 10).isEmpty)

            let record = try await stored(queue, ids[0])
            #expect(record.source == job.source)
            #expect(record.payload == job.payload)
            #expect(record.dedupKey == "key")
            #expect(record.priority == 2)
            #expect(record.maxAttempts == 4)
            #expect(record.timeoutSeconds == 1.5)
            #expect(!record.cancelRequested)
            expectDuring(record.createdAt, before, after)
            #expect(record.updatedAt >= record.createdAt)
            #expect(try await queue.list(state: .running, limit: 1) == [record])
            #expect(try await queue.job(ids[3] + 1000) == nil)
        }
    }

    @Test("waitForWork returns by its timeout", arguments: QueueBackend.testedBackends)
    func waitForWork(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let started = ContinuousClock.now
            await queue.waitForWork(timeout: .milliseconds(100))
            // It returns rather than hangs; the bound is loose because a full parallel test run
            // on 2 cores can starve any task for many seconds.
            let elapsed = ContinuousClock.now - started
            #expect(elapsed < .seconds(60), "waitForWork(100 ms) took \(elapsed)")
        }
    }

    // MARK: - Concurrency

    @Test("concurrent claimers never share a job and claim every job once", arguments: QueueBackend.testedBackends)
    func concurrentClaims(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue((0..<200).map { spec("job-\($0)") }).map(\.id)
            let claimed = try await Self.claimAll(from: [queue, queue, queue, queue], lease: lease)
            #expect(claimed.count == 200)
            #expect(Set(claimed) == Set(ids))
            #expect(try await queue.stats().byState[.succeeded] == 200)
        }
    }

    // MARK: - SQLite only

    @Test("two SQLite pools on one file claim concurrently without duplicates or busy errors")
    func sqliteTwoPools() async throws {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let path = directory.appendingPathComponent("queue.db").path
        let first = try SQLiteJobQueue(path: path, logger: .quiet)
        let second = try SQLiteJobQueue(path: path, logger: .quiet)
        let ids = try await first.enqueue((0..<300).map { spec("job-\($0)") }).map(\.id)
        let claimed = try await Self.claimAll(from: [first, second, first, second], lease: lease)
        #expect(claimed.count == 300)
        #expect(Set(claimed) == Set(ids))
        #expect(try await second.stats().byState[.succeeded] == 300)
    }

    @Test("SQLite: concurrent openers of a new file migrate it once; reopening keeps the jobs")
    func sqliteConcurrentOpen() async throws {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let path = directory.appendingPathComponent("nested/dirs/queue.db").path
        // Without retrying, one opener in four or eight failed with "database is locked".
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { _ = try SQLiteJobQueue(path: path, logger: .quiet) }
            }
            try await group.waitForAll()
        }
        let id = try await enqueueOne(try SQLiteJobQueue(path: path, logger: .quiet), spec("a"))
        let reopened = try SQLiteJobQueue(path: path, logger: .quiet)
        #expect(try await reopened.job(id)?.source == "a")
        #expect(reopened.description == "sqlite:\(path)")
    }

    @Test(
        "SQLite: a schema newer than this build is refused",
        .enabled(if: TestTools.programAvailable("sqlite3"), "needs the sqlite3 command-line tool"))
    func sqliteNewerSchema() async throws {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let path = directory.appendingPathComponent("queue.db").path
        _ = try SQLiteJobQueue(path: path, logger: .quiet)
        let future = SQLiteSchema.latestVersion + 1
        try TestTools.runChecked(
            "sqlite3", [path, "INSERT INTO grdb_migrations (identifier) VALUES ('\(SQLiteSchema.identifier(future))')"])
        await expectError(
            .queueUnavailable,
            mentioning:
                "the queue's schema is version \(future), this PushPrep knows up to \(SQLiteSchema.latestVersion): upgrade PushPrep"
        ) { try SQLiteJobQueue(path: path, logger: .quiet) }
    }

    @Test("SQLite: a file that is not a database, or a path that cannot be created, is queue_unavailable")
    func sqliteUnusablePath() async throws {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let notDatabase = directory.appendingPathComponent("notes.txt")
        try Data(repeating: 0x41, count: 4096).write(to: notDatabase)
        await expectError(.queueUnavailable, mentioning: "cannot open the queue database \(notDatabase.path)") {
            try SQLiteJobQueue(path: notDatabase.path, logger: .quiet)
        }
        let underFile = notDatabase.appendingPathComponent("queue.db").path
        await expectError(.queueUnavailable, mentioning: "cannot create the directory") {
            try SQLiteJobQueue(path: underFile, logger: .quiet)
        }
    }

    // MARK: - Helpers

    /// Claims from `queues` concurrently (one task per entry, small varying batches) until they
    /// run dry, finishing each batch as succeeded; returns every claimed id, duplicates kept.
    static func claimAll(from queues: [any JobQueueBackend], lease: Duration) async throws -> [JobID] {
        try await withThrowingTaskGroup(of: [JobID].self) { group in
            for (index, queue) in queues.enumerated() {
                group.addTask {
                    var ids: [JobID] = []
                    while true {
                        let jobs = try await queue.claim(worker: "worker-\(index)", limit: 3 + index * 2, lease: lease)
                        if jobs.isEmpty { return ids }
                        ids += jobs.map(\.id)
                        let outcomes = jobs.map { JobOutcome(job: $0, kind: .succeeded(result: "{}")) }
                        let finished = try await queue.finish(outcomes)
                        #expect(finished == Set(jobs.map(\.id)))
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    func spec(
        _ source: String, key: String? = nil, priority: Int = 0, delay: Duration = .zero, maxAttempts: Int = 5
    ) -> JobSpec {
        JobSpec(
            source: source, payload: #"{"source":"\#(source)"}"#, dedupKey: key, priority: priority, delay: delay,
            maxAttempts: maxAttempts)
    }

    /// Sleeps until a little after `date`.
    func sleep(until date: Date) async throws {
        try await Task.sleep(for: .seconds(max(date.timeIntervalSinceNow, 0) + 0.2))
    }

    func enqueueOne(_ queue: any JobQueueBackend, _ spec: JobSpec) async throws -> JobID {
        let results = try await queue.enqueue([spec])
        return try #require(results.first).id
    }

    /// Claims exactly one job.
    func claimOne(_ queue: any JobQueueBackend, worker: String, lease: Duration? = nil) async throws -> ClaimedJob {
        let claimed = try await queue.claim(worker: worker, limit: 1, lease: lease ?? self.lease)
        try #require(claimed.count == 1, "expected one ready job")
        return claimed[0]
    }

    func stored(_ queue: any JobQueueBackend, _ id: JobID) async throws -> JobRecord {
        try #require(try await queue.job(id), "job \(id) is missing")
    }

    func succeeded(_ job: ClaimedJob, result: String = "{}") -> JobOutcome {
        JobOutcome(job: job, kind: .succeeded(result: result))
    }

    func failed(_ job: ClaimedJob) -> JobOutcome {
        JobOutcome(job: job, kind: .failed(code: .corruptInput, message: "truncated JPEG"))
    }

    func retry(_ job: ClaimedJob, delay: Duration) -> JobOutcome {
        JobOutcome(job: job, kind: .retry(code: "fetch_failed", message: "HTTP 503", delay: delay))
    }

    /// Expects `date`, less `offset`, between `start` and `end`: the moments just before and just
    /// after the operation that set it. However long a loaded machine stalls, the operation
    /// happened between the two; `tolerance` covers timestamp rounding and the database server's
    /// clock.
    func expectDuring(
        _ date: Date?, _ start: Date, _ end: Date, plus offset: TimeInterval = 0, tolerance: TimeInterval = 1,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let date else {
            Issue.record("expected a date between \(start) and \(end), got nil", sourceLocation: sourceLocation)
            return
        }
        let moment = date.addingTimeInterval(-offset)
        #expect(
            moment >= start.addingTimeInterval(-tolerance) && moment <= end.addingTimeInterval(tolerance),
            "\(date) - \(offset) s is not between \(start) and \(end)", sourceLocation: sourceLocation)
    }

    /// Expects `body` to throw a ``PushPrepError`` with `code` whose message contains `text`.
    func expectError<R>(
        _ code: PushPrepError.Code, mentioning text: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> R
    ) async {
        do {
            let value = try await body()
            Issue.record("expected \(code), got \(value)", sourceLocation: sourceLocation)
        } catch let error as PushPrepError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            if let text {
                #expect(error.message.contains(text), "\(error.message)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("expected PushPrepError \(code), got \(error)", sourceLocation: sourceLocation)
        }
    }
}
