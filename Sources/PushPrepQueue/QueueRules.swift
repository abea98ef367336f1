import Foundation
package import Logging
package import PushPrepCore

/// The rules both backends follow, decided here in Swift so that each backend's SQL only stores
/// what they decide: how an attempt's outcome ends the job, the refusals of requests about one
/// job, the claim order, spec validation and the rescue's log line.
package enum QueueRules {
    /// An outcome as the queue stores it, every write still applying only to the lease that
    /// holds the job.
    package enum Resolution: Sendable, Equatable {
        /// The job ends `succeeded` with `result`, of `kind`.
        case succeeded(result: String, kind: JobKind)
        /// The job ends in `state` (`failed`, or `dead` after a retry on its last attempt).
        case ended(state: JobState, code: String, message: String)
        /// The job is queued again after `delay`.
        case requeued(code: String, message: String, delay: Duration)
        /// The job ends `cancelled`.
        case cancelled(message: String)
    }

    /// Whether an attempt that asks for a retry was the job's last: it ends `dead` instead.
    package static func isLastAttempt(_ attempt: Int, of maxAttempts: Int) -> Bool {
        attempt >= maxAttempts
    }

    /// How `outcome` ends its job: a retry is queued again unless its attempt was the last
    /// (``JobOutcome/attempt`` of ``JobOutcome/maxAttempts``), then the job is `dead`.
    package static func resolve(_ outcome: JobOutcome) -> Resolution {
        switch outcome.kind {
        case .succeeded(let result):
            return .succeeded(result: result, kind: JobKind(result: result))
        case .failed(let code, let message):
            return .ended(state: .failed, code: code.rawValue, message: message)
        case .retry(let code, let message, let delay):
            guard !isLastAttempt(outcome.attempt, of: outcome.maxAttempts) else {
                return .ended(state: .dead, code: code, message: message)
            }
            return .requeued(code: code, message: message, delay: max(delay, .zero))
        case .cancelled(let message):
            return .cancelled(message: message)
        }
    }

    /// How a rescue ends a running job whose lease expired: `cancelled` when a cancel was
    /// requested, `dead` when that was its last attempt, else `queued` again, ready now.
    package struct Rescue: Sendable, Equatable {
        /// The state the job is left in.
        package var state: JobState
        package var code: String
        package var message: String
        /// Whether the job is queued again (ready now) rather than finished.
        package var requeued: Bool { state == .queued }
    }

    /// The rescue of a job on `attempt` of `maxAttempts` whose lease expired.
    package static func rescue(attempt: Int, maxAttempts: Int, cancelRequested: Bool) -> Rescue {
        if cancelRequested {
            return Rescue(
                state: .cancelled, code: "cancelled",
                message: "cancelled while it ran; the worker stopped without reporting")
        }
        return Rescue(
            state: isLastAttempt(attempt, of: maxAttempts) ? .dead : .queued, code: "lease_expired",
            message: "the lease expired on attempt \(attempt) of \(maxAttempts): the worker died or stalled")
    }

    // MARK: - Refusals

    /// `job_not_found` for job `id`.
    package static func notFound(_ id: JobID) -> PushPrepError {
        PushPrepError(.jobNotFound, "no job \(id)")
    }

    /// `invalid_job_state`: job `id` is in `state`, which ``JobQueueAdmin/retry(_:)`` refuses.
    package static func notRetryable(_ id: JobID, _ state: JobState) -> PushPrepError {
        PushPrepError(
            .invalidJobState, "job \(id) is \(state.rawValue); only failed, dead or cancelled jobs can be retried")
    }

    /// `invalid_job_state`: job `id` is in `state`, which ``JobQueueAdmin/cancel(_:)`` refuses.
    package static func notCancellable(_ id: JobID, _ state: JobState) -> PushPrepError {
        PushPrepError(
            .invalidJobState, "job \(id) is \(state.rawValue); only queued or running jobs can be cancelled")
    }

    /// `invalid_job_state`: a retry would give job `other`'s dedup key (it is `state`) a second
    /// active job.
    package static func activeDuplicate(_ other: JobID, _ state: JobState) -> PushPrepError {
        PushPrepError(.invalidJobState, "job \(other) with the same source and settings is already \(state.rawValue)")
    }

    // MARK: - Claims, specs, rescues

    /// Claim order: priority (highest first), then `runAt` (earliest first), then id. `RETURNING`
    /// leaves the order of its rows unspecified, so each backend sorts its claimed rows with this.
    package static func claimsBefore(
        _ lhs: (priority: Int, runAt: Double, id: JobID), _ rhs: (priority: Int, runAt: Double, id: JobID)
    ) -> Bool {
        if lhs.priority != rhs.priority { return lhs.priority > rhs.priority }
        if lhs.runAt != rhs.runAt { return lhs.runAt < rhs.runAt }
        return lhs.id < rhs.id
    }

    /// Checks every spec (``JobSpec/validate()``) before any is written.
    package static func validate(_ specs: [JobSpec]) throws(PushPrepError) {
        for spec in specs { try spec.validate() }
    }

    /// Logs a rescue of `count` jobs whose lease expired, when there were any.
    package static func logRescued(_ count: Int, queue: String, logger: Logger) {
        guard count > 0 else { return }
        logger.notice("rescued jobs whose lease expired", metadata: ["queue": "\(queue)", "jobs": "\(count)"])
    }
}
