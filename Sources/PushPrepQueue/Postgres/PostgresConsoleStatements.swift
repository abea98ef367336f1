import Foundation
import PostgresNIO

/// The `WHERE` conditions of a ``JobFilter`` (and of a page's cursor), with their bindings
/// numbered from `$1`: the console's statements are built from the conditions a filter sets, so
/// each is planned for the indexes it can use.
struct PostgresJobFilterSQL {
    private(set) var conditions: [String] = []
    private(set) var bindings = PostgresBindings()
    private var count = 0

    init(_ filter: JobFilter, before: JobID? = nil) {
        if let before { conditions.append("id < \(bind(before))") }
        if !filter.states.isEmpty {
            conditions.append("state = ANY(\(bind(filter.sortedStates.map(\.rawValue)))::text[])")
        }
        if let kind = filter.kind {
            conditions.append(kind.stored.map { "kind = \(bind($0))" } ?? "kind IS NULL")
        }
        if let pattern = filter.sourcePattern {
            conditions.append(#"source ILIKE \#(bind(pattern)) ESCAPE '\'"#)
        }
        if let code = filter.errorCode { conditions.append("error_code = \(bind(code))") }
    }

    /// Binds `value` and returns its placeholder.
    mutating func bind(_ value: some PostgresNonThrowingEncodable & PostgresDynamicTypeEncodable) -> String {
        bindings.append(value)
        count += 1
        return "$\(count)"
    }

    /// The conditions joined, `true` when there are none.
    var whereClause: String { conditions.isEmpty ? "true" : conditions.joined(separator: " AND ") }

    /// One page, newest first.
    static func list(_ filter: JobFilter, limit: Int, before: JobID?) -> PostgresQuery {
        var sql = PostgresJobFilterSQL(filter, before: before)
        let limit = sql.bind(limit)
        return PostgresQuery(
            unsafeSQL: """
                SELECT \(PostgresSQL.columns) FROM pushprep_jobs WHERE \(sql.whereClause) ORDER BY id DESC LIMIT \(limit)
                """, binds: sql.bindings)
    }

    static func count(_ filter: JobFilter) -> PostgresQuery {
        let sql = PostgresJobFilterSQL(filter)
        return PostgresQuery(
            unsafeSQL: "SELECT count(*) FROM pushprep_jobs WHERE \(sql.whereClause)", binds: sql.bindings)
    }

    /// The newest `limit` matching jobs whose dedup key no queued or running job holds (the
    /// others cannot be retried, and left in they could fill every batch and keep the older jobs
    /// behind them from ever being reached), locked for a bulk retry: their ids and dedup keys.
    static func retryCandidates(_ filter: JobFilter, limit: Int) -> PostgresQuery {
        var sql = PostgresJobFilterSQL(filter)
        let limit = sql.bind(limit)
        return PostgresQuery(
            unsafeSQL: """
                SELECT id, dedup_key FROM pushprep_jobs WHERE \(sql.whereClause)
                AND (dedup_key IS NULL OR NOT EXISTS (SELECT 1 FROM pushprep_jobs AS holder
                    WHERE holder.dedup_key = pushprep_jobs.dedup_key AND holder.state IN ('queued', 'running')))
                ORDER BY id DESC LIMIT \(limit) FOR UPDATE
                """, binds: sql.bindings)
    }
}

/// The console's other statements.
enum PostgresConsoleSQL {
    /// `$1`: the job ids. `jobs retry` of each, as ``JobQueueAdmin/retry(_:)`` does it; returns how many.
    static let retry = """
        WITH retried AS (
            UPDATE pushprep_jobs
            SET state = 'queued', attempt = 0, run_at = now(), finished_at = NULL, cancel_requested = false,
                result = NULL, kind = NULL, updated_at = now()
            WHERE id = ANY($1::bigint[]) AND state IN ('failed', 'dead', 'cancelled')
            RETURNING 1
        )
        SELECT count(*) FROM retried
        """

    /// `$1`: the first bucket's start, `$2`: the width in seconds, `$3`: the last bucket's end.
    /// Finished jobs per bucket, by bucket index.
    static let activity = """
        SELECT floor(extract(epoch FROM finished_at - $1::timestamptz)::float8 / $2::float8)::bigint AS bucket,
            count(*) FILTER (WHERE state = 'succeeded'),
            count(*) FILTER (WHERE state IN ('failed', 'dead')),
            count(*) FILTER (WHERE state = 'cancelled')
        FROM pushprep_jobs
        WHERE finished_at >= $1::timestamptz AND finished_at < $3::timestamptz
        GROUP BY 1
        """

    /// `$1`: id, `$2`: host, `$3`: pid, `$4`: concurrency, `$5`: seconds after which a
    /// registration is forgotten. Registers or refreshes one worker (its start stays), and deletes
    /// the registrations of other workers not seen for `$5`.
    static let recordWorker = """
        WITH forgotten AS (
            DELETE FROM pushprep_workers
            WHERE last_seen_at < now() - make_interval(secs => $5::float8) AND id <> $1
        )
        INSERT INTO pushprep_workers (id, host, pid, concurrency, started_at, last_seen_at)
        VALUES ($1, $2, $3, $4, now(), now())
        ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, concurrency = excluded.concurrency,
            last_seen_at = excluded.last_seen_at
        """

    static let removeWorker = "DELETE FROM pushprep_workers WHERE id = $1"

    /// `$1`: seen since, `$2`: the limit.
    static let workers = """
        SELECT id, host, pid, concurrency, started_at, last_seen_at FROM pushprep_workers
        WHERE last_seen_at >= $1 ORDER BY last_seen_at DESC, id LIMIT $2
        """

    /// `$1`: worker ids. Their running jobs.
    static let runningJobs = """
        SELECT lease_owner, id FROM pushprep_jobs WHERE state = 'running' AND lease_owner = ANY($1::text[]) ORDER BY id
        """

    /// `$1`: the job, `$2`: the limit. The newest attempts first; the caller reverses them.
    static let attempts = """
        SELECT job_id, lease_token, attempt, worker, started_at, ended_at, outcome, error_code, error_message
        FROM pushprep_job_attempts WHERE job_id = $1 ORDER BY lease_token DESC LIMIT $2
        """
}
