import Foundation
import Logging
import PushPrepCore
import PushPrepQueue
import PushPrepServer
import PushPrepTestSupport
import ServiceLifecycle
import Testing

/// The dispatcher end to end: a real SQLite queue writes an outbox row when a job with a
/// callback URL ends, a dispatcher in a `ServiceGroup` sends it to the independent receiver.
@Suite(.serialized)
struct WebhookDispatcherTests {
    /// Fast settings for a receiver on 127.0.0.1.
    static func settings(concurrency: Int = 4, schedule: WebhookRetrySchedule? = nil) -> WebhookSettings {
        var settings = WebhookSenderTests.localSettings(timeout: .seconds(3))
        settings.connectTimeout = .seconds(1)
        settings.concurrency = concurrency
        settings.batchSize = concurrency
        settings.idleInterval = .milliseconds(50)
        settings.schedule = schedule ?? WebhookRetrySchedule(delays: [.milliseconds(100), .milliseconds(100)])
        return settings
    }

    static func dispatcher(_ queue: any JobQueueBackend, _ settings: WebhookSettings) throws -> WebhookDispatcher {
        WebhookDispatcher(
            queue: queue, settings: settings, signer: try WebhookSenderTests.signer(WebhookSenderTests.secret),
            logger: .quiet)
    }

    /// Runs `dispatcher` in a service group while `body` runs, then shuts it down gracefully
    /// and waits for it to stop.
    static func running<T: Sendable>(
        _ dispatcher: WebhookDispatcher, _ body: () async throws -> T
    ) async throws -> T {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [dispatcher], logger: .quiet))
        let running = Task { try await group.run() }
        do {
            let value = try await body()
            await group.triggerGracefulShutdown()
            try await running.value
            return value
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            throw error
        }
    }

    /// Enqueues jobs calling back `url`, claims and finishes each (`succeeded`, or `failed`
    /// for odd indexes), and returns their ids.
    static func finishJobs(_ queue: any JobQueueBackend, count: Int, url: String) async throws -> [JobID] {
        let specs = (0..<count).map {
            JobSpec(source: "https://media.example/\($0).jpg", payload: "{}", callbackURL: url)
        }
        let ids = try await queue.enqueue(specs).map(\.id)
        let claimed = try await queue.claim(worker: "test", limit: count, lease: .seconds(60))
        #expect(claimed.count == count)
        let outcomes = claimed.map { job in
            JobOutcome(
                job: job,
                kind: ids.firstIndex(of: job.id).map { $0 % 2 == 1 } == true
                    ? .failed(code: .corruptInput, message: "truncated") : .succeeded(result: "{}"))
        }
        #expect(try await queue.finish(outcomes) == Set(ids))
        return ids
    }

    static func states(_ queue: any JobQueueBackend, _ ids: [JobID]) async throws -> [DeliveryState] {
        var states: [DeliveryState] = []
        for id in ids {
            states.append(contentsOf: try await queue.deliveries(job: id).map(\.state))
        }
        return states
    }

    @Test("a finished job's webhook reaches the receiver, verified, with the job as it ended")
    func deliversFinishedJobs() async throws {
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret)
        try await QueueFixture.withQueue(.sqlite) { queue, _ in
            let ids = try await Self.finishJobs(queue, count: 2, url: receiver.url("/done"))
            try await Self.running(try Self.dispatcher(queue, Self.settings())) {
                try await Poll.until("both are delivered", within: .seconds(20), diagnostics: { receiver.output }) {
                    try await Self.states(queue, ids) == [.delivered, .delivered]
                }
            }
            let requests = try receiver.requests
            #expect(requests.count == 2)
            #expect(requests.map(\.verified) == [true, true])
            #expect(requests.map(\.path) == ["/done", "/done"])
            var events: [JobID: String] = [:]
            for request in requests {
                let body = try #require(
                    try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
                let data = try #require(body["data"] as? [String: Any])
                let id = try #require(data["id"] as? Int)
                events[JobID(id)] = body["type"] as? String
                #expect(
                    data["state"] as? String == (body["type"] as? String)?.replacingOccurrences(of: "job.", with: ""))
                #expect(body["timestamp"] as? String == data["finished_at"] as? String)
                let delivery = try #require(try await queue.deliveries(job: JobID(id)).first)
                #expect(request.id == delivery.webhookID)
                #expect(request.id.hasPrefix("msg_") && UUID(uuidString: String(request.id.dropFirst(4))) != nil)
                #expect(delivery.lastStatus == 200)
            }
            #expect(events == [ids[0]: "job.succeeded", ids[1]: "job.failed"])
        }
    }

    @Test(
        "a receiver failing at first is retried by the schedule with the same id and bytes; one failing throughout is given up"
    )
    func retriesThenDelivers() async throws {
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret, failFirst: 2)
        try await QueueFixture.withQueue(.sqlite) { queue, _ in
            let ids = try await Self.finishJobs(queue, count: 1, url: receiver.url())
            try await Self.running(try Self.dispatcher(queue, Self.settings())) {
                try await Poll.until("delivered on the third attempt", within: .seconds(20)) {
                    try await Self.states(queue, ids) == [.delivered]
                }
            }
            let requests = try receiver.requests
            #expect(requests.map(\.status) == [500, 500, 200])
            #expect(Set(requests.map(\.id)) == [try #require(try await queue.deliveries(job: ids[0]).first).webhookID])
            #expect(Set(requests.map(\.body)).count == 1)
            #expect(requests.map(\.verified) == [true, true, true])
            #expect(try await queue.deliveries(job: ids[0]).first?.attempts == 3)
        }

        // The schedule spent: three 500s with two retries end `failed`.
        let failing = try await WebhookReceiver.start(secret: WebhookSenderTests.secret, failFirst: 10)
        try await QueueFixture.withQueue(.sqlite) { queue, _ in
            let ids = try await Self.finishJobs(queue, count: 1, url: failing.url())
            try await Self.running(try Self.dispatcher(queue, Self.settings())) {
                try await Poll.until("given up", within: .seconds(20)) {
                    try await Self.states(queue, ids) == [.failed]
                }
            }
            #expect(try failing.requests.count == 3)
            let delivery = try #require(try await queue.deliveries(job: ids[0]).first)
            #expect(delivery.lastStatus == 500)
            #expect(delivery.lastError?.contains("given up after 3 attempts") == true)
        }
    }

    /// Graceful shutdown mid-way: the dispatcher stops claiming and finishes the send in flight;
    /// a new dispatcher, on the queue opened again from its file, delivers the rest.
    /// Issue 31: one receiver got 4 deliveries a second, whatever its speed.
    @Test("a busy receiver's next delivery goes out as soon as one of its sends ends, not after the idle interval")
    func busyReceiverIsNotPaced() async throws {
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret)
        try await QueueFixture.withQueue(.sqlite) { queue, _ in
            let ids = try await Self.finishJobs(queue, count: 16, url: receiver.url("/done"))
            var settings = Self.settings(concurrency: 8)
            settings.concurrencyPerHost = 4
            // The claim that finds the receiver's 4 slots taken would wait this long before
            // looking again: 4 rounds of it are 4 minutes.
            settings.idleInterval = .seconds(60)
            try await Self.running(try Self.dispatcher(queue, settings)) {
                try await Poll.until("all 16 are delivered", within: .seconds(50), diagnostics: { receiver.output }) {
                    try await Self.states(queue, ids) == Array(repeating: .delivered, count: 16)
                }
            }
            #expect(try receiver.requests.count == 16)
        }
    }

    @Test("a dispatcher stopped mid-way leaves the rest to the next one, which delivers it")
    func durableAcrossDispatchers() async throws {
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret, delay: 0.4)
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let url = QueueURL.sqlite(path: directory.appendingPathComponent("queue.db").path)
        let ids = try await JobQueues.withBackend(url, logger: .quiet) { queue in
            let ids = try await Self.finishJobs(queue, count: 4, url: receiver.url())
            try await Self.running(try Self.dispatcher(queue, Self.settings(concurrency: 1))) {
                try await Poll.until("the first request arrives", within: .seconds(20)) {
                    try !receiver.requests.isEmpty
                }
            }
            // Stopped: the send in flight finished and was recorded; nothing more was claimed.
            let states = try await Self.states(queue, ids)
            #expect(states.filter { $0 == .delivered }.count == 1, "\(states)")
            #expect(states.filter { $0 == .pending }.count == 3, "\(states)")
            #expect(try receiver.requests.count == 1)
            return ids
        }
        try await JobQueues.withBackend(url, logger: .quiet) { queue in
            try await Self.running(try Self.dispatcher(queue, Self.settings(concurrency: 2))) {
                try await Poll.until("all are delivered", within: .seconds(30)) {
                    try await Self.states(queue, ids) == Array(repeating: .delivered, count: 4)
                }
            }
        }
        let requests = try receiver.requests
        #expect(requests.count == 4, "each sent once")
        #expect(Set(requests.map(\.id)).count == 4)
        #expect(requests.allSatisfy { $0.verified && $0.status == 200 })
    }

    /// The duplicates: a receiver that answers 200 and trickles its body for longer
    /// than a claim lasts. Each delivery must reach it once, and end delivered.
    @Test(
        "a receiver that answers 200 and trickles its body gets each delivery once",
        arguments: QueueBackend.testedBackends)
    func tricklingReceiverGetsNoDuplicates(_ backend: QueueBackend) async throws {
        let receiver = try await WebhookReceiver.start(
            secret: WebhookSenderTests.secret, trickle: 12, trickleInterval: 0.5)
        try await QueueFixture.withQueue(backend) { queue, _ in
            var settings = Self.settings(concurrency: 2)
            settings.connectTimeout = .milliseconds(500)
            settings.timeout = .seconds(1)
            let ids = try await Self.finishJobs(queue, count: 2, url: receiver.url())
            try await Self.running(try Self.dispatcher(queue, settings)) {
                try await Poll.until(
                    "both are delivered", within: .seconds(30),
                    diagnostics: { "requests: \((try? receiver.requests.map(\.id)) ?? [])" }
                ) {
                    try await Self.states(queue, ids) == [.delivered, .delivered]
                }
            }
            // The dispatcher has stopped: every send it made has ended and been counted.
            let requests = try receiver.requests
            #expect(requests.count == 2, "\(requests.map(\.id))")
            #expect(Set(requests.map(\.id)).count == 2)
            for id in ids {
                let delivery = try #require(try await queue.deliveries(job: id).first)
                #expect(delivery.attempts == 1 && delivery.lastStatus == 200)
            }
        }
    }

    /// The stall: receivers on one host that hold their sends until the deadline, and
    /// receivers elsewhere. The slow host gets at most its per-host slots; the others' deliveries,
    /// newer than every slow one, are sent while the slow sends are still waiting for an answer.
    @Test(
        "receivers that hang on one host do not delay the deliveries to other hosts",
        arguments: QueueBackend.testedBackends)
    func slowHostDoesNotDelayOthers(_ backend: QueueBackend) async throws {
        let secret = WebhookSenderTests.secret
        // Two receivers on 127.0.0.1 (two ports of one host) that answer after a minute.
        let slowA = try await WebhookReceiver.start(secret: secret, delay: 60)
        let slowB = try await WebhookReceiver.start(secret: secret, delay: 60)
        let fastV4 = try await WebhookReceiver.start(secret: secret, host: "127.0.0.2")
        let fastV6 = try await WebhookReceiver.start(secret: secret, host: "::1")
        try await QueueFixture.withQueue(backend) { queue, _ in
            var settings = Self.settings(concurrency: 4)
            settings.concurrencyPerHost = 2
            settings.timeout = .seconds(5)
            var slow: [JobID] = []
            for receiver in [slowA, slowB] { slow += try await Self.finishJobs(queue, count: 2, url: receiver.url()) }
            let fast = [
                try await Self.finishJobs(queue, count: 1, url: fastV4.url())[0],
                try await Self.finishJobs(queue, count: 1, url: fastV6.url())[0],
            ]
            try await Self.running(try Self.dispatcher(queue, settings)) {
                try await Poll.until("the fast receivers' deliveries are delivered", within: .seconds(20)) {
                    try await Self.states(queue, fast) == [.delivered, .delivered]
                }
                // Observed then: no slow send has ended (none has an outcome), and the slow host
                // was given only its two slots.
                var slowDeliveries: [WebhookDelivery] = []
                for id in slow { slowDeliveries += try await queue.deliveries(job: id) }
                #expect(slowDeliveries.allSatisfy { $0.lastError == nil && $0.lastStatus == nil }, "\(slowDeliveries)")
                #expect(slowDeliveries.map(\.attempts).sorted() == [0, 0, 1, 1], "\(slowDeliveries.map(\.attempts))")
            }
            #expect(try fastV4.requests.map(\.status) == [200])
            #expect(try fastV6.requests.map(\.status) == [200])
            #expect(try fastV4.requests.allSatisfy { $0.verified })
        }
    }

    /// A claim that came back later than the start allowance (here another process held the
    /// database's write lock while the dispatcher claimed) leaves too little of its lease for a
    /// whole send. The send is not started under it, so it can never run past the claim while the
    /// next claim sends the same delivery again; the delivery waits for that next claim.
    @Test(
        "a delivery whose claim came too late for a whole send is not sent under that claim",
        .enabled(if: TestTools.programAvailable("sqlite3"), "needs the sqlite3 command-line tool"))
    func lateClaimIsNotSent() async throws {
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret)
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let path = directory.appendingPathComponent("queue.db").path
        let locked = directory.appendingPathComponent("locked").path
        try await JobQueues.withBackend(.sqlite(path: path), logger: .quiet) { queue in
            let ids = try await Self.finishJobs(queue, count: 1, url: receiver.url())
            var settings = Self.settings()
            settings.timeout = .seconds(1)
            // Holds the write lock for 3 s, three times the start allowance; the queue's writes
            // wait up to 10 s for it.
            let locker = Process()
            locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            locker.arguments = ["sqlite3", path, "BEGIN IMMEDIATE;", ".shell touch '\(locked)'; sleep 3", "COMMIT;"]
            locker.standardOutput = FileHandle.nullDevice
            locker.standardError = FileHandle.nullDevice
            try locker.run()
            try await Poll.until("the lock is held", within: .seconds(10)) {
                FileManager.default.fileExists(atPath: locked)
            }
            try await Self.running(try Self.dispatcher(queue, settings)) {
                try await Poll.until("the delivery is claimed", within: .seconds(20)) {
                    try await queue.deliveries(job: ids[0]).first?.attempts == 1
                }
            }
            // The dispatcher has stopped: whatever it started has ended.
            #expect(try receiver.requests.isEmpty, "sent under a claim that could lapse mid-send")
            let delivery = try #require(try await queue.deliveries(job: ids[0]).first)
            #expect(delivery.state == .pending && delivery.attempts == 1 && delivery.lastError == nil)
            try await Poll.until("the locker exits", within: .seconds(20)) { !locker.isRunning }
        }
    }

    /// Receivers drop duplicates by `webhook-id`: two new databases (two installations, or one
    /// set up again) must not send the same id for different events, and a retry must send the
    /// same id again.
    @Test(
        "webhook-id is unique across two new databases and the same on a retry", arguments: QueueBackend.testedBackends)
    func webhookIDsAcrossDatabases(_ backend: QueueBackend) async throws {
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret, failFirst: 1)
        var stored: [String] = []
        for _ in 0..<2 {
            try await QueueFixture.withQueue(backend) { queue, _ in
                let ids = try await Self.finishJobs(queue, count: 1, url: receiver.url())
                try await Self.running(try Self.dispatcher(queue, Self.settings())) {
                    try await Poll.until("delivered", within: .seconds(20)) {
                        try await Self.states(queue, ids) == [.delivered]
                    }
                }
                stored += try await queue.deliveries(job: ids[0]).map(\.webhookID)
            }
        }
        let requests = try receiver.requests
        #expect(requests.map(\.status) == [500, 200, 200])
        #expect(requests.map(\.id) == [stored[0], stored[0], stored[1]])
        #expect(stored[0] != stored[1], "\(stored)")
        #expect(requests.allSatisfy { $0.verified })
    }

    @Test("the outcome of a send: retries by the schedule, then failed")
    func outcomeMapping() {
        let schedule = WebhookRetrySchedule(delays: [.seconds(5)], jitter: 0)
        #expect(
            WebhookDispatcher.outcome(of: .init(verdict: .delivered, status: 204), attempt: 1, schedule: schedule)
                == .delivered(status: 204))
        let error = PushPrepError(.fetchFailed, "HTTP 500")
        #expect(
            WebhookDispatcher.outcome(
                of: .init(verdict: .retry, status: 500, error: error), attempt: 1, schedule: schedule)
                == .retry(status: 500, error: "HTTP 500", after: .seconds(5)))
        #expect(
            WebhookDispatcher.outcome(
                of: .init(verdict: .retry, status: nil, error: error), attempt: 2, schedule: schedule)
                == .failed(status: nil, error: "HTTP 500 (given up after 2 attempts)"))
        #expect(
            WebhookDispatcher.outcome(
                of: .init(verdict: .failed, status: 410, error: error), attempt: 1, schedule: schedule)
                == .failed(status: 410, error: "HTTP 500"))
    }
}
