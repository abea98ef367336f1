import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// What the HTTP API needs from the queue (schema version 2), on both backends: the jobs'
/// callback URL, metadata and request id, cursor listing, idempotency keys, and the webhook
/// outbox written in the transaction that ends a job.
extension QueueConformanceTests {
    // MARK: - Fields and listing

    @Test(
        "callback URL, metadata and request id round-trip; they do not change the dedup",
        arguments: QueueBackend.testedBackends)
    func apiFields(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let metadata = #"{"campaign":"spring","user":42,"nested":{"ü":"✓"}}"#
            let withFields = JobSpec(
                source: "a", payload: "{}", dedupKey: "k", callbackURL: "https://hooks.example.com/pushprep?x=1",
                metadata: metadata, requestID: "req-7f3a")
            let ids = try await queue.enqueue([withFields, spec("plain")]).map(\.id)
            let record = try await stored(queue, ids[0])
            #expect(record.callbackURL == "https://hooks.example.com/pushprep?x=1")
            #expect(record.metadata == metadata)
            #expect(record.requestID == "req-7f3a")
            let plain = try await stored(queue, ids[1])
            #expect(plain.callbackURL == nil && plain.metadata == nil && plain.requestID == nil)
            #expect(try await queue.list(state: nil, limit: 10).map(\.requestID) == [nil, "req-7f3a"])

            // Another request with the same dedup key but other metadata still gets the first job.
            var again = withFields
            again.metadata = #"{"campaign":"autumn"}"#
            again.requestID = "req-other"
            #expect(
                try await queue.enqueue([again]) == [EnqueueResult(id: ids[0], created: false, state: .queued)])
            #expect(try await stored(queue, ids[0]).metadata == metadata)
        }
    }

    @Test(
        "cursor pages cover every job once, newest first, with and without a state filter",
        arguments: QueueBackend.testedBackends)
    func cursorPages(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue((0..<23).map { spec("job-\($0)") }).map(\.id)
            let claimed = try await queue.claim(worker: "worker-a", limit: 7, lease: lease)
            _ = try await queue.finish(claimed.prefix(4).map { succeeded($0) })
            let succeededIDs = Set(claimed.prefix(4).map(\.id))
            let runningIDs = Set(claimed.dropFirst(4).map(\.id))

            func pages(_ state: JobState?, size: Int) async throws -> [[JobID]] {
                var pages: [[JobID]] = []
                var cursor: JobID?
                while true {
                    let page = try await queue.list(state: state, limit: size, before: cursor).map(\.id)
                    if page.isEmpty { return pages }
                    #expect(page.count <= size)
                    pages.append(page)
                    cursor = page.last
                }
            }
            let all = try await pages(nil, size: 5)
            #expect(all.map(\.count) == [5, 5, 5, 5, 3])
            #expect(all.flatMap { $0 } == ids.reversed())

            let queued = try await pages(.queued, size: 4).flatMap { $0 }
            #expect(queued == ids.reversed().filter { !succeededIDs.contains($0) && !runningIDs.contains($0) })
            #expect(try await pages(.succeeded, size: 3).flatMap { $0 } == succeededIDs.sorted(by: >))
            #expect(try await pages(.running, size: 1).count == 3)

            // A cursor is an id, not a position: jobs added meanwhile do not shift the pages.
            let firstPage = try await queue.list(state: nil, limit: 5, before: nil)
            _ = try await queue.enqueue([spec("newer")])
            let second = try await queue.list(state: nil, limit: 5, before: firstPage.last?.id)
            #expect(second.map(\.id) == Array(ids.reversed()[5..<10]))
            #expect(try await queue.list(state: nil, limit: 3, before: ids[0]).isEmpty)
            #expect(try await queue.list(state: nil, limit: 2).count == 2)
        }
    }

    // MARK: - Idempotency keys

    @Test(
        "an idempotency key replays its jobs in order with their current state, per scope",
        arguments: QueueBackend.testedBackends)
    func idempotencyReplay(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let key = IdempotencyKey(scope: "client-a", key: "order-1", fingerprint: "sha256:aaaa")
            let first = try await queue.enqueue([spec("x"), spec("y"), spec("z")], idempotency: key)
            #expect(!first.replayed)
            #expect(first.results.allSatisfy { $0.created && $0.state == .queued })
            let ids = first.results.map(\.id)
            let claimed = try await claimOne(queue, worker: "worker-a")
            #expect(claimed.id == ids[0])

            let replay = try await queue.enqueue([spec("x"), spec("y"), spec("z")], idempotency: key)
            #expect(replay.replayed)
            #expect(
                replay.results == [
                    EnqueueResult(id: ids[0], created: false, state: .running),
                    EnqueueResult(id: ids[1], created: false, state: .queued),
                    EnqueueResult(id: ids[2], created: false, state: .queued),
                ])
            #expect(try await queue.list(state: nil, limit: 10).count == 3)

            // The same key in another scope is another key.
            var other = key
            other.scope = "client-b"
            let elsewhere = try await queue.enqueue([spec("x")], idempotency: other)
            #expect(!elsewhere.replayed)
            #expect(elsewhere.results.map(\.created) == [true])
            #expect(try await queue.list(state: nil, limit: 10).count == 4)
        }
    }

    /// The lookup the API makes before its admission control (issue 26, 6): nothing for a key
    /// never recorded, the replay (and no new job) for a recorded one, a conflict for another
    /// fingerprint, nothing in another scope.
    @Test(
        "recordedEnqueue replays a recorded key without enqueueing, nil for an unknown one",
        arguments: QueueBackend.testedBackends)
    func idempotencyLookup(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let key = IdempotencyKey(scope: "client-a", key: "order-2", fingerprint: "sha256:aaaa")
            #expect(try await queue.recordedEnqueue(key) == nil)
            let first = try await queue.enqueue([spec("x"), spec("y")], idempotency: key)
            let recorded = try await queue.recordedEnqueue(key)
            #expect(
                recorded
                    == IdempotentEnqueueResult(
                        results: first.results.map { EnqueueResult(id: $0.id, created: false, state: .queued) },
                        replayed: true))
            #expect(try await queue.list(state: nil, limit: 10).count == 2)
            var changed = key
            changed.fingerprint = "sha256:bbbb"
            await expectError(.idempotencyConflict, mentioning: "order-2") { try await queue.recordedEnqueue(changed) }
            var other = key
            other.scope = "client-b"
            #expect(try await queue.recordedEnqueue(other) == nil)
        }
    }

    /// A record edited by hand (SQLite's `job_ids` is JSON text) whose ids are not all numbers
    /// is `queue_unavailable` on replay: GRDB's non-optional subscript trapped on it. A state
    /// no PushPrep writes (a webhook snapshot's, say) is the same error from the one parser
    /// every backend uses.
    @Test("a hand-edited idempotency record or an unknown stored state is queue_unavailable, not a crash")
    func idempotencyRecordEditedByHand() async throws {
        try #require(TestTools.programAvailable("sqlite3"), "needs the sqlite3 tool")
        try await QueueFixture.withQueue(.sqlite) { queue, url in
            guard case .sqlite(let path) = url else { return }
            let key = IdempotencyKey(scope: "client-a", key: "order-9", fingerprint: "sha256:aaaa")
            let first = try await queue.enqueue([spec("x"), spec("y")], idempotency: key)
            #expect(try await queue.enqueue([spec("x"), spec("y")], idempotency: key).replayed)
            let edited = #"["one", \#(first.results[1].id)]"#
            try TestTools.runChecked(
                "sqlite3", [path, "UPDATE pushprep_idempotency_keys SET job_ids = '\(edited)' WHERE key = 'order-9'"])
            await expectError(.queueUnavailable, mentioning: "not all numbers") {
                try await queue.enqueue([spec("x"), spec("y")], idempotency: key)
            }
            // The queue still works for everything else.
            #expect(try await queue.job(first.results[0].id)?.state == .queued)
        }
        #expect(throws: PushPrepError.self) { try JobState(stored: "paused") }
        do {
            _ = try JobState(stored: "paused")
        } catch {
            #expect(error.code == .queueUnavailable && error.message.contains("'paused'"), "\(error)")
        }
        #expect(try JobState.allCases.map { try JobState(stored: $0.rawValue) } == JobState.allCases)
    }

    @Test(
        "the same idempotency key with another fingerprint is idempotency_conflict and adds nothing",
        arguments: QueueBackend.testedBackends)
    func idempotencyConflict(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let key = IdempotencyKey(scope: "client-a", key: "order-1", fingerprint: "sha256:aaaa")
            let first = try await queue.enqueue([spec("x")], idempotency: key)
            var changed = key
            changed.fingerprint = "sha256:bbbb"
            await expectError(.idempotencyConflict, mentioning: "order-1") {
                try await queue.enqueue([spec("x"), spec("other")], idempotency: changed)
            }
            #expect(try await queue.list(state: nil, limit: 10).map(\.id) == first.results.map(\.id))
            await expectError(.invalidSettings) {
                try await queue.enqueue(
                    [spec("x")],
                    idempotency: IdempotencyKey(
                        scope: "s", key: "k", fingerprint: "f", retention: .zero))
            }
        }
    }

    @Test(
        "an expired idempotency key enqueues again; pruning deletes expired keys and keeps live ones",
        arguments: QueueBackend.testedBackends)
    func idempotencyExpiry(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let short = IdempotencyKey(scope: "s", key: "short", fingerprint: "f1", retention: .seconds(1))
            let long = IdempotencyKey(scope: "s", key: "long", fingerprint: "f1", retention: .seconds(3600))
            let first = try await queue.enqueue([spec("a")], idempotency: short)
            let kept = try await queue.enqueue([spec("b")], idempotency: long)
            try await Task.sleep(for: .milliseconds(1500))

            // Expired: a new request under the old key, even with another fingerprint, is new work.
            var renewed = short
            renewed.fingerprint = "f2"
            let second = try await queue.enqueue([spec("a2")], idempotency: renewed)
            #expect(!second.replayed)
            #expect(second.results[0].created && second.results[0].id != first.results[0].id)
            // ... and is recorded afresh: its own fingerprint replays, the old one conflicts.
            #expect(
                try await queue.enqueue([spec("a2")], idempotency: renewed).results == [
                    EnqueueResult(id: second.results[0].id, created: false, state: .queued)
                ])
            await expectError(.idempotencyConflict) { try await queue.enqueue([spec("a")], idempotency: short) }

            let third = IdempotencyKey(scope: "s", key: "third", fingerprint: "f", retention: .seconds(1))
            _ = try await queue.enqueue([spec("c")], idempotency: third)
            try await Task.sleep(for: .milliseconds(1500))
            // `before` in the future: only the keys past their own retention go ("third"; the
            // renewed "short" expired too by now).
            #expect(try await queue.pruneIdempotencyKeys(before: Date().addingTimeInterval(600)) == 2)
            #expect(try await queue.pruneIdempotencyKeys(before: Date().addingTimeInterval(600)) == 0)
            // The live key still replays.
            let replay = try await queue.enqueue([spec("b")], idempotency: long)
            #expect(replay.replayed && replay.results.map(\.id) == kept.results.map(\.id))
            // A `before` earlier than every record prunes nothing, expired or not.
            _ = try await queue.enqueue([spec("d")], idempotency: third)
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try await queue.pruneIdempotencyKeys(before: Date().addingTimeInterval(-600)) == 0)
        }
    }

    @Test(
        "concurrent calls with one idempotency key yield one set of jobs",
        arguments: QueueBackend.testedBackends)
    func idempotencyConcurrent(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let key = IdempotencyKey(scope: "client-a", key: "burst", fingerprint: "f")
            let specs = [spec("p"), spec("q")]
            let answers = try await withThrowingTaskGroup(of: IdempotentEnqueueResult.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await queue.enqueue(specs, idempotency: key) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { !$0.replayed }.count == 1)
            #expect(Set(answers.map { $0.results.map(\.id) }).count == 1)
            #expect(try await queue.list(state: nil, limit: 100).count == 2)
        }
    }

    // MARK: - Webhook outbox

    @Test(
        "every final transition of a job with a callback writes one delivery with its snapshot",
        arguments: QueueBackend.testedBackends)
    func outboxTransitions(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let url = "https://hooks.example.com/done"
            func hooked(_ source: String, priority: Int, maxAttempts: Int = 5) -> JobSpec {
                JobSpec(
                    source: source, payload: "{}", priority: priority, maxAttempts: maxAttempts, callbackURL: url,
                    metadata: #"{"m":"\#(source)"}"#, requestID: "req-\(source)")
            }
            let ids = try await queue.enqueue([
                hooked("succeeds", priority: 9), hooked("fails", priority: 8),
                hooked("dies", priority: 7, maxAttempts: 1), hooked("retries", priority: 6),
                hooked("stopped", priority: 5), hooked("rescued", priority: 4, maxAttempts: 1),
                hooked("cancelled", priority: -9), spec("no-callback", priority: 3),
            ]).map(\.id)
            let before = Date()
            let jobs = try await queue.claim(worker: "worker-a", limit: 5, lease: lease)
            #expect(jobs.map(\.id) == Array(ids[0..<5]))
            _ = try await queue.finish([
                succeeded(jobs[0], result: #"{"ok":true}"#), failed(jobs[1]), retry(jobs[2], delay: .zero),
                retry(jobs[3], delay: .seconds(60)),
                JobOutcome(job: jobs[4], kind: .cancelled(message: "stopped at a step")),
            ])
            _ = try await claimOne(queue, worker: "worker-b", lease: shortLease)
            _ = try await queue.cancel(ids[6])
            let plain = try await claimOne(queue, worker: "worker-a")
            _ = try await queue.finish([succeeded(plain)])
            try await Task.sleep(for: pastShortLease)
            #expect(try await queue.rescueExpired() == 1)
            let after = Date()

            let expected: [(index: Int, event: String, state: JobState)] = [
                (0, "job.succeeded", .succeeded), (1, "job.failed", .failed), (2, "job.dead", .dead),
                (4, "job.cancelled", .cancelled), (5, "job.dead", .dead), (6, "job.cancelled", .cancelled),
            ]
            for (index, event, state) in expected {
                let deliveries = try await queue.deliveries(job: ids[index])
                try #require(deliveries.count == 1, "job \(index): \(deliveries)")
                let delivery = deliveries[0]
                let record = try await stored(queue, ids[index])
                #expect(record.state == state)
                #expect(delivery.event == event)
                #expect(delivery.url == url)
                #expect(delivery.jobID == ids[index])
                #expect(delivery.state == .pending && delivery.attempts == 0)
                #expect(delivery.lastStatus == nil && delivery.lastError == nil && delivery.deliveredAt == nil)
                expectDuring(delivery.createdAt, before, after)
                #expect(delivery.nextAttemptAt.map { abs($0.timeIntervalSince(delivery.createdAt)) < 0.01 } == true)
                expectSnapshot(delivery.job, matches: record)
            }
            #expect(try await queue.deliveries(job: ids[0]).first?.job.result == #"{"ok":true}"#)
            #expect(try await queue.deliveries(job: ids[5]).first?.job.errorCode == "lease_expired")
            // Still queued for its retry, and no callback: no delivery.
            #expect(try await queue.deliveries(job: ids[3]).isEmpty)
            #expect(try await queue.deliveries(job: ids[7]).isEmpty)
            #expect(try await queue.listDeliveries(state: nil, limit: 100).count == 6)
            let stats = try await queue.stats()
            #expect(stats.pendingDeliveries == 6 && stats.failedDeliveries == 0)
        }
    }

    @Test(
        "a running job asked to stop writes a delivery when released or rescued",
        arguments: QueueBackend.testedBackends)
    func outboxCancelRequested(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let hooked = JobSpec(source: "a", payload: "{}", callbackURL: "https://hooks.example.com/a")
            let ids = try await queue.enqueue([hooked, hooked]).map(\.id)
            let released = try await claimOne(queue, worker: "worker-a")
            let abandoned = try await claimOne(queue, worker: "worker-a", lease: shortLease)
            _ = try await queue.cancel(ids[0])
            _ = try await queue.cancel(ids[1])
            #expect(try await queue.listDeliveries(state: nil, limit: 10).isEmpty)
            #expect(try await queue.release([released.lease]) == [ids[0]])
            try await Task.sleep(for: pastShortLease)
            _ = try await queue.rescueExpired()
            #expect(abandoned.id == ids[1])
            for id in ids {
                let deliveries = try await queue.deliveries(job: id)
                #expect(deliveries.map(\.event) == ["job.cancelled"])
                #expect(deliveries.first?.job.state == .cancelled)
            }
        }
    }

    @Test(
        "a delivery's snapshot stays as the job ended after a manual retry; the next ending adds another",
        arguments: QueueBackend.testedBackends)
    func outboxSnapshotAfterRetry(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let id = try await enqueueOne(
                queue, JobSpec(source: "a", payload: "{}", callbackURL: "https://hooks.example.com/a"))
            _ = try await queue.finish([failed(try await claimOne(queue, worker: "worker-a"))])
            let failedRecord = try await stored(queue, id)
            _ = try await queue.retry(id)
            #expect(try await queue.deliveries(job: id).count == 1)
            let snapshot = try #require(try await queue.deliveries(job: id).first).job
            expectSnapshot(snapshot, matches: failedRecord)
            #expect(snapshot.state == .failed && snapshot.errorCode == "corrupt_input")

            _ = try await queue.finish([succeeded(try await claimOne(queue, worker: "worker-a"), result: "{\"n\":2}")])
            let deliveries = try await queue.deliveries(job: id)
            #expect(deliveries.map(\.event) == ["job.failed", "job.succeeded"])
            #expect(deliveries.map(\.job.state) == [.failed, .succeeded])
            #expect(deliveries[0].job.result == nil && deliveries[1].job.result == "{\"n\":2}")
            #expect(deliveries[1].job.attempt == 1 && deliveries[0].id < deliveries[1].id)
        }
    }

    @Test(
        "claiming deliveries: oldest first, attempts fence finishDelivery, an unfinished claim returns after its lease",
        arguments: QueueBackend.testedBackends)
    func deliveryClaims(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let jobIDs = try await finishedWithCallbacks(queue, count: 3)
            let before = Date()
            let first = try await queue.claimDeliveries(limit: 2, lease: lease)
            let after = Date()
            #expect(first.map(\.jobID) == Array(jobIDs[0..<2]))
            #expect(first.map(\.attempts) == [1, 1])
            for delivery in first { expectDuring(delivery.nextAttemptAt, before, after, plus: 30) }
            let second = try await queue.claimDeliveries(limit: 5, lease: shortLease)
            #expect(second.map(\.jobID) == [jobIDs[2]])
            #expect(try await queue.claimDeliveries(limit: 5, lease: lease).isEmpty)
            #expect(try await queue.claimDeliveries(limit: 0, lease: lease).isEmpty)

            // Delivered: only with the current attempt, and only once.
            let delivered = first[0]
            #expect(!(try await queue.finishDelivery(delivered.id, attempt: 2, outcome: .delivered(status: 200))))
            #expect(try await queue.finishDelivery(delivered.id, attempt: 1, outcome: .delivered(status: 204)))
            #expect(!(try await queue.finishDelivery(delivered.id, attempt: 1, outcome: .delivered(status: 204))))
            let done = try #require(try await queue.deliveries(job: delivered.jobID).first)
            #expect(done.state == .delivered && done.lastStatus == 204 && done.nextAttemptAt == nil)
            expectDuring(done.deliveredAt, before, Date())

            // Retry: pending again after its delay, claimed with the next attempt.
            let retried = first[1]
            #expect(
                try await queue.finishDelivery(
                    retried.id, attempt: 1, outcome: .retry(status: 503, error: "HTTP 503", after: .zero)))
            let again = try await queue.claimDeliveries(limit: 5, lease: lease)
            #expect(again.map(\.id) == [retried.id])
            #expect(
                again.first?.attempts == 2 && again.first?.lastStatus == 503 && again.first?.lastError == "HTTP 503")
            #expect(
                !(try await queue.finishDelivery(retried.id, attempt: 1, outcome: .failed(status: nil, error: "x"))))
            #expect(
                try await queue.finishDelivery(
                    retried.id, attempt: 2, outcome: .failed(status: nil, error: "connection refused")))

            // A claim that is never finished comes back after its lease; the old claim is fenced.
            try await Task.sleep(for: pastShortLease)
            let reclaimed = try await queue.claimDeliveries(limit: 5, lease: lease)
            #expect(reclaimed.map(\.id) == [second[0].id])
            #expect(reclaimed.first?.attempts == 2)
            #expect(
                !(try await queue.finishDelivery(
                    second[0].id, attempt: 1, outcome: .retry(status: 503, error: "HTTP 503", after: .zero))))
            #expect(
                try await queue.finishDelivery(
                    second[0].id, attempt: 2, outcome: .retry(status: nil, error: "timeout", after: .seconds(60))))
            #expect(try await queue.claimDeliveries(limit: 5, lease: lease).isEmpty)

            #expect(try await queue.listDeliveries(state: .delivered, limit: 10).map(\.id) == [delivered.id])
            let failedOnes = try await queue.listDeliveries(state: .failed, limit: 10)
            #expect(failedOnes.map(\.id) == [retried.id])
            #expect(failedOnes.first?.lastError == "connection refused" && failedOnes.first?.lastStatus == nil)
            #expect(try await queue.listDeliveries(state: nil, limit: 2).map(\.jobID) == [jobIDs[2], jobIDs[1]])
            let stats = try await queue.stats()
            #expect(stats.pendingDeliveries == 1 && stats.failedDeliveries == 1)
        }
    }

    @Test("concurrent delivery claimers never share a delivery", arguments: QueueBackend.testedBackends)
    func concurrentDeliveryClaims(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            _ = try await finishedWithCallbacks(queue, count: 60)
            let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for index in 0..<4 {
                    group.addTask {
                        var ids: [Int64] = []
                        while true {
                            let batch = try await queue.claimDeliveries(limit: 2 + index, lease: lease)
                            if batch.isEmpty { return ids }
                            ids += batch.map(\.id)
                            for delivery in batch {
                                let applied = try await queue.finishDelivery(
                                    delivery.id, attempt: delivery.attempts, outcome: .delivered(status: 200))
                                #expect(applied)
                            }
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(claimed.count == 60)
            #expect(Set(claimed).count == 60)
            #expect(try await queue.listDeliveries(state: .delivered, limit: 100).count == 60)
        }
    }

    @Test(
        "prune removes settled deliveries with their jobs and keeps pending ones",
        arguments: QueueBackend.testedBackends)
    func pruneDeliveries(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await finishedWithCallbacks(queue, count: 2)
            let claimed = try await queue.claimDeliveries(limit: 1, lease: lease)
            #expect(try await queue.finishDelivery(claimed[0].id, attempt: 1, outcome: .delivered(status: 200)))
            #expect(try await queue.prune(finishedBefore: Date().addingTimeInterval(5)) == 2)
            #expect(try await queue.deliveries(job: ids[0]).isEmpty)
            #expect(try await queue.deliveries(job: ids[1]).map(\.state) == [.pending])
            #expect(try await queue.claimDeliveries(limit: 5, lease: lease).map(\.jobID) == [ids[1]])
        }
    }

    // MARK: - Upgrading

    @Test(
        "a database of schema version 1 upgrades in place, keeping its jobs",
        .enabled(if: TestTools.programAvailable("sqlite3"), "needs the sqlite3 command-line tool"),
        arguments: QueueBackend.testedBackends)
    func upgradeFromVersion1(_ backend: QueueBackend) async throws {
        let insert = """
            INSERT INTO pushprep_jobs
                (state, source, payload, dedup_key, max_attempts, run_at, created_at, updated_at, finished_at, result)
            VALUES ('queued', 'old-queued', '{"v":1}', 'old-key', 5, 1700000000, 1700000000, 1700000000, NULL, NULL),
                ('succeeded', 'old-done', '{}', NULL, 5, 1700000000, 1700000000, 1700000100, 1700000100, '{"ok":1}')
            """
        try await withOldDatabase(backend, inserting: insert) { url, versions in
            try await JobQueues.withBackend(url, logger: .quiet) { queue in
                #expect(try await versions() == "1,2,3,4")
                let old = try await queue.list(state: nil, limit: 10)
                #expect(old.map(\.source) == ["old-done", "old-queued"])
                #expect(old.map(\.state) == [.succeeded, .queued])
                #expect(old.allSatisfy { $0.callbackURL == nil && $0.metadata == nil && $0.requestID == nil })
                #expect(old[0].result == #"{"ok":1}"#)
                #expect(old[1].runAt == Date(timeIntervalSince1970: 1_700_000_000))
                // The old job's dedup key still holds.
                #expect(try await queue.enqueue([spec("x", key: "old-key")]).first?.id == old[1].id)

                let id = try await enqueueOne(
                    queue, JobSpec(source: "new", payload: "{}", callbackURL: "https://hooks.example.com/new"))
                #expect(id > old[0].id)
                let claimed = try await queue.claim(worker: "worker-a", limit: 5, lease: lease)
                #expect(Set(claimed.map(\.id)) == [old[1].id, id])
                _ = try await queue.finish(claimed.map { succeeded($0) })
                #expect(try await queue.deliveries(job: old[1].id).isEmpty)
                #expect(try await queue.deliveries(job: id).map(\.event) == ["job.succeeded"])
            }
        }
    }

    // MARK: - Helpers

    /// Makes a database with the schema up to `version` only (as an older release left it), runs
    /// `insert` in it, and passes its URL and a reader of its applied versions (`1,2`) to `body`.
    func withOldDatabase(
        _ backend: QueueBackend, version: Int = 1, inserting insert: String,
        _ body: (QueueURL, @escaping @Sendable () async throws -> String) async throws -> Void
    ) async throws {
        switch backend {
        case .sqlite:
            let directory = try TestTools.temporaryDirectory()
            defer { TestTools.removeDirectory(directory) }
            let path = directory.appendingPathComponent("queue.db").path
            _ = try SQLiteJobQueue(path: path, logger: .quiet, busyTimeout: .seconds(10), schemaVersion: version)
            let tables = try TestTools.runChecked("sqlite3", [path, ".tables"])
            #expect(
                String(decoding: tables, as: UTF8.self).contains("pushprep_webhook_deliveries") == (version >= 2))
            _ = try TestTools.runChecked("sqlite3", [path, insert])
            try await body(.sqlite(path: path)) {
                let output = try TestTools.runChecked(
                    "sqlite3", [path, "SELECT group_concat(identifier, ',') FROM grdb_migrations ORDER BY identifier"])
                return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    .replacingOccurrences(of: "v", with: "")
            }
        case .postgres:
            let server = PostgresTestServer.shared
            try await server.withFreshDatabase { url in
                guard case .postgres(let location) = url else { throw CancellationError() }
                try await PostgresJobQueue.migrate(location, upTo: version, logger: .quiet)
                let database = PostgresTestServer.databaseName(url)
                let postgresInsert = insert.replacingOccurrences(of: "1700000000", with: "to_timestamp(1700000000)")
                    .replacingOccurrences(of: "1700000100", with: "to_timestamp(1700000100)")
                try await server.execute(postgresInsert, database: database)
                try await body(url) {
                    try await server.execute(
                        "SELECT string_agg(version::text, ',' ORDER BY version) FROM pushprep_schema_migrations",
                        database: database)
                }
            }
        }
    }

    /// Enqueues `count` jobs with a callback URL and finishes them as succeeded, in id order;
    /// returns their ids.
    func finishedWithCallbacks(_ queue: any JobQueueBackend, count: Int) async throws -> [JobID] {
        let ids = try await queue.enqueue(
            (0..<count).map { JobSpec(source: "s\($0)", payload: "{}", callbackURL: "https://hooks.example.com/\($0)") }
        ).map(\.id)
        let claimed = try await queue.claim(worker: "worker-a", limit: count, lease: lease)
        #expect(try await queue.finish(claimed.sorted { $0.id < $1.id }.map { succeeded($0) }).count == count)
        return ids
    }

    /// Expects a delivery's snapshot to be `record` (timestamps within a millisecond: SQLite's
    /// JSON keeps 15 significant digits).
    func expectSnapshot(
        _ snapshot: JobRecord, matches record: JobRecord, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var lhs = snapshot
        let rhs = record
        for date in [\JobRecord.runAt, \.createdAt, \.updatedAt] {
            #expect(
                abs(lhs[keyPath: date].timeIntervalSince(rhs[keyPath: date])) < 0.001, sourceLocation: sourceLocation)
            lhs[keyPath: date] = rhs[keyPath: date]
        }
        for date in [\JobRecord.finishedAt, \.leaseExpiresAt] {
            #expect((lhs[keyPath: date] == nil) == (rhs[keyPath: date] == nil), sourceLocation: sourceLocation)
            if let left = lhs[keyPath: date], let right = rhs[keyPath: date] {
                #expect(abs(left.timeIntervalSince(right)) < 0.001, sourceLocation: sourceLocation)
            }
            lhs[keyPath: date] = rhs[keyPath: date]
        }
        #expect(lhs == rhs, sourceLocation: sourceLocation)
    }
}
