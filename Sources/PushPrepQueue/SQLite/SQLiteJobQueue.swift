public import Foundation
import GRDB
public import Logging
public import PushPrepCore

/// A ``JobQueue`` in one SQLite file, shared by the worker processes of one machine.
///
/// The file is opened as a GRDB `DatabasePool` in WAL mode with `synchronous=NORMAL`: reads
/// (`list`, `job`, `stats`) run beside the writes, and every write is one short
/// `BEGIN IMMEDIATE` transaction, so a writer in another process waits for the lock (up to the
/// busy timeout) instead of failing when it upgrades a read lock. Timestamps are Unix seconds
/// from this machine's clock, which every process on it shares.
public final class SQLiteJobQueue: JobQueue, JobQueueAdmin {
    public let description: String
    private let path: String
    private let pool: DatabasePool
    private let logger: Logger

    /// Opens (or creates, with its parent directory) the queue database at `path` and applies
    /// the schema migrations it is missing.
    ///
    /// - Parameter busyTimeout: How long a write waits for another process's transaction.
    /// - Throws: `queue_unavailable` when the file cannot be created, opened or migrated, or
    ///   when its schema is newer than this PushPrep.
    public convenience init(path: String, logger: Logger, busyTimeout: Duration = .seconds(10)) throws(PushPrepError) {
        try self.init(path: path, logger: logger, busyTimeout: busyTimeout, schemaVersion: SQLiteSchema.latestVersion)
    }

    /// Opens the queue with its schema migrated up to `schemaVersion` only: tests make the
    /// database of an older release with it (such a queue's statements need the latest schema).
    init(path: String, logger: Logger, busyTimeout: Duration, schemaVersion: Int) throws(PushPrepError) {
        self.path = path
        self.description = "sqlite:\(path)"
        self.logger = logger
        try Self.createParentDirectory(of: path)
        pool = try Self.openPool(path: path, busyTimeout: busyTimeout)
        try SQLiteSchema.migrate(pool, path: path, upTo: schemaVersion)
        logger.debug("opened the job queue", metadata: ["queue": "\(description)"])
    }

    // MARK: - Adding and claiming

    public func enqueue(_ specs: [JobSpec]) async throws(PushPrepError) -> [EnqueueResult] {
        try QueueRules.validate(specs)
        guard !specs.isEmpty else { return [] }
        return try await write("enqueue jobs") { db in try Self.insert(specs, db, now: Self.now()) }
    }

    /// Inserts `specs` and returns, for each, its new job or the queued or running job with its
    /// dedup key. Runs in the caller's transaction.
    static func insert(_ specs: [JobSpec], _ db: Database, now: Double) throws -> [EnqueueResult] {
        let insert = try db.cachedStatement(sql: SQL.insert)
        let existing = try db.cachedStatement(sql: SQL.activeWithKey)
        return try specs.map { spec in
            let arguments: StatementArguments = [
                spec.source, spec.payload, spec.dedupKey, spec.priority, spec.maxAttempts, spec.timeout?.seconds,
                now + spec.delay.seconds, now, now, spec.callbackURL, spec.metadata, spec.requestID,
            ]
            if let id = try Int64.fetchOne(insert, arguments: arguments) {
                return EnqueueResult(id: id, created: true, state: .queued)
            }
            // Nothing inserted: the dedup index names a queued or running job with this key.
            guard let row = try Row.fetchOne(existing, arguments: [spec.dedupKey]) else {
                throw DatabaseError(message: "an insert was skipped, yet no active job has its dedup key")
            }
            return EnqueueResult(id: row[0], created: false, state: try JobState(stored: row[1]))
        }
    }

    public func claim(worker: String, limit: Int, lease: Duration) async throws(PushPrepError) -> [ClaimedJob] {
        guard limit > 0 else { return [] }
        let (jobs, rescued) = try await write("claim jobs") { db in
            let now = Self.now()
            let rescued = try Self.rescue(db, now: now)
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: SQL.claim),
                arguments: ["worker": worker, "now": now, "expires": now + lease.seconds, "limit": limit])
            return (rows.sorted(by: Self.inClaimOrder).map(Self.claimedJob), rescued)
        }
        QueueRules.logRescued(rescued, queue: description, logger: logger)
        return jobs
    }

    public func rescueExpired() async throws(PushPrepError) -> Int {
        let rescued = try await write("rescue expired leases") { db in try Self.rescue(db, now: Self.now()) }
        QueueRules.logRescued(rescued, queue: description, logger: logger)
        return rescued
    }

    // MARK: - Leases

    public func heartbeat(_ leases: [Lease], lease: Duration) async throws(PushPrepError) -> HeartbeatResult {
        guard !leases.isEmpty else { return HeartbeatResult(held: [], cancelRequested: []) }
        return try await write("renew leases") { db in
            let expires = Self.now() + lease.seconds
            let statement = try db.cachedStatement(sql: SQL.heartbeat)
            var held = Set<Lease>()
            var cancelRequested = Set<Lease>()
            for lease in leases {
                guard let cancel = try Bool.fetchOne(statement, arguments: [expires, lease.id, lease.token]) else {
                    continue
                }
                held.insert(lease)
                if cancel { cancelRequested.insert(lease) }
            }
            return HeartbeatResult(held: held, cancelRequested: cancelRequested)
        }
    }

    public func finish(_ outcomes: [JobOutcome]) async throws(PushPrepError) -> Set<JobID> {
        guard !outcomes.isEmpty else { return [] }
        return try await write("record job results") { db in
            let now = Self.now()
            var matched = Set<JobID>()
            for outcome in outcomes {
                let (sql, arguments) = Self.finishStatement(outcome, now: now)
                try db.cachedStatement(sql: sql).execute(arguments: arguments)
                if db.changesCount > 0 { matched.insert(outcome.lease.id) }
            }
            return matched
        }
    }

    public func release(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID> {
        guard !leases.isEmpty else { return [] }
        return try await write("release jobs") { db in
            let now = Self.now()
            let statement = try db.cachedStatement(sql: SQL.release)
            var matched = Set<JobID>()
            for lease in leases {
                try statement.execute(arguments: ["now": now, "id": lease.id, "token": lease.token])
                if db.changesCount > 0 { matched.insert(lease.id) }
            }
            return matched
        }
    }

    public func expire(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID> {
        guard !leases.isEmpty else { return [] }
        return try await write("expire leases") { db in
            let statement = try db.cachedStatement(sql: SQL.expire)
            let attempt = try db.cachedStatement(sql: SQL.expireAttempt)
            var matched = Set<JobID>()
            for lease in leases {
                // A moment in the past: rescue compares lease_expires_at < now.
                try statement.execute(arguments: ["past": Self.now() - 1, "id": lease.id, "token": lease.token])
                guard db.changesCount > 0 else { continue }
                matched.insert(lease.id)
                try attempt.execute(arguments: ["now": Self.now(), "id": lease.id, "token": lease.token])
            }
            return matched
        }
    }

    // MARK: - Managing jobs

    public func list(state: JobState?, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord] {
        try await read("list jobs") { db in
            // `before` is the last id of the previous page: every job is on exactly one page.
            var arguments: StatementArguments = ["before": before ?? JobID.max, "limit": max(limit, 0)]
            if let state { arguments += ["state": state.rawValue] }
            let rows = try Row.fetchAll(db, sql: state == nil ? SQL.list : SQL.listInState, arguments: arguments)
            return try rows.map(Self.record)
        }
    }

    public func job(_ id: JobID) async throws(PushPrepError) -> JobRecord? {
        try await read("read job \(id)") { db in
            try Row.fetchOne(db, sql: SQL.job, arguments: [id]).map(Self.record)
        }
    }

    public func retry(_ id: JobID) async throws(PushPrepError) -> JobRecord {
        try await write("retry job \(id)") { db in
            let current = try Self.existingJob(db, id)
            guard current.state.isRetryable else { throw QueueRules.notRetryable(id, current.state) }
            if let key = current.dedupKey, let other = try Row.fetchOne(db, sql: SQL.activeWithKey, arguments: [key]) {
                throw QueueRules.activeDuplicate(other[0], try JobState(stored: other[1]))
            }
            return try Self.updatedRecord(db, sql: SQL.retryJob, arguments: ["now": Self.now(), "id": id])
        }
    }

    public func cancel(_ id: JobID) async throws(PushPrepError) -> JobRecord {
        try await write("cancel job \(id)") { db in
            let current = try Self.existingJob(db, id)
            let arguments: StatementArguments = ["now": Self.now(), "id": id]
            switch current.state {
            case .queued:
                return try Self.updatedRecord(db, sql: SQL.cancelQueued, arguments: arguments)
            case .running:
                return try Self.updatedRecord(db, sql: SQL.requestCancel, arguments: arguments)
            case .succeeded, .failed, .dead, .cancelled:
                throw QueueRules.notCancellable(id, current.state)
            }
        }
    }

    public func prune(finishedBefore before: Date) async throws(PushPrepError) -> Int {
        try await write("prune finished jobs") { db in
            try db.execute(sql: SQL.prune, arguments: [before.timeIntervalSince1970])
            let pruned = db.changesCount
            try db.execute(sql: SQL.pruneDeliveries, arguments: [before.timeIntervalSince1970])
            return pruned
        }
    }

    public func stats() async throws(PushPrepError) -> QueueStats {
        try await read("count jobs") { db in
            let now = Self.now()
            var byState = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) })
            var scheduled = 0
            var expiredLeases = 0
            var oldestReady: Double?
            for row in try Row.fetchAll(db, sql: SQL.stats, arguments: ["now": now]) {
                byState[try JobState(stored: row[0])] = row[1]
                scheduled += row[2] as Int
                expiredLeases += row[3] as Int
                if let runAt = row[4] as Double? { oldestReady = min(oldestReady ?? runAt, runAt) }
            }
            let deliveries = try Row.fetchOne(db, sql: SQL.deliveryStats)
            return QueueStats(
                byState: byState, scheduled: scheduled, expiredLeases: expiredLeases,
                oldestReadyAge: oldestReady.map { max(now - $0, 0) }, pendingDeliveries: deliveries?[0] ?? 0,
                failedDeliveries: deliveries?[1] ?? 0)
        }
    }

    /// SQLite cannot notify other processes: sleeps for `timeout` (the poll interval), or until
    /// the task is cancelled.
    public func waitForWork(timeout: Duration) async {
        try? await Task.sleep(for: timeout)
    }

    // MARK: - Transactions

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so
    /// the transaction never has to upgrade a read lock that another process's write made
    /// stale. `PushPrepError`s thrown by `body` roll back and pass through; database errors
    /// become `queue_unavailable`.
    func write<T: Sendable>(
        _ action: String, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(PushPrepError) -> T {
        do {
            return try await pool.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                // inTransaction either ran the closure, which set the result, or threw.
                return result!
            }
        } catch {
            throw failure(action, error)
        }
    }

    /// Runs `body` in a read transaction that sees one snapshot and does not block writers.
    func read<T: Sendable>(
        _ action: String, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(PushPrepError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw failure(action, error)
        }
    }

    private func failure(_ action: String, _ error: any Error) -> PushPrepError {
        if let error = error as? PushPrepError { return error }
        return PushPrepError(
            .queueUnavailable, "cannot \(action) in the queue database \(path): \(Self.reason(error))", cause: error)
    }

    /// A short explanation of a database error, for messages.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else {
            return error is CancellationError ? "the task was cancelled" : "\(error)"
        }
        let message = error.message ?? "SQLite error \(error.extendedResultCode.rawValue)"
        if error.resultCode == .SQLITE_BUSY {
            return "\(message) (another process held the database longer than the busy timeout)"
        }
        return message
    }

    // MARK: - Opening

    /// Each connection's page cache, in KiB (SQLite's default is 2,000 KiB). The pool holds up to
    /// six connections (a writer and GRDB's five readers), and a server opens a pool for its API,
    /// its workers and its webhooks: each connection fills its cache as the file grows, so with
    /// the default a busy server's memory grew for minutes (`make soak`). The queue's hot pages
    /// (the pending-jobs index, the latest rows) fit in far less, and the rest is in the kernel's
    /// page cache anyway.
    static let pageCacheKiB = 512

    private static func configuration(busyTimeout: Duration) -> Configuration {
        var configuration = Configuration()
        configuration.label = "pushprep.queue"
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(busyTimeout.seconds)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA cache_size = -\(pageCacheKiB)")
        }
        return configuration
    }

    /// Opens the pool, retrying for up to `busyTimeout` while other processes open the same file.
    ///
    /// Opening puts a new file in WAL mode and writes to it; those writes upgrade a read lock,
    /// which SQLite refuses at once with `SQLITE_BUSY` (its busy handler would deadlock) when
    /// another connection is doing the same. Four workers started together on a new queue file
    /// hit this about one time in four.
    private static func openPool(path: String, busyTimeout: Duration) throws(PushPrepError) -> DatabasePool {
        let deadline = ContinuousClock.now + busyTimeout
        var retries = 0
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration(busyTimeout: busyTimeout))
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline
            {
                // 1 ms up to 80 ms, at random so that the openers do not retry in step.
                retries += 1
                usleep(UInt32.random(in: 1_000...(5_000 << min(retries, 4))))
            } catch {
                throw PushPrepError(
                    .queueUnavailable, "cannot open the queue database \(path): \(reason(error))", cause: error)
            }
        }
    }

    private static func createParentDirectory(of path: String) throws(PushPrepError) {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw PushPrepError(
                .queueUnavailable,
                "cannot create the directory \(directory.path) for the queue database \(path): "
                    + error.localizedDescription,
                cause: error)
        }
    }

    // MARK: - Statements

    /// Rescues the running jobs whose lease expired before `now` (see
    /// ``JobQueue/rescueExpired()``); returns how many.
    private static func rescue(_ db: Database, now: Double) throws -> Int {
        let expired = try Row.fetchAll(db.cachedStatement(sql: SQL.expiredLeases), arguments: ["now": now])
        let update = try db.cachedStatement(sql: SQL.rescue)
        var rescued = 0
        for row in expired {
            let rescue = QueueRules.rescue(attempt: row[2], maxAttempts: row[3], cancelRequested: row[4])
            try update.execute(arguments: [
                "now": now, "id": row[0] as JobID, "token": row[1] as Int64, "state": rescue.state.rawValue,
                "requeued": rescue.requeued, "code": rescue.code, "message": rescue.message,
            ])
            rescued += db.changesCount
        }
        return rescued
    }

    /// The statement that records `outcome` as ``QueueRules/resolve(_:)`` decides it, and its
    /// arguments.
    private static func finishStatement(_ outcome: JobOutcome, now: Double) -> (String, StatementArguments) {
        var arguments: StatementArguments = ["now": now, "id": outcome.lease.id, "token": outcome.lease.token]
        switch QueueRules.resolve(outcome) {
        case .succeeded(let result, let kind):
            arguments += ["result": result, "kind": kind.stored]
            return (SQL.succeeded, arguments)
        case .ended(let state, let code, let message):
            arguments += ["state": state.rawValue, "code": code, "message": message]
            return (SQL.ended, arguments)
        case .requeued(let code, let message, let delay):
            arguments += ["code": code, "message": message, "runAt": now + delay.seconds]
            return (SQL.requeued, arguments)
        case .cancelled(let message):
            arguments += ["message": message]
            return (SQL.cancelled, arguments)
        }
    }

    /// The job `id` as it is, or `job_not_found`.
    private static func existingJob(_ db: Database, _ id: JobID) throws -> JobRecord {
        guard let row = try Row.fetchOne(db, sql: SQL.job, arguments: [id]) else {
            throw QueueRules.notFound(id)
        }
        return try record(row)
    }

    /// Runs an `UPDATE ... RETURNING` of one existing job and decodes the row.
    private static func updatedRecord(_ db: Database, sql: String, arguments: StatementArguments) throws -> JobRecord {
        guard let row = try Row.fetchOne(db, sql: sql, arguments: arguments) else {
            throw DatabaseError(message: "the job vanished during its update")
        }
        return try record(row)
    }

    // MARK: - Rows

    static func now() -> Double { Date().timeIntervalSince1970 }

    /// ``QueueRules/claimsBefore(_:_:)`` for claimed rows.
    private static func inClaimOrder(_ lhs: Row, _ rhs: Row) -> Bool {
        func key(_ row: Row) -> (priority: Int, runAt: Double, id: JobID) {
            (row["priority"], row["run_at"], row["id"])
        }
        return QueueRules.claimsBefore(key(lhs), key(rhs))
    }

    /// A row returned by ``SQL/claim``, read by column name.
    private static func claimedJob(_ row: Row) -> ClaimedJob {
        ClaimedJob(
            lease: Lease(id: row["id"], token: row["lease_token"]), source: row["source"], payload: row["payload"],
            attempt: row["attempt"], maxAttempts: row["max_attempts"], timeoutSeconds: row["timeout_seconds"],
            requestID: row["request_id"])
    }

    /// A row selected with ``SQL/columns``.
    static func record(_ row: Row) throws -> JobRecord {
        try JobRecord(reading: Columns(row: row))
    }

    /// A job row read by column name (``JobColumns``). A value of another type than its column's
    /// reads as NULL, which a required column refuses: never a trap in GRDB's subscript.
    struct Columns: JobColumns {
        let row: Row

        private func value<Value: DatabaseValueConvertible>(_ column: String) -> Value? {
            Value.fromDatabaseValue((row[column] as DatabaseValue?) ?? .null)
        }

        func text(_ column: String) -> String? { value(column) }
        func integer(_ column: String) -> Int? { value(column) }
        func number(_ column: String) -> Double? { value(column) }
        func flag(_ column: String) -> Bool? { value(column) }
        func date(_ column: String) -> Date? { number(column).map(Date.init(timeIntervalSince1970:)) }
    }

    /// Every column of a job, in the order ``record(_:)`` reads them.
    static let recordColumns = SQL.columns
}
