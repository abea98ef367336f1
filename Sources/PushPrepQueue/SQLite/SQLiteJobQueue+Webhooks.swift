import Foundation
import GRDB
public import PushPrep

/// The webhook outbox: deliveries are written by the `pushprep_jobs_webhook` trigger (schema
/// version 2) in the transaction that ends a job; these methods hand them to a dispatcher.
extension SQLiteJobQueue {
    public func claimDeliveries(limit: Int, lease: Duration) async throws(PushPrepError) -> [WebhookDelivery] {
        guard limit > 0 else { return [] }
        return try await write("claim webhook deliveries") { db in
            let now = Self.now()
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: DeliverySQL.claim),
                arguments: ["now": now, "until": now + max(lease.seconds, 0), "limit": limit])
            // `RETURNING` leaves the order of its rows unspecified.
            return try rows.map(Self.delivery).sorted { $0.id < $1.id }
        }
    }

    public func finishDelivery(
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

    public func deliveries(job: JobID) async throws(PushPrepError) -> [WebhookDelivery] {
        try await read("read the webhook deliveries of job \(job)") { db in
            try Row.fetchAll(db, sql: DeliverySQL.ofJob, arguments: [job]).map(Self.delivery)
        }
    }

    public func listDeliveries(state: DeliveryState?, limit: Int) async throws(PushPrepError) -> [WebhookDelivery] {
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
        return WebhookDelivery(
            id: row["id"], jobID: row["job_id"], url: row["url"], event: row["event"],
            job: try JobSnapshot.record(from: row["job"]), state: state, attempts: row["attempts"],
            nextAttemptAt: date("next_attempt_at"), lastStatus: row["last_status"], lastError: row["last_error"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]), deliveredAt: date("delivered_at"))
    }
}

/// The outbox's SQL.
private enum DeliverySQL {
    static let columns = """
        id, job_id, url, event, job, state, attempts, next_attempt_at, last_status, last_error, created_at, \
        delivered_at
        """

    /// Oldest due first; the claim moves `next_attempt_at` to the end of its lease.
    static let claim = """
        UPDATE pushprep_webhook_deliveries
        SET attempts = attempts + 1, next_attempt_at = :until
        WHERE id IN (
            SELECT id FROM pushprep_webhook_deliveries
            WHERE state = 'pending' AND next_attempt_at <= :now
            ORDER BY id
            LIMIT :limit)
        RETURNING \(columns)
        """

    /// Applies only to the current claim of a pending delivery.
    static let finish = """
        UPDATE pushprep_webhook_deliveries
        SET state = :state, last_status = :status, last_error = :error, next_attempt_at = :next,
            delivered_at = :delivered
        WHERE id = :id AND attempts = :attempt AND state = 'pending'
        """

    static let ofJob = "SELECT \(columns) FROM pushprep_webhook_deliveries WHERE job_id = ? ORDER BY id"

    static let list = "SELECT \(columns) FROM pushprep_webhook_deliveries ORDER BY id DESC LIMIT ?"

    static let listInState = """
        SELECT \(columns) FROM pushprep_webhook_deliveries WHERE state = ? ORDER BY id DESC LIMIT ?
        """
}
