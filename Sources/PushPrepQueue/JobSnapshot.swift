import Foundation
import PushPrepCore

/// The job snapshot a webhook delivery carries: a JSON object that the database builds from the
/// job row as it ended (in the trigger that writes the delivery), keyed by column name, with
/// timestamps as Unix seconds, so both backends write the same text.
struct JobSnapshot: Decodable {
    let id: JobID
    let state: String
    let source: String
    let payload: String
    let dedupKey: String?
    let priority: Int
    let attempt: Int
    let maxAttempts: Int
    let timeoutSeconds: Double?
    let runAt: Double
    let createdAt: Double
    let updatedAt: Double
    let finishedAt: Double?
    let leaseOwner: String?
    let leaseToken: Int64
    let leaseExpiresAt: Double?
    let cancelRequested: Bool
    let errorCode: String?
    let errorMessage: String?
    let result: String?
    let callbackURL: String?
    let metadata: String?
    let requestID: String?

    private enum CodingKeys: String, CodingKey {
        case id, state, source, payload, priority, attempt, metadata, result
        case dedupKey = "dedup_key"
        case maxAttempts = "max_attempts"
        case timeoutSeconds = "timeout_seconds"
        case runAt = "run_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case finishedAt = "finished_at"
        case leaseOwner = "lease_owner"
        case leaseToken = "lease_token"
        case leaseExpiresAt = "lease_expires_at"
        case cancelRequested = "cancel_requested"
        case errorCode = "error_code"
        case errorMessage = "error_message"
        case callbackURL = "callback_url"
        case requestID = "request_id"
    }

    /// Decodes the snapshot text of a delivery row.
    ///
    /// - Throws: `queue_unavailable` when the text is not a snapshot (a row written by hand or by
    ///   another program).
    static func record(from text: String) throws(PushPrepError) -> JobRecord {
        let snapshot: JobSnapshot
        do {
            snapshot = try JSONDecoder().decode(JobSnapshot.self, from: Data(text.utf8))
        } catch {
            throw PushPrepError(
                .queueUnavailable, "the queue holds a webhook delivery whose job snapshot cannot be read: \(error)",
                cause: error)
        }
        return snapshot.record(state: try JobState(stored: snapshot.state))
    }

    private func record(state: JobState) -> JobRecord {
        func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }
        return JobRecord(
            id: id, state: state, source: source, payload: payload, dedupKey: dedupKey, priority: priority,
            attempt: attempt, maxAttempts: maxAttempts, timeoutSeconds: timeoutSeconds, runAt: date(runAt),
            createdAt: date(createdAt), updatedAt: date(updatedAt), finishedAt: finishedAt.map(date),
            leaseOwner: leaseOwner, leaseToken: leaseToken, leaseExpiresAt: leaseExpiresAt.map(date),
            cancelRequested: cancelRequested, errorCode: errorCode, errorMessage: errorMessage, result: result,
            callbackURL: callbackURL, metadata: metadata, requestID: requestID,
            kind: state == .succeeded ? JobKind(result: result) : .unknown)
    }
}
