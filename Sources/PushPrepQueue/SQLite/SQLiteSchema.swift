import GRDB
import PushPrep

/// The SQLite queue's schema, as versioned GRDB migrations recorded in `grdb_migrations`.
///
/// Migrations are identified `v1`, `v2`, ...; a released migration is never edited, a change is
/// a new migration. Opening a queue applies the missing ones; a database that records a
/// migration this build does not know was upgraded by a newer PushPrep and is refused, so an
/// old worker never writes rows it does not understand.
enum SQLiteSchema {
    /// Every migration, oldest first: its version and its SQL.
    private static let migrations: [(version: Int, sql: String)] = [(1, version1)]

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

    /// Thrown by a migration that another connection applied after the migrator looked: the
    /// migrator is run again and skips it.
    private struct AppliedConcurrently: Error {}

    /// Applies the migrations `pool` is missing.
    ///
    /// GRDB's migrator reads the applied migrations before it takes the write lock, so two
    /// processes opening a new file at once could both try to apply `v1`. Each migration
    /// therefore checks again inside its own `BEGIN IMMEDIATE` transaction, where no other
    /// writer can interleave, and steps aside when it finds itself applied; the migrator then
    /// runs again and sees it done.
    ///
    /// - Throws: `queue_unavailable` when the schema is newer than this build, or when a
    ///   migration fails.
    static func migrate(_ pool: DatabasePool, path: String) throws(PushPrepError) {
        let migrator = makeMigrator()
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

    /// The migrator with every migration registered.
    private static func makeMigrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in migrations {
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
