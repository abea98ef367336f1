public import Foundation
import Logging
import PostgresNIO
public import PushPrepCore

/// Idempotency keys: the lookup, the enqueue and the record run in one transaction that first
/// takes a transaction-scoped advisory lock on the key, so a concurrent call with the same key
/// (on any host) waits for the first one's commit and then finds its record.
extension PostgresJobQueue: IdempotentEnqueue {
    public func enqueue(
        _ specs: [JobSpec], idempotency: IdempotencyKey
    ) async throws(PushPrepError) -> IdempotentEnqueueResult {
        try idempotency.validate(specs)
        return try await perform("enqueue jobs under an idempotency key") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.enqueue(specs, idempotency: idempotency, on: connection, logger: logger)
            }
        }
    }

    public func recordedEnqueue(_ idempotency: IdempotencyKey) async throws(PushPrepError) -> IdempotentEnqueueResult? {
        try idempotency.validate()
        return try await perform("look up an idempotency key") { [self] in
            try await client.withConnection { connection in
                try await Self.recorded(idempotency, on: connection, logger: logger)
            }
        }
    }

    public func pruneIdempotencyKeys(before: Date) async throws(PushPrepError) -> Int {
        var bindings = PostgresBindings()
        bindings.append(before)
        let query = PostgresQuery(unsafeSQL: IdempotencySQL.prune, binds: bindings)
        return try await perform("prune idempotency keys", deadline: nil) { [self] in
            let rows = try await client.query(query, logger: logger)
            var count = 0
            for try await pruned in rows.decode(Int.self) { count = pruned }
            return count
        }
    }

    /// Replays, refuses, or enqueues and records. Runs in the caller's transaction.
    private static func enqueue(
        _ specs: [JobSpec], idempotency: IdempotencyKey, on connection: PostgresConnection, logger: Logger
    ) async throws -> IdempotentEnqueueResult {
        let (scope, key) = (idempotency.scope, idempotency.key)
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtextextended(\(scope) || ':' || \(key), 0))", logger: logger)
        let retention = idempotency.retention.seconds
        if let recorded = try await recorded(idempotency, on: connection, logger: logger) { return recorded }
        let results = try await enqueue(specs, on: connection, logger: logger)
        let ids = results.map(\.id)
        try await connection.query(
            """
            INSERT INTO pushprep_idempotency_keys (scope, key, fingerprint, job_ids, created_at, expires_at)
            VALUES (\(scope), \(key), \(idempotency.fingerprint), \(ids), now(),
                now() + make_interval(secs => \(retention)))
            ON CONFLICT (scope, key) DO UPDATE SET
                fingerprint = excluded.fingerprint, job_ids = excluded.job_ids, created_at = excluded.created_at,
                expires_at = excluded.expires_at
            """, logger: logger)
        return IdempotentEnqueueResult(results: results, replayed: false)
    }

    /// The replay of the jobs recorded under `idempotency` within its retention, nil when none;
    /// `idempotency_conflict` when they were recorded for another fingerprint.
    private static func recorded(
        _ idempotency: IdempotencyKey, on connection: PostgresConnection, logger: Logger
    ) async throws -> IdempotentEnqueueResult? {
        let (scope, key) = (idempotency.scope, idempotency.key)
        let retention = idempotency.retention.seconds
        let recorded = try await connection.query(
            """
            SELECT fingerprint, job_ids FROM pushprep_idempotency_keys
            WHERE scope = \(scope) AND key = \(key) AND created_at > now() - make_interval(secs => \(retention))
            """, logger: logger)
        for try await row in recorded {
            // A record edited by hand (a NULL among the ids) is `queue_unavailable`, said in words.
            let record = try? row.decode((String, [JobID]).self)
            let ids = try idempotency.recordedIDs(fingerprint: record?.0, ids: record?.1)
            return try IdempotencyKey.replay(try await states(of: ids, on: connection, logger: logger))
        }
        return nil
    }

    /// The recorded jobs in their recorded order, each with its stored state (nil when pruned).
    private static func states(
        of ids: [JobID], on connection: PostgresConnection, logger: Logger
    ) async throws -> [(JobID, String?)] {
        let rows = try await connection.query(
            """
            SELECT recorded.id, job.state
            FROM unnest(\(ids)::bigint[]) WITH ORDINALITY AS recorded(id, position)
            LEFT JOIN pushprep_jobs AS job ON job.id = recorded.id
            ORDER BY recorded.position
            """, logger: logger)
        var states: [(JobID, String?)] = []
        for try await job in rows.decode((JobID, String?).self) { states.append(job) }
        return states
    }
}

private enum IdempotencySQL {
    /// `$1`: the date. Keys recorded before it whose own retention has passed.
    static let prune = """
        WITH pruned AS (
            DELETE FROM pushprep_idempotency_keys WHERE created_at < $1 AND expires_at <= now() RETURNING 1
        )
        SELECT count(*) FROM pruned
        """
}
