import Foundation
package import PushPrepCore

/// What a job produced, for filtering: the `kind` of a succeeded job's result (its manifest
/// entry), or `unknown` before it succeeded (and for a result without a kind).
public enum JobKind: String, Sendable, Codable, CaseIterable {
    case image, video, audio, unknown

    /// The kind a succeeded job's result names. The queue never trusts the result's text: a
    /// result that is not a JSON object with a `kind` of `image`, `video` or `audio` is
    /// `unknown`. Both backends and the webhook snapshots take the kind from here, so they agree.
    package init(result: String?) {
        guard let result, let head = try? JSONDecoder().decode(KindField.self, from: Data(result.utf8)),
            let kind = head.kind
        else {
            self = .unknown
            return
        }
        self.init(kind)
    }

    /// The kind of a job whose attachment is of `kind`.
    package init(_ kind: MediaKind) {
        switch kind {
        case .image: self = .image
        case .video: self = .video
        case .audio: self = .audio
        }
    }

    /// The text stored in the `kind` column: nil for `unknown`.
    var stored: String? { self == .unknown ? nil : rawValue }

    /// A `kind` column's value.
    init(stored text: String?) {
        self = text.flatMap(JobKind.init(rawValue:)) ?? .unknown
    }

    /// Only the `kind` of a result; a `kind` that is not one of the media kinds reads as none.
    private struct KindField: Decodable {
        let kind: MediaKind?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            kind = try? container.decodeIfPresent(MediaKind.self, forKey: .kind)
        }

        private enum CodingKeys: String, CodingKey { case kind }
    }
}

/// Which jobs the console's table shows: every condition given must hold (an empty set or a nil
/// means any). Used by ``ConsoleQueries/list(filter:limit:before:)``, ``ConsoleQueries/count(filter:)`` and
/// ``ConsoleQueries/retry(matching:)``.
package struct JobFilter: Sendable, Equatable {
    /// Jobs in one of these states; empty for any state.
    package var states: Set<JobState>
    /// Jobs of this kind (``JobKind/unknown``: not succeeded, or a result without a kind), or nil.
    package var kind: JobKind?
    /// Jobs whose source contains this text, ignoring case (ASCII letters on SQLite, every
    /// letter on PostgreSQL); `%`, `_` and `\` match themselves. Nil or empty for any.
    package var source: String?
    /// Jobs whose last error has this code (a failed job's, or a retried job's last failure), or nil.
    package var errorCode: String?

    package init(states: Set<JobState> = [], kind: JobKind? = nil, source: String? = nil, errorCode: String? = nil) {
        self.states = states
        self.kind = kind
        self.source = source
        self.errorCode = errorCode
    }

    /// Every job.
    package static let all = JobFilter()

    /// The most jobs one page lists: `limit` is clamped to `0...pageLimit`.
    package static let pageLimit = 1000
    /// The most jobs one ``ConsoleQueries/retry(matching:)`` considers (newest first); call it again
    /// for the rest.
    package static let retryLimit = 10_000
    /// The longest `source` text, in characters.
    package static let sourceLength = 500
    /// The longest `errorCode`, in characters.
    package static let errorCodeLength = 100

    /// Refuses texts past their length (`invalid_request`): a filter comes from a query string.
    package func validate() throws(PushPrepError) {
        if let source, source.count > Self.sourceLength {
            throw PushPrepError(
                .invalidRequest, "a source filter must be at most \(Self.sourceLength) characters, got \(source.count)")
        }
        if let errorCode, errorCode.count > Self.errorCodeLength {
            throw PushPrepError(
                .invalidRequest,
                "an error code filter must be at most \(Self.errorCodeLength) characters, got \(errorCode.count)")
        }
    }

    /// The filter a bulk retry runs: its states narrowed to those that can be retried (all three
    /// when it names none), or nil when it names only states that cannot be.
    package var retryable: JobFilter? {
        let retryable = Set(JobState.allCases.filter(\.isRetryable))
        var filter = self
        filter.states = states.isEmpty ? retryable : states.intersection(retryable)
        return filter.states.isEmpty ? nil : filter
    }

    /// The states in a fixed order, for statements.
    var sortedStates: [JobState] { JobState.allCases.filter(states.contains) }

    /// The `LIKE` pattern of `source` (with `\` as the escape character), or nil when it
    /// filters nothing.
    var sourcePattern: String? {
        guard let source, !source.isEmpty else { return nil }
        var pattern = "%"
        for character in source {
            if character == "\\" || character == "%" || character == "_" { pattern.append("\\") }
            pattern.append(character)
        }
        return pattern + "%"
    }

    /// `limit` within `0...pageLimit`.
    static func clampedPage(_ limit: Int) -> Int { min(max(limit, 0), pageLimit) }
}
