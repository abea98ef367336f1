import Foundation
import Logging
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// What the console needs from the queue (schema version 3), on both backends: filtered pages
/// and counts, bulk retry, activity, workers alive, attempts.
extension QueueConformanceTests {
    // MARK: - Filters

    @Test(
        "a filter by states, kind, source text and error code pages newest first and counts the same jobs",
        arguments: QueueBackend.testedBackends)
    func filteredPages(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let sources = [
                "https://CDN.example.com/Cat.jpg", "https://cdn.example.com/dog.mp4", "/srv/in/100%_real.jpg",
                "/srv/in/100x_real.jpg", "/srv/in/a\\b.m4a", "https://cdn.example.com/broken.jpg",
                "https://cdn.example.com/odd.jpg", "https://cdn.example.com/late.png",
            ]
            let ids = try await queue.enqueue(sources.map { spec($0) }).map(\.id)
            let claimed = try await queue.claim(worker: "worker-a", limit: 7, lease: lease).sorted { $0.id < $1.id }
            try #require(claimed.map(\.id) == Array(ids.prefix(7)))
            let results = [
                #"{"kind":"image","status":"ok"}"#, #"{"kind":"video","status":"ok"}"#, #"{"kind":"image"}"#,
                "not JSON", #"{"kind":"audio","input":{"kind":"video"}}"#,
            ]
            var outcomes = zip(claimed, results).map { succeeded($0, result: $1) }
            outcomes.append(failed(claimed[5]))
            outcomes.append(retry(claimed[6], delay: .seconds(3600)))
            #expect(try await queue.finish(outcomes).count == 7)

            func listed(_ filter: JobFilter, limit: Int = 100) async throws -> [JobID] {
                try await queue.list(filter: filter, limit: limit, before: nil).map(\.id)
            }
            func expectMatches(
                _ filter: JobFilter, _ expected: [Int], sourceLocation: SourceLocation = #_sourceLocation
            )
                async throws
            {
                let want = expected.map { ids[$0] }.sorted(by: >)
                #expect(try await listed(filter) == want, sourceLocation: sourceLocation)
                #expect(try await queue.count(filter: filter) == want.count, sourceLocation: sourceLocation)
            }
            try await expectMatches(.all, Array(0..<8))
            try await expectMatches(JobFilter(states: [.succeeded]), [0, 1, 2, 3, 4])
            try await expectMatches(JobFilter(states: [.failed, .queued]), [5, 6, 7])
            try await expectMatches(JobFilter(kind: .image), [0, 2])
            try await expectMatches(JobFilter(kind: .video), [1])
            try await expectMatches(JobFilter(kind: .audio), [4])
            // Not succeeded, or a result without a kind.
            try await expectMatches(JobFilter(kind: .unknown), [3, 5, 6, 7])
            try await expectMatches(JobFilter(states: [.succeeded], kind: .unknown), [3])
            // Case-insensitive; LIKE's wildcards and the escape character match themselves.
            try await expectMatches(JobFilter(source: "cdn.EXAMPLE.com/"), [0, 1, 5, 6, 7])
            try await expectMatches(JobFilter(source: "cat.JPG"), [0])
            try await expectMatches(JobFilter(source: "100%_"), [2])
            try await expectMatches(JobFilter(source: "_real"), [2, 3])
            try await expectMatches(JobFilter(source: "a\\b"), [4])
            try await expectMatches(JobFilter(source: "%"), [2])
            // As wildcards, these would match cdn.example.com/dog.mp4 and Cat.jpg.
            try await expectMatches(JobFilter(source: "dog_mp4"), [])
            try await expectMatches(JobFilter(source: "cat%jpg"), [])
            try await expectMatches(JobFilter(source: ""), Array(0..<8))
            try await expectMatches(JobFilter(errorCode: "corrupt_input"), [5])
            // A retried job keeps its last error until it ends again.
            try await expectMatches(JobFilter(states: [.queued], errorCode: "fetch_failed"), [6])
            try await expectMatches(JobFilter(kind: .image, source: "cat"), [0])
            try await expectMatches(JobFilter(states: [.dead]), [])

            let record = try await stored(queue, ids[0])
            #expect(record.kind == .image)
            #expect(try await stored(queue, ids[3]).kind == .unknown)
            #expect(try await stored(queue, ids[4]).kind == .audio)

            // Keyset pages over a filter.
            let filter = JobFilter(source: "cdn.example.com")
            var pages: [[JobID]] = []
            var cursor: JobID?
            while true {
                let page = try await queue.list(filter: filter, limit: 2, before: cursor).map(\.id)
                if page.isEmpty { break }
                pages.append(page)
                cursor = page.last
            }
            #expect(pages.map(\.count) == [2, 2, 1])
            #expect(pages.flatMap { $0 } == [7, 6, 5, 1, 0].map { ids[$0] })
            #expect(try await queue.list(filter: .all, limit: -3, before: nil).isEmpty)
            // The old listing still answers the same.
            #expect(try await queue.list(state: .succeeded, limit: 10).map(\.id) == Array(ids.prefix(5).reversed()))

            await expectError(.invalidRequest) {
                try await queue.list(
                    filter: JobFilter(source: String(repeating: "x", count: 501)), limit: 5, before: nil)
            }
            await expectError(.invalidRequest) {
                try await queue.count(filter: JobFilter(errorCode: String(repeating: "x", count: 101)))
            }
        }
    }

    @Test("a page is at most 1000 jobs whatever the limit asked", arguments: QueueBackend.testedBackends)
    func filteredPageLimit(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            _ = try await queue.enqueue((0..<1003).map { spec("job-\($0)") })
            #expect(try await queue.list(filter: .all, limit: 5000, before: nil).count == 1000)
            #expect(try await queue.count(filter: .all) == 1003)
        }
    }

    // MARK: - Bulk retry

    @Test(
        "a bulk retry queues the failed, dead and cancelled jobs of a filter, one per dedup key",
        arguments: QueueBackend.testedBackends)
    func bulkRetry(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue([
                spec("a"), spec("b", maxAttempts: 1), spec("c"), spec("d"), spec("k-old", key: "k"),
                spec("other"),
            ]).map(\.id)
            let first = try await queue.claim(worker: "worker-a", limit: 6, lease: lease).sorted { $0.id < $1.id }
            _ = try await queue.finish([
                failed(first[0]), retry(first[1], delay: .zero), succeeded(first[2]), failed(first[4]),
                failed(first[5]),
            ])
            _ = try await queue.cancel(ids[3])
            _ = try await queue.finish([JobOutcome(job: first[3], kind: .cancelled(message: "stop"))])
            // A newer job with key k fails too; then a third one with key "m" is queued while
            // an older one with "m" failed.
            let newer = try await enqueueOne(queue, spec("k-new", key: "k"))
            let blocked = try await enqueueOne(queue, spec("m-old", key: "m"))
            let newerClaim = try await claimOne(queue, worker: "worker-a")
            let blockedClaim = try await claimOne(queue, worker: "worker-a")
            _ = try await queue.finish([failed(newerClaim), failed(blockedClaim)])
            let active = try await enqueueOne(queue, spec("m-new", key: "m"))
            #expect(try await stored(queue, ids[1]).state == .dead)

            #expect(try await queue.retry(matching: JobFilter(states: [.succeeded, .queued])) == 0)
            #expect(try await queue.retry(matching: JobFilter(source: "other")) == 1)
            let retried = try await queue.retry(matching: .all)
            // a, b (dead), d (cancelled), k-new; not k-old (k-new took its key), not m-old (m-new is queued).
            #expect(retried == 4)
            for id in [ids[0], ids[1], ids[3], newer, ids[5]] {
                let record = try await stored(queue, id)
                #expect(record.state == .queued && record.attempt == 0 && record.finishedAt == nil)
            }
            #expect(try await stored(queue, ids[2]).state == .succeeded)
            #expect(try await stored(queue, ids[4]).state == .failed)
            #expect(try await stored(queue, blocked).state == .failed)
            #expect(try await stored(queue, active).state == .queued)
            #expect(try await queue.retry(matching: .all) == 0)
            #expect(try await queue.count(filter: JobFilter(states: [.queued])) == 6)
        }
    }

    @Test("a bulk retry takes at most 10,000 jobs a call, newest first", arguments: QueueBackend.testedBackends)
    func bulkRetryBound(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let count = JobFilter.retryLimit + 3
            let ids = try await queue.enqueue((0..<count).map { spec("job-\($0)") }).map(\.id)
            let claimed = try await queue.claim(worker: "worker-a", limit: count, lease: lease)
            #expect(try await queue.finish(claimed.map { failed($0) }).count == count)
            let start = ContinuousClock.now
            #expect(try await queue.retry(matching: JobFilter(states: [.failed])) == JobFilter.retryLimit)
            let elapsed = ContinuousClock.now - start
            #expect(elapsed < .seconds(10), "retrying 10,000 jobs took \(elapsed)")
            #expect(
                try await queue.list(filter: JobFilter(states: [.failed]), limit: 10, before: nil).map(\.id)
                    == Array(ids.prefix(3).reversed()))
            #expect(try await queue.retry(matching: JobFilter(states: [.failed])) == 3)
            #expect(try await queue.count(filter: JobFilter(states: [.queued])) == count)
        }
    }

    @Test(
        "a bulk retry's batch is not filled by jobs whose dedup key a queued job holds",
        arguments: QueueBackend.testedBackends)
    func bulkRetrySkipsBlockedKeysBeforeTheLimit(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            // The oldest failed job has no key; a full batch of newer failed jobs each have a
            // key that a queued job holds again.
            let oldest = try await queue.enqueue([spec("oldest")])[0].id
            let keys = (0..<JobFilter.retryLimit).map { "k\($0)" }
            _ = try await queue.enqueue(keys.map { spec("first-\($0)", key: $0) })
            let claimed = try await queue.claim(worker: "worker-a", limit: keys.count + 1, lease: lease)
            #expect(try await queue.finish(claimed.map { failed($0) }).count == keys.count + 1)
            _ = try await queue.enqueue(keys.map { spec("again-\($0)", key: $0) })

            #expect(try await queue.retry(matching: JobFilter(states: [.failed])) == 1)
            #expect(try await stored(queue, oldest).state == .queued)
            #expect(try await queue.retry(matching: JobFilter(states: [.failed])) == 0)
            #expect(try await queue.count(filter: JobFilter(states: [.failed])) == keys.count)
        }
    }

    // MARK: - Activity

    @Test(
        "activity counts the jobs that finished per bucket, every bucket present",
        arguments: QueueBackend.testedBackends)
    func activity(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue((0..<6).map { spec("job-\($0)", maxAttempts: $0 == 3 ? 1 : 5) })
                .map(\.id)
            let claimed = try await queue.claim(worker: "worker-a", limit: 5, lease: lease).sorted { $0.id < $1.id }
            _ = try await queue.finish([
                succeeded(claimed[0]), succeeded(claimed[1]), failed(claimed[2]), retry(claimed[3], delay: .zero),
                retry(claimed[4], delay: .seconds(3600)),
            ])
            _ = try await queue.cancel(ids[5])

            let since = Date().addingTimeInterval(-150)
            let buckets = try await queue.activity(since: since, bucket: .seconds(60))
            #expect(buckets.count == 3)
            #expect(buckets.map(\.start) == [0.0, 60, 120].map { since.addingTimeInterval($0) })
            #expect(buckets.map(\.succeeded).reduce(0, +) == 2)
            // Failed and dead; a job queued again for its next attempt has not finished.
            #expect(buckets.map(\.failed).reduce(0, +) == 2)
            #expect(buckets.map(\.cancelled).reduce(0, +) == 1)
            #expect(buckets[0] == ActivityBucket(start: since))

            // Since the future: nothing; too far back: the newest 1440 buckets.
            #expect(try await queue.activity(since: Date().addingTimeInterval(60), bucket: .seconds(60)).isEmpty)
            let long = try await queue.activity(since: Date().addingTimeInterval(-86_400 * 10), bucket: .seconds(60))
            #expect(long.count == 1440)
            #expect(long.map(\.succeeded).reduce(0, +) == 2)
            if let last = long.last { #expect(abs(last.start.timeIntervalSinceNow) <= 61) }
            // Any finite date back: the same newest buckets (the count of all of them is past `Int`).
            let ancient = try await queue.activity(since: Date(timeIntervalSince1970: -1e300), bucket: .seconds(60))
            #expect(ancient.count == 1440)
            #expect(ancient.map(\.succeeded).reduce(0, +) == 2)
            if let last = ancient.last { #expect(abs(last.start.timeIntervalSinceNow) <= 61) }
            // A width under a second is a second.
            let fine = try await queue.activity(since: Date().addingTimeInterval(-5), bucket: .milliseconds(10))
            #expect((5...6).contains(fine.count))
        }
    }

    // MARK: - Workers

    @Test(
        "workers register, refresh, list their running jobs, age out and are removed",
        arguments: QueueBackend.testedBackends)
    func workersAlive(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let before = Date()
            try await queue.recordWorker(WorkerRegistration(id: "host-a:10:x", host: "host-a", pid: 10, concurrency: 4))
            try await queue.recordWorker(WorkerRegistration(id: "host-b:20:y", host: "host-b", pid: 20, concurrency: 2))
            let after = Date()
            _ = try await queue.enqueue([spec("a"), spec("b"), spec("c")])
            let held = try await queue.claim(worker: "host-a:10:x", limit: 2, lease: lease).map(\.id).sorted()
            _ = try await queue.claim(worker: "gone:1:z", limit: 1, lease: lease)

            let workers = try await queue.workers(seenSince: before.addingTimeInterval(-60))
            #expect(Set(workers.map(\.id)) == ["host-a:10:x", "host-b:20:y"])
            let a = try #require(workers.first { $0.id == "host-a:10:x" })
            #expect(a.host == "host-a" && a.pid == 10 && a.concurrency == 4)
            #expect(a.runningJobs == held)
            expectDuring(a.startedAt, before, after)
            #expect(a.startedAt == a.lastSeenAt)
            #expect(workers.first { $0.id == "host-b:20:y" }?.runningJobs == [])

            // Seen again: the start stays, the last-seen time moves.
            try await Task.sleep(for: .milliseconds(50))
            try await queue.recordWorker(WorkerRegistration(id: "host-a:10:x", host: "host-a", pid: 10, concurrency: 8))
            let refreshed = try #require(try await queue.workers(seenSince: before.addingTimeInterval(-60)).first)
            #expect(refreshed.id == "host-a:10:x")
            #expect(refreshed.startedAt == a.startedAt && refreshed.lastSeenAt > a.lastSeenAt)
            #expect(refreshed.concurrency == 8)

            // Not seen since: listed no more.
            #expect(try await queue.workers(seenSince: Date().addingTimeInterval(60)).isEmpty)
            try await queue.removeWorker(id: "host-a:10:x")
            try await queue.removeWorker(id: "never-registered")
            #expect(try await queue.workers(seenSince: before.addingTimeInterval(-60)).map(\.id) == ["host-b:20:y"])

            let long = String(repeating: "é", count: 150)
            try await queue.recordWorker(WorkerRegistration(id: long, host: long, pid: 1, concurrency: 1))
            let stored = try await queue.workers(seenSince: before.addingTimeInterval(-60)).map(\.id)
            #expect(stored.contains(String(repeating: "é", count: 100)))
        }
    }

    @Test("a worker registers when it starts, refreshes while it runs and leaves when it stops")
    func workerRegistersItself() async throws {
        try await QueueFixture.withQueue(.sqlite) { queue, url in
            let id = try await enqueueOne(queue, spec("slow"))
            let configuration = WorkerConfiguration(
                workerID: "test-host:\(getpid()):reg", concurrency: 2, lease: .seconds(3),
                pollInterval: .milliseconds(50))
            let worker = QueueWorker(url: url, configuration: configuration, handler: SleepingHandler(), logger: .quiet)
            let task = Task { await worker.work(on: queue) }
            var seen: WorkerRecord?
            for _ in 0..<100 {
                seen = try await queue.workers(seenSince: Date().addingTimeInterval(-60)).first
                if seen?.runningJobs == [id] { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            let registered = try #require(seen)
            #expect(registered.id == configuration.workerID)
            #expect(registered.concurrency == 2 && registered.pid == Int(getpid()))
            #expect(registered.runningJobs == [id])
            // A heartbeat every second refreshes it.
            try await Task.sleep(for: .milliseconds(1300))
            let later = try #require(try await queue.workers(seenSince: Date().addingTimeInterval(-60)).first)
            #expect(later.lastSeenAt > registered.lastSeenAt)
            worker.stop()
            await task.value
            #expect(try await queue.workers(seenSince: Date().addingTimeInterval(-60)).isEmpty)
            #expect(try await stored(queue, id).state == .succeeded)
        }
    }

    // MARK: - Attempts

    @Test(
        "every claim opens an attempt and every end closes it with its outcome and error",
        arguments: QueueBackend.testedBackends)
    func attemptHistory(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue([spec("a"), spec("b"), spec("c", maxAttempts: 1), spec("d")]).map(\.id)
            let before = Date()
            let first = try await queue.claim(worker: "worker-a", limit: 4, lease: lease).sorted { $0.id < $1.id }
            let after = Date()
            let open = try await queue.attempts(job: ids[0])
            #expect(open.count == 1)
            #expect(open.first?.attempt == 1 && open.first?.leaseToken == 1 && open.first?.worker == "worker-a")
            #expect(open.first?.endedAt == nil && open.first?.outcome == nil)
            expectDuring(open.first?.startedAt, before, after)

            // a: fails for now, then succeeds; b: given back; c: cancelled while it runs.
            _ = try await queue.finish([retry(first[0], delay: .zero)])
            _ = try await queue.release([first[1].lease])
            _ = try await queue.cancel(ids[2])
            _ = try await queue.finish([JobOutcome(job: first[2], kind: .cancelled(message: "asked to stop"))])
            let second = try await queue.claim(worker: "worker-b", limit: 2, lease: lease).sorted { $0.id < $1.id }
            #expect(second.map(\.id) == [ids[0], ids[1]])
            _ = try await queue.finish([succeeded(second[0])])

            let a = try await queue.attempts(job: ids[0])
            #expect(a.map(\.attempt) == [1, 2])
            #expect(a.map(\.leaseToken) == [1, 2])
            #expect(a.map(\.worker) == ["worker-a", "worker-b"])
            #expect(a.map(\.outcome) == [.failed, .succeeded])
            #expect(a.map(\.errorCode) == ["fetch_failed", nil])
            #expect(a.map(\.errorMessage) == ["HTTP 503", nil])
            #expect(a.allSatisfy { ($0.endedAt ?? .distantPast) >= $0.startedAt })

            let b = try await queue.attempts(job: ids[1])
            // The release does not count the attempt: the next claim is attempt 1 again.
            #expect(b.map(\.attempt) == [1, 1])
            #expect(b.map(\.outcome) == [.released, nil])
            #expect(b.first?.errorCode == nil)

            let c = try await queue.attempts(job: ids[2])
            #expect(c.map(\.outcome) == [.cancelled])
            #expect(c.first?.errorCode == "cancelled" && c.first?.errorMessage == "asked to stop")

            // d: its worker is gone (expire), then a rescue; after a retry by hand, attempt 1 again.
            #expect(try await queue.expire([first[3].lease]) == [ids[3]])
            #expect(try await queue.rescueExpired() == 1)
            let d = try await queue.attempts(job: ids[3])
            #expect(d.map(\.outcome) == [.expired])
            #expect(d.first?.errorCode == "lease_expired")
            #expect(d.first?.errorMessage == JobAttempt.holderGoneMessage)
            let again = try await claimOne(queue, worker: "worker-c")
            _ = try await queue.finish([failed(again)])
            _ = try await queue.retry(ids[3])
            let third = try await claimOne(queue, worker: "worker-c")
            #expect(third.id == ids[3])
            let history = try await queue.attempts(job: ids[3])
            #expect(history.map(\.attempt) == [1, 2, 1])
            #expect(history.map(\.leaseToken) == [1, 2, 3])
            #expect(history.map(\.outcome) == [.expired, .failed, nil])
            #expect(try await queue.attempts(job: 999_999).isEmpty)
        }
    }

    @Test(
        "an expired lease's attempt is closed by the rescue; attempts are pruned with their job",
        arguments: QueueBackend.testedBackends)
    func attemptRescueAndPrune(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let ids = try await queue.enqueue([spec("a", maxAttempts: 1), spec("b")]).map(\.id)
            _ = try await queue.claim(worker: "worker-a", limit: 2, lease: shortLease)
            try await Task.sleep(for: pastShortLease)
            // The claim rescues first: a ends dead, b is claimed again.
            let again = try await queue.claim(worker: "worker-b", limit: 2, lease: lease)
            #expect(again.map(\.id) == [ids[1]])
            let a = try await queue.attempts(job: ids[0])
            #expect(a.map(\.outcome) == [.expired])
            #expect(a.first?.errorMessage?.contains("lease expired") == true)
            #expect(try await queue.attempts(job: ids[1]).map(\.outcome) == [.expired, nil])
            _ = try await queue.finish([succeeded(again[0])])

            #expect(try await queue.prune(finishedBefore: Date().addingTimeInterval(5)) == 2)
            #expect(try await queue.attempts(job: ids[0]).isEmpty)
            #expect(try await queue.attempts(job: ids[1]).isEmpty)
        }
    }

    // MARK: - Upgrading

    @Test(
        "a database of schema version 2 upgrades to 3: kinds read from old results, a running job still finishes",
        .enabled(if: TestTools.programAvailable("sqlite3"), "needs the sqlite3 command-line tool"),
        arguments: QueueBackend.testedBackends)
    func upgradeFromVersion2(_ backend: QueueBackend) async throws {
        let insert = """
            INSERT INTO pushprep_jobs
                (state, source, payload, max_attempts, run_at, created_at, updated_at, finished_at, result, attempt,
                lease_owner, lease_token, lease_expires_at, error_code)
            VALUES
                ('succeeded', 'old-image', '{}', 5, 1700000000, 1700000000, 1700000100, 1700000100,
                    '{"kind":"image","status":"ok"}', 1, NULL, 1, NULL, NULL),
                ('succeeded', 'old-odd', '{}', 5, 1700000000, 1700000000, 1700000100, 1700000100,
                    'not JSON', 1, NULL, 1, NULL, NULL),
                ('succeeded', 'old-array', '{}', 5, 1700000000, 1700000000, 1700000100, 1700000100,
                    '[1,2]', 1, NULL, 1, NULL, NULL),
                ('failed', 'old-failed', '{}', 5, 1700000000, 1700000000, 1700000100, 1700000100,
                    NULL, 1, NULL, 1, NULL, 'corrupt_input'),
                ('running', 'old-running', '{}', 5, 1700000000, 1700000000, 1700000000, NULL,
                    NULL, 1, 'old-worker', 1, 1700000000, NULL)
            """
        try await withOldDatabase(backend, version: 2, inserting: insert) { url, versions in
            try await JobQueues.withBackend(url, logger: .quiet) { queue in
                #expect(try await versions() == "1,2,3,4")
                let jobs = try await queue.list(state: nil, limit: 10)
                #expect(jobs.map(\.source) == ["old-running", "old-failed", "old-array", "old-odd", "old-image"])
                #expect(jobs.map(\.kind) == [.unknown, .unknown, .unknown, .unknown, .image])
                #expect(try await queue.count(filter: JobFilter(kind: .image)) == 1)
                #expect(
                    try await queue.list(filter: JobFilter(errorCode: "corrupt_input"), limit: 5, before: nil)
                        .map(\.source) == ["old-failed"])
                #expect(try await queue.count(filter: JobFilter(states: [.succeeded], kind: .unknown)) == 2)

                // The job running during the upgrade has no attempt, and still finishes.
                let running = jobs[0]
                #expect(try await queue.attempts(job: running.id).isEmpty)
                #expect(
                    try await queue.finish([
                        JobOutcome(
                            lease: Lease(id: running.id, token: 1), attempt: 1, maxAttempts: 5,
                            kind: .succeeded(result: #"{"kind":"video"}"#))
                    ]) == [running.id])
                #expect(try await stored(queue, running.id).kind == .video)
                #expect(try await queue.attempts(job: running.id).isEmpty)

                #expect(try await queue.retry(matching: JobFilter(source: "old-failed")) == 1)
                let claimed = try await claimOne(queue, worker: "worker-new")
                #expect(try await queue.attempts(job: claimed.id).map(\.worker) == ["worker-new"])
                try await queue.recordWorker(WorkerRegistration(id: "worker-new", host: "h", pid: 1, concurrency: 1))
                #expect(
                    try await queue.workers(seenSince: Date().addingTimeInterval(-60)).first?.runningJobs == [
                        claimed.id
                    ])
                #expect(try await queue.prune(finishedBefore: Date()) == 4)
            }
        }
    }
}

/// Succeeds after a second, or stops early when asked.
private struct SleepingHandler: JobHandler {
    func handle(_ job: ClaimedJob, context: JobContext) async -> JobOutcome.Kind {
        try? await Task.sleep(for: .seconds(1))
        return .succeeded(result: #"{"kind":"image"}"#)
    }
}
