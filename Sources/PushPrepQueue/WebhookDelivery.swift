package import Foundation
package import PushPrepCore

/// The webhook outbox of a ``JobQueue``: the deliveries the queue writes when a job with a
/// callback URL ends, claimed and reported by a dispatcher.
package protocol WebhookOutbox: Sendable {
    /// Leases up to `limit` due pending deliveries (`nextAttemptAt` passed), oldest first, at most
    /// as many per receiver host as `slots` leaves room for (a host without room is skipped, so
    /// newer deliveries to other hosts are not held up behind it): each one's `attempts` is
    /// incremented and its `nextAttemptAt` pushed to now + `lease`, so a dispatcher that dies
    /// while sending has the delivery claimed again after the lease. Concurrent claimers (other
    /// processes or hosts) never get the same delivery.
    func claimDeliveries(limit: Int, lease: Duration, slots: ReceiverSlots) async throws(PushPrepError)
        -> [WebhookDelivery]

    /// Records how the send of claim `attempt` of delivery `id` went, while it is pending. A
    /// `retry` or `failed` applies only while `attempt` is the delivery's current
    /// ``WebhookDelivery/attempts`` (a claim that outlived its lease was superseded); `delivered`
    /// applies for the current claim or an earlier one, since a receiver that answered 2xx has
    /// the event whichever claim sent it, and sending it again would be a duplicate. Returns
    /// whether it applied.
    func finishDelivery(_ id: Int64, attempt: Int, outcome: DeliveryOutcome) async throws(PushPrepError) -> Bool

    /// The deliveries of one job, oldest first (a job retried by hand that ends again has one
    /// per ending).
    func deliveries(job: JobID) async throws(PushPrepError) -> [WebhookDelivery]

    /// Up to `limit` deliveries, newest first, optionally in one state.
    func listDeliveries(state: DeliveryState?, limit: Int) async throws(PushPrepError) -> [WebhookDelivery]
}

extension WebhookOutbox {
    /// Leases up to `limit` due pending deliveries, oldest first, whatever their receiver host.
    package func claimDeliveries(limit: Int, lease: Duration) async throws(PushPrepError) -> [WebhookDelivery] {
        try await claimDeliveries(limit: limit, lease: lease, slots: .unbounded)
    }
}

/// Where a webhook delivery is in its life.
package enum DeliveryState: String, Sendable, Codable, CaseIterable {
    /// Waiting for its `nextAttemptAt`, or claimed by a dispatcher until then.
    case pending
    /// The receiver answered with success.
    case delivered
    /// The dispatcher gave up.
    case failed
}

/// A webhook to POST because a job with a callback URL ended: one row of the queue's outbox.
///
/// The queue writes it in the transaction that ends the job, so a crash or a restart never loses
/// one; a dispatcher claims it with ``WebhookOutbox/claimDeliveries(limit:lease:slots:)`` and reports
/// with ``WebhookOutbox/finishDelivery(_:attempt:outcome:)``. Delivery is at least once: a dispatcher
/// that dies after sending but before reporting has the delivery sent again after its lease.
package struct WebhookDelivery: Sendable, Equatable {
    /// The row's id in this database: for the API and the console, never sent.
    package var id: Int64
    /// The `webhook-id` header of every attempt: `msg_` and a random UUID, given by the
    /// database when the row is written (schema version 4; older rows got theirs in the upgrade),
    /// so it is the same on every retry and never repeats across databases or installations.
    package var webhookID: String
    package var jobID: JobID
    /// The job's `callbackURL` when it ended.
    package var url: String
    /// The host part of ``url``, lowercased, without port or user: what the queue groups
    /// deliveries by for ``ReceiverSlots``. Read by the database from the URL as stored, so it
    /// is a grouping key, not a checked host name.
    package var receiverHost: String
    /// `job.succeeded`, `job.failed`, `job.dead` or `job.cancelled` (see ``event(for:)``).
    package var event: String
    /// The job as it ended: a later manual retry of the job does not change what this delivery
    /// says.
    package var job: JobRecord
    package var state: DeliveryState
    /// Claims so far, including the current one: the fencing token of
    /// ``WebhookOutbox/finishDelivery(_:attempt:outcome:)``.
    package var attempts: Int
    /// When a pending delivery is due (or its current claim's lease ends); nil once it is
    /// delivered or failed.
    package var nextAttemptAt: Date?
    /// The HTTP status of the last attempt, when there was an answer.
    package var lastStatus: Int?
    package var lastError: String?
    package var createdAt: Date
    package var deliveredAt: Date?

    package init(
        id: Int64, webhookID: String, jobID: JobID, url: String, receiverHost: String, event: String, job: JobRecord,
        state: DeliveryState, attempts: Int, nextAttemptAt: Date?, lastStatus: Int?, lastError: String?,
        createdAt: Date, deliveredAt: Date?
    ) {
        self.id = id
        self.webhookID = webhookID
        self.jobID = jobID
        self.url = url
        self.receiverHost = receiverHost
        self.event = event
        self.job = job
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAt = createdAt
        self.deliveredAt = deliveredAt
    }

    /// The event of a job that ended in `state` (`job.` and the state), or nil for a state that
    /// is not final.
    package static func event(for state: JobState) -> String? {
        state.isFinished ? "job.\(state.rawValue)" : nil
    }
}

/// How many deliveries one claim may take per receiver host (``WebhookDelivery/receiverHost``),
/// so that a dispatcher never fills its send slots with one receiver's deliveries: the claim
/// takes at most ``free``[host] for a host listed there (0: none, its slots are all busy), at
/// most ``otherwise`` for any other, and skips the rest for newer deliveries to other hosts.
package struct ReceiverSlots: Sendable, Equatable {
    /// The free slots of the hosts that have sends in flight.
    package var free: [String: Int]
    /// The slots of a host with nothing in flight.
    package var otherwise: Int

    package init(free: [String: Int] = [:], otherwise: Int) {
        self.free = free
        self.otherwise = otherwise
    }

    /// No bound per host: the claim takes the oldest due deliveries, whatever their host.
    package static let unbounded = ReceiverSlots(otherwise: Int(Int32.max))

    /// ``free`` as a JSON object, for the claim statements.
    package var freeJSON: String {
        // A dictionary of strings and integers always encodes.
        let data = (try? JSONEncoder().encode(free.mapValues { max($0, 0) })) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// How one attempt to send a webhook went, reported with
/// ``WebhookOutbox/finishDelivery(_:attempt:outcome:)``.
package enum DeliveryOutcome: Sendable, Equatable {
    /// The receiver accepted it: the delivery ends `delivered`.
    case delivered(status: Int)
    /// Failed for now: pending again, due after `after`.
    case retry(status: Int?, error: String, after: Duration)
    /// Failed for good: the delivery ends `failed`.
    case failed(status: Int?, error: String)
}
