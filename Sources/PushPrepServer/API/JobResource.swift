package import Foundation
package import PushPrepCore
package import PushPrepJSON
package import PushPrepQueue

/// A job as the HTTP API and its webhooks show it: `GET /v1/jobs/{id}`, the items of
/// `GET /v1/jobs`, and the `data` of a webhook event are this one shape.
///
/// Keys are snake_case, like the request bodies; the manifest entry inside `attachment` keeps
/// the manifest's own keys (the JSON Schema in `schema/manifest.schema.json`). Times are
/// ISO 8601 in UTC. Absent values are written as null (``ExplicitNull``): clients read one shape
/// whatever the state.
package struct JobResource: Sendable, Encodable, Equatable {
    package var id: JobID
    /// `queued`, `running`, `succeeded`, `failed`, `dead` or `cancelled`.
    package var state: JobState
    /// The source URL (or, for an upload, the name it was stored under).
    package var source: String
    /// How people see the source: an upload's own file name (sanitised, ``UploadName``); nil
    /// for a URL, which is its own name.
    @ExplicitNull package var sourceName: String?
    package var priority: Int
    /// Claims so far, including a running one.
    package var attempt: Int
    package var maxAttempts: Int
    /// Set when a running job was asked to stop and has not stopped yet.
    package var cancelRequested: Bool
    package var createdAt: Date
    package var updatedAt: Date
    /// Not started before this time (a delay or a retry's backoff).
    package var runAt: Date
    @ExplicitNull package var finishedAt: Date?
    /// The last error: why the job failed, or why its previous attempt did.
    @ExplicitNull package var error: JobError?
    /// The manifest entry, once succeeded (`status` `ok` or `failed`).
    @ExplicitNull package var attachment: ManifestEntry?
    /// The job's settings, as the worker runs them.
    @ExplicitNull package var settings: ProcessingSettings?
    /// The client's metadata, returned as it was given.
    @ExplicitNull package var metadata: JSONValue?
    /// Where the job's webhook goes when it ends.
    @ExplicitNull package var callbackURL: String?
    /// The `X-Request-Id` of the request that created the job.
    @ExplicitNull package var requestID: String?
    package var links: Links

    package struct Links: Sendable, Encodable, Equatable {
        /// This job: `/v1/jobs/{id}` (the member `self`).
        package var job: String

        enum CodingKeys: String, CodingKey {
            case job = "self"
        }

        /// The links of job `id`.
        package init(job id: JobID) {
            job = "/v1/jobs/\(id)"
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, state, source, priority, attempt, settings, error, attachment, links
        case sourceName = "source_name"
        case maxAttempts = "max_attempts"
        case cancelRequested = "cancel_requested"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case runAt = "run_at"
        case finishedAt = "finished_at"
        case metadata
        case callbackURL = "callback_url"
        case requestID = "request_id"
    }

    /// The resource of `record`. Settings and a result the queue holds but this build cannot
    /// read (written by another version) are left out rather than failing the request.
    package init(_ record: JobRecord) {
        id = record.id
        state = record.state
        source = record.source
        priority = record.priority
        attempt = record.attempt
        maxAttempts = record.maxAttempts
        cancelRequested = record.cancelRequested
        createdAt = record.createdAt
        updatedAt = record.updatedAt
        runAt = record.runAt
        finishedAt = record.finishedAt
        error = record.lastError
        attachment = record.entry
        settings = record.settings
        // An upload's file name is kept in the metadata column, apart from the client's own.
        let (sourceName, metadata) = UploadName.split(
            record.metadata.flatMap { try? JSONValue.parse(Array($0.utf8)).value })
        self.sourceName = sourceName
        self.metadata = metadata
        callbackURL = record.callbackURL
        requestID = record.requestID
        links = Links(job: record.id)
    }
}

/// The JSON coding the API and its webhooks use: ISO 8601 times with milliseconds, in UTC, and
/// no escaped slashes (URLs stay readable).
package enum APICoding {
    /// An encoder for responses and webhook bodies: compact, keys sorted (stable bytes).
    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(timestamp(date))
        }
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    /// `date` as `2026-11-25T20:15:03.123Z`.
    package static func timestamp(_ date: Date) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC") ?? .gmt))
    }
}
