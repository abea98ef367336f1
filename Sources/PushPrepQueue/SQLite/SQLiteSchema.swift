import GRDB
import PushPrepCore

/// The SQLite queue's schema, as versioned GRDB migrations recorded in `grdb_migrations`.
///
/// Migrations are identified `v1`, `v2`, ...; a released migration is never edited, a change is
/// a new migration. Opening a queue applies the missing ones; a database that records a
/// migration this build does not know was upgraded by a newer PushPrep and is refused, so an
/// old worker never writes rows it does not understand.
enum SQLiteSchema {
    /// Every migration, oldest first: its version and its SQL.
    private static let migrations: [(version: Int, sql: String)] = [
        (1, version1), (2, version2), (3, version3), (4, version4),
    ]

    /// The newest schema version this build knows.
    static var latestVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// Version 1: the jobs table and the indexes of the queue's four access paths.
    ///
    /// Timestamps are Unix seconds as `REAL`; `id` is `AUTOINCREMENT` so that ids keep
    /// increasing even after the newest jobs are pruned.
    private static let version1 = """
        CREATE TABLE pushprep_jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            state TEXT NOT NULL
                CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'dead', 'cancelled')),
            source TEXT NOT NULL,
            payload TEXT NOT NULL,
            dedup_key TEXT,
            priority INTEGER NOT NULL DEFAULT 0,
            attempt INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL CHECK (max_attempts >= 1),
            timeout_seconds REAL,
            run_at REAL NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            finished_at REAL,
            lease_owner TEXT,
            lease_token INTEGER NOT NULL DEFAULT 0,
            lease_expires_at REAL,
            cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
            error_code TEXT,
            error_message TEXT,
            result TEXT
        ) STRICT;
        -- The dedup: one queued or running job per key.
        CREATE UNIQUE INDEX pushprep_jobs_dedup ON pushprep_jobs (dedup_key)
            WHERE state IN ('queued', 'running');
        -- Claiming: the ready jobs in claim order.
        CREATE INDEX pushprep_jobs_claim ON pushprep_jobs (state, priority DESC, run_at, id)
            WHERE state = 'queued';
        -- Rescuing: running jobs by lease expiry.
        CREATE INDEX pushprep_jobs_lease ON pushprep_jobs (lease_expires_at) WHERE state = 'running';
        -- Pruning: finished jobs by age.
        CREATE INDEX pushprep_jobs_finished ON pushprep_jobs (finished_at);
        """

    /// Version 2, for the HTTP API: the jobs' callback URL, metadata and request id; an index
    /// for listing one state page by page; the idempotency keys; the webhook outbox.
    ///
    /// The outbox is filled by a trigger on the jobs' state, so every statement that ends a job
    /// (a result, a cancel, a rescue, a release of a job asked to stop) writes the delivery in
    /// its own transaction, batched or not, and none can forget to. The snapshot is the row as it
    /// ended, as JSON keyed by column name (see `JobSnapshot`); `cancel_requested` goes through
    /// `json()` to be a JSON boolean rather than SQLite's 0 or 1.
    private static let version2 = """
        ALTER TABLE pushprep_jobs ADD COLUMN callback_url TEXT;
        ALTER TABLE pushprep_jobs ADD COLUMN metadata TEXT;
        ALTER TABLE pushprep_jobs ADD COLUMN request_id TEXT;
        -- Listing: one state, newest first, after a cursor.
        CREATE INDEX pushprep_jobs_state_id ON pushprep_jobs (state, id);

        CREATE TABLE pushprep_idempotency_keys (
            scope TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            -- The ids of the jobs, in the order of the specs, as a JSON array.
            job_ids TEXT NOT NULL,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            PRIMARY KEY (scope, key)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX pushprep_idempotency_keys_created ON pushprep_idempotency_keys (created_at);

        CREATE TABLE pushprep_webhook_deliveries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            job_id INTEGER NOT NULL,
            url TEXT NOT NULL,
            event TEXT NOT NULL,
            job TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at REAL,
            last_status INTEGER,
            last_error TEXT,
            created_at REAL NOT NULL,
            delivered_at REAL
        ) STRICT;
        -- Claiming: the pending deliveries by due time.
        CREATE INDEX pushprep_webhook_deliveries_due ON pushprep_webhook_deliveries (next_attempt_at, id)
            WHERE state = 'pending';
        CREATE INDEX pushprep_webhook_deliveries_job ON pushprep_webhook_deliveries (job_id, id);
        -- Listing and counting by state.
        CREATE INDEX pushprep_webhook_deliveries_state ON pushprep_webhook_deliveries (state, id);
        -- Pruning: the settled deliveries by age.
        CREATE INDEX pushprep_webhook_deliveries_created ON pushprep_webhook_deliveries (created_at)
            WHERE state <> 'pending';

        CREATE TRIGGER pushprep_jobs_webhook AFTER UPDATE OF state ON pushprep_jobs
        WHEN NEW.callback_url IS NOT NULL AND NEW.state IN ('succeeded', 'failed', 'dead', 'cancelled')
            AND OLD.state IN ('queued', 'running')
        BEGIN
            INSERT INTO pushprep_webhook_deliveries (job_id, url, event, job, next_attempt_at, created_at)
            VALUES (
                NEW.id, NEW.callback_url, 'job.' || NEW.state,
                json_object(
                    'id', NEW.id, 'state', NEW.state, 'source', NEW.source, 'payload', NEW.payload,
                    'dedup_key', NEW.dedup_key, 'priority', NEW.priority, 'attempt', NEW.attempt,
                    'max_attempts', NEW.max_attempts, 'timeout_seconds', NEW.timeout_seconds, 'run_at', NEW.run_at,
                    'created_at', NEW.created_at, 'updated_at', NEW.updated_at, 'finished_at', NEW.finished_at,
                    'lease_owner', NEW.lease_owner, 'lease_token', NEW.lease_token,
                    'lease_expires_at', NEW.lease_expires_at,
                    'cancel_requested', json(CASE WHEN NEW.cancel_requested THEN 'true' ELSE 'false' END),
                    'error_code', NEW.error_code, 'error_message', NEW.error_message, 'result', NEW.result,
                    'callback_url', NEW.callback_url, 'metadata', NEW.metadata, 'request_id', NEW.request_id),
                NEW.updated_at, NEW.updated_at);
        END;
        """

    /// Version 3, for the console: the jobs' kind (from a succeeded job's result) and the indexes
    /// of its filters; an index that covers counting finished jobs by time and state (it replaces
    /// version 1's index on `finished_at`, which pruning uses the same way); the workers'
    /// registrations; the attempts.
    ///
    /// Attempts are written by triggers, as the webhook outbox is: a new lease token opens one
    /// (every claim), and leaving `running` closes it (a result, a rescue, a release, a cancel),
    /// in the statement's own transaction. A job's attempts are deleted with it (the foreign key;
    /// GRDB turns foreign keys on for every connection). The history starts at this version: a job
    /// running during the upgrade has no attempt until its next claim.
    private static let version3 = """
        ALTER TABLE pushprep_jobs ADD COLUMN kind TEXT CHECK (kind IN ('image', 'video', 'audio'));
        UPDATE pushprep_jobs SET kind = json_extract(result, '$.kind')
        WHERE state = 'succeeded' AND CASE
            -- A CASE, so that json_extract never sees text that is not JSON (it would fail).
            WHEN json_valid(result) THEN json_type(result) = 'object'
                AND json_extract(result, '$.kind') IN ('image', 'video', 'audio')
            ELSE 0 END;
        -- Filtering: one kind, or one error code, newest first.
        CREATE INDEX pushprep_jobs_kind ON pushprep_jobs (kind, id) WHERE kind IS NOT NULL;
        CREATE INDEX pushprep_jobs_error ON pushprep_jobs (error_code, id) WHERE error_code IS NOT NULL;
        -- Activity and pruning: finished jobs by time, with their state (no table lookups).
        DROP INDEX pushprep_jobs_finished;
        CREATE INDEX pushprep_jobs_finished_state ON pushprep_jobs (finished_at, state);

        CREATE TABLE pushprep_workers (
            id TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            concurrency INTEGER NOT NULL,
            started_at REAL NOT NULL,
            last_seen_at REAL NOT NULL
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX pushprep_workers_seen ON pushprep_workers (last_seen_at);

        CREATE TABLE pushprep_job_attempts (
            job_id INTEGER NOT NULL REFERENCES pushprep_jobs (id) ON DELETE CASCADE,
            lease_token INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            worker TEXT NOT NULL,
            started_at REAL NOT NULL,
            ended_at REAL,
            outcome TEXT CHECK (outcome IN ('succeeded', 'failed', 'cancelled', 'expired', 'released')),
            error_code TEXT,
            error_message TEXT,
            PRIMARY KEY (job_id, lease_token)
        ) STRICT, WITHOUT ROWID;

        CREATE TRIGGER pushprep_jobs_attempt_start AFTER UPDATE OF lease_token ON pushprep_jobs
        WHEN NEW.lease_token <> OLD.lease_token AND NEW.state = 'running'
        BEGIN
            INSERT INTO pushprep_job_attempts (job_id, lease_token, attempt, worker, started_at)
            VALUES (NEW.id, NEW.lease_token, NEW.attempt, coalesce(NEW.lease_owner, ''), NEW.updated_at);
        END;

        CREATE TRIGGER pushprep_jobs_attempt_end AFTER UPDATE OF state ON pushprep_jobs
        WHEN OLD.state = 'running' AND NEW.state <> 'running'
        BEGIN
            UPDATE pushprep_job_attempts
            SET ended_at = NEW.updated_at,
                outcome = CASE
                    WHEN NEW.state = 'succeeded' THEN 'succeeded'
                    WHEN NEW.state = 'queued' AND NEW.attempt < OLD.attempt THEN 'released'
                    WHEN NEW.state = 'cancelled' THEN 'cancelled'
                    WHEN NEW.error_code = 'lease_expired' THEN 'expired'
                    ELSE 'failed' END,
                error_code = CASE
                    WHEN NEW.state = 'succeeded' OR (NEW.state = 'queued' AND NEW.attempt < OLD.attempt) THEN NULL
                    ELSE NEW.error_code END,
                error_message = CASE
                    WHEN NEW.state = 'succeeded' OR (NEW.state = 'queued' AND NEW.attempt < OLD.attempt) THEN NULL
                    ELSE NEW.error_message END
            WHERE job_id = NEW.id AND lease_token = OLD.lease_token AND ended_at IS NULL;
        END;
        """

    /// Version 4, for webhooks: each delivery's `webhook-id`, `msg_` and a random UUID (version 4,
    /// from `randomblob`), stored with the row. Receivers drop duplicates by it, so it must never
    /// repeat: the row id it replaces started again at `msg_1` in every new database. The
    /// deliveries already in the outbox get theirs here, so a pending one keeps the same id on
    /// every retry after the upgrade.
    ///
    /// A trigger on the outbox's inserts gives the id, so the jobs' trigger of version 2 (and any
    /// other writer) needs no change, and no row goes without one; the unique index makes a
    /// repeated id an error rather than a second message under the same id.
    private static let version4 = """
        ALTER TABLE pushprep_webhook_deliveries ADD COLUMN webhook_id TEXT;
        UPDATE pushprep_webhook_deliveries
        SET webhook_id = 'msg_' || lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
            || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (random() & 3), 1)
            || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)));
        CREATE UNIQUE INDEX pushprep_webhook_deliveries_webhook_id ON pushprep_webhook_deliveries (webhook_id);

        CREATE TRIGGER pushprep_webhook_deliveries_webhook_id AFTER INSERT ON pushprep_webhook_deliveries
        WHEN NEW.webhook_id IS NULL
        BEGIN
            UPDATE pushprep_webhook_deliveries
            SET webhook_id = 'msg_' || lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
                || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (random() & 3), 1)
                || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))
            WHERE id = NEW.id;
        END;
        """

    /// Thrown by a migration that another connection applied after the migrator looked: the
    /// migrator is run again and skips it.
    private struct AppliedConcurrently: Error {}

    /// Applies the migrations `pool` is missing, up to `version` (tests stop early to make a
    /// database of an older release).
    ///
    /// GRDB's migrator reads the applied migrations before it takes the write lock, so two
    /// processes opening a new file at once could both try to apply `v1`. Each migration
    /// therefore checks again inside its own `BEGIN IMMEDIATE` transaction, where no other
    /// writer can interleave, and steps aside when it finds itself applied; the migrator then
    /// runs again and sees it done.
    ///
    /// - Throws: `queue_unavailable` when the schema is newer than this build, or when a
    ///   migration fails.
    static func migrate(_ pool: DatabasePool, path: String, upTo version: Int = latestVersion) throws(PushPrepError) {
        let migrator = makeMigrator(upTo: version)
        do {
            for _ in 0...migrations.count {
                try pool.read { db in try refuseNewerSchema(db, migrator: migrator) }
                do {
                    try migrator.migrate(pool)
                    return
                } catch is AppliedConcurrently {
                    continue
                }
            }
            throw PushPrepError(
                .queueUnavailable, "cannot migrate the queue database \(path): other processes kept changing its schema"
            )
        } catch let error as PushPrepError {
            throw error
        } catch {
            throw PushPrepError(
                .queueUnavailable,
                "cannot migrate the queue database \(path) to schema version \(latestVersion): "
                    + SQLiteJobQueue.reason(error),
                cause: error)
        }
    }

    /// The migrator with every migration up to `version` registered.
    private static func makeMigrator(upTo version: Int) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in migrations where migration.version <= version {
            let identifier = identifier(migration.version)
            migrator.registerMigration(identifier) { db in
                let applied = try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)",
                    arguments: [identifier])
                if applied == true { throw AppliedConcurrently() }
                try db.execute(sql: migration.sql)
            }
        }
        return migrator
    }

    /// Throws `queue_unavailable` when the database records a migration this build lacks.
    private static func refuseNewerSchema(_ db: Database, migrator: DatabaseMigrator) throws {
        let known = Set(migrations.map { identifier($0.version) })
        let unknown = try migrator.appliedIdentifiers(db).subtracting(known)
        guard !unknown.isEmpty else { return }
        let versions = unknown.compactMap(version(of:))
        let newest = versions.max().map(String.init) ?? unknown.sorted().joined(separator: ", ")
        throw PushPrepError(
            .queueUnavailable,
            "the queue's schema is version \(newest), this PushPrep knows up to \(latestVersion): upgrade PushPrep")
    }

    /// The migration identifier of a version: `v1`, `v2`, ...
    static func identifier(_ version: Int) -> String { "v\(version)" }

    /// The version a migration identifier names, or nil when it is not of the form `vN`.
    private static func version(of identifier: String) -> Int? {
        guard identifier.hasPrefix("v") else { return nil }
        return Int(identifier.dropFirst())
    }
}
