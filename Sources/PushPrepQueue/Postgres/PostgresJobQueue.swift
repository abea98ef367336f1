public import Foundation
public import Logging
import NIOCore
import PostgresNIO
public import PushPrepCore
import PushPrepRemote
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
public final class PostgresJobQueue: JobQueue {
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
        _ location: QueueURL.PostgresLocation, logger: Logger, _ body: (any JobQueue) async throws -> Result
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
        try Self.validate(specs)
        guard !specs.isEmpty else { return [] }
        return try await perform("enqueue jobs") {
            try await client.withConnection { connection in
                try await connection.withTransaction(logger: logger) { connection in
                    try await Self.enqueue(specs, on: connection, logger: logger)
                }
            }
        }
    }

    public func claim(worker: String, limit: Int, lease: Duration) async throws(PushPrepError) -> [ClaimedJob] {
        guard limit > 0 else { return [] }
        let (rows, rescued) = try await perform("claim jobs") {
            try await client.withConnection { connection in
                let rescued = try await Self.rescue(on: connection, logger: logger)
                let rows = try await connection.execute(
                    ClaimStatement(limit: limit, worker: worker, leaseSeconds: lease.seconds), logger: logger
                ).all()
                return (rows, rescued)
            }
        }
        logRescued(rescued)
        return rows.sorted(by: Self.inClaimOrder).map { row in
            ClaimedJob(
                lease: Lease(id: row.0, token: row.1), source: row.2, payload: row.3, attempt: row.4,
                maxAttempts: row.5, timeoutSeconds: row.6, requestID: row.9)
        }
    }

    public func rescueExpired() async throws(PushPrepError) -> Int {
        let rescued = try await perform("rescue expired leases") {
            try await client.withConnection { connection in try await Self.rescue(on: connection, logger: logger) }
        }
        logRescued(rescued)
        return rescued
    }

    // MARK: - Leases

    public func heartbeat(_ leases: [Lease], lease: Duration) async throws(PushPrepError) -> HeartbeatResult {
        guard !leases.isEmpty else { return HeartbeatResult(held: [], cancelRequested: []) }
        let rows = try await perform("renew leases") {
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
        let rows = try await perform("record job results") {
            try await client.execute(FinishStatement(outcomes), logger: logger).all()
        }
        if rows.contains(where: { $0.1 }) {
            // A retry without backoff is ready again: wake the idle workers.
            try await perform("announce a job ready to retry") {
                _ = try await client.query(PostgresQuery(unsafeSQL: PostgresSQL.notify), logger: logger)
            }
        }
        return Set(rows.map { $0.0 })
    }

    public func release(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID> {
        guard !leases.isEmpty else { return [] }
        let ids = try await perform("release jobs") {
            try await client.execute(ReleaseStatement(leases: leases), logger: logger).all()
        }
        return Set(ids)
    }

    public func expire(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID> {
        guard !leases.isEmpty else { return [] }
        let ids = try await perform("expire leases") {
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
        let state = try await existingState(of: id)
        throw PushPrepError(
            .invalidJobState, "job \(id) is \(state.rawValue); only failed, dead or cancelled jobs can be retried")
    }

    public func cancel(_ id: JobID) async throws(PushPrepError) -> JobRecord {
        if let record = try await records("cancel job \(id)", Self.query(PostgresSQL.cancel, id)).first {
            return record
        }
        let state = try await existingState(of: id)
        throw PushPrepError(
            .invalidJobState, "job \(id) is \(state.rawValue); only queued or running jobs can be cancelled")
    }

    public func prune(finishedBefore before: Date) async throws(PushPrepError) -> Int {
        try await perform("prune finished jobs") {
            let rows = try await client.query(Self.query(PostgresSQL.prune, before), logger: logger)
            var count = 0
            for try await pruned in rows.decode(Int.self) { count = pruned }
            return count
        }
    }

    public func stats() async throws(PushPrepError) -> QueueStats {
        try await perform("count jobs") {
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

    private static func rescue(on connection: PostgresConnection, logger: Logger) async throws -> Int {
        var rescued = 0
        for try await count in try await connection.execute(RescueStatement(), logger: logger) {
            rescued = count
        }
        return rescued
    }

    /// The `invalid_job_state` error for retrying `id` while another job with its dedup key is
    /// queued or running.
    private func duplicateError(retrying id: JobID) async throws(PushPrepError) -> PushPrepError {
        let other: (JobID, String)? = try await perform("look up the job that blocks retrying job \(id)") {
            let rows = try await client.query(Self.query(PostgresSQL.activeDuplicate, id), logger: logger)
            for try await (otherID, state) in rows.decode((JobID, String).self) {
                return (otherID, state)
            }
            return nil
        }
        guard let (otherID, state) = other else {
            return PushPrepError(
                .invalidJobState, "job \(id) cannot be retried now: another job with the same dedup key was active")
        }
        return PushPrepError(
            .invalidJobState, "job \(otherID) with the same source and settings is already \(state)")
    }

    /// The state of `id`, or `job_not_found`.
    private func existingState(of id: JobID) async throws(PushPrepError) -> JobState {
        guard let job = try await job(id) else { throw PushPrepError(.jobNotFound, "no job \(id)") }
        return job.state
    }

    /// Runs a query that selects ``PostgresSQL/columns`` and decodes its rows.
    func records(_ action: String, _ query: PostgresQuery) async throws(PushPrepError) -> [JobRecord] {
        try await perform(action) {
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
        let (id, state, source, payload, dedupKey, priority, attempt, maxAttempts, timeoutSeconds, runAt) =
            try row.decode((JobID, String, String, String, String?, Int, Int, Int, Double?, Date).self)
        let columns = row.makeRandomAccess()
        return JobRecord(
            id: id, state: try JobState(stored: state), source: source, payload: payload, dedupKey: dedupKey,
            priority: priority, attempt: attempt, maxAttempts: maxAttempts, timeoutSeconds: timeoutSeconds,
            runAt: runAt, createdAt: try columns["created_at"].decode(Date.self),
            updatedAt: try columns["updated_at"].decode(Date.self),
            finishedAt: try columns["finished_at"].decode(Date?.self),
            leaseOwner: try columns["lease_owner"].decode(String?.self),
            leaseToken: try columns["lease_token"].decode(Int64.self),
            leaseExpiresAt: try columns["lease_expires_at"].decode(Date?.self),
            cancelRequested: try columns["cancel_requested"].decode(Bool.self),
            errorCode: try columns["error_code"].decode(String?.self),
            errorMessage: try columns["error_message"].decode(String?.self),
            result: try columns["result"].decode(String?.self),
            callbackURL: try columns["callback_url"].decode(String?.self),
            metadata: try columns["metadata"].decode(String?.self),
            requestID: try columns["request_id"].decode(String?.self),
            kind: JobKind(stored: try columns["kind"].decode(String?.self)))
    }

    /// Claim order: priority (highest first), then `run_at`, then id. `RETURNING` leaves the
    /// order of its rows unspecified.
    private static func inClaimOrder(_ lhs: ClaimStatement.Row, _ rhs: ClaimStatement.Row) -> Bool {
        if lhs.7 != rhs.7 { return lhs.7 > rhs.7 }
        if lhs.8 != rhs.8 { return lhs.8 < rhs.8 }
        return lhs.0 < rhs.0
    }

    static func validate(_ specs: [JobSpec]) throws(PushPrepError) {
        for spec in specs { try spec.validate() }
    }

    // MARK: - Errors

    /// Runs `body`; `PushPrepError`s pass through, database errors become `queue_unavailable`.
    func perform<T>(_ action: String, _ body: () async throws -> T) async throws(PushPrepError) -> T {
        do {
            return try await body()
        } catch {
            if let error = Self.pushPrepError(in: error) { throw error }
            throw PushPrepError(
                .queueUnavailable, "cannot \(action) in the queue at \(description): \(Self.reason(error))",
                cause: error)
        }
    }

    /// A ``PushPrepError`` thrown inside a transaction, which PostgresNIO wraps.
    private static func pushPrepError(in error: any Error) -> PushPrepError? {
        if let error = error as? PushPrepError { return error }
        if let error = error as? PostgresTransactionError, let closureError = error.closureError {
            return pushPrepError(in: closureError)
        }
        return nil
    }

    /// The network failure under a connection error (PostgresNIO wraps NIO's), if it is one.
    static func networkFailure(in error: any Error) -> NetworkFailure? {
        if let error = error as? PSQLError {
            guard [.connectionError, .uncleanShutdown, .failedToAddSSLHandler].contains(error.code) else { return nil }
            return error.underlying.flatMap(networkFailure)
        }
        return NetworkFailure(error)
    }

    static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }

    /// A short explanation of a database or connection error, for messages. PostgresNIO's own
    /// descriptions are deliberately generic.
    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as PushPrepError:
            return error.message
        case let error as PostgresTransactionError:
            let inner = error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError
            return inner.map(reason) ?? "the transaction failed"
        case let error as PSQLError:
            return reason(error)
        case is CancellationError:
            return "the task was cancelled"
        case let error as NIOConnectionError:
            if let failure = NetworkFailure(error) { return failure.connecting(to: error.host, port: error.port) }
            return error.connectionErrors.last.map { reason($0.error) } ?? "\(error)"
        default:
            return "\(error)"
        }
    }

    private static func reason(_ error: PSQLError) -> String {
        if let message = error.serverInfo?[.message] {
            let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return message + state
        }
        switch error.code {
        case .connectionError, .uncleanShutdown, .failedToAddSSLHandler:
            return error.underlying.map(reason) ?? "the connection failed"
        case .serverClosedConnection: return "the server closed the connection"
        case .clientClosedConnection: return "the connection was closed"
        case .sslUnsupported: return "the server does not support TLS (add ?sslmode=disable to connect without)"
        case .poolClosed: return "the queue is closed"
        case .queryCancelled: return "the query was cancelled"
        case .authMechanismRequiresPassword: return "the server asks for a password and the URL has none"
        default: return error.underlying.map { "\(error.code): \(reason($0))" } ?? "\(error.code)"
        }
    }

    private func logRescued(_ count: Int) {
        guard count > 0 else { return }
        logger.notice(
            "rescued jobs whose lease expired", metadata: ["queue": "\(description)", "jobs": "\(count)"])
    }
}

// MARK: - Opening

extension PostgresJobQueue {
    /// How to reach the database: for the pool, and for the connections opened outside it (the
    /// migration and the listener).
    fileprivate struct ConnectionSettings: Sendable {
        var client: PostgresClient.Configuration
        var connection: PostgresConnection.Configuration
        let description: String
        /// The server's host and port, as messages name them.
        let host: String
        let port: Int

        init(_ location: QueueURL.PostgresLocation, description: String) throws(PushPrepError) {
            self.description = description
            host = location.host
            port = location.port
            let clientTLS: PostgresClient.Configuration.TLS
            let connectionTLS: PostgresConnection.Configuration.TLS
            if location.tls {
                // Certificates are verified against the system's roots, with the host name.
                let tls = TLSConfiguration.makeClientConfiguration()
                do {
                    connectionTLS = .require(try NIOSSLContext(configuration: tls))
                } catch {
                    throw PushPrepError(
                        .queueUnavailable, "cannot set up TLS for the queue at \(description): \(error)", cause: error)
                }
                clientTLS = .require(tls)
            } else {
                (clientTLS, connectionTLS) = (.disable, .disable)
            }
            client = PostgresClient.Configuration(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database, tls: clientTLS)
            client.options.connectTimeout = PostgresJobQueue.connectTimeout
            client.options.maximumConnections = PostgresJobQueue.maximumConnections
            client.options.connectionIdleTimeout = PostgresJobQueue.connectionIdleTimeout
            client.options.additionalStartupParameters = [("application_name", "pushprep")]
            connection = PostgresConnection.Configuration(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database, tls: connectionTLS)
            connection.options.connectTimeout = TimeAmount(PostgresJobQueue.connectTimeout)
            connection.options.additionalStartupParameters = [("application_name", "pushprep")]
        }

        /// Opens a connection outside the pool.
        func connect(logger: Logger) async throws -> PostgresConnection {
            try await PostgresConnection.connect(
                configuration: connection, id: Self.nextConnectionID.wrappingAdd(1, ordering: .relaxed).oldValue,
                logger: logger)
        }

        private static let nextConnectionID = Atomic<Int>(1_000_000)
    }

    /// Connects once and applies the missing migrations, all within ``openTimeout``.
    ///
    /// Connecting on a connection of its own (rather than through the pool, which retries in
    /// the background) reports an unreachable server or refused credentials at once, with the
    /// reason.
    fileprivate static func open(
        _ settings: ConnectionSettings, description: String, logger: Logger
    ) async throws(PushPrepError) {
        let connection: PostgresConnection
        do {
            connection = try await settings.connect(logger: logger)
        } catch {
            // A network failure in words (NetworkFailure), the library's text at debug level.
            if let failure = networkFailure(in: error) {
                logger.debug("cannot connect to the queue", metadata: ["queue": "\(description)", "error": "\(error)"])
                throw PushPrepError(
                    .queueUnavailable,
                    "cannot connect to the queue at \(description): "
                        + failure.connecting(to: settings.host, port: settings.port),
                    cause: error)
            }
            throw PushPrepError(
                .queueUnavailable, "cannot connect to the queue at \(description): \(reason(error))", cause: error)
        }
        do {
            let applied = try await withDeadline(openTimeout, closing: connection) {
                try await PostgresSchema.migrate(connection, logger: logger)
            }
            if !applied.isEmpty {
                logger.info(
                    "migrated the queue's schema",
                    metadata: ["queue": "\(description)", "versions": "\(applied.map(String.init))"])
            }
            try? await connection.close()
        } catch {
            try? await connection.close()
            if let error = pushPrepError(in: error) { throw error }
            throw PushPrepError(
                .queueUnavailable,
                "cannot migrate the queue at \(description) to schema version \(PostgresSchema.latestVersion): "
                    + reason(error),
                cause: error)
        }
    }

    /// Connects to `location` and applies the migrations up to `version` only: tests make the
    /// database of an older release with it (a queue's statements need the latest schema).
    static func migrate(_ location: QueueURL.PostgresLocation, upTo version: Int, logger: Logger) async throws {
        let settings = try ConnectionSettings(location, description: QueueURL.postgres(location).description)
        let connection = try await settings.connect(logger: logger)
        do {
            _ = try await PostgresSchema.migrate(connection, logger: logger, upTo: version)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The deadline of ``withDeadline(_:closing:_:)`` passed.
    fileprivate struct DeadlineExceeded: Error, CustomStringConvertible {
        let limit: Duration
        var description: String { "the server did not answer within \(Int(limit.seconds)) seconds" }
    }

    /// Runs `body`, closing `connection` (which fails its query) when `body` has not finished
    /// after `limit`.
    fileprivate static func withDeadline<T: Sendable>(
        _ limit: Duration, closing connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                // An Alarm: a cancelled sleep would stay scheduled for `limit` (swiftlang/swift#60441).
                // It also returns when cancelled: then the body won.
                await Alarm(after: limit).wait()
                try Task.checkCancellation()
                try? await connection.close()
                throw DeadlineExceeded(limit: limit)
            }
            defer { group.cancelAll() }
            // The first child to finish decides: the body's value or error, or the deadline.
            guard let value = try await group.next() ?? nil else { throw DeadlineExceeded(limit: limit) }
            return value
        }
    }
}

extension AsyncSequence {
    /// Every element, in order.
    fileprivate func all() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self { elements.append(element) }
        return elements
    }
}
