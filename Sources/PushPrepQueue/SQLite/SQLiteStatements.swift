import Foundation
import PushPrepCore

/// The queue's SQL. Statements of the hot paths (enqueue, claim, heartbeat, finish, release)
/// are prepared once per connection and cached.
enum SQL {
    static let columns = """
        id, state, source, payload, dedup_key, priority, attempt, max_attempts, timeout_seconds, run_at, \
        created_at, updated_at, finished_at, lease_owner, lease_token, lease_expires_at, cancel_requested, \
        error_code, error_message, result, callback_url, metadata, request_id, kind
        """

    /// Ends the claim: the lease fields are cleared (the token stays); `:now` is bound.
    private static let clearLease = "updated_at = :now, lease_owner = NULL, lease_expires_at = NULL"

    /// Applies only to the current claim of a running job.
    private static let currentLease = "WHERE id = :id AND lease_token = :token AND state = 'running'"

    static let insert = """
        INSERT INTO pushprep_jobs
            (state, source, payload, dedup_key, priority, max_attempts, timeout_seconds, run_at, created_at, updated_at,
            callback_url, metadata, request_id)
        VALUES ('queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (dedup_key) WHERE state IN ('queued', 'running') DO NOTHING
        RETURNING id
        """

    static let activeWithKey = """
        SELECT id, state FROM pushprep_jobs WHERE dedup_key = ? AND state IN ('queued', 'running')
        """

    static let claim = """
        UPDATE pushprep_jobs
        SET state = 'running', attempt = attempt + 1, lease_token = lease_token + 1, lease_owner = :worker,
            lease_expires_at = :expires, updated_at = :now
        WHERE id IN (
            SELECT id FROM pushprep_jobs
            WHERE state = 'queued' AND run_at <= :now
            ORDER BY priority DESC, run_at, id
            LIMIT :limit)
        RETURNING id, lease_token, source, payload, attempt, max_attempts, timeout_seconds, priority, run_at,
            request_id
        """

    /// The running jobs whose lease expired before `:now`, with what ``QueueRules/rescue(attempt:maxAttempts:cancelRequested:)``
    /// decides from.
    static let expiredLeases = """
        SELECT id, lease_token, attempt, max_attempts, cancel_requested FROM pushprep_jobs
        WHERE state = 'running' AND lease_expires_at < :now
        """

    /// Rescues one of ``expiredLeases`` as ``QueueRules`` decided (`:state`, and `:requeued`:
    /// ready at `:now` rather than finished), while its lease is the expired one it was read with.
    static let rescue = """
        UPDATE pushprep_jobs
        SET state = :state,
            run_at = CASE WHEN :requeued THEN :now ELSE run_at END,
            finished_at = CASE WHEN :requeued THEN NULL ELSE :now END,
            error_code = :code, error_message = :message, \(clearLease)
        WHERE id = :id AND lease_token = :token AND state = 'running' AND lease_expires_at < :now
        """

    static let expire = """
        UPDATE pushprep_jobs SET lease_expires_at = :past
        WHERE id = :id AND lease_token = :token AND state = 'running'
        """

    /// Ends the attempt of an expired lease now, saying why (the rescue that follows finds it
    /// ended and leaves it).
    static let expireAttempt = """
        UPDATE pushprep_job_attempts
        SET ended_at = :now, outcome = 'expired', error_code = 'lease_expired',
            error_message = '\(JobAttempt.holderGoneMessage)'
        WHERE job_id = :id AND lease_token = :token AND ended_at IS NULL
        """

    static let heartbeat = """
        UPDATE pushprep_jobs SET lease_expires_at = ?
        WHERE id = ? AND lease_token = ? AND state = 'running'
        RETURNING cancel_requested
        """

    static let succeeded = """
        UPDATE pushprep_jobs
        SET state = 'succeeded', result = :result, kind = :kind, error_code = NULL, error_message = NULL,
            finished_at = :now, \(clearLease)
        \(currentLease)
        """

    /// A failure, or a retry on the last attempt: the job ends in `:state` (`failed`, `dead`).
    static let ended = """
        UPDATE pushprep_jobs
        SET state = :state, error_code = :code, error_message = :message, finished_at = :now, \(clearLease)
        \(currentLease)
        """

    /// A retry before the last attempt: queued again after its backoff.
    static let requeued = """
        UPDATE pushprep_jobs
        SET state = 'queued', run_at = :runAt, error_code = :code, error_message = :message, \(clearLease)
        \(currentLease)
        """

    static let cancelled = """
        UPDATE pushprep_jobs
        SET state = 'cancelled', error_code = 'cancelled', error_message = :message, finished_at = :now,
            \(clearLease)
        \(currentLease)
        """

    static let release = """
        UPDATE pushprep_jobs
        SET state = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'queued' END,
            attempt = CASE WHEN cancel_requested THEN attempt ELSE attempt - 1 END,
            run_at = CASE WHEN cancel_requested THEN run_at ELSE :now END,
            finished_at = CASE WHEN cancel_requested THEN :now END,
            error_code = CASE WHEN cancel_requested THEN 'cancelled' ELSE error_code END,
            error_message = CASE WHEN cancel_requested THEN 'cancelled while it ran' ELSE error_message END,
            \(clearLease)
        \(currentLease)
        """

    static let list = "SELECT \(columns) FROM pushprep_jobs WHERE id < :before ORDER BY id DESC LIMIT :limit"

    static let listInState = """
        SELECT \(columns) FROM pushprep_jobs WHERE state = :state AND id < :before ORDER BY id DESC LIMIT :limit
        """

    static let job = "SELECT \(columns) FROM pushprep_jobs WHERE id = ?"

    /// `jobs retry`: a fresh set of attempts, ready now; the last error stays for reference.
    static let retryJob = """
        UPDATE pushprep_jobs
        SET state = 'queued', attempt = 0, run_at = :now, finished_at = NULL, cancel_requested = 0, result = NULL,
            kind = NULL, updated_at = :now
        WHERE id = :id
        RETURNING \(columns)
        """

    static let cancelQueued = """
        UPDATE pushprep_jobs
        SET state = 'cancelled', error_code = 'cancelled', error_message = 'cancelled before it ran',
            finished_at = :now, updated_at = :now
        WHERE id = :id
        RETURNING \(columns)
        """

    static let requestCancel = """
        UPDATE pushprep_jobs SET cancel_requested = 1, updated_at = :now WHERE id = :id RETURNING \(columns)
        """

    static let prune = """
        DELETE FROM pushprep_jobs
        WHERE state IN ('succeeded', 'failed', 'dead', 'cancelled') AND finished_at < ?
        """

    /// Settled deliveries by age: a delivery is written when its job ends, so this takes those
    /// of the jobs pruned with the same date. Pending ones stay until they settle.
    static let pruneDeliveries = """
        DELETE FROM pushprep_webhook_deliveries WHERE state <> 'pending' AND created_at < ?
        """

    static let deliveryStats = """
        SELECT (SELECT COUNT(*) FROM pushprep_webhook_deliveries WHERE state = 'pending'),
            (SELECT COUNT(*) FROM pushprep_webhook_deliveries WHERE state = 'failed')
        """

    static let stats = """
        SELECT state, COUNT(*),
            COUNT(CASE WHEN state = 'queued' AND run_at > :now THEN 1 END),
            COUNT(CASE WHEN state = 'running' AND lease_expires_at < :now THEN 1 END),
            MIN(CASE WHEN state = 'queued' AND run_at <= :now THEN run_at END)
        FROM pushprep_jobs
        GROUP BY state
        """
}
