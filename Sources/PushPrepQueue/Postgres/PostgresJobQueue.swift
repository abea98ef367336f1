public import Foundation
public import Logging
import NIOCore
import PostgresNIO
public import PushPrepCore
import Synchronization

/// A ``JobQueue`` in a PostgreSQL database, shared by workers on any number of hosts.
///
/// Queries run on a `PostgresClient` connection pool. Claims take jobs with one
/// `FOR UPDATE SKIP LOCKED` statement, so concurrent workers never wait for each other and no
/// transaction is held while a job runs; the batch methods bind their batch as arrays and
/// `unnest` them, one round trip per batch. Every timestamp comes from the server's clock, so
/// workers whose host clocks disagree still agree on when a lease expires.
///
/// Enqueues, releases and retries notify the `pushprep_jobs` channel; ``waitForWork(timeout:)``
/// listens on it with one dedicated connection and returns as soon as work arrives.
///
/// Open it with ``withQueue(_:logger:_:)``, which owns the pool's lifetime.
public final class PostgresJobQueue: JobQueue, JobQueueAdmin {
    public let description: String
    let client: PostgresClient
    private let notifier: PostgresWorkNotifier
    let logger: Logger

    /// How long opening a TCP connection, TLS and authentication may take.
    static let connectTimeout: Duration = .seconds(5)
    /// How long opening the queue may take in all: connecting, then applying the migrations
    /// (which may wait for another worker that applies them at the same moment).
    static let openTimeout: Duration = .seconds(30)
    /// The most connections one queue opens for its queries (the listener has its own).
    static let maximumConnections = 8
    /// How long a pooled connection may stay idle before it is closed. postgres-nio's pool times
    /// this, and its keep-alive pings, with a `Task.sleep` raced in a task group that every lease
    /// of the connection cancels, and a cancelled sleep stays scheduled, with its task and timer,
    /// for its whole duration (swiftlang/swift#60441). With the pool's defaults (60 s idle, a ping
    /// every 30 s) `pushprep serve` under the soak's load held about 15,000 such sleeps, some 8 MB
    /// (heaptrack: `swift_task_create_common` and `dispatch_source_create` under
    /// `Task.sleep(until:)`), for a minute after each burst; what stays is proportional to the
    /// timers. The keep-alive keeps its default: at 10 s as well, two 120 s soaks out of two did
    /// not drain within 30 s of SIGTERM (the pool's shutdown hung), at 30 s they did.
    static let connectionIdleTimeout: Duration = .seconds(10)

    private init(description: String, client: PostgresClient, notifier: PostgresWorkNotifier, logger: Logger) {
        self.description = description
        self.client = client
        self.notifier = notifier
        self.logger = logger
    }

    /// Connects to the database at `location`, applies the schema migrations it is missing, runs
    /// `body` with the queue, and closes every connection when `body` returns or throws.
    ///
    /// - Throws: `queue_unavailable` when the server cannot be reached (within a few seconds;
    ///   never hangs), refuses the credentials, or holds a schema newer than this PushPrep;
    ///   whatever `body` throws.
    public static func withQueue<Result: Sendable>(
        _ location: QueueURL.PostgresLocation, logger: Logger, _ body: (PostgresJobQueue) async throws -> Result
    ) async throws -> Result {
        let description = QueueURL.postgres(location).description
        let connections = try ConnectionSettings(location, description: description)
        try await open(connections, description: description, logger: logger)

        let client = PostgresClient(configuration: connections.client, backgroundLogger: logger)
        let notifier = PostgresWorkNotifier(logger: logger) {
            try await connections.connect(logger: logger)
        }
        let queue = PostgresJobQueue(description: description, client: client, notifier: notifier, logger: logger)
        // The pool lives exactly as long as `body`. `PostgresClient.run()` also ends on a
        // graceful shutdown of the service that opened the queue, but a worker still reports
        // results and gives leases back after that signal (its drain): so the pool runs in a
        // detached task, which inherits no graceful-shutdown handler, and is cancelled (and
        // awaited, so every connection is closed) when `body` is done. `body` starts only once
        // the pool task runs: a lease taken before `run()` waits and logs a warning, which a
        // starved machine hits when a worker claims right after opening the queue.
        let (started, starting) = AsyncStream<Never>.makeStream()
        let pool = Task.detached {
            starting.finish()
            await client.run()
        }
        for await _ in started {}
        do {
            let result = try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
                group.addTask { await notifier.run() }
                defer { group.cancelAll() }
                return try await body(queue)
            }
            pool.cancel()
            await pool.value
            return result
        } catch {
            pool.cancel()
            await pool.value
            throw error
        }
    }

    // MARK: - Adding and claiming

    public func enqueue(_ specs: [JobSpec]) async throws(PushPrepError) -> [EnqueueResult] {
        try QueueRules.validate(specs)
        guard !specs.isEmpty else { return [] }
        return try await perform("enqueue jobs") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.enqueue(specs, on: connection, logger: logger)
            }
        }
    }

    public func claim(worker: String, limit: Int, lease: Duration) async throws(PushPrepError) -> [ClaimedJob] {
        guard limit > 0 else { return [] }
        let (rows, rescued) = try await perform("claim jobs") { [self] in
            try await client.withConnection { connection in
                let rescued = try await Self.rescue(on: connection, logger: logger)
                let rows = try await connection.execute(
                    ClaimStatement(limit: limit, worker: worker, leaseSeconds: lease.seconds), logger: logger
                ).all()
                return (rows, rescued)
            }
        }
        QueueRules.logRescued(rescued, queue: description, logger: logger)
        return rows.sorted {
            QueueRules.claimsBefore(($0.7, $0.8.timeIntervalSince1970, $0.0), ($1.7, $1.8.timeIntervalSince1970, $1.0))
        }.map { row in
            ClaimedJob(
                lease: Lease(id: row.0, token: row.1), source: row.2, payload: row.3, attempt: row.4,
                maxAttempts: row.5, timeoutSeconds: row.6, requestID: row.9)
        }
    }

    public func rescueExpired() async throws(PushPrepError) -> Int {
        let rescued = try await perform("rescue expired leases") { [self] in
            try await client.withConnection { connection in try await Self.rescue(on: connection, logger: logger) }
        }
        QueueRules.logRescued(rescued, queue: description, logger: logger)
        return rescued
    }

    // MARK: - Leases

    public func heartbeat(_ leases: [Lease], lease: Duration) async throws(PushPrepError) -> HeartbeatResult {
        guard !leases.isEmpty else { return HeartbeatResult(held: [], cancelRequested: []) }
        let rows = try await perform("renew leases") { [self] in
            try await client.execute(HeartbeatStatement(leases: leases, leaseSeconds: lease.seconds), logger: logger)
                .all()
        }
        var result = HeartbeatResult(held: [], cancelRequested: [])
        for (id, token, cancelRequested) in rows {
            let lease = Lease(id: id, token: token)
            result.held.insert(lease)
            if cancelRequested { result.cancelRequested.insert(lease) }
        }
        return result
    }

    public func finish(_ outcomes: [JobOutcome]) async throws(PushPrepError) -> Set<JobID> {
        guard !outcomes.isEmpty else { return [] }
        let rows = try await perform("record job results") { [self] in
            try await client.execute(FinishStatement(outcomes), logger: logger).all()
        }
        if rows.contains(where: { $0.1 }) {
            // A retry without backoff is ready again: wake the idle workers.
            try await perform("announce a job ready to retry") { [self] in
                _ = try await client.query(PostgresQuery(unsafeSQL: PostgresSQL.notify), logger: logger)
            }
        }
        return Set(rows.map { $0.0 })
    }

    public func release(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID> {
        guard !leases.isEmpty else { return [] }
        let ids = try await perform("release jobs") { [self] in
            try await client.execute(ReleaseStatement(leases: leases), logger: logger).all()
        }
        return Set(ids)
    }

    public func expire(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID> {
        guard !leases.isEmpty else { return [] }
        let ids = try await perform("expire leases") { [self] in
            try await client.execute(ExpireStatement(leases: leases), logger: logger).all()
        }
        return Set(ids)
    }

    // MARK: - Managing jobs

    public func list(state: JobState?, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord] {
        var bindings = PostgresBindings()
        // `before` is the last id of the previous page: every job is on exactly one page.
        bindings.append(before ?? JobID.max)
        bindings.append(max(limit, 0))
        if let state { bindings.append(state.rawValue) }
        let sql = state == nil ? PostgresSQL.list : PostgresSQL.listInState
        return try await records("list jobs", PostgresQuery(unsafeSQL: sql, binds: bindings))
    }

    public func job(_ id: JobID) async throws(PushPrepError) -> JobRecord? {
        try await records("read job \(id)", Self.query(PostgresSQL.job, id)).first
    }

    public func retry(_ id: JobID) async throws(PushPrepError) -> JobRecord {
        let retried: [JobRecord]
        do {
            retried = try await records("retry job \(id)", Self.query(PostgresSQL.retry, id))
        } catch {
            guard let cause = error.cause, Self.isUniqueViolation(cause) else { throw error }
            throw try await duplicateError(retrying: id)
        }
        if let record = retried.first { return record }
        throw QueueRules.notRetryable(id, try await existingState(of: id))
    }

    public func cancel(_ id: JobID) async throws(PushPrepError) -> JobRecord {
        if let record = try await records("cancel job \(id)", Self.query(PostgresSQL.cancel, id)).first {
            return record
        }
        throw QueueRules.notCancellable(id, try await existingState(of: id))
    }

    public func prune(finishedBefore before: Date) async throws(PushPrepError) -> Int {
        try await perform("prune finished jobs", deadline: nil) { [self] in
            let rows = try await client.query(Self.query(PostgresSQL.prune, before), logger: logger)
            var count = 0
            for try await pruned in rows.decode(Int.self) { count = pruned }
            return count
        }
    }

    public func stats() async throws(PushPrepError) -> QueueStats {
        try await perform("count jobs") { [self] in
            var stats = QueueStats(
                byState: Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) }), scheduled: 0,
                expiredLeases: 0, oldestReadyAge: nil)
            let rows = try await client.query(PostgresQuery(unsafeSQL: PostgresSQL.stats), logger: logger)
            for try await (state, count, scheduled, expired, oldestReady) in rows.decode(
                (String, Int, Int, Int, Double?).self)
            {
                stats.byState[try JobState(stored: state)] = count
                stats.scheduled += scheduled
                stats.expiredLeases += expired
                if let oldestReady { stats.oldestReadyAge = max(stats.oldestReadyAge ?? 0, oldestReady, 0) }
            }
            let deliveries = try await client.query(PostgresQuery(unsafeSQL: PostgresSQL.deliveryStats), logger: logger)
            for try await (pending, failed) in deliveries.decode((Int, Int).self) {
                stats.pendingDeliveries = pending
                stats.failedDeliveries = failed
            }
            return stats
        }
    }

    /// Returns when a `pushprep_jobs` notification arrives (or arrived since the last wait),
    /// after `timeout`, or when the task is cancelled. The first call starts listening.
    public func waitForWork(timeout: Duration) async {
        await notifier.wait(timeout: timeout)
    }

    // MARK: - Statements

    /// Inserts `specs` and returns, for each, its new job or the queued or running job with its
    /// dedup key. Runs in the caller's transaction.
    static func enqueue(
        _ specs: [JobSpec], on connection: PostgresConnection, logger: Logger
    ) async throws -> [EnqueueResult] {
        var results = [EnqueueResult?](repeating: nil, count: specs.count)
        var pending = Array(specs.indices)
        // A skipped spec's job may finish before it is looked up; such specs are inserted again.
        for _ in 0..<3 where !pending.isEmpty {
            let inserted = try await connection.execute(
                EnqueueStatement(specs: pending.map { specs[$0] }), logger: logger
            ).all()
            for (position, id) in inserted {
                guard let id else { continue }
                results[pending[position - 1]] = EnqueueResult(id: id, created: true, state: .queued)
            }
            let skipped = pending.filter { results[$0] == nil }
            pending = skipped
            guard !skipped.isEmpty else { break }
            let active = try await activeJobs(
                withKeys: Set(skipped.compactMap { specs[$0].dedupKey }), on: connection, logger: logger)
            for index in skipped {
                guard let key = specs[index].dedupKey, let job = active[key] else { continue }
                results[index] = EnqueueResult(id: job.id, created: false, state: job.state)
            }
            pending = skipped.filter { results[$0] == nil }
        }
        guard pending.isEmpty else {
            throw PushPrepError(
                .queueUnavailable, "other clients kept finishing jobs with the same dedup keys while they were enqueued"
            )
        }
        return results.compactMap { $0 }
    }

    /// The queued or running job of each key.
    private static func activeJobs(
        withKeys keys: Set<String>, on connection: PostgresConnection, logger: Logger
    ) async throws -> [String: (id: JobID, state: JobState)] {
        var bindings = PostgresBindings()
        bindings.append(Array(keys))
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: PostgresSQL.activeWithKeys, binds: bindings), logger: logger)
        var jobs: [String: (id: JobID, state: JobState)] = [:]
        for try await (key, id, state) in rows.decode((String, JobID, String).self) {
            jobs[key] = (id, try JobState(stored: state))
        }
        return jobs
    }

    /// Rescues the running jobs whose lease expired, as ``QueueRules/rescue(attempt:maxAttempts:cancelRequested:)``
    /// decides; returns how many.
    private static func rescue(on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let expired = try await connection.execute(ExpiredLeasesStatement(), logger: logger).all()
        guard !expired.isEmpty else { return 0 }
        let rescues = expired.map { lease in
            (lease, QueueRules.rescue(attempt: lease.2, maxAttempts: lease.3, cancelRequested: lease.4))
        }
        var rescued = 0
        for try await count in try await connection.execute(RescueStatement(rescues: rescues), logger: logger) {
            rescued = count
        }
        return rescued
    }

    /// The `invalid_job_state` error for retrying `id` while another job with its dedup key is
    /// queued or running.
    private func duplicateError(retrying id: JobID) async throws(PushPrepError) -> PushPrepError {
        let other: (JobID, JobState)? = try await perform("look up the job that blocks retrying job \(id)") { [self] in
            let rows = try await client.query(Self.query(PostgresSQL.activeDuplicate, id), logger: logger)
            for try await (otherID, state) in rows.decode((JobID, String).self) {
                return (otherID, try JobState(stored: state))
            }
            return nil
        }
        guard let (otherID, state) = other else {
            return PushPrepError(
                .invalidJobState, "job \(id) cannot be retried now: another job with the same dedup key was active")
        }
        return QueueRules.activeDuplicate(otherID, state)
    }

    /// The state of `id`, or `job_not_found`.
    private func existingState(of id: JobID) async throws(PushPrepError) -> JobState {
        guard let job = try await job(id) else { throw QueueRules.notFound(id) }
        return job.state
    }

    /// Runs a query that selects ``PostgresSQL/columns`` and decodes its rows.
    func records(_ action: String, _ query: PostgresQuery) async throws(PushPrepError) -> [JobRecord] {
        try await perform(action) { [self] in
            var records: [JobRecord] = []
            for try await row in try await client.query(query, logger: logger) {
                records.append(try Self.record(row))
            }
            return records
        }
    }

    /// `sql` with `values` bound to `$1`, `$2`, … in order.
    static func query<each Value: PostgresNonThrowingEncodable & PostgresDynamicTypeEncodable>(
        _ sql: String, _ values: repeat each Value
    ) -> PostgresQuery {
        var bindings = PostgresBindings()
        for value in repeat each values { bindings.append(value) }
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    // MARK: - Rows

    /// A row selected with ``PostgresSQL/columns``.
    static func record(_ row: PostgresRow) throws -> JobRecord {
        try JobRecord(reading: Columns(row: row.makeRandomAccess()))
    }

    /// A job row read by column name (``JobColumns``).
    struct Columns: JobColumns {
        let row: PostgresRandomAccessRow

        func text(_ column: String) throws -> String? { try row[column].decode(String?.self) }
        func integer(_ column: String) throws -> Int? { try row[column].decode(Int?.self) }
        func number(_ column: String) throws -> Double? { try row[column].decode(Double?.self) }
        func flag(_ column: String) throws -> Bool? { try row[column].decode(Bool?.self) }
        func date(_ column: String) throws -> Date? { try row[column].decode(Date?.self) }
    }
}

extension AsyncSequence {
    /// Every element, in order.
    func all() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self { elements.append(element) }
        return elements
    }
}
