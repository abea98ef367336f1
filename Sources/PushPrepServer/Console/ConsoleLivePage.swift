import Foundation
import Hummingbird
import PushPrepQueue

/// `GET /console/live`: what the script's live updates poll.
extension ConsoleRoutes {
    /// The most jobs one `/console/live` request asks about (a page of the table shows 50).
    static let maxLiveIDs = 200

    /// `GET /console/live?ids=1,2,3`: the states of those jobs (the first ``maxLiveIDs``
    /// distinct ones) and the counts by state, for the script's live updates. A longer list is
    /// not split to its end, and an id repeated is looked up once.
    func live(_ request: Request) async throws -> Response {
        let text = request.uri.queryParameters["ids"] ?? ""
        var ids: [JobID] = []
        var seen: Set<JobID> = []
        for part in text.split(separator: ",", maxSplits: Self.maxLiveIDs) where ids.count < Self.maxLiveIDs {
            if let id = JobID(part), id > 0, seen.insert(id).inserted { ids.append(id) }
        }
        var jobs: [ConsoleLive.Job] = []
        let now = Date()
        for id in ids {
            if let record = try await queue.job(id) {
                let retry = ConsoleRetry(record, now: now)
                jobs.append(
                    .init(
                        id: record.id, state: record.state.rawValue,
                        shownState: retry == nil ? record.state.rawValue : ConsoleRetry.shownState,
                        nextAttempt: retry?.label, nextAttemptISO: retry.map { ConsoleFormat.iso($0.at) },
                        nextAttemptIn: retry?.wait(now: now),
                        attempts: "\(record.attempt) of \(record.maxAttempts)",
                        errorCode: record.errorCode))
            }
        }
        let stats = try await queue.stats()
        let counts = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0.rawValue, stats.byState[$0] ?? 0) })
        var response = try json(ConsoleLive(jobs: jobs, counts: counts))
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// `/console/live`'s answer.
struct ConsoleLive: Encodable {
    /// A job's state as the table shows it.
    struct Job: Encodable {
        var id: JobID
        var state: String
        /// What the pages write for the state: `retrying` for a job waiting out a retry's
        /// backoff (``ConsoleRetry``), else the state.
        var shownState: String
        /// While retrying: the next attempt (`attempt 2 of 5`), its time, and how long until it
        /// (`in 14 s`).
        var nextAttempt, nextAttemptISO, nextAttemptIn: String?
        /// `2 of 5`, as the table writes it.
        var attempts: String
        var errorCode: String?

        enum CodingKeys: String, CodingKey {
            case id, state, attempts
            case shownState = "shown_state"
            case nextAttempt = "next_attempt"
            case nextAttemptISO = "next_attempt_at"
            case nextAttemptIn = "next_attempt_in"
            case errorCode = "error_code"
        }
    }

    var jobs: [Job]
    var counts: [String: Int]
}
