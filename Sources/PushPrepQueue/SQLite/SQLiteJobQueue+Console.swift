package import Foundation
import GRDB
package import PushPrepCore

/// What the console reads (schema version 3): filtered pages of jobs, bulk retry, activity,
/// workers and attempts.
extension SQLiteJobQueue: ConsoleQueries {
    package func list(filter: JobFilter, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord] {
        try filter.validate()
        let (conditions, arguments) = Self.conditions(filter, before: before)
        return try await read("list jobs") { db in
            var all = arguments
            all += ["limit": JobFilter.clampedPage(limit)]
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT \(Self.recordColumns) FROM pushprep_jobs WHERE \(conditions) ORDER BY id DESC LIMIT :limit",
                arguments: all)
            return try rows.map(Self.record)
        }
    }

    package func count(filter: JobFilter) async throws(PushPrepError) -> Int {
        try filter.validate()
        let (conditions, arguments) = Self.conditions(filter, before: nil)
        return try await read("count jobs") { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pushprep_jobs WHERE \(conditions)", arguments: arguments)
                ?? 0
        }
    }

    package func retry(matching filter: JobFilter) async throws(PushPrepError) -> Int {
        try filter.validate()
        guard let retryable = filter.retryable else { return 0 }
        let (conditions, arguments) = Self.conditions(retryable, before: nil)
        return try await write("retry jobs") { db in
            var all = arguments
            all += ["limit": JobFilter.retryLimit]
            let candidates = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, dedup_key FROM pushprep_jobs WHERE \(conditions) AND \(ConsoleSQL.keyFree)
                    ORDER BY id DESC LIMIT :limit
                    """, arguments: all)
            let active = try db.cachedStatement(sql: ConsoleSQL.activeWithKey)
            let retry = try db.cachedStatement(sql: ConsoleSQL.retry)
            let now = Self.now()
            // Newest first: of the jobs sharing a dedup key, the newest is retried.
            var keys = Set<String>()
            var retried = 0
            for row in candidates {
                if let key = row[1] as String? {
                    guard keys.insert(key).inserted, try Bool.fetchOne(active, arguments: [key]) != true else {
                        continue
                    }
                }
                try retry.execute(arguments: ["now": now, "id": row[0] as JobID])
                retried += db.changesCount
            }
            return retried
        }
    }

    package func activity(since: Date, bucket: Duration) async throws(PushPrepError) -> [ActivityBucket] {
        let (first, width, count) = ActivityBucket.grid(since: since, until: Date(), width: bucket)
        guard count > 0 else { return [] }
        let start = first.timeIntervalSince1970
        return try await read("count finished jobs") { db in
            var counts: [Int: (succeeded: Int, failed: Int, cancelled: Int)] = [:]
            let rows = try Row.fetchAll(
                db, sql: ConsoleSQL.activity,
                arguments: ["start": start, "width": width, "end": start + width * Double(count)])
            for row in rows {
                counts[row[0]] = (row[1], row[2], row[3])
            }
            return ActivityBucket.fill(first: first, width: width, count: count, counts: counts)
        }
    }

    package func recordWorker(_ worker: WorkerRegistration) async throws(PushPrepError) {
        try await write("register worker \(worker.id)") { db in
            let now = Self.now()
            try db.cachedStatement(sql: ConsoleSQL.forgetWorkers).execute(
                arguments: [now - WorkerRecord.forgottenAfter.seconds])
            try db.cachedStatement(sql: ConsoleSQL.recordWorker).execute(
                arguments: [
                    WorkerRegistration.bounded(worker.id), WorkerRegistration.bounded(worker.host), worker.pid,
                    worker.concurrency, now,
                ])
        }
    }

    package func removeWorker(id: String) async throws(PushPrepError) {
        try await write("remove worker \(id)") { db in
            try db.execute(
                sql: "DELETE FROM pushprep_workers WHERE id = ?", arguments: [WorkerRegistration.bounded(id)])
        }
    }

    package func workers(seenSince date: Date) async throws(PushPrepError) -> [WorkerRecord] {
        try await read("list workers") { db in
            let arguments: StatementArguments = [date.timeIntervalSince1970, WorkerRecord.listLimit]
            var workers = try Row.fetchAll(db, sql: ConsoleSQL.workers, arguments: arguments).map { row in
                WorkerRecord(
                    id: row[0], host: row[1], pid: row[2], concurrency: row[3],
                    startedAt: Date(timeIntervalSince1970: row[4]), lastSeenAt: Date(timeIntervalSince1970: row[5]))
            }
            var positions: [String: Int] = [:]
            for (index, worker) in workers.enumerated() { positions[worker.id] = index }
            for row in try Row.fetchAll(db, sql: ConsoleSQL.runningJobs, arguments: arguments) {
                guard let index = positions[row[0]] else { continue }
                workers[index].runningJobs.append(row[1])
            }
            return workers
        }
    }

    package func attempts(job: JobID) async throws(PushPrepError) -> [JobAttempt] {
        try await read("read the attempts of job \(job)") { db in
            try Row.fetchAll(db, sql: ConsoleSQL.attempts, arguments: [job, JobAttempt.listLimit]).reversed().map {
                row in
                let outcome = try (row[6] as String?).map(JobAttempt.Outcome.init(stored:))
                return JobAttempt(
                    jobID: row[0], attempt: row[2], leaseToken: row[1], worker: row[3],
                    startedAt: Date(timeIntervalSince1970: row[4]),
                    endedAt: (row[5] as Double?).map(Date.init(timeIntervalSince1970:)), outcome: outcome,
                    errorCode: row[7], errorMessage: row[8])
            }
        }
    }

    /// The `WHERE` conditions of `filter` (and of the cursor `before`) with their arguments.
    /// States are inlined: they are the enumeration's own names, not input.
    static func conditions(_ filter: JobFilter, before: JobID?) -> (String, StatementArguments) {
        var conditions: [String] = []
        var arguments: StatementArguments = [:]
        if let before {
            conditions.append("id < :before")
            arguments += ["before": before]
        }
        if !filter.states.isEmpty {
            conditions.append("state IN (\(filter.sortedStates.map { "'\($0.rawValue)'" }.joined(separator: ", ")))")
        }
        if let kind = filter.kind {
            if let stored = kind.stored {
                conditions.append("kind = :kind")
                arguments += ["kind": stored]
            } else {
                conditions.append("kind IS NULL")
            }
        }
        if let pattern = filter.sourcePattern {
            // LIKE ignores the case of ASCII letters.
            conditions.append(#"source LIKE :source ESCAPE '\'"#)
            arguments += ["source": pattern]
        }
        if let code = filter.errorCode {
            conditions.append("error_code = :code")
            arguments += ["code": code]
        }
        return (conditions.isEmpty ? "1" : conditions.joined(separator: " AND "), arguments)
    }
}

/// The console's SQL.
private enum ConsoleSQL {
    /// A job whose dedup key no queued or running job holds: a bulk retry leaves the others out
    /// of its batch, so that they cannot fill it and keep the older jobs behind them from ever
    /// being reached.
    static let keyFree = """
        (dedup_key IS NULL OR NOT EXISTS (SELECT 1 FROM pushprep_jobs AS holder
            WHERE holder.dedup_key = pushprep_jobs.dedup_key AND holder.state IN ('queued', 'running')))
        """

    static let activeWithKey = """
        SELECT EXISTS (SELECT 1 FROM pushprep_jobs WHERE dedup_key = ? AND state IN ('queued', 'running'))
        """

    /// `jobs retry` of one job, as ``JobQueueAdmin/retry(_:)`` does it.
    static let retry = """
        UPDATE pushprep_jobs
        SET state = 'queued', attempt = 0, run_at = :now, finished_at = NULL, cancel_requested = 0, result = NULL,
            kind = NULL, updated_at = :now
        WHERE id = :id AND state IN ('failed', 'dead', 'cancelled')
        """

    /// Finished jobs per bucket, by bucket index from `:start`.
    static let activity = """
        SELECT CAST((finished_at - :start) / :width AS INTEGER) AS bucket,
            COUNT(CASE WHEN state = 'succeeded' THEN 1 END),
            COUNT(CASE WHEN state IN ('failed', 'dead') THEN 1 END),
            COUNT(CASE WHEN state = 'cancelled' THEN 1 END)
        FROM pushprep_jobs
        WHERE finished_at >= :start AND finished_at < :end
        GROUP BY bucket
        """

    static let forgetWorkers = "DELETE FROM pushprep_workers WHERE last_seen_at < ?"

    /// `?`: id, host, pid, concurrency, now. A registration seen again keeps its start.
    static let recordWorker = """
        INSERT INTO pushprep_workers (id, host, pid, concurrency, started_at, last_seen_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?5)
        ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, concurrency = excluded.concurrency,
            last_seen_at = excluded.last_seen_at
        """

    static let workers = """
        SELECT id, host, pid, concurrency, started_at, last_seen_at FROM pushprep_workers
        WHERE last_seen_at >= ?1 ORDER BY last_seen_at DESC, id LIMIT ?2
        """

    /// The running jobs of the workers that ``workers`` lists, by id.
    static let runningJobs = """
        SELECT j.lease_owner, j.id FROM pushprep_jobs AS j
        JOIN (SELECT id FROM pushprep_workers WHERE last_seen_at >= ?1 ORDER BY last_seen_at DESC, id LIMIT ?2) AS w
            ON w.id = j.lease_owner
        WHERE j.state = 'running'
        ORDER BY j.id
        """

    /// The newest attempts first; the caller reverses them.
    static let attempts = """
        SELECT job_id, lease_token, attempt, worker, started_at, ended_at, outcome, error_code, error_message
        FROM pushprep_job_attempts WHERE job_id = ? ORDER BY lease_token DESC LIMIT ?
        """
}
