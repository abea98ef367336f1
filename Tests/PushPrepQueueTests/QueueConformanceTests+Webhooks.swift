import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// What the webhook dispatcher needs from the outbox (schema version 4), on both backends: a
/// `webhook-id` stored with each delivery, claims bounded per receiver host, and a 2xx that
/// settles a delivery whichever of its claims sent it.
extension QueueConformanceTests {
    // MARK: - Webhook ids

    @Test(
        "each delivery has its own webhook id, stored with it and the same on every claim",
        arguments: QueueBackend.testedBackends)
    func webhookIDs(_ backend: QueueBackend) async throws {
        let first = try await QueueFixture.withQueue(backend) { queue, _ in
            let jobIDs = try await finishedWithCallbacks(queue, count: 3)
            var stored: [String] = []
            for id in jobIDs { stored += try await queue.deliveries(job: id).map(\.webhookID) }
            #expect(stored.count == 3 && Set(stored).count == 3, "\(stored)")
            for id in stored { #expect(Self.isWebhookID(id), "\(id)") }

            // Claimed, retried, claimed again: the id never changes.
            let claimed = try await queue.claimDeliveries(limit: 3, lease: lease)
            #expect(claimed.map(\.webhookID) == stored)
            #expect(
                try await queue.finishDelivery(
                    claimed[0].id, attempt: 1, outcome: .retry(status: 500, error: "HTTP 500", after: .zero)))
            let again = try await queue.claimDeliveries(limit: 3, lease: lease)
            #expect(again.map(\.attempts) == [2])
            #expect(again.map(\.webhookID) == [stored[0]])
            #expect(try await queue.listDeliveries(state: nil, limit: 10).map(\.webhookID) == stored.reversed())
            return stored
        }
        // A second new database: the old `msg_<row id>` started again at msg_1 here.
        let second = try await QueueFixture.withQueue(backend) { queue, _ in
            let jobIDs = try await finishedWithCallbacks(queue, count: 3)
            var stored: [String] = []
            for id in jobIDs { stored += try await queue.deliveries(job: id).map(\.webhookID) }
            return stored
        }
        #expect(Set(first).isDisjoint(with: second), "\(first) \(second)")
    }

    /// `msg_` and a version 4 UUID in lowercase.
    static func isWebhookID(_ id: String) -> Bool {
        guard id.hasPrefix("msg_"), let uuid = UUID(uuidString: String(id.dropFirst(4))) else { return false }
        let text = String(id.dropFirst(4))
        return text == uuid.uuidString.lowercased() && Array(text)[14] == "4" && "89ab".contains(Array(text)[19])
    }

    @Test(
        "a database of schema version 3 upgrades to 4: its deliveries get ids that stay the same across retries",
        .enabled(if: TestTools.programAvailable("sqlite3"), "needs the sqlite3 command-line tool"),
        arguments: QueueBackend.testedBackends)
    func upgradeFromVersion3(_ backend: QueueBackend) async throws {
        // Three jobs with callbacks end under the old schema: its trigger writes their deliveries.
        let insert = """
            INSERT INTO pushprep_jobs
                (state, source, payload, max_attempts, run_at, created_at, updated_at, callback_url)
            VALUES ('running', 'old-1', '{}', 5, 1700000000, 1700000000, 1700000000, 'https://hooks.example.com/1'),
                ('running', 'old-2', '{}', 5, 1700000000, 1700000000, 1700000000, 'https://hooks.example.com/2'),
                ('running', 'old-3', '{}', 5, 1700000000, 1700000000, 1700000000, 'https://hooks.example.com/3');
            UPDATE pushprep_jobs SET state = 'succeeded', finished_at = 1700000100, updated_at = 1700000100;
            """
        try await withOldDatabase(backend, version: 3, inserting: insert) { url, versions in
            try await JobQueues.withBackend(url, logger: .quiet) { queue in
                #expect(try await versions() == "1,2,3,4")
                let old = try await queue.listDeliveries(state: nil, limit: 10).reversed().map { $0 }
                #expect(old.map(\.job.source) == ["old-1", "old-2", "old-3"])
                let ids = old.map(\.webhookID)
                #expect(Set(ids).count == 3, "\(ids)")
                for id in ids { #expect(Self.isWebhookID(id), "\(id)") }

                // Each old delivery keeps its id through a failed attempt and the retry.
                let claimed = try await queue.claimDeliveries(limit: 3, lease: lease)
                #expect(claimed.map(\.webhookID) == ids)
                for delivery in claimed {
                    #expect(
                        try await queue.finishDelivery(
                            delivery.id, attempt: 1, outcome: .retry(status: 503, error: "HTTP 503", after: .zero)))
                }
                let retried = try await queue.claimDeliveries(limit: 3, lease: lease)
                #expect(retried.map(\.attempts) == [2, 2, 2])
                #expect(retried.map(\.webhookID) == ids)

                // A delivery written after the upgrade gets a new id of its own.
                let newIDs = try await finishedWithCallbacks(queue, count: 1)
                let new = try #require(try await queue.deliveries(job: newIDs[0]).first)
                #expect(Self.isWebhookID(new.webhookID) && !ids.contains(new.webhookID))
            }
        }
    }

    // MARK: - Claims per receiver host

    @Test(
        "a claim takes at most the free slots of each receiver host and claims past a busy one",
        arguments: QueueBackend.testedBackends)
    func claimsPerReceiverHost(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            // Oldest first: three to a busy host (spelt three ways), two to a host with one free
            // slot, then others: two ports of one address share it, a user part is no host.
            let urls = [
                "https://slow.example/1", "HTTPS://Slow.Example:8443/2", "https://slow.example?x=3",
                "https://half.example/1", "https://half.example/2",
                "http://127.0.0.1:8080/a", "http://127.0.0.1:9090/b", "http://127.0.0.2:8080/c",
                "http://[::1]:8080/d", "https://user@other.example/e?x=1#y",
            ]
            let jobIDs = try await finishedWithCallbacks(queue, urls: urls)
            let all = try await queue.listDeliveries(state: nil, limit: 20).reversed().map { $0 }
            #expect(
                all.map(\.receiverHost) == [
                    "slow.example", "slow.example", "slow.example", "half.example", "half.example", "127.0.0.1",
                    "127.0.0.1", "127.0.0.2", "[::1]", "other.example",
                ])

            let slots = ReceiverSlots(free: ["slow.example": 0, "half.example": 1], otherwise: 1)
            let claimed = try await queue.claimDeliveries(limit: 10, lease: lease, slots: slots)
            #expect(
                claimed.map(\.jobID) == [jobIDs[3], jobIDs[5], jobIDs[7], jobIDs[8], jobIDs[9]],
                "\(claimed.map(\.url))")
            // The limit still counts first, oldest first.
            let two = try await queue.claimDeliveries(limit: 2, lease: lease, slots: ReceiverSlots(otherwise: 5))
            #expect(two.map(\.jobID) == [jobIDs[0], jobIDs[1]])
            let rest = try await queue.claimDeliveries(limit: 10, lease: lease, slots: ReceiverSlots(otherwise: 5))
            #expect(rest.map(\.jobID) == [jobIDs[2], jobIDs[4], jobIDs[6]])
            #expect(try await queue.claimDeliveries(limit: 10, lease: lease).isEmpty)
        }
    }

    // MARK: - Late answers

    @Test(
        "a 2xx to a claim that was superseded still settles the delivery; a late failure does not",
        arguments: QueueBackend.testedBackends)
    func lateDeliveredSettles(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            let jobIDs = try await finishedWithCallbacks(queue, count: 2)
            let first = try await queue.claimDeliveries(limit: 2, lease: shortLease)
            try await Task.sleep(for: pastShortLease)
            let second = try await queue.claimDeliveries(limit: 2, lease: lease)
            #expect(second.map(\.attempts) == [2, 2])

            // The first claim's send got 200: the delivery is delivered, and not sent again.
            #expect(try await queue.finishDelivery(first[0].id, attempt: 1, outcome: .delivered(status: 200)))
            let done = try #require(try await queue.deliveries(job: jobIDs[0]).first)
            #expect(done.state == .delivered && done.lastStatus == 200 && done.nextAttemptAt == nil)
            #expect(!(try await queue.finishDelivery(first[0].id, attempt: 2, outcome: .delivered(status: 204))))
            #expect(
                !(try await queue.finishDelivery(first[0].id, attempt: 2, outcome: .failed(status: 500, error: "x"))))
            #expect(try await queue.deliveries(job: jobIDs[0]).first?.lastStatus == 200)

            // A failure of the superseded claim changes nothing; a claim not yet made is no claim.
            #expect(
                !(try await queue.finishDelivery(
                    first[1].id, attempt: 1, outcome: .retry(status: 500, error: "HTTP 500", after: .zero))))
            #expect(!(try await queue.finishDelivery(first[1].id, attempt: 3, outcome: .delivered(status: 200))))
            let pending = try #require(try await queue.deliveries(job: jobIDs[1]).first)
            #expect(pending.state == .pending && pending.attempts == 2 && pending.lastStatus == nil)
        }
    }

    /// Enqueues one job per URL as its callback, finishes them as succeeded in id order, and
    /// returns their ids.
    func finishedWithCallbacks(_ queue: any JobQueueBackend, urls: [String]) async throws -> [JobID] {
        let ids = try await queue.enqueue(
            urls.enumerated().map { JobSpec(source: "s\($0.offset)", payload: "{}", callbackURL: $0.element) }
        ).map(\.id)
        let claimed = try await queue.claim(worker: "worker-a", limit: urls.count, lease: lease)
        #expect(try await queue.finish(claimed.sorted { $0.id < $1.id }.map { succeeded($0) }).count == urls.count)
        return ids
    }
}
