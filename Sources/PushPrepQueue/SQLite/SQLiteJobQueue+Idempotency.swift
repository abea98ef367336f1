public import Foundation
import GRDB
public import PushPrepCore

/// Idempotency keys: SQLite runs one writer at a time (`BEGIN IMMEDIATE`), so looking the key up
/// and recording it in one write transaction is enough for concurrent calls, in this process or
/// another, to yield one set of jobs.
extension SQLiteJobQueue {
    public func enqueue(
        _ specs: [JobSpec], idempotency: IdempotencyKey
    ) async throws(PushPrepError) -> IdempotentEnqueue {
        try Self.validate(specs)
        try idempotency.validate()
        return try await write("enqueue jobs under an idempotency key") { db in
            let now = Self.now()
            if let recorded = try Row.fetchOne(
                db, sql: IdempotencySQL.find,
                arguments: [idempotency.scope, idempotency.key, now - idempotency.retention.seconds])
            {
                let fingerprint: String = recorded[0]
                guard fingerprint == idempotency.fingerprint else { throw IdempotencyKey.conflict(idempotency) }
                return IdempotentEnqueue(results: try Self.replay(recorded[1], db), replayed: true)
            }
            let results = try Self.insert(specs, db, now: now)
            let ids = "[" + results.map { String($0.id) }.joined(separator: ",") + "]"
            try db.execute(
                sql: IdempotencySQL.record,
                arguments: [
                    idempotency.scope, idempotency.key, idempotency.fingerprint, ids, now,
                    now + idempotency.retention.seconds,
                ])
            return IdempotentEnqueue(results: results, replayed: false)
        }
    }

    public func recordedEnqueue(_ idempotency: IdempotencyKey) async throws(PushPrepError) -> IdempotentEnqueue? {
        try idempotency.validate()
        return try await read("look up an idempotency key") { db in
            guard
                let recorded = try Row.fetchOne(
                    db, sql: IdempotencySQL.find,
                    arguments: [idempotency.scope, idempotency.key, Self.now() - idempotency.retention.seconds])
            else { return nil }
            let fingerprint: String = recorded[0]
            guard fingerprint == idempotency.fingerprint else { throw IdempotencyKey.conflict(idempotency) }
            return IdempotentEnqueue(results: try Self.replay(recorded[1], db), replayed: true)
        }
    }

    public func pruneIdempotencyKeys(before: Date) async throws(PushPrepError) -> Int {
        try await write("prune idempotency keys") { db in
            try db.execute(sql: IdempotencySQL.prune, arguments: [before.timeIntervalSince1970, Self.now()])
            return db.changesCount
        }
    }

    /// The recorded jobs (`ids`, a JSON array) in their recorded order and current state.
    private static func replay(_ ids: String, _ db: Database) throws -> [EnqueueResult] {
        let rows = try Row.fetchAll(db, sql: IdempotencySQL.jobs, arguments: [ids])
        var results: [EnqueueResult] = []
        for row in rows {
            // NULL unless the element is an integer: a hand-edited record is an error, not a trap
            // in GRDB's non-optional subscript.
            guard let id = row[0] as JobID? else {
                throw PushPrepError(
                    .queueUnavailable, "the queue holds an idempotency record whose job ids are not all numbers: \(ids)"
                )
            }
            guard let state = row[1] as String? else { throw IdempotencyKey.pruned(id) }
            results.append(EnqueueResult(id: id, created: false, state: try JobState(stored: state)))
        }
        return results
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

    /// Each recorded id in order (NULL when the element is not an integer), with its job's state
    /// (NULL when the job was pruned).
    static let jobs = """
        SELECT CASE WHEN recorded.type = 'integer' THEN recorded.value END, job.state
        FROM json_each(?) AS recorded LEFT JOIN pushprep_jobs AS job ON job.id = recorded.value
        ORDER BY recorded.key
        """

    static let prune = "DELETE FROM pushprep_idempotency_keys WHERE created_at < ? AND expires_at <= ?"
}
