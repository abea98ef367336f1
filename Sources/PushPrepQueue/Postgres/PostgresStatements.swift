import Foundation
import PostgresNIO
import PushPrep

// The PostgreSQL queue's SQL. The hot paths (enqueue, claim, rescue, heartbeat, finish,
// release) are prepared statements, parsed once per connection; each takes its batch as arrays
// and `unnest`s them, so a batch is one round trip whatever its size. Every timestamp is the
// server's `now()`.

/// Ends a claim: the lease fields are cleared (the token stays, so a late report of the old
/// claim is still refused).
private let clearLease = "updated_at = now(), lease_owner = NULL, lease_expires_at = NULL"

/// Applies only to the current claim of a running job; `o` is the `unnest`ed batch.
private let currentLease = "WHERE j.id = o.id AND j.lease_token = o.token AND j.state = 'running'"

/// A statement whose bindings are a batch of leases (`$1` their ids, `$2` their tokens) and
/// whose rows are the ids it changed.
protocol LeasesStatement: PostgresPreparedStatement where Row == JobID {
    var leases: [Lease] { get }
}

extension LeasesStatement {
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(leases.map(\.id))
        bindings.append(leases.map(\.token))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> JobID { try row.decode(JobID.self) }
}

/// Inserts a batch of jobs, skipping those whose dedup key names a queued or running job.
///
/// Ids are drawn from the identity's sequence before the insert so that each inserted row can be
/// matched to its spec (`RETURNING` cannot return the spec's position). Returns one row per
/// spec, in order: its position and the new id, or NULL when it was skipped. Notifies
/// `pushprep_jobs` when a job that is ready now was inserted.
struct EnqueueStatement: PostgresPreparedStatement {
    static let sql = """
        WITH input AS MATERIALIZED (
            SELECT nextval(pg_get_serial_sequence('pushprep_jobs', 'id')) AS id, i.*
            FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::integer[], $6::float8[],
                    $7::integer[], $8::float8[], $9::boolean[], $10::text[], $11::boolean[], $12::text[],
                    $13::boolean[], $14::text[], $15::boolean[])
                WITH ORDINALITY AS i(source, payload, dedup_key, has_dedup_key, priority, delay_seconds,
                    max_attempts, timeout_seconds, has_timeout, callback_url, has_callback_url, metadata,
                    has_metadata, request_id, has_request_id, position)
        ), inserted AS (
            INSERT INTO pushprep_jobs
                (id, state, source, payload, dedup_key, priority, max_attempts, timeout_seconds, run_at, created_at,
                updated_at, callback_url, metadata, request_id)
            OVERRIDING SYSTEM VALUE
            SELECT id, 'queued', source, payload, CASE WHEN has_dedup_key THEN dedup_key END, priority, max_attempts,
                CASE WHEN has_timeout THEN timeout_seconds END, now() + make_interval(secs => delay_seconds), now(),
                now(), CASE WHEN has_callback_url THEN callback_url END, CASE WHEN has_metadata THEN metadata END,
                CASE WHEN has_request_id THEN request_id END
            FROM input
            ORDER BY position
            ON CONFLICT (dedup_key) WHERE state IN ('queued', 'running') DO NOTHING
            RETURNING id, run_at
        )
        SELECT input.position, inserted.id,
            CASE WHEN inserted.run_at <= now() THEN pg_notify('\(PostgresWorkNotifier.channel)', '') END
        FROM input LEFT JOIN inserted ON inserted.id = input.id
        ORDER BY input.position
        """

    typealias Row = (Int, JobID?)

    let specs: [JobSpec]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 15)
        bindings.append(specs.map(\.source))
        bindings.append(specs.map(\.payload))
        // Arrays of optionals cannot be bound: a flag array says which values are NULL.
        bindings.append(specs.map { $0.dedupKey ?? "" })
        bindings.append(specs.map { $0.dedupKey != nil })
        bindings.append(specs.map(\.priority))
        bindings.append(specs.map { max($0.delay.seconds, 0) })
        bindings.append(specs.map(\.maxAttempts))
        bindings.append(specs.map { $0.timeout?.seconds ?? 0 })
        bindings.append(specs.map { $0.timeout != nil })
        for field in [\JobSpec.callbackURL, \.metadata, \.requestID] {
            bindings.append(specs.map { $0[keyPath: field] ?? "" })
            bindings.append(specs.map { $0[keyPath: field] != nil })
        }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Leases up to `limit` ready jobs in claim order. `SKIP LOCKED` lets concurrent claims take
/// different jobs instead of waiting for each other; the statement is its own transaction, so no
/// lock outlives it. `= ANY(ARRAY(...))` makes the update find the locked rows by primary key
/// (a join with the CTE is planned as a scan of the whole table).
struct ClaimStatement: PostgresPreparedStatement {
    static let sql = """
        WITH next AS (
            SELECT id FROM pushprep_jobs
            WHERE state = 'queued' AND run_at <= now()
            ORDER BY priority DESC, run_at, id
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        )
        UPDATE pushprep_jobs AS j
        SET state = 'running', attempt = j.attempt + 1, lease_token = j.lease_token + 1, lease_owner = $2,
            lease_expires_at = now() + make_interval(secs => $3::float8), updated_at = now()
        WHERE j.id = ANY(ARRAY(SELECT id FROM next))
        RETURNING j.id, j.lease_token, j.source, j.payload, j.attempt, j.max_attempts, j.timeout_seconds, j.priority,
            j.run_at, j.request_id
        """

    typealias Row = (JobID, Int64, String, String, Int, Int, Double?, Int, Date, String?)

    let limit: Int
    let worker: String
    let leaseSeconds: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(limit)
        bindings.append(worker)
        bindings.append(leaseSeconds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Rescues the running jobs whose lease expired; returns how many.
struct RescueStatement: PostgresPreparedStatement {
    static let sql = """
        WITH rescued AS (
            UPDATE pushprep_jobs
            SET state = CASE
                    WHEN cancel_requested THEN 'cancelled'
                    WHEN attempt >= max_attempts THEN 'dead'
                    ELSE 'queued' END,
                run_at = CASE WHEN cancel_requested OR attempt >= max_attempts THEN run_at ELSE now() END,
                finished_at = CASE WHEN cancel_requested OR attempt >= max_attempts THEN now() END,
                error_code = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'lease_expired' END,
                error_message = CASE
                    WHEN cancel_requested THEN 'cancelled while it ran; the worker stopped without reporting'
                    ELSE format('the lease expired on attempt %s of %s: the worker died or stalled',
                        attempt, max_attempts) END,
                updated_at = now(), lease_owner = NULL, lease_expires_at = NULL
            WHERE state = 'running' AND lease_expires_at < now()
            RETURNING 1
        )
        SELECT count(*) FROM rescued
        """

    typealias Row = Int

    func makeBindings() throws -> PostgresBindings { PostgresBindings() }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
}

/// Extends the leases still held; returns them with their job's cancel request.
struct HeartbeatStatement: PostgresPreparedStatement {
    static let sql = """
        UPDATE pushprep_jobs AS j SET lease_expires_at = now() + make_interval(secs => $3::float8)
        FROM unnest($1::bigint[], $2::bigint[]) AS o(id, token)
        \(currentLease)
        RETURNING j.id, j.lease_token, j.cancel_requested
        """

    typealias Row = (JobID, Int64, Bool)

    let leases: [Lease]
    let leaseSeconds: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(leases.map(\.id))
        bindings.append(leases.map(\.token))
        bindings.append(leaseSeconds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Ends current leases now (their holder is gone), for the next rescue, and their attempts,
/// saying why (the rescue finds them ended and leaves them). Returns the ids.
struct ExpireStatement: LeasesStatement {
    static let sql = """
        WITH expired AS (
            UPDATE pushprep_jobs AS j SET lease_expires_at = now() - interval '1 second'
            FROM unnest($1::bigint[], $2::bigint[]) AS o(id, token)
            \(currentLease)
            RETURNING j.id, j.lease_token
        ), attempts AS (
            UPDATE pushprep_job_attempts AS a
            SET ended_at = now(), outcome = 'expired', error_code = 'lease_expired',
                error_message = '\(JobAttempt.holderGoneMessage)'
            FROM expired
            WHERE a.job_id = expired.id AND a.lease_token = expired.lease_token AND a.ended_at IS NULL
        )
        SELECT id FROM expired
        """

    let leases: [Lease]
}

/// Records a batch of outcomes: one data-modifying CTE per kind of outcome, so the whole batch
/// is one atomic statement. Returns the ids whose lease was current, each with whether it is
/// queued again and ready now (a retry without backoff).
struct FinishStatement: PostgresPreparedStatement {
    static let sql = """
        WITH succeeded AS (
            UPDATE pushprep_jobs AS j
            SET state = 'succeeded', result = o.result, kind = nullif(o.kind, ''), error_code = NULL,
                error_message = NULL, finished_at = now(), \(clearLease)
            FROM unnest($1::bigint[], $2::bigint[], $3::text[], $16::text[]) AS o(id, token, result, kind)
            \(currentLease)
            RETURNING j.id, false AS ready
        ), failed AS (
            UPDATE pushprep_jobs AS j
            SET state = 'failed', error_code = o.code, error_message = o.message, finished_at = now(), \(clearLease)
            FROM unnest($4::bigint[], $5::bigint[], $6::text[], $7::text[]) AS o(id, token, code, message)
            \(currentLease)
            RETURNING j.id, false AS ready
        ), retried AS (
            UPDATE pushprep_jobs AS j
            SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'queued' END,
                run_at = CASE WHEN j.attempt >= j.max_attempts THEN j.run_at
                    ELSE now() + make_interval(secs => o.delay_seconds) END,
                finished_at = CASE WHEN j.attempt >= j.max_attempts THEN now() END,
                error_code = o.code, error_message = o.message, \(clearLease)
            FROM unnest($8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::float8[])
                AS o(id, token, code, message, delay_seconds)
            \(currentLease)
            RETURNING j.id, j.state = 'queued' AND j.run_at <= now() AS ready
        ), cancelled AS (
            UPDATE pushprep_jobs AS j
            SET state = 'cancelled', error_code = 'cancelled', error_message = o.message, finished_at = now(),
                \(clearLease)
            FROM unnest($13::bigint[], $14::bigint[], $15::text[]) AS o(id, token, message)
            \(currentLease)
            RETURNING j.id, false AS ready
        )
        SELECT id, ready FROM succeeded
        UNION ALL SELECT id, ready FROM failed
        UNION ALL SELECT id, ready FROM retried
        UNION ALL SELECT id, ready FROM cancelled
        """

    typealias Row = (JobID, Bool)

    /// The kinds are read from the results here (``JobKind/init(result:)``), `""` for unknown.
    private var succeeded: (ids: [Int64], tokens: [Int64], results: [String], kinds: [String]) = ([], [], [], [])
    private var failed: (ids: [Int64], tokens: [Int64], codes: [String], messages: [String]) = ([], [], [], [])
    private var retried: (ids: [Int64], tokens: [Int64], codes: [String], messages: [String], delays: [Double]) = (
        [], [], [], [], []
    )
    private var cancelled: (ids: [Int64], tokens: [Int64], messages: [String]) = ([], [], [])

    init(_ outcomes: [JobOutcome]) {
        for outcome in outcomes {
            let (id, token) = (outcome.lease.id, outcome.lease.token)
            switch outcome.kind {
            case .succeeded(let result):
                succeeded.ids.append(id)
                succeeded.tokens.append(token)
                succeeded.results.append(result)
                succeeded.kinds.append(JobKind(result: result).stored ?? "")
            case .failed(let code, let message):
                failed.ids.append(id)
                failed.tokens.append(token)
                failed.codes.append(code.rawValue)
                failed.messages.append(message)
            case .retry(let code, let message, let delay):
                retried.ids.append(id)
                retried.tokens.append(token)
                retried.codes.append(code)
                retried.messages.append(message)
                retried.delays.append(max(delay.seconds, 0))
            case .cancelled(let message):
                cancelled.ids.append(id)
                cancelled.tokens.append(token)
                cancelled.messages.append(message)
            }
        }
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 16)
        bindings.append(succeeded.ids)
        bindings.append(succeeded.tokens)
        bindings.append(succeeded.results)
        bindings.append(failed.ids)
        bindings.append(failed.tokens)
        bindings.append(failed.codes)
        bindings.append(failed.messages)
        bindings.append(retried.ids)
        bindings.append(retried.tokens)
        bindings.append(retried.codes)
        bindings.append(retried.messages)
        bindings.append(retried.delays)
        bindings.append(cancelled.ids)
        bindings.append(cancelled.tokens)
        bindings.append(cancelled.messages)
        bindings.append(succeeded.kinds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Gives leased jobs back without counting the attempt (or ends them `cancelled` when a cancel
/// was requested); returns the ids whose lease was current. Notifies `pushprep_jobs` when a job
/// was queued again.
struct ReleaseStatement: LeasesStatement {
    static let sql = """
        WITH released AS (
            UPDATE pushprep_jobs AS j
            SET state = CASE WHEN j.cancel_requested THEN 'cancelled' ELSE 'queued' END,
                attempt = CASE WHEN j.cancel_requested THEN j.attempt ELSE j.attempt - 1 END,
                run_at = CASE WHEN j.cancel_requested THEN j.run_at ELSE now() END,
                finished_at = CASE WHEN j.cancel_requested THEN now() END,
                error_code = CASE WHEN j.cancel_requested THEN 'cancelled' ELSE j.error_code END,
                error_message = CASE WHEN j.cancel_requested THEN 'cancelled while it ran' ELSE j.error_message END,
                \(clearLease)
            FROM unnest($1::bigint[], $2::bigint[]) AS o(id, token)
            \(currentLease)
            RETURNING j.id, j.state
        )
        SELECT id, CASE WHEN state = 'queued' THEN pg_notify('\(PostgresWorkNotifier.channel)', '') END
        FROM released
        """

    let leases: [Lease]
}

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
