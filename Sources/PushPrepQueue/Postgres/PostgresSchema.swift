import Logging
import PostgresNIO
import PushPrepCore

/// The PostgreSQL queue's schema, as versioned migrations recorded in
/// `pushprep_schema_migrations`.
///
/// A released migration is never edited; a change is a new migration. Opening a queue applies
/// the missing ones in one transaction that first takes a transaction-scoped advisory lock, so
/// any number of workers can start at once against a new database: the first applies the
/// migrations, the others wait for its commit and then find nothing to do. A database that
/// records a version this build does not know was upgraded by a newer PushPrep and is refused,
/// so an old worker never writes rows it does not understand.
enum PostgresSchema {
    /// The advisory lock that serializes migrations: "pushprep" in ASCII.
    static let migrationLock: Int64 = 0x7075_7368_7072_6570

    /// Every migration, oldest first: its version and its statements (the extended query
    /// protocol runs one statement per query).
    private static let migrations: [(version: Int, statements: [String])] = [
        (1, version1), (2, version2), (3, version3), (4, version4),
    ]

    /// The newest schema version this build knows.
    static var latestVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// Version 1: the jobs table and the indexes of the queue's four access paths.
    ///
    /// Timestamps are `timestamptz` from the server's clock, so workers on hosts whose clocks
    /// disagree still agree on when a lease expires.
    private static let version1 = [
        """
        CREATE TABLE pushprep_jobs (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            state text NOT NULL
                CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'dead', 'cancelled')),
            source text NOT NULL,
            payload text NOT NULL,
            dedup_key text,
            priority integer NOT NULL DEFAULT 0,
            attempt integer NOT NULL DEFAULT 0,
            max_attempts integer NOT NULL CHECK (max_attempts >= 1),
            timeout_seconds double precision,
            run_at timestamptz NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            finished_at timestamptz,
            lease_owner text,
            lease_token bigint NOT NULL DEFAULT 0,
            lease_expires_at timestamptz,
            cancel_requested boolean NOT NULL DEFAULT false,
            error_code text,
            error_message text,
            result text
        )
        """,
        // The dedup: one queued or running job per key.
        """
        CREATE UNIQUE INDEX pushprep_jobs_dedup ON pushprep_jobs (dedup_key)
            WHERE state IN ('queued', 'running')
        """,
        // Claiming: the ready jobs in claim order.
        """
        CREATE INDEX pushprep_jobs_claim ON pushprep_jobs (state, priority DESC, run_at, id)
            WHERE state = 'queued'
        """,
        // Rescuing: running jobs by lease expiry.
        "CREATE INDEX pushprep_jobs_lease ON pushprep_jobs (lease_expires_at) WHERE state = 'running'",
        // Pruning: finished jobs by age.
        "CREATE INDEX pushprep_jobs_finished ON pushprep_jobs (finished_at) WHERE finished_at IS NOT NULL",
    ]

    /// Version 2, for the HTTP API: the jobs' callback URL, metadata and request id; an index
    /// for listing one state page by page; the idempotency keys; the webhook outbox.
    ///
    /// The outbox is filled by a row trigger on the jobs' state, so every statement that ends a
    /// job (each data-modifying CTE of a batched finish, a cancel, a rescue, a release of a job
    /// asked to stop) writes the delivery in its own transaction, and none can forget to. The
    /// snapshot is the row as it ended, as JSON keyed by column name with timestamps as Unix
    /// seconds (see `JobSnapshot`), the same text the SQLite trigger writes.
    private static let version2 = [
        """
        ALTER TABLE pushprep_jobs
            ADD COLUMN callback_url text, ADD COLUMN metadata text, ADD COLUMN request_id text
        """,
        // Listing: one state, newest first, after a cursor.
        "CREATE INDEX pushprep_jobs_state_id ON pushprep_jobs (state, id)",
        """
        CREATE TABLE pushprep_idempotency_keys (
            scope text NOT NULL,
            key text NOT NULL,
            fingerprint text NOT NULL,
            job_ids bigint[] NOT NULL,
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL,
            PRIMARY KEY (scope, key)
        )
        """,
        "CREATE INDEX pushprep_idempotency_keys_created ON pushprep_idempotency_keys (created_at)",
        """
        CREATE TABLE pushprep_webhook_deliveries (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            job_id bigint NOT NULL,
            url text NOT NULL,
            event text NOT NULL,
            job text NOT NULL,
            state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at timestamptz,
            last_status integer,
            last_error text,
            created_at timestamptz NOT NULL,
            delivered_at timestamptz
        )
        """,
        // Claiming: the pending deliveries by due time.
        """
        CREATE INDEX pushprep_webhook_deliveries_due ON pushprep_webhook_deliveries (next_attempt_at, id)
            WHERE state = 'pending'
        """,
        "CREATE INDEX pushprep_webhook_deliveries_job ON pushprep_webhook_deliveries (job_id, id)",
        // Listing and counting by state.
        "CREATE INDEX pushprep_webhook_deliveries_state ON pushprep_webhook_deliveries (state, id)",
        // Pruning: the settled deliveries by age.
        """
        CREATE INDEX pushprep_webhook_deliveries_created ON pushprep_webhook_deliveries (created_at)
            WHERE state <> 'pending'
        """,
        """
        CREATE FUNCTION pushprep_jobs_webhook() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO pushprep_webhook_deliveries (job_id, url, event, job, next_attempt_at, created_at)
            VALUES (
                NEW.id, NEW.callback_url, 'job.' || NEW.state,
                json_build_object(
                    'id', NEW.id, 'state', NEW.state, 'source', NEW.source, 'payload', NEW.payload,
                    'dedup_key', NEW.dedup_key, 'priority', NEW.priority, 'attempt', NEW.attempt,
                    'max_attempts', NEW.max_attempts, 'timeout_seconds', NEW.timeout_seconds,
                    'run_at', extract(epoch FROM NEW.run_at), 'created_at', extract(epoch FROM NEW.created_at),
                    'updated_at', extract(epoch FROM NEW.updated_at),
                    'finished_at', extract(epoch FROM NEW.finished_at), 'lease_owner', NEW.lease_owner,
                    'lease_token', NEW.lease_token, 'lease_expires_at', extract(epoch FROM NEW.lease_expires_at),
                    'cancel_requested', NEW.cancel_requested, 'error_code', NEW.error_code,
                    'error_message', NEW.error_message, 'result', NEW.result, 'callback_url', NEW.callback_url,
                    'metadata', NEW.metadata, 'request_id', NEW.request_id)::text,
                now(), now());
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER pushprep_jobs_webhook AFTER UPDATE OF state ON pushprep_jobs FOR EACH ROW
            WHEN (NEW.callback_url IS NOT NULL AND NEW.state IN ('succeeded', 'failed', 'dead', 'cancelled')
                AND OLD.state IN ('queued', 'running'))
            EXECUTE FUNCTION pushprep_jobs_webhook()
        """,
    ]

    /// Version 3, for the console: the jobs' kind (from a succeeded job's result) and the indexes
    /// of its filters; an index that covers counting finished jobs by time and state (it replaces
    /// version 1's index on `finished_at`, which pruning uses the same way); the workers'
    /// registrations; the attempts.
    ///
    /// Attempts are written by row triggers, as the webhook outbox is: a new lease token opens
    /// one (every claim), and leaving `running` closes it (a result, a rescue, a release, a
    /// cancel), in the statement's own transaction. A job's attempts are deleted with it (the
    /// foreign key). The history starts at this version: a job running during the upgrade has no
    /// attempt until its next claim.
    ///
    /// The kinds of the jobs that succeeded before are read from their results by a function of
    /// the migration's session (`pg_temp`): PostgreSQL 15 has no cast that returns NULL for text
    /// that is not JSON, so it catches the error.
    private static let version3 = [
        """
        ALTER TABLE pushprep_jobs ADD COLUMN kind text CHECK (kind IN ('image', 'video', 'audio'))
        """,
        """
        CREATE FUNCTION pg_temp.pushprep_result_kind(result text) RETURNS text LANGUAGE plpgsql AS $$
        DECLARE
            kind text;
        BEGIN
            kind := result::jsonb ->> 'kind';
            RETURN CASE WHEN kind IN ('image', 'video', 'audio') THEN kind END;
        EXCEPTION WHEN others THEN
            RETURN NULL;
        END
        $$
        """,
        """
        UPDATE pushprep_jobs SET kind = pg_temp.pushprep_result_kind(result)
        WHERE state = 'succeeded' AND result IS NOT NULL
        """,
        "DROP FUNCTION pg_temp.pushprep_result_kind(text)",
        // Filtering: one kind, or one error code, newest first.
        "CREATE INDEX pushprep_jobs_kind ON pushprep_jobs (kind, id) WHERE kind IS NOT NULL",
        "CREATE INDEX pushprep_jobs_error ON pushprep_jobs (error_code, id) WHERE error_code IS NOT NULL",
        // Activity and pruning: finished jobs by time, with their state (index-only scans).
        "DROP INDEX pushprep_jobs_finished",
        """
        CREATE INDEX pushprep_jobs_finished_state ON pushprep_jobs (finished_at, state)
            WHERE finished_at IS NOT NULL
        """,
        """
        CREATE TABLE pushprep_workers (
            id text PRIMARY KEY,
            host text NOT NULL,
            pid integer NOT NULL,
            concurrency integer NOT NULL,
            started_at timestamptz NOT NULL,
            last_seen_at timestamptz NOT NULL
        )
        """,
        "CREATE INDEX pushprep_workers_seen ON pushprep_workers (last_seen_at)",
        """
        CREATE TABLE pushprep_job_attempts (
            job_id bigint NOT NULL REFERENCES pushprep_jobs (id) ON DELETE CASCADE,
            lease_token bigint NOT NULL,
            attempt integer NOT NULL,
            worker text NOT NULL,
            started_at timestamptz NOT NULL,
            ended_at timestamptz,
            outcome text CHECK (outcome IN ('succeeded', 'failed', 'cancelled', 'expired', 'released')),
            error_code text,
            error_message text,
            PRIMARY KEY (job_id, lease_token)
        )
        """,
        """
        CREATE FUNCTION pushprep_jobs_attempt_start() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO pushprep_job_attempts (job_id, lease_token, attempt, worker, started_at)
            VALUES (NEW.id, NEW.lease_token, NEW.attempt, coalesce(NEW.lease_owner, ''), now());
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER pushprep_jobs_attempt_start AFTER UPDATE OF lease_token ON pushprep_jobs FOR EACH ROW
            WHEN (NEW.lease_token <> OLD.lease_token AND NEW.state = 'running')
            EXECUTE FUNCTION pushprep_jobs_attempt_start()
        """,
        """
        CREATE FUNCTION pushprep_jobs_attempt_end() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            released boolean := NEW.state = 'queued' AND NEW.attempt < OLD.attempt;
        BEGIN
            UPDATE pushprep_job_attempts
            SET ended_at = now(),
                outcome = CASE
                    WHEN NEW.state = 'succeeded' THEN 'succeeded'
                    WHEN released THEN 'released'
                    WHEN NEW.state = 'cancelled' THEN 'cancelled'
                    WHEN NEW.error_code = 'lease_expired' THEN 'expired'
                    ELSE 'failed' END,
                error_code = CASE WHEN NEW.state = 'succeeded' OR released THEN NULL ELSE NEW.error_code END,
                error_message = CASE WHEN NEW.state = 'succeeded' OR released THEN NULL ELSE NEW.error_message END
            WHERE job_id = NEW.id AND lease_token = OLD.lease_token AND ended_at IS NULL;
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER pushprep_jobs_attempt_end AFTER UPDATE OF state ON pushprep_jobs FOR EACH ROW
            WHEN (OLD.state = 'running' AND NEW.state <> 'running')
            EXECUTE FUNCTION pushprep_jobs_attempt_end()
        """,
    ]

    /// Version 4, for webhooks: each delivery's `webhook-id`, `msg_` and a random UUID
    /// (`gen_random_uuid()`, version 4), stored with the row. Receivers drop duplicates by it, so
    /// it must never repeat: the row id it replaces started again at `msg_1` in every new
    /// database. A volatile default is evaluated once per row, so the deliveries already in the
    /// outbox each get their own here, and a pending one keeps it on every retry after the
    /// upgrade; new rows (the jobs' trigger of version 2 names no id) get theirs from the same
    /// default. The unique index makes a repeated id an error rather than a second message under
    /// the same id.
    private static let version4 = [
        """
        ALTER TABLE pushprep_webhook_deliveries
            ADD COLUMN webhook_id text NOT NULL DEFAULT ('msg_' || gen_random_uuid()::text)
        """,
        """
        CREATE UNIQUE INDEX pushprep_webhook_deliveries_webhook_id ON pushprep_webhook_deliveries (webhook_id)
        """,
    ]

    /// Applies the migrations the database is missing, up to `version` (tests stop early to
    /// make a database of an older release), in one transaction under ``migrationLock``;
    /// returns the versions it applied.
    ///
    /// - Throws: `queue_unavailable` (a ``PushPrepError``) when the schema is newer than this
    ///   build; database errors as they come.
    static func migrate(
        _ connection: PostgresConnection, logger: Logger, upTo version: Int = latestVersion
    ) async throws -> [Int] {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS pushprep_schema_migrations (
                    version integer PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """, logger: logger)
            let current = try await currentVersion(connection, logger: logger)
            guard current <= latestVersion else {
                throw PushPrepError(
                    .queueUnavailable,
                    "the queue's schema is version \(current), this PushPrep knows up to \(latestVersion): "
                        + "upgrade PushPrep")
            }
            var applied: [Int] = []
            for migration in migrations where migration.version > current && migration.version <= version {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO pushprep_schema_migrations (version) VALUES (\(migration.version))", logger: logger)
                applied.append(migration.version)
            }
            return applied
        }
    }

    /// The newest version recorded, 0 for a new database.
    private static func currentVersion(_ connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            "SELECT coalesce(max(version), 0) FROM pushprep_schema_migrations", logger: logger)
        for try await version in rows.decode(Int.self) {
            return version
        }
        return 0
    }
}
