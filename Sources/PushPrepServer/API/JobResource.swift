package import Foundation
package import PushPrepCore
package import PushPrepJSON
package import PushPrepQueue

/// A job as the HTTP API and its webhooks show it: `GET /v1/jobs/{id}`, the items of
/// `GET /v1/jobs`, and the `data` of a webhook event are this one shape.
///
/// Keys are snake_case, like the request bodies; the manifest entry inside `attachment` keeps
/// the manifest's own keys (the JSON Schema in `schema/manifest.schema.json`). Times are
/// ISO 8601 in UTC.
package struct JobResource: Sendable, Encodable, Equatable {
    package var id: JobID
    /// `queued`, `running`, `succeeded`, `failed`, `dead` or `cancelled`.
    package var state: JobState
    /// The source URL (or, for an upload, the name it was stored under).
    package var source: String
    /// How people see the source: an upload's own file name (sanitised, ``UploadName``); nil
    /// for a URL, which is its own name.
    package var sourceName: String?
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
    package var finishedAt: Date?
    /// The last error: why the job failed, or why its previous attempt did.
    package var error: ErrorView?
    /// The manifest entry, once succeeded (`status` `ok` or `failed`).
    package var attachment: ManifestEntry?
    /// The job's settings, as the worker runs them.
    package var settings: ProcessingSettings?
    /// The client's metadata, returned as it was given.
    package var metadata: JSONValue?
    /// Where the job's webhook goes when it ends.
    package var callbackURL: String?
    /// The `X-Request-Id` of the request that created the job.
    package var requestID: String?
    package var links: Links

    package struct ErrorView: Sendable, Encodable, Equatable {
        package var code: String
        package var message: String
    }

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
        error = record.errorCode.map { ErrorView(code: $0, message: record.errorMessage ?? "") }
        attachment = record.result.flatMap { try? JSONDecoder().decode(ManifestEntry.self, from: Data($0.utf8)) }
        settings = try? JSONDecoder().decode(ProcessingSettings.self, from: Data(record.payload.utf8))
        // An upload's file name is kept in the metadata column, apart from the client's own.
        (sourceName, metadata) = UploadName.split(
            record.metadata.flatMap { try? JSONValue.parse(Array($0.utf8)).value })
        callbackURL = record.callbackURL
        requestID = record.requestID
        links = Links(job: record.id)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(state, forKey: .state)
        try container.encode(source, forKey: .source)
        try container.encode(sourceName, forKey: .sourceName)
        try container.encode(priority, forKey: .priority)
        try container.encode(attempt, forKey: .attempt)
        try container.encode(maxAttempts, forKey: .maxAttempts)
        try container.encode(cancelRequested, forKey: .cancelRequested)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(runAt, forKey: .runAt)
        // Absent values are written as null: clients read one shape whatever the state.
        try container.encode(finishedAt, forKey: .finishedAt)
        try container.encode(error, forKey: .error)
        try container.encode(attachment, forKey: .attachment)
        try container.encode(settings, forKey: .settings)
        try container.encode(metadata, forKey: .metadata)
        try container.encode(callbackURL, forKey: .callbackURL)
        try container.encode(requestID, forKey: .requestID)
        try container.encode(links, forKey: .links)
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
