import Foundation
import PushPrep
import PushPrepCore
import PushPrepQueue

/// One job as the console's pages show it. What clients queued and what their sources
/// answered (source, messages, worker names) is shown through ``UntrustedText/escaped(_:)``, as
/// `jobs` prints it: a control character appears as its escape, not as nothing.
struct ConsoleJobView {
    let record: JobRecord
    let resource: JobResource

    init(_ record: JobRecord, renderer: JobRenderer) {
        self.record = record
        self.resource = renderer.resource(record)
    }

    /// The manifest entry of a job's result, when this build can read it.
    static func entry(of record: JobRecord) -> ManifestEntry? { JobResource(record).attachment }

    /// The job's error code: the job's own, else its entry's failure.
    static func errorCode(of record: JobRecord) -> String? {
        record.errorCode ?? entry(of: record)?.failure?.error.code.rawValue
    }

    var retryable: Bool { record.state.isRetryable }
    var cancellable: Bool { !record.state.isFinished && !record.cancelRequested }

    /// The job as a table row (and the job page's header), as of `now`. `state` is the queue's
    /// state (the rows' `data-state`, as the API says it); `shownState` is what the page
    /// writes, `retrying` for a queued job waiting out a retry's backoff (``ConsoleRetry``),
    /// with its next attempt.
    func row(now: Date = Date()) -> ConsoleJobRow {
        let retry = ConsoleRetry(record, now: now)
        return ConsoleJobRow(
            id: record.id, state: record.state.rawValue,
            shownState: retry == nil ? record.state.rawValue : ConsoleRetry.shownState,
            retrying: retry.map {
                .init(nextAttempt: $0.label, nextAttemptISO: ConsoleFormat.iso($0.at), nextAttemptIn: $0.wait(now: now))
            },
            // An upload shows its own file name, not the stored path.
            source: UntrustedText.escaped(resource.sourceName ?? record.source),
            kind: resource.attachment?.attachment?.kind.rawValue,
            attempts: "\(record.attempt) of \(record.maxAttempts)",
            attemptCount: record.attempt, maxAttempts: record.maxAttempts, errorCode: Self.errorCode(of: record),
            createdISO: ConsoleFormat.iso(record.createdAt),
            age: ConsoleFormat.age(seconds: Date().timeIntervalSince(record.createdAt)) + " ago",
            priority: record.priority,
            retryable: retryable, cancellable: cancellable)
    }
}

/// What the templates read of a job: a row of the jobs table, and the job page's header.
struct ConsoleJobRow {
    /// A retry's backoff: the next attempt in words (`attempt 2 of 5`), its time, and how long
    /// until it (`in 14 s`).
    struct Retrying {
        var nextAttempt, nextAttemptISO, nextAttemptIn: String
    }

    var id: JobID
    /// The queue's state, as the API says it, and what the page writes for it (`retrying`
    /// while a retry's backoff runs).
    var state, shownState: String
    /// Nil unless the job waits out a retry's backoff.
    var retrying: Retrying?
    var source: String
    /// The result's kind, once processed.
    var kind: String?
    /// `2 of 5`, and its two numbers.
    var attempts: String
    var attemptCount, maxAttempts: Int
    var errorCode: String?
    var createdISO, age: String
    var priority: Int
    var retryable, cancellable: Bool
    /// On the jobs page: where the row's forms send the browser back to.
    var returnTo: String?
}

/// A queued job waiting out a retry's backoff: it ran and failed (at least one attempt, an
/// error recorded) and its `runAt` is still ahead. The queue keeps it `queued` (the API says so
/// too); the console writes `retrying`, the attempt that comes next and when.
struct ConsoleRetry: Equatable {
    /// The attempt that comes next (1-based) and the most the job gets.
    let attempt: Int
    let maxAttempts: Int
    /// When it may run (a worker claims it at or after this time).
    let at: Date

    /// The word the pages write for the state.
    static let shownState = "retrying"

    /// The wait of `record` as of `now`, or nil when it is not waiting to retry.
    init?(_ record: JobRecord, now: Date) {
        guard record.state == .queued, record.attempt > 0, record.errorCode != nil, record.runAt > now else {
            return nil
        }
        attempt = record.attempt + 1
        maxAttempts = record.maxAttempts
        at = record.runAt
    }

    /// `attempt 2 of 5`.
    var label: String { "attempt \(attempt) of \(maxAttempts)" }

    /// `in 14 s`, as of `now`.
    func wait(now: Date) -> String { "in " + ConsoleFormat.age(seconds: at.timeIntervalSince(now)) }
}
