import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// End-to-end tests of the queue with real `pushprep` processes: `enqueue`, `worker` and `jobs`
/// run as separate programs against a real SQLite file or PostgreSQL database, and the test
/// kills, signals and restarts workers while checking the queue through its API.
///
/// Serialized: several tests run three workers each, which would starve each other (and break
/// their timing bounds) on a small machine if run in parallel.
@Suite(.serialized)
struct WorkerProcessTests {
    // MARK: - Crash recovery

    /// A worker killed mid-job loses the job to the next worker once its lease expires; the job
    /// is done once, and the dead worker's token can no longer write.
    @Test(arguments: QueueBackend.testedBackends)
    func killedWorkersJobIsRescuedAndDoneOnce(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try await TestServer.with(files: ["photo.bmp": TinyBMP.bytes(1)]) { server in
            try await QueueFixture.withQueue(backend) { queue, url in
                let queueArgument = url.commandLineArgument
                // The first fetch hangs for 200 s and worker A waits that long for it, so A is
                // mid-job until it is killed, however long a loaded machine takes to see that.
                let path = "/hold-first/200000/crash/photo.bmp"
                let id = try Self.enqueue([server.url(path)], queue: queueArgument, in: dir)[0]

                let workerA = try PushPrepCLI.startWorker(
                    queue: queueArgument, out: out, in: dir,
                    options: ["--read-timeout", "240", "--fetch-timeout", "240"])
                let running = try await Self.waitUntilRunning(id, by: workerA, on: queue) { server.hits(path) >= 1 }
                #expect(running.attempt == 1 && running.leaseToken == 1)
                let killed = try await workerA.kill()
                #expect(killed.signal == SIGKILL, "worker A ended before the kill: \(killed)")
                #expect(
                    Self.stagingNames(in: out).contains { $0.contains("_\(workerA.pid)_") },
                    "worker A died with its staging folder in place")

                let workerB = try PushPrepCLI.startWorker(queue: queueArgument, out: out, in: dir)
                let done = try await Self.waitUntilFinished(id, on: queue, within: .seconds(120), worker: workerB)
                try #require(done.state == .succeeded, "job ended \(done.state): \(done.errorMessage ?? "")")
                #expect(done.attempt == 2, "A's attempt and B's")
                #expect(done.leaseToken == 2)
                #expect(done.leaseOwner == nil && done.leaseExpiresAt == nil)
                // Each worker fetched; under full-suite load B's fetch was once seen retried by the
                // fetcher (a transient failure), so the count is a floor. Exactly-once is asserted
                // by the attempt, the token and the single published output.
                #expect(server.hits(path) >= 2, "a fetch by each worker")

                // One result, one output, nothing else published.
                let attachment = try Self.attachment(of: done)
                #expect(attachment.source == server.url(path))
                #expect(
                    Set(try OutDirectory.visibleNames(in: out))
                        == Set([attachment.file] + attachment.companionFiles.map(\.file)))
                #expect(attachment.renditions.android != nil, "the default platforms include android")
                let size = try FileManager.default.attributesOfItem(
                    atPath: out.appendingPathComponent(attachment.file).path)[.size]
                #expect((size as? NSNumber)?.intValue == attachment.bytes)
                let staging = Self.stagingNames(in: out)
                #expect(
                    !staging.contains { $0.contains("_\(workerA.pid)_") },
                    "worker B removes the staging folder of the killed worker A: \(staging)")

                // A's late writes carry token 1 and are refused without changing anything.
                let stale = Lease(id: id, token: 1)
                let lateSuccess = try await queue.finish([
                    JobOutcome(lease: stale, attempt: 1, maxAttempts: 5, kind: .succeeded(result: "{}"))
                ])
                #expect(lateSuccess.isEmpty, "a finish with the old token is refused")
                let lateFailure = try await queue.finish([
                    JobOutcome(
                        lease: stale, attempt: 1, maxAttempts: 5, kind: .failed(code: .ioError, message: "late"))
                ])
                #expect(lateFailure.isEmpty, "a failure with the old token is refused")
                let heartbeat = try await queue.heartbeat([stale], lease: .seconds(60))
                #expect(
                    heartbeat.held.isEmpty && heartbeat.cancelRequested.isEmpty,
                    "a heartbeat with the old token is refused")
                #expect(try await queue.job(id) == done, "the refused writes changed nothing")

                try await Self.stop(workerB)
            }
        }
    }

    /// A worker of this host killed mid-job is noticed at once: another worker of the host sees
    /// its PID gone and rescues the job long before the 120 s lease would expire.
    @Test(arguments: QueueBackend.testedBackends)
    func deadHolderOfThisHostIsRescuedAtOnce(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try await TestServer.with(files: ["photo.bmp": TinyBMP.bytes(4)]) { server in
            try await QueueFixture.withQueue(backend) { queue, url in
                let queueArgument = url.commandLineArgument
                let path = "/hold-first/200000/dead/photo.bmp"
                let options = ["--read-timeout", "240", "--fetch-timeout", "240"]
                // Worker B runs first: with nothing to do it only watches.
                let workerB = try PushPrepCLI.startWorker(queue: queueArgument, out: out, in: dir, lease: 120)
                try await Self.waitUntilStarted(workerB)
                let id = try Self.enqueue([server.url(path)], queue: queueArgument, in: dir)[0]
                let workerA = try PushPrepCLI.startWorker(
                    queue: queueArgument, out: out, in: dir, lease: 120, options: options)
                // B may claim it first; then the roles swap (A is whoever holds it).
                let holder = try await Poll.value(
                    "a worker runs job \(id)", within: .seconds(60), diagnostics: { workerA.logTail() }
                ) { () -> PushPrepProcess? in
                    guard server.hits(path) >= 1, let job = try await queue.job(id), job.state == .running else {
                        return nil
                    }
                    return [workerA, workerB].first { Self.isOwned(job, by: $0) }
                }
                let other = holder === workerA ? workerB : workerA
                let killed = try await holder.kill()
                #expect(killed.signal == SIGKILL)
                let killedAt = ContinuousClock.now

                let rescued = try await Poll.value(
                    "the other worker takes job \(id) over", within: .seconds(60), diagnostics: { other.logTail() }
                ) { () -> JobRecord? in
                    guard let job = try await queue.job(id), job.attempt == 2 else { return nil }
                    return job
                }
                let waited = ContinuousClock.now - killedAt
                #expect(rescued.leaseToken == 2)
                #expect(waited < .seconds(30), "rescued after \(waited); the lease was 120 s")
                #expect(
                    other.stderrText.contains("rescuing the jobs of dead workers of this host"), "\(other.logTail())")
                let done = try await Self.waitUntilFinished(id, on: queue, within: .seconds(60), worker: other)
                #expect(done.state == .succeeded, "\(done)")
                try await Self.stop(other)
            }
        }
    }

    // MARK: - Chaos

    /// 2,000 jobs, three workers, one of them killed with SIGKILL and restarted every few hundred
    /// milliseconds: every job ends with a result (or a real failure), none is lost or stuck,
    /// none runs more than its attempts, and every result's output is there.
    @Test(arguments: QueueBackend.testedBackends)
    func killingWorkersAtRandomLosesNoJob(_ backend: QueueBackend) async throws {
        try await Self.chaos(backend, bucket: nil)
    }

    /// The same chaos with the workers publishing to a bucket (`--store s3://…` on moto with IAM
    /// auth): every result's object is there, and no other object and no unfinished upload.
    @Test(MotoS3Server.required)
    func killingWorkersAtRandomLosesNoJobWithABucket() async throws {
        try await Self.chaos(.sqlite, bucket: try await MotoS3Server.shared.makeBucket())
    }

    /// 2,000 jobs, three workers killed and restarted at random; outputs go to `out`, or to
    /// `bucket` under `chaos/` on ``MotoS3Server/shared`` when given.
    static func chaos(_ backend: QueueBackend, bucket: String?) async throws {
        let jobCount = 2000
        // Touched only with a bucket: the first use of the shared server starts it.
        let server: MotoS3Server? = bucket == nil ? nil : MotoS3Server.shared
        let store = try await server?.storeURL(prefix: "chaos", bucket: bucket)
        let environment = try await server?.environment ?? [:]
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let inputs = dir.appendingPathComponent("in")
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: false)
        try TinyBMP.write(count: jobCount, into: inputs)

        try await QueueFixture.withQueue(backend) { queue, url in
            let queueArgument = url.commandLineArgument
            let start = ContinuousClock.now
            let ids = try Self.enqueue([inputs.path], queue: queueArgument, in: dir)
            try #require(ids.count == jobCount && Set(ids).count == jobCount, "one new job per input")

            // Short retry waits: a transient failure must not outlast the test's bound.
            func startWorker() throws -> PushPrepProcess {
                try PushPrepCLI.startWorker(
                    queue: queueArgument, out: out, store: store, environment: environment, in: dir, lease: 2,
                    concurrency: 2, options: ["--retry-base", "0.5", "--retry-max", "2"])
            }
            var workers = try (0..<3).map { _ in try startWorker() }
            // Warnings of every worker, killed ones included, for the summary.
            var warnings: [Substring] = []
            var kills = 0
            for _ in 0..<20 {
                try await Task.sleep(for: .milliseconds(Int.random(in: 200...600)))
                let victim = Int.random(in: 0..<workers.count)
                let exit = try await workers[victim].kill()
                if exit.signal == SIGKILL { kills += 1 }
                warnings += Self.warnings(in: workers[victim])
                workers[victim] = try startWorker()
            }
            let chaosEnded = try await queue.stats()

            try await Poll.until(
                "all \(jobCount) jobs have finished", within: .seconds(240), every: .milliseconds(250),
                diagnostics: { workers.map { $0.logTail(15) }.joined(separator: "\n") }
            ) {
                let stats = try await queue.stats()
                return stats.byState[.queued] == 0 && stats.byState[.running] == 0
            }
            let elapsed = ContinuousClock.now - start
            for worker in workers {
                // A worker restarted by the last kill may still be starting up.
                try await Self.waitUntilStarted(worker)
                worker.send(SIGTERM)
            }
            for worker in workers {
                let exit = await worker.waitForExit(within: .seconds(30))
                #expect(
                    exit?.signal == nil && exit?.status == 0,
                    "SIGTERM: \(exit.map(\.description) ?? "still running")\n\(worker.logTail())")
            }

            for worker in workers { warnings += Self.warnings(in: worker) }

            let jobs = try await queue.list(state: nil, limit: jobCount * 2)
            #expect(jobs.count == jobCount, "no job lost, none added")
            #expect(Set(jobs.map(\.id)) == Set(ids))
            let stats = try await queue.stats()
            #expect(stats.byState[.running] == 0 && stats.expiredLeases == 0, "nothing left running: \(stats)")
            var outputs: Set<String> = []
            for job in jobs {
                #expect(
                    (1...job.maxAttempts).contains(job.attempt),
                    "job \(job.id): attempt \(job.attempt) of \(job.maxAttempts)")
                #expect(job.leaseOwner == nil, "job \(job.id) still has a lease owner")
                switch job.state {
                case .succeeded:
                    let attachment = try Self.attachment(of: job)
                    #expect(attachment.source == job.source)
                    #expect(
                        bucket != nil
                            || FileManager.default.fileExists(atPath: out.appendingPathComponent(attachment.file).path),
                        "job \(job.id): \(attachment.file) is missing")
                    outputs.insert(attachment.file)
                    outputs.formUnion(attachment.companionFiles.map(\.file))
                case .failed:
                    #expect(job.errorCode?.isEmpty == false, "job \(job.id) failed without an error code")
                default:
                    Issue.record("job \(job.id) ended \(job.state): \(job.errorCode ?? "") \(job.errorMessage ?? "")")
                }
            }
            if let bucket, let server {
                let listing = try await Self.listing(of: bucket, prefix: "chaos/", on: server)
                #expect(
                    Set(listing.keys) == Set(outputs.map { "chaos/\($0)" }),
                    "the bucket holds exactly the results' files")
                #expect(listing.uploads.isEmpty, "no multipart upload left unfinished")
            } else {
                #expect(
                    Set(try OutDirectory.visibleNames(in: out)) == outputs,
                    "the out directory holds exactly the results' files")
            }
            let rescued = jobs.filter { $0.attempt > 1 }.count
            print(
                "[chaos \(backend)\(bucket == nil ? "" : ", s3 store")] \(jobCount) jobs in \(Self.seconds(elapsed)), "
                    + "\(kills) workers killed, \(rescued) jobs rescued (attempt > 1), "
                    + "\(chaosEnded.byState[.succeeded] ?? 0) done when the kills ended, \(warnings.count) warnings"
                    + Self.summary(of: warnings))
        }
    }

    // MARK: - Graceful drain

    /// SIGTERM while jobs run: the worker stops claiming, lets them finish, and exits 0.
    @Test(arguments: QueueBackend.testedBackends)
    func sigtermLetsRunningJobsFinish(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        let names = (0..<4).map { "drain-\($0).bmp" }
        let files = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, TinyBMP.bytes(100 + $0)) })
        try await TestServer.with(files: files) { server in
            try await QueueFixture.withQueue(backend) { queue, url in
                let queueArgument = url.commandLineArgument
                // Each job waits 1.5 s for its source.
                let ids = try Self.enqueue(
                    names.map { server.url("/slow-first-byte/1500/\($0)") }, queue: queueArgument, in: dir)
                let worker = try PushPrepCLI.startWorker(
                    queue: queueArgument, out: out, in: dir, concurrency: 2, options: ["--drain-timeout", "10"])
                let running = try await Poll.value(
                    "the worker runs two jobs", within: .seconds(30), diagnostics: { worker.logTail() }
                ) { () -> [JobRecord]? in
                    let jobs = try await queue.list(state: .running, limit: 10)
                    return jobs.count == 2 && jobs.allSatisfy { Self.isOwned($0, by: worker) } ? jobs : nil
                }

                let signalled = ContinuousClock.now
                worker.send(SIGTERM)
                let exit = await worker.waitForExit(within: .seconds(25))
                let drained = ContinuousClock.now - signalled
                #expect(
                    exit?.signal == nil && exit?.status == 0,
                    "\(exit.map(\.description) ?? "still running")\n\(worker.logTail())")
                #expect(
                    drained < .seconds(15),
                    "the drain took \(drained), more than the drain timeout of 10 s and a margin")

                let jobs = try await queue.list(state: nil, limit: 10)
                #expect(Set(jobs.map(\.id)) == Set(ids), "nothing lost")
                for job in jobs {
                    switch job.state {
                    case .succeeded:
                        #expect(job.attempt == 1)
                        _ = try Self.attachment(of: job)
                    case .queued:
                        #expect(!running.contains { $0.id == job.id }, "job \(job.id) was running yet is queued again")
                        #expect(job.attempt == 0 && job.leaseOwner == nil, "job \(job.id) was never claimed")
                    default:
                        Issue.record("job \(job.id) is \(job.state) after the drain")
                    }
                }
                for job in running {
                    #expect(
                        jobs.first { $0.id == job.id }?.state == .succeeded, "job \(job.id) ran at SIGTERM and finished"
                    )
                }
            }
        }
    }

    /// A job that outlasts the drain timeout is stopped and given back: queued, its lease and
    /// its attempt released, and another worker takes it at once instead of after the lease.
    @Test(arguments: QueueBackend.testedBackends)
    func drainTimeoutGivesTheJobBack(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try await TestServer.with(files: ["long.bmp": TinyBMP.bytes(200)]) { server in
            try await QueueFixture.withQueue(backend) { queue, url in
                let queueArgument = url.commandLineArgument
                let path = "/hold-first/60000/drain/long.bmp"
                let id = try Self.enqueue([server.url(path)], queue: queueArgument, in: dir)[0]
                // A 30 s lease: only a release lets another worker take the job within the test's bounds.
                let workerA = try PushPrepCLI.startWorker(
                    queue: queueArgument, out: out, in: dir, lease: 30, options: ["--drain-timeout", "1"])
                _ = try await Self.waitUntilRunning(id, by: workerA, on: queue) { server.hits(path) >= 1 }

                let signalled = ContinuousClock.now
                workerA.send(SIGTERM)
                let exit = await workerA.waitForExit(within: .seconds(20))
                let stopped = ContinuousClock.now - signalled
                try #require(exit != nil, "worker A still runs 20 s after SIGTERM\n\(workerA.logTail())")
                #expect(exit?.signal == nil && exit?.status == 0, "\(exit!)\n\(workerA.logTail())")
                #expect(stopped < .seconds(8), "worker A took \(stopped) to stop with --drain-timeout 1")

                let released = try #require(try await queue.job(id))
                #expect(released.state == .queued)
                #expect(released.leaseOwner == nil && released.leaseExpiresAt == nil, "the lease is released")
                #expect(released.attempt == 0, "a released attempt does not count")
                #expect(released.leaseToken == 1)

                let workerB = try PushPrepCLI.startWorker(queue: queueArgument, out: out, in: dir, lease: 30)
                let done = try await Self.waitUntilFinished(id, on: queue, within: .seconds(15), worker: workerB)
                let pickedUp = ContinuousClock.now - signalled
                #expect(done.state == .succeeded, "\(done.state): \(done.errorMessage ?? "")")
                #expect(done.attempt == 1 && done.leaseToken == 2)
                #expect(
                    pickedUp < .seconds(20),
                    "worker B finished the job \(pickedUp) after SIGTERM, before A's lease expired")
                _ = try Self.attachment(of: done)
                try await Self.stop(workerB)
            }
        }
    }

    // MARK: - Cancellation

    /// `jobs cancel` on a running job: its worker sees the request at a heartbeat, stops the
    /// job, and publishes nothing.
    @Test(arguments: QueueBackend.testedBackends)
    func cancellingARunningJobStopsItWithoutOutput(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try await TestServer.with(files: ["cancel.bmp": TinyBMP.bytes(300)]) { server in
            try await QueueFixture.withQueue(backend) { queue, url in
                let queueArgument = url.commandLineArgument
                // Without the cancellation the job would succeed once the source answers after 4 s.
                let path = "/hold-first/4000/cancel/cancel.bmp"
                let id = try Self.enqueue([server.url(path)], queue: queueArgument, in: dir)[0]
                // A 1.5 s lease: a heartbeat every 0.5 s.
                let worker = try PushPrepCLI.startWorker(queue: queueArgument, out: out, in: dir, lease: 1.5)
                _ = try await Self.waitUntilRunning(id, by: worker, on: queue) { server.hits(path) >= 1 }

                let cancel = try PushPrepCLI.runChecked(["jobs", "cancel", "\(id)", "--queue", queueArgument], in: dir)
                #expect(cancel.stdoutText.contains("job \(id) is running"), "stdout: \(cancel.stdoutText)")
                let done = try await Self.waitUntilFinished(id, on: queue, within: .seconds(15), worker: worker)
                #expect(done.state == .cancelled, "\(done.state): \(done.errorMessage ?? "")")
                #expect(done.errorCode == "cancelled")
                #expect(done.result == nil && done.leaseOwner == nil)
                #expect(worker.isRunning, "the worker goes on after a cancelled job")

                // The worker reports the outcome after the handler returned: nothing can be
                // published by this attempt any more.
                #expect(try OutDirectory.visibleNames(in: out).isEmpty, "a cancelled job publishes nothing")
                let staging = Self.stagingNames(in: out)
                #expect(staging.isEmpty, "the cancelled attempt's staging folder is removed: \(staging)")
                #expect(try await queue.job(id)?.state == .cancelled)
                try await Self.stop(worker)
            }
        }
    }

    // MARK: - CLI

    /// `enqueue` and every `jobs` subcommand against a real queue, with a real worker to finish
    /// jobs in between.
    @Test func enqueueAndJobsCommands() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try Data(TinyBMP.bytes(400)).write(to: dir.appendingPathComponent("a.bmp"))
        try Data(TinyBMP.bytes(401)).write(to: dir.appendingPathComponent("b.bmp"))
        try Data("just some notes\n".utf8).write(to: dir.appendingPathComponent("notes.txt"))

        try await QueueFixture.withQueue(.sqlite) { queue, url in
            let q = url.commandLineArgument
            func pushprep(_ arguments: [String]) throws -> PushPrepCLI.Result {
                try PushPrepCLI.run(arguments + ["--queue", q], in: dir)
            }

            // enqueue: one id per input; the same input and settings give the same job.
            let first = try pushprep(["enqueue", "a.bmp", "b.bmp"])
            #expect(first.status == 0, "\(first.stderrText)")
            let ids = first.lines.compactMap { JobID($0) }
            try #require(ids.count == 2 && first.lines.count == 2, "stdout: \(first.stdoutText)")
            let (a, b) = (ids[0], ids[1])
            #expect(a != b)
            #expect(try pushprep(["enqueue", "a.bmp"]).lines == ["\(a)"], "a duplicate returns the queued job")
            let other = try pushprep(["enqueue", "a.bmp", "--quality", "50"])
            let otherID = try #require(
                other.lines.first.flatMap { JobID($0) }, "\(other.stdoutText)\(other.stderrText)")
            #expect(![a, b].contains(otherID), "other settings make another job")

            // enqueue --json: id, source (absolute), state, created.
            let json = try pushprep(["enqueue", "b.bmp", "notes.txt", "--json"])
            #expect(json.status == 0, "\(json.stderrText)")
            let rows = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
            try #require(rows.count == 2)
            #expect(Self.int64(rows[0]["id"]) == b, "b.bmp is queued already")
            #expect(rows[0]["created"] as? Bool == false)
            #expect(rows[0]["state"] as? String == "queued")
            #expect(rows[0]["source"] as? String == dir.appendingPathComponent("b.bmp").standardizedFileURL.path)
            #expect(rows[1]["created"] as? Bool == true)
            let notes = try #require(Self.int64(rows[1]["id"]))

            // jobs cancel of a queued job: cancelled at once.
            let cancel = try pushprep(["jobs", "cancel", "\(otherID)"])
            #expect(
                cancel.status == 0 && cancel.stdoutText.contains("job \(otherID) cancelled"),
                "\(cancel.stdoutText)\(cancel.stderrText)")
            #expect(try await queue.job(otherID)?.state == .cancelled)

            // A worker runs the rest: a and b succeed, notes.txt fails (not an image).
            let worker = try PushPrepCLI.startWorker(queue: q, out: out, in: dir)
            try await Poll.until(
                "the worker has run every job", within: .seconds(30), diagnostics: { worker.logTail() }
            ) {
                let stats = try await queue.stats()
                return stats.byState[.queued] == 0 && stats.byState[.running] == 0
            }
            try await Self.stop(worker)

            // jobs list: a table, JSON, a state filter.
            let table = try pushprep(["jobs", "list"])
            #expect(table.status == 0)
            #expect(
                table.lines.first?.hasPrefix("ID") == true && table.lines.first?.contains("STATE") == true,
                "\(table.stdoutText)")
            #expect(table.lines.count == 5, "a header and four jobs: \(table.stdoutText)")
            #expect(
                table.lines.dropFirst().compactMap { $0.split(separator: " ").first.map(String.init) }
                    == [notes, otherID, b, a].map { "\($0)" })
            let listed = try Self.jsonArray(try pushprep(["jobs", "list", "--json"]))
            #expect(listed.compactMap { Self.int64($0["id"]) } == [notes, otherID, b, a], "newest first")
            #expect(listed.map { $0["state"] as? String } == ["failed", "cancelled", "succeeded", "succeeded"])
            let failed = try Self.jsonArray(try pushprep(["jobs", "list", "--state", "failed", "--json"]))
            #expect(failed.compactMap { Self.int64($0["id"]) } == [notes])
            #expect((failed.first?["error"] as? [String: Any])?["code"] as? String == "unsupported_type")
            let succeeded = try pushprep(["jobs", "list", "--state", "succeeded"])
            #expect(
                succeeded.lines.count == 3 && !succeeded.stdoutText.contains("notes.txt"), "\(succeeded.stdoutText)")

            // jobs show: the manifest entry once done; an unknown id is an error.
            let record = try #require(try await queue.job(a))
            let attachment = try Self.attachment(of: record)
            let show = try pushprep(["jobs", "show", "\(a)"])
            #expect(show.status == 0)
            #expect(show.stdoutText.contains("job \(a): succeeded"), "\(show.stdoutText)")
            #expect(
                show.stdoutText.contains("manifest entry:") && show.stdoutText.contains(attachment.file),
                "\(show.stdoutText)")
            let shown = try #require(
                try JSONSerialization.jsonObject(with: try pushprep(["jobs", "show", "\(a)", "--json"]).stdout)
                    as? [String: Any])
            #expect((shown["result"] as? [String: Any])?["file"] as? String == attachment.file)
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(attachment.file).path))
            let missing = try pushprep(["jobs", "show", "999999"])
            #expect(
                missing.status == 1 && missing.stderrText.contains("job_not_found"),
                "exit \(missing.status): \(missing.stderrText)")

            // jobs retry: a failed job is queued again; succeeded and running ones cannot be.
            let retried = try pushprep(["jobs", "retry", "\(notes)"])
            #expect(
                retried.status == 0 && retried.stdoutText.contains("job \(notes) queued again"), "\(retried.stderrText)"
            )
            let requeued = try #require(try await queue.job(notes))
            #expect(requeued.state == .queued && requeued.attempt == 0)
            let retrySucceeded = try pushprep(["jobs", "retry", "\(a)"])
            #expect(
                retrySucceeded.status == 1 && retrySucceeded.stderrText.contains("invalid_job_state"),
                "\(retrySucceeded.stderrText)")
            let claimed = try await queue.claim(worker: "test:1:cli", limit: 1, lease: .seconds(60))
            try #require(claimed.map(\.id) == [notes])
            let retryRunning = try pushprep(["jobs", "retry", "\(notes)"])
            #expect(
                retryRunning.status == 1 && retryRunning.stderrText.contains("invalid_job_state"),
                "\(retryRunning.stderrText)")

            // jobs stats: a table and JSON.
            let statsTable = try pushprep(["jobs", "stats"])
            #expect(statsTable.status == 0)
            #expect(
                statsTable.lines.contains { $0.split(separator: " ") == ["succeeded", "2"] }, "\(statsTable.stdoutText)"
            )
            #expect(
                statsTable.lines.contains { $0.split(separator: " ") == ["running", "1"] }, "\(statsTable.stdoutText)")
            let statsJSON = try #require(
                try JSONSerialization.jsonObject(with: try pushprep(["jobs", "stats", "--json"]).stdout)
                    as? [String: Any])
            let states = try #require(statsJSON["states"] as? [String: Int])
            #expect(states == ["queued": 0, "running": 1, "succeeded": 2, "failed": 0, "dead": 0, "cancelled": 1])
            #expect(statsJSON["ready"] as? Int == 0 && statsJSON["expiredLeases"] as? Int == 0)

            // jobs prune --older-than 0: every finished job goes, the running one stays.
            let prune = try pushprep(["jobs", "prune", "--older-than", "0"])
            #expect(
                prune.status == 0 && prune.stdoutText.contains("pruned 3 finished jobs"),
                "\(prune.stdoutText)\(prune.stderrText)")
            #expect(try await queue.list(state: nil, limit: 10).map(\.id) == [notes])

            // A bad --queue is a usage error; a queue that cannot be opened fails the command.
            for bad in ["mysql://db/pushprep", "sqlite:"] {
                for command in [["jobs", "list"], ["enqueue", "a.bmp"], ["worker", "--out", out.path]] {
                    let result = try PushPrepCLI.run(command + ["--queue", bad], in: dir)
                    #expect(
                        result.status == 2,
                        "\(command[0]) --queue \(bad): exit \(result.status), \(result.stderrText)")
                }
            }
            let unusable = "sqlite:" + dir.appendingPathComponent("a.bmp/queue.db").path
            for command in [["jobs", "stats"], ["worker", "--out", out.path]] {
                let result = try PushPrepCLI.run(command + ["--queue", unusable], in: dir)
                #expect(
                    result.status == 1 && result.stderrText.contains("queue_unavailable"),
                    "\(command[0]) on a file that cannot be a database: exit \(result.status), \(result.stderrText)")
            }
        }
    }

    // MARK: - Metrics

    /// A worker with `--metrics-port` serves Prometheus text with its job and queue metrics.
    @Test(arguments: QueueBackend.testedBackends)
    func workerServesPrometheusMetrics(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        let input = dir.appendingPathComponent("m.bmp")
        let bytes = TinyBMP.bytes(500)
        try Data(bytes).write(to: input)
        let port = try ChildProcessTools.freePort()

        try await QueueFixture.withQueue(backend) { queue, url in
            let queueArgument = url.commandLineArgument
            let id = try Self.enqueue([input.path], queue: queueArgument, in: dir)[0]
            let worker = try PushPrepCLI.startWorker(
                queue: queueArgument, out: out, in: dir,
                options: ["--metrics-port", "\(port)", "--metrics-host", "127.0.0.1"])
            let done = try await Self.waitUntilFinished(id, on: queue, within: .seconds(30), worker: worker)
            #expect(done.state == .succeeded)

            // The queue gauges are refreshed every few seconds: wait for the one that counts this job.
            let metrics = try await Poll.value(
                "the metrics show the finished job", within: .seconds(20), every: .milliseconds(250),
                diagnostics: { worker.logTail() }
            ) { () -> String? in
                guard let text = await Self.get("http://127.0.0.1:\(port)/metrics") else { return nil }
                return Self.sample(text, "pushprep_queue_jobs{state=\"succeeded\"}") == 1 ? text : nil
            }
            for name in [
                "pushprep_worker_jobs_total", "pushprep_job_duration_seconds", "pushprep_queue_jobs",
                "pushprep_input_bytes_total",
            ] {
                #expect(metrics.contains(name), "\(name) is missing:\n\(metrics)")
            }
            #expect(Self.sample(metrics, "pushprep_worker_jobs_total{outcome=\"succeeded\"}") == 1, "\(metrics)")
            #expect(Self.sample(metrics, "pushprep_job_duration_seconds_count") == 1, "\(metrics)")
            #expect(Self.sample(metrics, "pushprep_input_bytes_total") == Double(bytes.count), "\(metrics)")
            #expect(Self.sample(metrics, "pushprep_queue_jobs{state=\"queued\"}") == 0, "\(metrics)")
            try await Self.stop(worker)
        }
    }

    // MARK: - Helpers

    /// The keys under `prefix` in `bucket` and its unfinished multipart uploads, listed with
    /// boto3 (`scripts/s3_list.py`).
    static func listing(
        of bucket: String, prefix: String, on server: MotoS3Server
    ) async throws -> (keys: [String], uploads: [String]) {
        let environment = try await server.environment
        let request = [
            "endpoint": try await server.endpoint.absoluteString, "region": server.region, "bucket": bucket,
            "prefix": prefix, "access_key_id": environment["AWS_ACCESS_KEY_ID"] ?? "",
            "secret_access_key": environment["AWS_SECRET_ACCESS_KEY"] ?? "",
        ]
        let script = TestTools.packageRoot.appendingPathComponent("scripts/s3_list.py").path
        let result = try TestTools.run(
            MotoS3Server.python, [script], stdin: try JSONSerialization.data(withJSONObject: request))
        try #require(result.status == 0, "s3_list.py: \(String(decoding: result.stderr, as: UTF8.self))")
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: [String]])
        return (object["keys"] ?? [], object["uploads"] ?? [])
    }

    /// `pushprep enqueue SOURCES --queue QUEUE OPTIONS`; the ids it prints, one per input.
    static func enqueue(
        _ sources: [String], queue: String, in directory: URL, options: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [JobID] {
        let result = try PushPrepCLI.runChecked(["enqueue", "--queue", queue] + options + sources, in: directory)
        let ids = result.lines.compactMap { JobID($0) }
        try #require(
            ids.count == result.lines.count && !ids.isEmpty, "enqueue printed \(result.stdoutText)",
            sourceLocation: sourceLocation)
        return ids
    }

    /// Whether `job` is leased to `worker` (whose id is `host:pid:random`).
    static func isOwned(_ job: JobRecord, by worker: PushPrepProcess) -> Bool {
        job.state == .running && job.leaseOwner?.split(separator: ":").dropFirst().first == "\(worker.pid)"
    }

    /// Waits until `worker` holds job `id` and `ready()` (say, the source was requested).
    static func waitUntilRunning(
        _ id: JobID, by worker: PushPrepProcess, on queue: any JobQueueBackend, ready: () -> Bool
    ) async throws -> JobRecord {
        try await Poll.value(
            "pid \(worker.pid) runs job \(id)", within: .seconds(120), diagnostics: { worker.logTail() }
        ) { () -> JobRecord? in
            guard ready(), let job = try await queue.job(id), isOwned(job, by: worker) else { return nil }
            return job
        }
    }

    /// Waits until job `id` is finished (succeeded, failed, dead or cancelled).
    static func waitUntilFinished(
        _ id: JobID, on queue: any JobQueueBackend, within timeout: Duration, worker: PushPrepProcess
    ) async throws -> JobRecord {
        try await Poll.value(
            "job \(id) is finished", within: timeout,
            diagnostics: { worker.logTail() }
        ) { () -> JobRecord? in
            guard let job = try await queue.job(id), job.state.isFinished else { return nil }
            return job
        }
    }

    /// Waits until `worker` has logged that it works, which it does after installing its
    /// SIGTERM handler: a SIGTERM before that ends the process by the signal.
    static func waitUntilStarted(_ worker: PushPrepProcess) async throws {
        try await Poll.until("pid \(worker.pid) has started", within: .seconds(120), diagnostics: { worker.logTail() })
        {
            worker.stderrText.contains("worker started")
        }
    }

    /// SIGTERM once started, then requires a clean exit within 20 s.
    static func stop(_ worker: PushPrepProcess, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await waitUntilStarted(worker)
        worker.send(SIGTERM)
        let exit = await worker.waitForExit(within: .seconds(20))
        #expect(
            exit?.signal == nil && exit?.status == 0,
            "SIGTERM: \(exit.map(\.description) ?? "still running after 20 s")\n\(worker.logTail())",
            sourceLocation: sourceLocation)
    }

    /// The attachment in a succeeded job's result.
    static func attachment(of job: JobRecord, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> PushPrepCore.Attachment
    {
        let result = try #require(job.result, "job \(job.id) has no result", sourceLocation: sourceLocation)
        let entry = try JSONDecoder().decode(ManifestEntry.self, from: Data(result.utf8))
        return try #require(
            entry.attachment, "job \(job.id)'s result is a failure: \(result)", sourceLocation: sourceLocation)
    }

    /// Log lines grouped by their message (the text after the logger's `[Module]` tag), most
    /// frequent first, one line each: `  12× message`.
    static func summary(of lines: [Substring]) -> String {
        var counts: [String: Int] = [:]
        for line in lines {
            let message = line.range(of: "] ", options: .backwards).map { String(line[$0.upperBound...]) }
            counts[message ?? String(line), default: 0] += 1
        }
        return counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\n  \($0.value)× \($0.key)" }.joined()
    }

    /// The attempts' folders in `out/.staging` (none when it does not exist); not the worker's
    /// decoder pool's directory there, which lives as long as the worker.
    static func stagingNames(in out: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent(".staging").path)) ?? [])
            .filter { !$0.hasPrefix(AtomicFile.temporaryPrefix) }
    }

    /// The lines a worker logged at warning level or above.
    static func warnings(in worker: PushPrepProcess) -> [Substring] {
        worker.stderrText.split(separator: "\n").filter { line in
            [" warning ", " error ", " critical "].contains { line.contains($0) }
        }
    }

    /// `12.3 s`.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.1f s", Double(seconds) + Double(attoseconds) / 1e18)
    }

    static func int64(_ value: Any?) -> Int64? {
        (value as? NSNumber)?.int64Value
    }

    static func jsonArray(_ result: PushPrepCLI.Result) throws -> [[String: Any]] {
        try #require(result.status == 0, "\(result.stderrText)")
        return try #require(
            try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.stdoutText)")
    }

    /// The body of `GET url`, or nil when the server does not answer 200 (yet).
    static func get(_ url: String) async -> String? {
        guard let url = URL(string: url),
            let (data, response) = try? await URLSession.shared.data(from: url),
            (response as? HTTPURLResponse)?.statusCode == 200
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// The value of the sample `series` (a name with its labels, as printed) in Prometheus text.
    static func sample(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard line.hasPrefix(series), let space = line.lastIndex(of: " ") else { continue }
            guard line[..<space].trimmingCharacters(in: .whitespaces) == series else { continue }
            return Double(line[line.index(after: space)...])
        }
        return nil
    }
}
