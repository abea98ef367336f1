package import Foundation
package import PushPrepCore

/// The console's queries (schema version 3): filtered job tables and bulk retries, throughput,
/// the registered workers and each job's attempts. A ``JobQueue`` capability; each backend keeps
/// only its SQL, the filter's rules are ``JobFilter``'s.
package protocol ConsoleQueries: Sendable {
    /// Up to `limit` (clamped to ``JobFilter/pageLimit``) jobs matching `filter`, newest first,
    /// older than the job `before` when given (the same keyset pages as
    /// ``list(state:limit:before:)``).
    ///
    /// - Throws: `invalid_request` for a filter text past its length.
    func list(filter: JobFilter, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord]

    /// How many jobs match `filter` (for the pager; exact, so a source filter reads the table).
    func count(filter: JobFilter) async throws(PushPrepError) -> Int

    /// Retries the `failed`, `dead` and `cancelled` jobs matching `filter` (other states in the
    /// filter are ignored) as ``retry(_:)`` does, in one transaction; returns how many.
    ///
    /// At most the newest ``JobFilter/retryLimit`` matching jobs are considered per call: call
    /// again while it returns more than zero (a call that leaves some of its jobs alone returns
    /// fewer than the limit with more to do). A job whose dedup key belongs to a queued or running
    /// job, or to a newer job retried in the same call, is left as it is (``retry(_:)`` would
    /// refuse it).
    func retry(matching filter: JobFilter) async throws(PushPrepError) -> Int

    /// The jobs that finished from `since` until now, counted per `bucket` (see
    /// ``ActivityBucket``): every bucket present, oldest first, at most
    /// ``ActivityBucket/maximumCount`` (the newest).
    func activity(since: Date, bucket: Duration) async throws(PushPrepError) -> [ActivityBucket]

    /// Registers a worker, or refreshes its last-seen time when it is registered (its start stays).
    /// Registrations not seen for ``WorkerRecord/forgottenAfter`` are deleted on the way.
    func recordWorker(_ worker: WorkerRegistration) async throws(PushPrepError)

    /// Removes a worker's registration (a clean stop); nothing when there is none.
    func removeWorker(id: String) async throws(PushPrepError)

    /// The workers seen since `date` (most recently seen first, at most
    /// ``WorkerRecord/listLimit``), each with the running jobs whose lease it holds. A worker
    /// killed without a clean stop stays until it is no longer seen since `date`.
    func workers(seenSince date: Date) async throws(PushPrepError) -> [WorkerRecord]

    /// The attempts of one job, oldest first (the newest ``JobAttempt/listLimit``); empty for a
    /// job without any (or pruned: attempts are deleted with their job).
    func attempts(job: JobID) async throws(PushPrepError) -> [JobAttempt]
}
