package import Foundation
import Logging
import PostgresNIO
package import PushPrepCore

/// What the console reads (schema version 3): filtered pages of jobs, bulk retry, activity,
/// workers and attempts.
extension PostgresJobQueue: ConsoleQueries {
    package func list(filter: JobFilter, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord] {
        try filter.validate()
        return try await records(
            "list jobs", PostgresJobFilterSQL.list(filter, limit: JobFilter.clampedPage(limit), before: before))
    }

    package func count(filter: JobFilter) async throws(PushPrepError) -> Int {
        try filter.validate()
        return try await perform("count jobs") { [self] in
            var count = 0
            for try await value in try await client.query(PostgresJobFilterSQL.count(filter), logger: logger)
                .decode(Int.self)
            {
                count = value
            }
            return count
        }
    }

    package func retry(matching filter: JobFilter) async throws(PushPrepError) -> Int {
        try filter.validate()
        guard let retryable = filter.retryable else { return 0 }
        do {
            return try await perform("retry jobs") { [self] in
                try await client.withTransaction(logger: logger) { connection in
                    try await Self.retry(retryable, on: connection, logger: logger)
                }
            }
        } catch {
            guard let cause = error.cause, Self.isUniqueViolation(Self.innermost(cause)) else { throw error }
            throw PushPrepError(
                .invalidJobState,
                "a job with the dedup key of a job being retried was enqueued meanwhile; nothing was retried, try again",
                cause: cause)
        }
    }

    package func activity(since: Date, bucket: Duration) async throws(PushPrepError) -> [ActivityBucket] {
        let (first, width, count) = ActivityBucket.grid(since: since, until: Date(), width: bucket)
        guard count > 0 else { return [] }
        let query = Self.query(
            PostgresConsoleSQL.activity, first, width, first.addingTimeInterval(width * Double(count)))
        return try await perform("count finished jobs") { [self] in
            var counts: [Int: (succeeded: Int, failed: Int, cancelled: Int)] = [:]
            for try await (index, succeeded, failed, cancelled) in try await client.query(query, logger: logger)
                .decode((Int, Int, Int, Int).self)
            {
                counts[index] = (succeeded, failed, cancelled)
            }
            return ActivityBucket.fill(first: first, width: width, count: count, counts: counts)
        }
    }

    package func recordWorker(_ worker: WorkerRegistration) async throws(PushPrepError) {
        let query = Self.query(
            PostgresConsoleSQL.recordWorker, WorkerRegistration.bounded(worker.id),
            WorkerRegistration.bounded(worker.host), worker.pid, worker.concurrency, WorkerRecord.forgottenAfter.seconds
        )
        try await perform("register worker \(worker.id)") { [self] in _ = try await client.query(query, logger: logger)
        }
    }

    package func removeWorker(id: String) async throws(PushPrepError) {
        let query = Self.query(PostgresConsoleSQL.removeWorker, WorkerRegistration.bounded(id))
        try await perform("remove worker \(id)") { [self] in _ = try await client.query(query, logger: logger) }
    }

    package func workers(seenSince date: Date) async throws(PushPrepError) -> [WorkerRecord] {
        let query = Self.query(PostgresConsoleSQL.workers, date, WorkerRecord.listLimit)
        return try await perform("list workers") { [self] in
            var workers: [WorkerRecord] = []
            for try await (id, host, pid, concurrency, startedAt, lastSeenAt) in try await client.query(
                query, logger: logger
            ).decode((String, String, Int, Int, Date, Date).self) {
                workers.append(
                    WorkerRecord(
                        id: id, host: host, pid: pid, concurrency: concurrency, startedAt: startedAt,
                        lastSeenAt: lastSeenAt))
            }
            guard !workers.isEmpty else { return workers }
            var positions: [String: Int] = [:]
            for (index, worker) in workers.enumerated() { positions[worker.id] = index }
            let running = Self.query(PostgresConsoleSQL.runningJobs, workers.map(\.id))
            for try await (owner, job) in try await client.query(running, logger: logger).decode((String, JobID).self) {
                guard let index = positions[owner] else { continue }
                workers[index].runningJobs.append(job)
            }
            return workers
        }
    }

    package func attempts(job: JobID) async throws(PushPrepError) -> [JobAttempt] {
        let query = Self.query(PostgresConsoleSQL.attempts, job, JobAttempt.listLimit)
        return try await perform("read the attempts of job \(job)") { [self] in
            var attempts: [JobAttempt] = []
            for try await row in try await client.query(query, logger: logger) {
                let (jobID, token, attempt, worker, startedAt, endedAt, outcome, code, message) = try row.decode(
                    (JobID, Int64, Int, String, Date, Date?, String?, String?, String?).self)
                attempts.append(
                    JobAttempt(
                        jobID: jobID, attempt: attempt, leaseToken: token, worker: worker, startedAt: startedAt,
                        endedAt: endedAt, outcome: try outcome.map(JobAttempt.Outcome.init(stored:)), errorCode: code,
                        errorMessage: message))
            }
            return attempts.reversed()
        }
    }

    // MARK: - Helpers

    /// Retries the newest matching jobs, one per dedup key and none whose key is active; runs in
    /// the caller's transaction.
    private static func retry(
        _ filter: JobFilter, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int {
        var candidates: [(JobID, String?)] = []
        let rows = try await connection.query(
            PostgresJobFilterSQL.retryCandidates(filter, limit: JobFilter.retryLimit), logger: logger)
        for try await (id, key) in rows.decode((JobID, String?).self) { candidates.append((id, key)) }
        let keys = Set(candidates.compactMap(\.1))
        var active = Set<String>()
        if !keys.isEmpty {
            let activeRows = try await connection.query(
                query(PostgresSQL.activeWithKeys, Array(keys)), logger: logger)
            for try await (key, _, _) in activeRows.decode((String, JobID, String).self) { active.insert(key) }
        }
        // Newest first: of the jobs sharing a dedup key, the newest is retried.
        var seen = Set<String>()
        let ids = candidates.filter { _, key in
            guard let key else { return true }
            return seen.insert(key).inserted && !active.contains(key)
        }.map(\.0)
        guard !ids.isEmpty else { return 0 }
        var retried = 0
        for try await count in try await connection.query(query(PostgresConsoleSQL.retry, ids), logger: logger)
            .decode(Int.self)
        {
            retried = count
        }
        if retried > 0 {
            // Delivered at the commit: idle workers wake for the retried jobs.
            try await connection.query(PostgresQuery(unsafeSQL: PostgresSQL.notify), logger: logger)
        }
        return retried
    }

    /// The error a transaction's closure threw, which PostgresNIO wraps.
    private static func innermost(_ error: any Error) -> any Error {
        if let error = error as? PostgresTransactionError, let closureError = error.closureError {
            return innermost(closureError)
        }
        return error
    }
}
