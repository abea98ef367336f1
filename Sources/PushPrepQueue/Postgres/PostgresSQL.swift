import Foundation

/// The SQL of the requests about one job and of the queue's reports, which are not hot paths.
enum PostgresSQL {
    /// Every column, in the order ``PostgresJobQueue`` decodes a ``JobRecord``.
    static let columns = """
        id, state, source, payload, dedup_key, priority, attempt, max_attempts, timeout_seconds, run_at, \
        created_at, updated_at, finished_at, lease_owner, lease_token, lease_expires_at, cancel_requested, \
        error_code, error_message, result, callback_url, metadata, request_id, kind
        """

    /// `$1`: the dedup keys. The queued or running job of each key.
    static let activeWithKeys = """
        SELECT dedup_key, id, state FROM pushprep_jobs
        WHERE dedup_key = ANY($1::text[]) AND state IN ('queued', 'running')
        """

    /// `$1`: the cursor (list only ids below it), `$2`: the limit.
    static let list = "SELECT \(columns) FROM pushprep_jobs WHERE id < $1 ORDER BY id DESC LIMIT $2"

    /// `$1`: the cursor, `$2`: the limit, `$3`: the state.
    static let listInState = """
        SELECT \(columns) FROM pushprep_jobs WHERE state = $3 AND id < $1 ORDER BY id DESC LIMIT $2
        """

    static let job = "SELECT \(columns) FROM pushprep_jobs WHERE id = $1"

    /// `jobs retry`: a fresh set of attempts, ready now; the last error stays for reference.
    /// Violates the dedup index when another job with the same key is queued or running.
    static let retry = """
        WITH retried AS (
            UPDATE pushprep_jobs
            SET state = 'queued', attempt = 0, run_at = now(), finished_at = NULL, cancel_requested = false,
                result = NULL, kind = NULL, updated_at = now()
            WHERE id = $1 AND state IN ('failed', 'dead', 'cancelled')
            RETURNING \(columns)
        )
        SELECT \(columns), pg_notify('\(PostgresWorkNotifier.channel)', '') FROM retried
        """

    /// `$1`: a job. The other job with its dedup key that is queued or running.
    static let activeDuplicate = """
        SELECT other.id, other.state FROM pushprep_jobs AS job
        JOIN pushprep_jobs AS other ON other.dedup_key = job.dedup_key AND other.id <> job.id
        WHERE job.id = $1 AND other.state IN ('queued', 'running')
        """

    /// `jobs cancel`: a queued job ends at once, a running one is asked to stop.
    static let cancel = """
        UPDATE pushprep_jobs
        SET state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END,
            cancel_requested = cancel_requested OR state = 'running',
            finished_at = CASE WHEN state = 'queued' THEN now() ELSE finished_at END,
            error_code = CASE WHEN state = 'queued' THEN 'cancelled' ELSE error_code END,
            error_message = CASE WHEN state = 'queued' THEN 'cancelled before it ran' ELSE error_message END,
            updated_at = now()
        WHERE id = $1 AND state IN ('queued', 'running')
        RETURNING \(columns)
        """

    static let prune = """
        WITH pruned AS (
            DELETE FROM pushprep_jobs
            WHERE state IN ('succeeded', 'failed', 'dead', 'cancelled') AND finished_at < $1
            RETURNING 1
        ), settled AS (
            -- A delivery is written when its job ends, so this takes those of the jobs pruned
            -- with the same date. Pending ones stay until they settle.
            DELETE FROM pushprep_webhook_deliveries WHERE state <> 'pending' AND created_at < $1
        )
        SELECT count(*) FROM pruned
        """

    static let stats = """
        SELECT state, count(*),
            count(*) FILTER (WHERE state = 'queued' AND run_at > now()),
            count(*) FILTER (WHERE state = 'running' AND lease_expires_at < now()),
            extract(epoch FROM now() - min(run_at) FILTER (WHERE state = 'queued' AND run_at <= now()))::float8
        FROM pushprep_jobs
        GROUP BY state
        """

    static let deliveryStats = """
        SELECT (SELECT count(*) FROM pushprep_webhook_deliveries WHERE state = 'pending')::bigint,
            (SELECT count(*) FROM pushprep_webhook_deliveries WHERE state = 'failed')::bigint
        """

    static let notify = "SELECT pg_notify('\(PostgresWorkNotifier.channel)', '')"
}
