package import Foundation
import PushPrepCore

/// One claim of a job and how it ended, written by the database in the transaction of the claim
/// and of the end (triggers on the jobs table, schema version 3), so no path can skip it.
package struct JobAttempt: Sendable, Equatable, Codable {
    /// How an attempt ended.
    package enum Outcome: String, Sendable, Codable, CaseIterable {
        case succeeded
        /// The handler failed; the job was queued again or ended `failed` or `dead`.
        case failed
        case cancelled
        /// The lease expired (the worker died or stalled) and a rescue took the job, or the
        /// worker's process was found gone (``JobQueue/expire(_:)``).
        case expired
        /// The worker gave the job back without counting the attempt (a drain's end).
        case released

        /// An outcome read back from a queue's storage: one no PushPrep writes is
        /// `queue_unavailable`, never a crash (both backends read outcomes here).
        init(stored text: String) throws(PushPrepError) {
            guard let outcome = Outcome(rawValue: text) else {
                throw PushPrepError(.queueUnavailable, "the queue holds an attempt with an unknown outcome '\(text)'")
            }
            self = outcome
        }
    }

    package var jobID: JobID
    /// The job's attempt number at the claim, from 1 (a retry by hand starts again at 1).
    package var attempt: Int
    /// The claim's fencing token: unique per job, increasing.
    package var leaseToken: Int64
    /// The worker that claimed it.
    package var worker: String
    package var startedAt: Date
    /// Nil while it runs.
    package var endedAt: Date?
    /// Nil while it runs.
    package var outcome: Outcome?
    package var errorCode: String?
    package var errorMessage: String?

    package init(
        jobID: JobID, attempt: Int, leaseToken: Int64, worker: String, startedAt: Date, endedAt: Date?,
        outcome: Outcome?, errorCode: String?, errorMessage: String?
    ) {
        self.jobID = jobID
        self.attempt = attempt
        self.leaseToken = leaseToken
        self.worker = worker
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }

    /// The message of an attempt that ``JobQueue/expire(_:)`` ended (its holder's process is
    /// gone), with the code `lease_expired`; SQL text, so it holds no quote.
    static let holderGoneMessage =
        "the process of the worker holding the lease is gone; the lease was ended for a rescue"

    /// The most attempts ``ConsoleQueries/attempts(job:)`` returns: the newest ones.
    package static let listLimit = 500
}
