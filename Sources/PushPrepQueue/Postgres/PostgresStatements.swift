import Foundation
import PostgresNIO
import PushPrepCore

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

/// The running jobs whose lease expired, with what ``QueueRules/rescue(attempt:maxAttempts:cancelRequested:)``
/// decides from.
struct ExpiredLeasesStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT id, lease_token, attempt, max_attempts, cancel_requested FROM pushprep_jobs
        WHERE state = 'running' AND lease_expires_at < now()
        """

    typealias Row = (JobID, Int64, Int, Int, Bool)

    func makeBindings() throws -> PostgresBindings { PostgresBindings() }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Rescues expired leases as ``QueueRules`` decided, each while its lease is still the expired
/// one it was read with (and its cancel request unchanged); returns how many.
struct RescueStatement: PostgresPreparedStatement {
    static let sql = """
        WITH rescued AS (
            UPDATE pushprep_jobs AS j
            SET state = o.state,
                run_at = CASE WHEN o.requeued THEN now() ELSE j.run_at END,
                finished_at = CASE WHEN o.requeued THEN NULL ELSE now() END,
                error_code = o.code, error_message = o.message, \(clearLease)
            FROM unnest($1::bigint[], $2::bigint[], $3::boolean[], $4::text[], $5::boolean[], $6::text[], $7::text[])
                AS o(id, token, cancel_requested, state, requeued, code, message)
            \(currentLease) AND j.lease_expires_at < now() AND j.cancel_requested = o.cancel_requested
            RETURNING 1
        )
        SELECT count(*) FROM rescued
        """

    typealias Row = Int

    /// The expired leases and how each is rescued.
    let rescues: [(lease: ExpiredLeasesStatement.Row, rescue: QueueRules.Rescue)]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(rescues.map(\.lease.0))
        bindings.append(rescues.map(\.lease.1))
        bindings.append(rescues.map(\.lease.4))
        bindings.append(rescues.map(\.rescue.state.rawValue))
        bindings.append(rescues.map(\.rescue.requeued))
        bindings.append(rescues.map(\.rescue.code))
        bindings.append(rescues.map(\.rescue.message))
        return bindings
    }

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

/// Records a batch of outcomes as ``QueueRules/resolve(_:)`` decides them: one data-modifying CTE
/// per kind of resolution, so the whole batch is one atomic statement. Returns the ids whose
/// lease was current, each with whether it is queued again and ready now (a retry without
/// backoff).
struct FinishStatement: PostgresPreparedStatement {
    static let sql = """
        WITH succeeded AS (
            UPDATE pushprep_jobs AS j
            SET state = 'succeeded', result = o.result, kind = nullif(o.kind, ''), error_code = NULL,
                error_message = NULL, finished_at = now(), \(clearLease)
            FROM unnest($1::bigint[], $2::bigint[], $3::text[], $16::text[]) AS o(id, token, result, kind)
            \(currentLease)
            RETURNING j.id, false AS ready
        ), ended AS (
            UPDATE pushprep_jobs AS j
            SET state = o.state, error_code = o.code, error_message = o.message, finished_at = now(), \(clearLease)
            FROM unnest($4::bigint[], $5::bigint[], $6::text[], $7::text[], $17::text[])
                AS o(id, token, code, message, state)
            \(currentLease)
            RETURNING j.id, false AS ready
        ), requeued AS (
            UPDATE pushprep_jobs AS j
            SET state = 'queued', run_at = now() + make_interval(secs => o.delay_seconds), error_code = o.code,
                error_message = o.message, \(clearLease)
            FROM unnest($8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::float8[])
                AS o(id, token, code, message, delay_seconds)
            \(currentLease)
            RETURNING j.id, j.run_at <= now() AS ready
        ), cancelled AS (
            UPDATE pushprep_jobs AS j
            SET state = 'cancelled', error_code = 'cancelled', error_message = o.message, finished_at = now(),
                \(clearLease)
            FROM unnest($13::bigint[], $14::bigint[], $15::text[]) AS o(id, token, message)
            \(currentLease)
            RETURNING j.id, false AS ready
        )
        SELECT id, ready FROM succeeded
        UNION ALL SELECT id, ready FROM ended
        UNION ALL SELECT id, ready FROM requeued
        UNION ALL SELECT id, ready FROM cancelled
        """

    typealias Row = (JobID, Bool)

    /// The kinds are read from the results here (``JobKind/init(result:)``), `""` for unknown.
    private var succeeded: (ids: [Int64], tokens: [Int64], results: [String], kinds: [String]) = ([], [], [], [])
    private var ended = ErrorBatch()
    private var endedStates: [String] = []
    private var requeued = ErrorBatch()
    private var requeuedDelays: [Double] = []
    private var cancelled: (ids: [Int64], tokens: [Int64], messages: [String]) = ([], [], [])

    init(_ outcomes: [JobOutcome]) {
        for outcome in outcomes {
            let (id, token) = (outcome.lease.id, outcome.lease.token)
            switch QueueRules.resolve(outcome) {
            case .succeeded(let result, let kind):
                succeeded.ids.append(id)
                succeeded.tokens.append(token)
                succeeded.results.append(result)
                succeeded.kinds.append(kind.stored ?? "")
            case .ended(let state, let code, let message):
                ended.append(id, token, code, message)
                endedStates.append(state.rawValue)
            case .requeued(let code, let message, let delay):
                requeued.append(id, token, code, message)
                requeuedDelays.append(delay.seconds)
            case .cancelled(let message):
                cancelled.ids.append(id)
                cancelled.tokens.append(token)
                cancelled.messages.append(message)
            }
        }
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 17)
        bindings.append(succeeded.ids)
        bindings.append(succeeded.tokens)
        bindings.append(succeeded.results)
        ended.bind(to: &bindings)
        requeued.bind(to: &bindings)
        bindings.append(requeuedDelays)
        bindings.append(cancelled.ids)
        bindings.append(cancelled.tokens)
        bindings.append(cancelled.messages)
        bindings.append(succeeded.kinds)
        bindings.append(endedStates)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }

    /// The outcomes of one CTE that store an error: their leases, codes and messages.
    private struct ErrorBatch {
        var ids: [Int64] = []
        var tokens: [Int64] = []
        var codes: [String] = []
        var messages: [String] = []

        mutating func append(_ id: Int64, _ token: Int64, _ code: String, _ message: String) {
            ids.append(id)
            tokens.append(token)
            codes.append(code)
            messages.append(message)
        }

        /// Binds the four arrays in order.
        func bind(to bindings: inout PostgresBindings) {
            bindings.append(ids)
            bindings.append(tokens)
            bindings.append(codes)
            bindings.append(messages)
        }
    }
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
