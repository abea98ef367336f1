package import Foundation
import PushPrepCore
import PushPrepJSON

/// A job row read column by column, whatever holds it: a SQLite row, a PostgreSQL row, or the
/// JSON snapshot a webhook delivery carries (keyed by column name, timestamps as Unix seconds).
/// ``JobRecord/init(reading:)`` reads every column through it, so adding a column touches that
/// one place (and each backend's column list), not one decoder per backend.
package protocol JobColumns {
    /// The text in `column`, nil for NULL.
    func text(_ column: String) throws -> String?
    /// The integer in `column`, nil for NULL.
    func integer(_ column: String) throws -> Int?
    /// The number in `column`, nil for NULL.
    func number(_ column: String) throws -> Double?
    /// The boolean in `column`, nil for NULL.
    func flag(_ column: String) throws -> Bool?
    /// The moment in `column`, nil for NULL.
    func date(_ column: String) throws -> Date?
    /// Whether the row has the `kind` column (a webhook snapshot has not).
    var hasKind: Bool { get }
}

extension JobColumns {
    /// Table rows have every column.
    package var hasKind: Bool { true }

    /// The value of a column that is never NULL; `queue_unavailable` when it is (a row written
    /// by hand or by another program).
    fileprivate func required<Value>(_ column: String, _ read: (String) throws -> Value?) throws -> Value {
        guard let value = try read(column) else {
            throw PushPrepError(.queueUnavailable, "the queue holds a job whose \(column) is missing")
        }
        return value
    }
}

extension JobRecord {
    /// Reads a job row: every column of ``JobRecord``, the state through ``JobState/init(stored:)``.
    /// `kind` is the stored one when the row has the column, else read from a succeeded job's
    /// result.
    package init(reading row: some JobColumns) throws {
        let state = try JobState(stored: try row.required("state", row.text))
        let result = try row.text("result")
        let kind =
            row.hasKind
            ? JobKind(stored: try row.text("kind")) : state == .succeeded ? JobKind(result: result) : .unknown
        self.init(
            id: JobID(try row.required("id", row.integer)), state: state, source: try row.required("source", row.text),
            payload: try row.required("payload", row.text), dedupKey: try row.text("dedup_key"),
            priority: try row.required("priority", row.integer), attempt: try row.required("attempt", row.integer),
            maxAttempts: try row.required("max_attempts", row.integer),
            timeoutSeconds: try row.number("timeout_seconds"),
            runAt: try row.required("run_at", row.date), createdAt: try row.required("created_at", row.date),
            updatedAt: try row.required("updated_at", row.date), finishedAt: try row.date("finished_at"),
            leaseOwner: try row.text("lease_owner"), leaseToken: Int64(try row.required("lease_token", row.integer)),
            leaseExpiresAt: try row.date("lease_expires_at"),
            cancelRequested: try row.required("cancel_requested", row.flag), errorCode: try row.text("error_code"),
            errorMessage: try row.text("error_message"), result: result, callbackURL: try row.text("callback_url"),
            metadata: try row.text("metadata"), requestID: try row.text("request_id"), kind: kind)
    }
}

/// The job snapshot a webhook delivery carries: a JSON object that the database builds from the
/// job row as it ended (in the trigger that writes the delivery), keyed by column name, with
/// timestamps as Unix seconds, so both backends write the same text. It has no `kind` column:
/// the kind is read from a succeeded job's result.
struct JobSnapshot: JobColumns {
    let object: JSONObject

    /// Decodes the snapshot text of a delivery row.
    ///
    /// - Throws: `queue_unavailable` when the text is not a snapshot (a row written by hand or by
    ///   another program).
    static func record(from text: String) throws(PushPrepError) -> JobRecord {
        do {
            guard let object = try JSONValue.parse(Array(text.utf8)).value.objectValue else {
                throw Unreadable(reason: "not a JSON object")
            }
            return try JobRecord(reading: JobSnapshot(object: object))
        } catch let error as PushPrepError {
            throw error
        } catch {
            throw PushPrepError(
                .queueUnavailable, "the queue holds a webhook delivery whose job snapshot cannot be read: \(error)",
                cause: error)
        }
    }

    /// A member of the snapshot that is not of its column's type.
    struct Unreadable: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// The member `column`, nil when absent or null; `convert`ed, or ``Unreadable``.
    private func member<Value>(_ column: String, _ convert: (JSONValue) -> Value?) throws -> Value? {
        guard let value = object[column], value != .null else { return nil }
        guard let converted = convert(value) else {
            throw Unreadable(reason: "\(column) is a \(value.typeName), not the column's type")
        }
        return converted
    }

    /// The snapshot has no `kind`: ``JobRecord/init(reading:)`` reads it from the result.
    var hasKind: Bool { false }

    func text(_ column: String) throws -> String? { try member(column, \.stringValue) }

    func integer(_ column: String) throws -> Int? { try member(column, \.intValue) }
    func number(_ column: String) throws -> Double? { try member(column, \.doubleValue) }
    func flag(_ column: String) throws -> Bool? { try member(column, \.boolValue) }
    func date(_ column: String) throws -> Date? {
        try member(column, \.doubleValue).map(Date.init(timeIntervalSince1970:))
    }
}
