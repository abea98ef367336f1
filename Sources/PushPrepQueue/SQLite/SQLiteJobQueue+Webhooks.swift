import Foundation
import GRDB
package import PushPrepCore

/// The webhook outbox: deliveries are written by the `pushprep_jobs_webhook` trigger (schema
/// version 2) in the transaction that ends a job; these methods hand them to a dispatcher.
extension SQLiteJobQueue: WebhookOutbox {
    package func claimDeliveries(limit: Int, lease: Duration, slots: ReceiverSlots) async throws(PushPrepError)
        -> [WebhookDelivery]
    {
        guard limit > 0 else { return [] }
        return try await write("claim webhook deliveries") { db in
            let now = Self.now()
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: DeliverySQL.claim),
                arguments: [
                    "now": now, "until": now + max(lease.seconds, 0), "limit": limit, "free": slots.freeJSON,
                    "otherwise": max(slots.otherwise, 0),
                ])
            // `RETURNING` leaves the order of its rows unspecified.
            return try rows.map(Self.delivery).sorted { $0.id < $1.id }
        }
    }

    package func finishDelivery(
        _ id: Int64, attempt: Int, outcome: DeliveryOutcome
    ) async throws(PushPrepError) -> Bool {
        try await write("record webhook delivery \(id)") { db in
            let now = Self.now()
            var arguments: StatementArguments = ["id": id, "attempt": attempt]
            switch outcome {
            case .delivered(let status):
                arguments += [
                    "state": DeliveryState.delivered.rawValue, "status": status, "error": nil, "next": nil,
                    "delivered": now,
                ]
            case .retry(let status, let error, let after):
                arguments += [
                    "state": DeliveryState.pending.rawValue, "status": status, "error": error,
                    "next": now + max(after.seconds, 0), "delivered": nil,
                ]
            case .failed(let status, let error):
                arguments += [
                    "state": DeliveryState.failed.rawValue, "status": status, "error": error, "next": nil,
                    "delivered": nil,
                ]
            }
            try db.cachedStatement(sql: DeliverySQL.finish).execute(arguments: arguments)
            return db.changesCount > 0
        }
    }

    package func deliveries(job: JobID) async throws(PushPrepError) -> [WebhookDelivery] {
        try await read("read the webhook deliveries of job \(job)") { db in
            try Row.fetchAll(db, sql: DeliverySQL.ofJob, arguments: [job]).map(Self.delivery)
        }
    }

    package func listDeliveries(state: DeliveryState?, limit: Int) async throws(PushPrepError) -> [WebhookDelivery] {
        try await read("list webhook deliveries") { db in
            let rows: [Row]
            if let state {
                rows = try Row.fetchAll(db, sql: DeliverySQL.listInState, arguments: [state.rawValue, max(limit, 0)])
            } else {
                rows = try Row.fetchAll(db, sql: DeliverySQL.list, arguments: [max(limit, 0)])
            }
            return try rows.map(Self.delivery)
        }
    }

    /// A row selected with ``DeliverySQL/columns``.
    private static func delivery(_ row: Row) throws -> WebhookDelivery {
        func date(_ column: String) -> Date? { (row[column] as Double?).map(Date.init(timeIntervalSince1970:)) }
        let stateText: String = row["state"]
        guard let state = DeliveryState(rawValue: stateText) else {
            throw DatabaseError(message: "the queue holds a webhook delivery in an unknown state '\(stateText)'")
        }
        guard let webhookID = row["webhook_id"] as String? else {
            throw DatabaseError(message: "the queue holds a webhook delivery without a webhook id")
        }
        return WebhookDelivery(
            id: row["id"], webhookID: webhookID, jobID: row["job_id"], url: row["url"],
            receiverHost: row["receiver_host"] as String? ?? "", event: row["event"],
            job: try JobSnapshot.record(from: row["job"]), state: state, attempts: row["attempts"],
            nextAttemptAt: date("next_attempt_at"), lastStatus: row["last_status"], lastError: row["last_error"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]), deliveredAt: date("delivered_at"))
    }
}

/// The outbox's SQL.
private enum DeliverySQL {
    /// The receiver host of the row's `url`, as ``WebhookDelivery/receiverHost`` describes it:
    /// after `://`, up to the first `/`, `?` or `#`, after a user part's `@`, without a port
    /// (an IPv6 literal keeps its brackets), lowercased. One expression (SQLite has no regular
    /// expressions), so that `RETURNING` can name it.
    static let receiverHost: String = {
        let rest = "substr(url, instr(url, '://') + 3)"
        let withUser = "substr(\(rest), 1, instr(replace(replace(\(rest), '?', '/'), '#', '/') || '/', '/') - 1)"
        let authority = "substr(\(withUser), instr(\(withUser), '@') + 1)"
        return """
            lower(CASE WHEN substr(\(authority), 1, 1) = '[' THEN substr(\(authority), 1, instr(\(authority), ']')) \
            ELSE substr(\(authority), 1, instr(\(authority) || ':', ':') - 1) END)
            """
    }()

    static let columns = """
        id, webhook_id, job_id, url, \(receiverHost) AS receiver_host, event, job, state, attempts, next_attempt_at, \
        last_status, last_error, created_at, delivered_at
        """

    /// Oldest due first, at most `room` per receiver host (`:free`, a JSON object of host to free
    /// slots, or `:otherwise`); the claim moves `next_attempt_at` to the end of its lease.
    static let claim = """
        UPDATE pushprep_webhook_deliveries
        SET attempts = attempts + 1, next_attempt_at = :until
        WHERE id IN (
            SELECT id FROM (
                SELECT due.id, row_number() OVER (PARTITION BY due.host ORDER BY due.id) AS place,
                    coalesce(free.value, :otherwise) AS room
                FROM (
                    SELECT id, \(receiverHost) AS host FROM pushprep_webhook_deliveries
                    WHERE state = 'pending' AND next_attempt_at <= :now) AS due
                LEFT JOIN json_each(:free) AS free ON free.key = due.host)
            WHERE place <= room
            ORDER BY id
            LIMIT :limit)
        RETURNING \(columns)
        """

    /// Applies to a pending delivery's current claim; `delivered` to an earlier claim as well.
    static let finish = """
        UPDATE pushprep_webhook_deliveries
        SET state = :state, last_status = :status, last_error = :error, next_attempt_at = :next,
            delivered_at = :delivered
        WHERE id = :id AND state = 'pending'
            AND CASE WHEN :state = 'delivered' THEN attempts >= :attempt ELSE attempts = :attempt END
        """

    static let ofJob = "SELECT \(columns) FROM pushprep_webhook_deliveries WHERE job_id = ? ORDER BY id"

    static let list = "SELECT \(columns) FROM pushprep_webhook_deliveries ORDER BY id DESC LIMIT ?"

    static let listInState = """
        SELECT \(columns) FROM pushprep_webhook_deliveries WHERE state = ? ORDER BY id DESC LIMIT ?
        """
}
