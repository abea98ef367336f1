/// An error PushPrep reports for one input: a stable machine-readable ``Code``, a message for
/// people, and optionally the underlying cause.
///
/// Codes are stable across releases and documented in the README; map them to exit codes or
/// HTTP statuses only at the edge.
public struct PushPrepError: Error, Sendable, CustomStringConvertible {
    /// A stable, machine-readable error code such as `unsupported_type`.
    public struct Code: Hashable, Sendable, CustomStringConvertible, Codable {
        /// The code as written in manifests and documentation.
        public let rawValue: String

        private init(_ rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }

        /// The bytes are not a type PushPrep can turn into an attachment.
        public static let unsupportedType = Code("unsupported_type")
        /// The bytes claim a supported type but cannot be decoded (truncated, damaged, empty).
        public static let corruptInput = Code("corrupt_input")
        /// The input is larger than the configured input byte limit.
        public static let inputTooLarge = Code("input_too_large")
        /// The image has more pixels (all frames counted) than the configured limit.
        public static let tooManyPixels = Code("too_many_pixels")
        /// No output within the byte limit could be produced.
        public static let cannotFit = Code("cannot_fit")
        /// The input does not exist.
        public static let notFound = Code("not_found")
        /// Reading the input or writing the output failed.
        public static let ioError = Code("io_error")

        /// Processing one input took longer than its deadline (`--timeout`).
        public static let timeout = Code("timeout")
        /// The confined decoder process that processed the input died (a signal, or an exit
        /// mid-input) or sent what is no valid reply, on a first attempt and again on a fresh
        /// decoder: the input itself is taken to be what crashes it.
        public static let decoderCrashed = Code("decoder_crashed")
        /// Decoding the input needed more memory than its decoder process may use: the address
        /// space allowed for the input's estimate (which a crafted header understates), or the
        /// decoder's own limit.
        public static let resourceExhausted = Code("resource_exhausted")
        /// A remote source could not be fetched: an HTTP error status, a refused or broken
        /// connection, too many redirects, or a URL PushPrep does not fetch.
        public static let fetchFailed = Code("fetch_failed")
        /// A remote source (or a redirect) leads to an address PushPrep refuses to connect to:
        /// loopback, private, link-local, reserved, ... (server-side request forgery protection).
        public static let blockedAddress = Code("blocked_address")
        /// A queued job names a source this worker does not read: a local path when it reads
        /// only URLs (`--sources remote`), a URL with `--sources local`, or a path outside
        /// `--source-root`.
        public static let sourceNotAllowed = Code("source_not_allowed")

        /// A setting is out of range (a usage error, reported before any input is read).
        public static let invalidSettings = Code("invalid_settings")

        /// A job was cancelled (`jobs cancel`) and stopped at its next step.
        public static let cancelled = Code("cancelled")
        /// The job queue's database cannot be opened, migrated or used.
        public static let queueUnavailable = Code("queue_unavailable")
        /// No job has this id.
        public static let jobNotFound = Code("job_not_found")
        /// The job is in a state that does not allow the request (retrying a running job, say).
        public static let invalidJobState = Code("invalid_job_state")
        /// An idempotency key was sent again, within its retention, with a different request
        /// (another fingerprint): the first request's jobs stand and nothing is enqueued.
        public static let idempotencyConflict = Code("idempotency_conflict")

        /// A push payload or a manifest given to `payload` / `preflight` cannot be used: not
        /// JSON, not the expected shape, or missing what the command needs.
        public static let invalidPayload = Code("invalid_payload")
        /// The payload would exceed the provider's size limit (APNs 4096 bytes; Braze's alert +
        /// extra 1912).
        public static let payloadTooLarge = Code("payload_too_large")

        /// Object storage refused PushPrep's requests: a 403, an unknown access key, a signature
        /// that does not match (a wrong secret), access denied, or the wrong region (the message
        /// names the region the server says is right). The same request would be refused again.
        public static let storageDenied = Code("storage_denied")
        /// Object storage could not be reached or did not store the object: connection refused or
        /// reset, a connect or request timeout, 5xx or `SlowDown` still after the retries, a missing
        /// bucket. Worth trying again later.
        public static let storageUnavailable = Code("storage_unavailable")

        /// An HTTP request is malformed: a body that is not the JSON the endpoint takes, a
        /// missing or unknown field, a local path where only URLs are accepted, a bad query.
        public static let invalidRequest = Code("invalid_request")
        /// An HTTP request carries no API key, or one the server does not know.
        public static let unauthorized = Code("unauthorized")
        /// The request's API key lacks the scope the endpoint needs (`read` or `write`).
        public static let forbidden = Code("forbidden")
        /// The API key sent more requests than its rate allows; retry after `Retry-After`.
        public static let rateLimited = Code("rate_limited")
        /// More jobs are queued than the server accepts (`--max-queued`); retry after
        /// `Retry-After`.
        public static let queueFull = Code("queue_full")
        /// A request's body, headers or URL is larger than the server accepts.
        public static let requestTooLarge = Code("request_too_large")

        /// Every code, in documentation order.
        public static let all: [Code] = [
            .unsupportedType, .corruptInput, .inputTooLarge, .tooManyPixels, .cannotFit, .notFound, .ioError, .timeout,
            .decoderCrashed, .resourceExhausted, .fetchFailed, .blockedAddress, .sourceNotAllowed, .invalidSettings,
            .cancelled,
            .queueUnavailable,
            .jobNotFound,
            .invalidJobState, .idempotencyConflict, .invalidPayload, .payloadTooLarge, .storageDenied,
            .storageUnavailable, .invalidRequest, .unauthorized, .forbidden, .rateLimited, .queueFull,
            .requestTooLarge,
        ]

        /// Errors that the same input would hit again: a queued job that fails with one of
        /// these is not retried. (`storage_denied` is here: keys, policy, region or the store itself
        /// must change first; `storage_unavailable` is not: the store may be back by the next try.
        /// `decoder_crashed` is here: the input crashed two fresh decoders already; and
        /// `resource_exhausted`: the same limits refuse the same input again.)
        public var isPermanent: Bool {
            [
                .unsupportedType, .corruptInput, .tooManyPixels, .cannotFit, .blockedAddress, .sourceNotAllowed,
                .storageDenied, .decoderCrashed, .resourceExhausted,
            ].contains(self)
        }

        /// The code with this raw value, if PushPrep has one.
        public init?(rawValue: String) {
            guard let code = Code.all.first(where: { $0.rawValue == rawValue }) else { return nil }
            self = code
        }
    }

    /// The stable code.
    public let code: Code
    /// What went wrong, for people.
    public let message: String
    /// The underlying error, if any.
    public let cause: (any Error & Sendable)?
    /// Whether the same input would fail the same way again, so that a queued job failing with
    /// this error is not retried: always when the code ``Code/isPermanent``, and for an error
    /// that is final whatever its code says in general (a source answering `HTTP 404` is
    /// `fetch_failed`, as one answering `503` is, but only the `503` may pass on a later try).
    public let isPermanent: Bool

    /// Creates an error; `permanent` marks it final although its code is not always (see
    /// ``isPermanent``).
    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil, permanent: Bool = false) {
        self.code = code
        self.message = message
        self.cause = cause
        self.isPermanent = permanent || code.isPermanent
    }

    public var description: String { "\(code): \(message)" }
}
