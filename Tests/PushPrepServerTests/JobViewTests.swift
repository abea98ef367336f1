import Foundation
import PushPrepCore
import PushPrepQueue
import Testing

@testable import pushprep

/// `jobs show --json` and `jobs list --json` print ``JobView``: the record's own JSON (its queue
/// columns) with the error, settings and result decoded beside it. These pin its members, so a
/// column added to ``JobRecord/CodingKeys`` (or a decoded one dropped) is seen here, not by a
/// script reading the CLI's output.
struct JobViewTests {
    /// A job's members as the view writes them, from an encoder sorting keys as the CLI's does.
    static func members(_ record: JobRecord) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        let data = try encoder.encode(JobView(record))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A record with every column `state` can have set, the client's columns too.
    static func record(_ state: JobState, finished: Bool) throws -> JobRecord {
        let at = Date(timeIntervalSince1970: 1_780_000_000)
        let settings = String(decoding: try JSONEncoder().encode(ProcessingSettings()), as: UTF8.self)
        let entry = ManifestEntry.failed(
            Failure(source: "a.jpg", error: PushPrepError(.unsupportedType, "not an image")))
        return JobRecord(
            id: 7, state: state, source: "a.jpg", payload: settings, dedupKey: "k", priority: 3, attempt: 2,
            maxAttempts: 5, timeoutSeconds: finished ? 30 : nil, runAt: at, createdAt: at, updatedAt: at,
            finishedAt: finished ? at : nil, leaseOwner: finished ? "w1" : nil, leaseToken: 2,
            leaseExpiresAt: finished ? at : nil, cancelRequested: false, errorCode: finished ? "unsupported_type" : nil,
            errorMessage: finished ? "not an image" : nil,
            result: finished ? String(decoding: try JSONEncoder().encode(entry), as: UTF8.self) : nil,
            callbackURL: "https://hooks.example.com/a", metadata: #"{"k":1}"#, requestID: "r1", kind: .image)
    }

    @Test func aFinishedJobHasTheRecordsColumnsAndItsDecodedContents() throws {
        let written = try Self.members(try Self.record(.failed, finished: true))
        #expect(
            written.keys.sorted() == [
                "attempt", "cancelRequested", "createdAt", "error", "finishedAt", "id", "leaseExpiresAt", "leaseOwner",
                "leaseToken", "maxAttempts", "priority", "result", "runAt", "settings", "source", "state",
                "timeoutSeconds", "updatedAt",
            ])
        #expect(written["error"] as? [String: String] == ["code": "unsupported_type", "message": "not an image"])
        #expect((written["result"] as? [String: Any])?["status"] as? String == "failed")
        #expect((written["settings"] as? [String: Any])?["width"] as? Int == ProcessingSettings().width)
        #expect(written["state"] as? String == "failed")
        #expect(written["leaseOwner"] as? String == "w1")
    }

    @Test func aQueuedJobLeavesOutWhatItDoesNotHave() throws {
        let written = try Self.members(try Self.record(.queued, finished: false))
        #expect(
            written.keys.sorted() == [
                "attempt", "cancelRequested", "createdAt", "id", "leaseToken", "maxAttempts", "priority", "runAt",
                "settings", "source", "state", "updatedAt",
            ])
    }

    @Test func unreadableSettingsAndResultAreLeftOut() throws {
        var record = try Self.record(.succeeded, finished: true)
        record.payload = "not json"
        record.result = #"{"status":"from another version"}"#
        let written = try Self.members(record)
        #expect(written["settings"] == nil && written["result"] == nil)
        #expect(written["error"] != nil, "the error is still shown")
    }
}
