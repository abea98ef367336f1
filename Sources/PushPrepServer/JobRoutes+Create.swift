import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import PushPrepCore
import PushPrepJSON
import PushPrepQueue
import PushPrepRemote

/// Creating jobs: `POST /v1/jobs`'s body, its checks, and the answer.
extension JobRoutes {
    /// `POST /v1/jobs`'s body.
    struct CreateRequest: KeyedRequestBody, DescribedFields {
        var sources: [String]
        var settings: ProcessingSettings?
        var priority: Int?
        var callbackURL: String?
        var metadata: JSONValue?
        var maxAttempts: Int?
        var delaySeconds: Double?
        var timeoutSeconds: Double?

        /// What each field must be, in the words a type mismatch's message uses.
        static let fieldTypes: [String: String] = [
            "sources": "an array of URLs", "settings": "an object of processing settings",
            "priority": "an integer", "callback_url": "a URL (a string)", "metadata": "a JSON object",
            "max_attempts": "an integer", "delay_seconds": "a number of seconds",
            "timeout_seconds": "a number of seconds",
        ]

        enum CodingKeys: String, CodingKey, CaseIterable {
            case sources, settings, priority, metadata
            case callbackURL = "callback_url"
            case maxAttempts = "max_attempts"
            case delaySeconds = "delay_seconds"
            case timeoutSeconds = "timeout_seconds"
        }
    }

    /// One created (or found) job in a `202`.
    struct CreatedJob: Encodable {
        var id: JobID
        var state: JobState
        var source: String
        /// An upload's own file name (``JobResource/sourceName``); null for a URL (written, so
        /// that clients see one shape, as in a job).
        @ExplicitNull var sourceName: String?
        /// False when the same source with the same settings was already queued or running and
        /// that job is returned.
        var created: Bool
        var links: JobResource.Links

        enum CodingKeys: String, CodingKey {
            case id, state, source, created, links
            case sourceName = "source_name"
        }
    }

    struct CreatedJobs: Encodable {
        var jobs: [CreatedJob]
    }

    func create(_ request: Request, _ context: APIRequestContext) async throws -> Response {
        let body = try await RequestBody.collect(request, maxBytes: configuration.maxBodyBytes)
        let create = try RequestBody.decode(CreateRequest.self, from: body)
        let specs = try await specs(for: create, maxSources: configuration.maxSourcesPerRequest, context: context)
        return try await accept(specs, request: request, body: body, context: context)
    }

    /// Enqueues `specs` (within the backpressure) and answers `202` with the jobs. With an
    /// `Idempotency-Key`, a request sent again within the retention returns the first one's
    /// jobs (`Idempotent-Replayed: true`); the same key with another body (method, path and
    /// bytes) is `422 idempotency_conflict`. Keys belong to the API key that sent them.
    ///
    /// A replay is answered before the backpressure is asked: its jobs exist already, so a full
    /// queue does not refuse it (the client would retry a request that had succeeded).
    func accept(_ specs: [JobSpec], request: Request, body: [UInt8], context: APIRequestContext) async throws
        -> Response
    {
        var replayed = false
        let results: [EnqueueResult]
        if let key = try Self.idempotencyKey(request) {
            var hasher = SHA256()
            hasher.update(data: Array("\(request.method) \(request.uri.path)\n".utf8))
            hasher.update(data: body)
            let idempotency = IdempotencyKey(
                scope: context.idempotencyScope, key: key, fingerprint: hasher.finalize().hexString,
                retention: configuration.idempotencyRetention)
            // Looked up outside the admission; the enqueue below still replays a key recorded
            // by a concurrent request meanwhile (one transaction in the queue).
            let outcome: IdempotentEnqueueResult
            if let recorded = try await queue.recordedEnqueue(idempotency) {
                outcome = recorded
            } else {
                outcome = try await depth.admitting(specs.count) {
                    try await queue.enqueue(specs, idempotency: idempotency)
                }
            }
            results = outcome.results
            replayed = outcome.replayed
        } else {
            results = try await depth.admitting(specs.count) { try await queue.enqueue(specs) }
        }
        let created = CreatedJobs(
            jobs: zip(specs, results).map { spec, result in
                CreatedJob(
                    id: result.id, state: result.state, source: spec.source, sourceName: nil,
                    created: result.created, links: .init(job: result.id))
            })
        var response = try json(created, status: .accepted)
        if replayed { response.headers[.idempotentReplayed] = "true" }
        return response
    }

    /// The `Idempotency-Key` header: 1 to 255 visible ASCII characters, or nil when absent.
    static func idempotencyKey(_ request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw Problem(
                .badRequest, .invalidRequest, "Idempotency-Key must be 1 to 255 visible ASCII characters")
        }
        return key
    }

    /// The specs of a create request: URL sources only (unless `uploaded`: files this server
    /// wrote into its uploads directory), settings validated once, the server's attachment base
    /// URL when the request names none. A `callback_url` the webhooks would refuse to connect to
    /// is refused here (``checkCallbackAddress(_:)``), not at the first delivery.
    func specs(
        for create: CreateRequest, maxSources: Int, context: APIRequestContext, uploaded: Bool = false
    ) async throws -> [JobSpec] {
        guard (1...maxSources).contains(create.sources.count) else {
            throw Problem(
                .badRequest, .invalidRequest,
                "sources must hold 1 to \(maxSources) URLs, got \(create.sources.count)")
        }
        if !uploaded { for source in create.sources { try Self.checkURL(source, field: "sources") } }
        let callbackURL = create.callbackURL ?? configuration.webhookURL
        if let url = create.callbackURL {
            // Every refusal of a callback URL is a 422, as the address policy's is.
            try Self.checkURL(url, field: "callback_url", status: .unprocessableContent)
            guard configuration.acceptsCallbacks else {
                throw Problem(
                    .unprocessableContent, .invalidRequest,
                    "callback_url needs a server started with --webhook-secret-file (webhooks are signed)")
            }
            try await checkCallbackAddress(url)
        }
        let metadata = try create.metadata.map(Self.metadataText)
        var settings = create.settings ?? ProcessingSettings()
        if settings.baseURL == nil { settings.baseURL = renderer.attachmentBaseURL }
        do throws(PushPrepError) {
            var delay = Duration.zero
            if let seconds = create.delaySeconds {
                delay = try Duration.seconds(checking: seconds, in: JobSpec.delaySeconds, "delay_seconds")
            }
            var timeout: Duration?
            if let seconds = create.timeoutSeconds {
                timeout = try Duration.seconds(checking: seconds, in: JobSpec.timeoutSeconds, "timeout_seconds")
            }
            let specs = try ProcessingJobs.specs(
                sources: create.sources, settings: settings, priority: create.priority ?? 0, delay: delay,
                maxAttempts: create.maxAttempts ?? 5, timeout: timeout)
            let complete = specs.map { spec in
                var spec = spec
                spec.callbackURL = callbackURL
                spec.metadata = metadata
                spec.requestID = context.requestID
                return spec
            }
            // The queue's own check, now that the metadata is in: before admission, and before
            // an upload's file is read.
            for spec in complete { try spec.validate() }
            return complete
        } catch {
            // Text the jobs may not hold (JobSpec's one check) is the request's mistake, a 400;
            // settings out of range are a 422.
            throw Problem(
                error.code == .invalidRequest ? .badRequest : .unprocessableContent, error.code, error.message)
        }
    }

    /// The most metadata a job keeps (compact JSON).
    static let maxMetadataBytes = 16 * 1024

    /// `metadata` as the text the queue stores: a JSON object of at most 16 KiB.
    static func metadataText(_ metadata: JSONValue) throws -> String {
        guard let object = metadata.objectValue else {
            throw Problem(.badRequest, .invalidRequest, "metadata must be a JSON object")
        }
        if let reserved = object.keys.first(where: { $0.hasPrefix(UploadName.reservedPrefix) }) {
            throw Problem(
                .badRequest, .invalidRequest,
                "metadata keys beginning with \(UploadName.reservedPrefix) are PushPrep's own, not \(reserved)")
        }
        let text = metadata.serialized()
        guard text.utf8.count <= maxMetadataBytes else {
            throw Problem(
                .contentTooLarge, .requestTooLarge, "metadata must be at most \(maxMetadataBytes) bytes of JSON")
        }
        return text
    }

    /// Refuses (`422 blocked_address`) a callback URL whose host is, or resolves to, an address
    /// the webhooks may not connect to: the delivery's own check (``AddressCheck`` with the
    /// webhooks' settings, so `--allow-private-networks` and `--allow-host` count the same), run
    /// at submit time. A name that does not resolve within the connect timeout passes: DNS may
    /// come back, and every delivery checks again before it connects.
    func checkCallbackAddress(_ text: String) async throws {
        if let refusal = await WebhookSettings(addressPolicyOf: configuration.remote).refusal(ofCallback: text) {
            throw Problem(.unprocessableContent, refusal.code, "callback_url: \(refusal.message)")
        }
    }

    /// Refuses anything but an http(s) URL: a path would name a file of the server's; with
    /// `status` (`400` unless said).
    static func checkURL(_ source: String, field: String, status: HTTPResponse.Status = .badRequest) throws {
        let lowercased = source.prefix(8).lowercased()
        guard lowercased.hasPrefix("http://") || lowercased.hasPrefix("https://") else {
            throw Problem(
                status, .invalidRequest,
                "\(field): only http and https URLs are accepted over HTTP (upload a file with POST /v1/uploads)")
        }
        do {
            _ = try RemoteURL(source)
        } catch {
            throw Problem(status, .invalidRequest, "\(field): \(error.message)")
        }
    }
}
