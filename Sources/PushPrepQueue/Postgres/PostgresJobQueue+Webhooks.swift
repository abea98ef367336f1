import Foundation
import PostgresNIO
package import PushPrepCore

/// The webhook outbox: deliveries are written by the `pushprep_jobs_webhook` trigger (schema
/// version 2) in the transaction that ends a job; these methods hand them to dispatchers on any
/// number of hosts.
extension PostgresJobQueue: WebhookOutbox {
    package func claimDeliveries(limit: Int, lease: Duration, slots: ReceiverSlots) async throws(PushPrepError)
        -> [WebhookDelivery]
    {
        guard limit > 0 else { return [] }
        var bindings = PostgresBindings()
        bindings.append(limit)
        bindings.append(max(lease.seconds, 0))
        bindings.append(slots.freeJSON)
        bindings.append(max(slots.otherwise, 0))
        let claimed = try await deliveries(
            "claim webhook deliveries", PostgresQuery(unsafeSQL: DeliverySQL.claim, binds: bindings))
        // `RETURNING` leaves the order of its rows unspecified.
        return claimed.sorted { $0.id < $1.id }
    }

    package func finishDelivery(
        _ id: Int64, attempt: Int, outcome: DeliveryOutcome
    ) async throws(PushPrepError) -> Bool {
        let (state, status, error, after): (DeliveryState, Int?, String?, Double)
        switch outcome {
        case .delivered(let code): (state, status, error, after) = (.delivered, code, nil, 0)
        case .retry(let code, let message, let delay):
            (state, status, error, after) = (.pending, code, message, delay.seconds)
        case .failed(let code, let message): (state, status, error, after) = (.failed, code, message, 0)
        }
        var bindings = PostgresBindings()
        bindings.append(id)
        bindings.append(attempt)
        bindings.append(state.rawValue)
        bindings.append(status)
        bindings.append(error)
        bindings.append(max(after, 0))
        let query = PostgresQuery(unsafeSQL: DeliverySQL.finish, binds: bindings)
        return try await perform("record webhook delivery \(id)") { [self] in
            let rows = try await client.query(query, logger: logger)
            for try await _ in rows.decode(Int64.self) { return true }
            return false
        }
    }

    package func deliveries(job: JobID) async throws(PushPrepError) -> [WebhookDelivery] {
        var bindings = PostgresBindings()
        bindings.append(job)
        return try await deliveries(
            "read the webhook deliveries of job \(job)", PostgresQuery(unsafeSQL: DeliverySQL.ofJob, binds: bindings))
    }

    package func listDeliveries(state: DeliveryState?, limit: Int) async throws(PushPrepError) -> [WebhookDelivery] {
        var bindings = PostgresBindings()
        bindings.append(max(limit, 0))
        if let state { bindings.append(state.rawValue) }
        let sql = state == nil ? DeliverySQL.list : DeliverySQL.listInState
        return try await deliveries("list webhook deliveries", PostgresQuery(unsafeSQL: sql, binds: bindings))
    }

    /// Runs a query that selects ``DeliverySQL/columns`` and decodes its rows.
    private func deliveries(_ action: String, _ query: PostgresQuery) async throws(PushPrepError) -> [WebhookDelivery] {
        try await perform(action) { [self] in
            var deliveries: [WebhookDelivery] = []
            for try await row in try await client.query(query, logger: logger) {
                deliveries.append(try Self.delivery(row))
            }
            return deliveries
        }
    }

    /// A row selected with ``DeliverySQL/columns``.
    private static func delivery(_ row: PostgresRow) throws -> WebhookDelivery {
        let (id, webhookID, jobID, url, receiverHost, event, snapshot, stateText, attempts) = try row.decode(
            (Int64, String, JobID, String, String?, String, String, String, Int).self)
        guard let state = DeliveryState(rawValue: stateText) else {
            throw PushPrepError(
                .queueUnavailable, "the queue holds a webhook delivery in an unknown state '\(stateText)'")
        }
        let columns = row.makeRandomAccess()
        return WebhookDelivery(
            id: id, webhookID: webhookID, jobID: jobID, url: url, receiverHost: receiverHost ?? "", event: event,
            job: try JobSnapshot.record(from: snapshot), state: state, attempts: attempts,
            nextAttemptAt: try columns["next_attempt_at"].decode(Date?.self),
            lastStatus: try columns["last_status"].decode(Int?.self),
            lastError: try columns["last_error"].decode(String?.self),
            createdAt: try columns["created_at"].decode(Date.self),
            deliveredAt: try columns["delivered_at"].decode(Date?.self))
    }
}

/// The outbox's SQL.
private enum DeliverySQL {
    /// The receiver host of the row's `url`, as ``WebhookDelivery/receiverHost`` describes it:
    /// after `://` and a user part's `@`, an IPv6 literal with its brackets or else up to the
    /// first `:`, `/`, `?` or `#`, lowercased (NULL for text that is no URL).
    static let receiverHost = #"lower(substring(url from '^[^:/?#]+://(?:[^@/?#]*@)?(\[[^]/?#]*\]|[^:/?#]*)'))"#

    static let columns = """
        id, webhook_id, job_id, url, \(receiverHost) AS receiver_host, event, job, state, attempts, next_attempt_at, \
        last_status, last_error, created_at, delivered_at
        """

    /// `$1`: the limit, `$2`: the lease in seconds, `$3`: the free slots of busy receiver hosts
    /// (a JSON object), `$4`: the slots of any other host. Oldest due first, at most that many
    /// per host; the window is taken before the rows are locked (PostgreSQL locks no rows of a
    /// window query), and `SKIP LOCKED` then leaves out those a concurrent dispatcher is
    /// claiming, whose `next_attempt_at` is checked again once locked. The claim moves
    /// `next_attempt_at` to the end of its lease.
    static let claim = """
        WITH ranked AS (
            SELECT id, host, row_number() OVER (PARTITION BY host ORDER BY id) AS place
            FROM (
                SELECT id, \(receiverHost) AS host FROM pushprep_webhook_deliveries
                WHERE state = 'pending' AND next_attempt_at <= now()
            ) AS due
        ), wanted AS (
            SELECT id FROM ranked
            WHERE place <= coalesce(($3::jsonb ->> host)::integer, $4::integer)
            ORDER BY id
            LIMIT $1
        ), locked AS (
            SELECT id FROM pushprep_webhook_deliveries
            WHERE id = ANY(ARRAY(SELECT id FROM wanted)) AND state = 'pending' AND next_attempt_at <= now()
            FOR UPDATE SKIP LOCKED
        )
        UPDATE pushprep_webhook_deliveries AS d
        SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $2::float8)
        WHERE d.id = ANY(ARRAY(SELECT id FROM locked))
        RETURNING \(columns)
        """

    /// `$1`: the delivery, `$2`: the claim's attempt, `$3`: the new state, `$4`, `$5`: the status
    /// and error, `$6`: the retry's delay. Applies to a pending delivery's current claim;
    /// `delivered` to an earlier claim as well.
    static let finish = """
        UPDATE pushprep_webhook_deliveries
        SET state = $3::text, last_status = $4::integer, last_error = $5::text,
            next_attempt_at = CASE WHEN $3::text = 'pending' THEN now() + make_interval(secs => $6::float8) END,
            delivered_at = CASE WHEN $3::text = 'delivered' THEN now() END
        WHERE id = $1 AND state = 'pending'
            AND CASE WHEN $3::text = 'delivered' THEN attempts >= $2 ELSE attempts = $2 END
        RETURNING id
        """

    static let ofJob = "SELECT \(columns) FROM pushprep_webhook_deliveries WHERE job_id = $1 ORDER BY id"

    static let list = "SELECT \(columns) FROM pushprep_webhook_deliveries ORDER BY id DESC LIMIT $1"

    static let listInState = """
        SELECT \(columns) FROM pushprep_webhook_deliveries WHERE state = $2 ORDER BY id DESC LIMIT $1
        """
}
