public import Foundation
import GRDB
public import PushPrepCore

/// Idempotency keys: SQLite runs one writer at a time (`BEGIN IMMEDIATE`), so looking the key up
/// and recording it in one write transaction is enough for concurrent calls, in this process or
/// another, to yield one set of jobs.
extension SQLiteJobQueue: IdempotentEnqueue {
    public func enqueue(
        _ specs: [JobSpec], idempotency: IdempotencyKey
    ) async throws(PushPrepError) -> IdempotentEnqueueResult {
        try idempotency.validate(specs)
        return try await write("enqueue jobs under an idempotency key") { db in
            let now = Self.now()
            if let recorded = try Self.recorded(idempotency, db, now: now) { return recorded }
            let results = try Self.insert(specs, db, now: now)
            let ids = "[" + results.map { String($0.id) }.joined(separator: ",") + "]"
            try db.execute(
                sql: IdempotencySQL.record,
                arguments: [
                    idempotency.scope, idempotency.key, idempotency.fingerprint, ids, now,
                    now + idempotency.retention.seconds,
                ])
            return IdempotentEnqueueResult(results: results, replayed: false)
        }
    }

    public func recordedEnqueue(_ idempotency: IdempotencyKey) async throws(PushPrepError) -> IdempotentEnqueueResult? {
        try idempotency.validate()
        return try await read("look up an idempotency key") { db in
            try Self.recorded(idempotency, db, now: Self.now())
        }
    }

    public func pruneIdempotencyKeys(before: Date) async throws(PushPrepError) -> Int {
        try await write("prune idempotency keys") { db in
            try db.execute(sql: IdempotencySQL.prune, arguments: [before.timeIntervalSince1970, Self.now()])
            return db.changesCount
        }
    }

    /// The replay of the jobs recorded under `idempotency` within its retention, nil when none;
    /// `idempotency_conflict` when they were recorded for another fingerprint.
    ///
    /// The record's columns are read as stored values: a record edited by hand (a NULL, a number,
    /// text that is not a JSON array of job ids) is `queue_unavailable`
    /// (``IdempotencyKey/unreadable(_:)``), never a trap in GRDB's non-optional subscript.
    private static func recorded(
        _ idempotency: IdempotencyKey, _ db: Database, now: Double
    ) throws -> IdempotentEnqueueResult? {
        guard
            let row = try Row.fetchOne(
                db, sql: IdempotencySQL.find,
                arguments: [idempotency.scope, idempotency.key, now - idempotency.retention.seconds])
        else { return nil }
        let ids = try idempotency.recordedIDs(
            fingerprint: String.fromDatabaseValue(row[0] as DatabaseValue),
            ids: String.fromDatabaseValue(row[1] as DatabaseValue).flatMap(IdempotencyKey.jobIDs(json:)))
        return try IdempotencyKey.replay(try states(of: ids, db))
    }

    /// The recorded jobs in their recorded order, each with its stored state (nil when pruned).
    private static func states(of ids: [JobID], _ db: Database) throws -> [(JobID, String?)] {
        let json = "[" + ids.map { String($0) }.joined(separator: ",") + "]"
        return Array(zip(ids, try String?.fetchAll(db, sql: IdempotencySQL.jobs, arguments: [json])))
    }
}

private enum IdempotencySQL {
    /// The key's fingerprint and job ids, when it was recorded after the given moment.
    static let find = """
        SELECT fingerprint, job_ids FROM pushprep_idempotency_keys WHERE scope = ? AND key = ? AND created_at > ?
        """

    /// Records a key, replacing an expired record of it.
    static let record = """
        INSERT INTO pushprep_idempotency_keys (scope, key, fingerprint, job_ids, created_at, expires_at)
        VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (scope, key) DO UPDATE SET
            fingerprint = excluded.fingerprint, job_ids = excluded.job_ids, created_at = excluded.created_at,
            expires_at = excluded.expires_at
        """

    /// The state of each recorded job in order (NULL when the job was pruned).
    static let jobs = """
        SELECT job.state
        FROM json_each(?) AS recorded LEFT JOIN pushprep_jobs AS job ON job.id = recorded.value
        ORDER BY recorded.key
        """

    static let prune = "DELETE FROM pushprep_idempotency_keys WHERE created_at < ? AND expires_at <= ?"
}
