import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import PushPrepCore
import PushPrepJSON
import PushPrepQueue
import PushPrepRemote

/// `/v1/jobs`, `/v1/process` and `/v1/stats`: jobs created from URLs, looked at, waited for,
/// listed, cancelled and retried.
struct JobRoutes {
    let queue: any JobQueue & JobQueueAdmin & IdempotentEnqueue
    let configuration: ServerConfiguration
    let renderer: JobRenderer
    let depth: QueueDepth
    /// The long polls' slots and their shared look at the queue.
    let watch: JobWatch

    /// Routes over `queue`; `watch` is the server's one ``JobWatch`` (a routes value made only
    /// to create jobs, as uploads do, never waits and may leave it out).
    init(
        queue: any JobQueue & JobQueueAdmin & IdempotentEnqueue, configuration: ServerConfiguration,
        renderer: JobRenderer, depth: QueueDepth,
        watch: JobWatch? = nil
    ) {
        self.queue = queue
        self.configuration = configuration
        self.renderer = renderer
        self.depth = depth
        self.watch =
            watch
            ?? JobWatch(
                queue: queue, maxWaits: configuration.maxWaits, maxWaitsPerClient: configuration.maxWaitsPerClient)
    }

    func register(on router: some RouterMethods<APIRequestContext>) {
        let jobs = router.group("v1/jobs")
        jobs.post { request, context in try await create(request, context) }
        jobs.get { request, context in try await list(request, context) }
        jobs.get(":id") { request, context in try await show(request, context) }
        jobs.delete(":id") { _, context in try json(resource(try await queue.cancel(try Self.id(context)))) }
        jobs.post(":id/retry") { _, context in try json(resource(try await queue.retry(try Self.id(context)))) }
        router.post("v1/process") { request, context in try await process(request, context) }
        router.get("v1/stats") { _, _ in try json(StatsResource(try await queue.stats())) }
    }

    // MARK: Creating

    /// `POST /v1/jobs`'s body.
    struct CreateRequest: Decodable, DescribedFields {
        var sources: [String]
        var settings: ProcessingSettings?
        var priority: Int?
        var callbackURL: String?
        var metadata: JSONValue?
        var maxAttempts: Int?
        var delaySeconds: Double?
        var timeoutSeconds: Double?

        static let keys: Set<String> = [
            "sources", "settings", "priority", "callback_url", "metadata", "max_attempts", "delay_seconds",
            "timeout_seconds",
        ]

        /// What each field must be, in the words a type mismatch's message uses.
        static let fieldTypes: [String: String] = [
            "sources": "an array of URLs", "settings": "an object of processing settings",
            "priority": "an integer", "callback_url": "a URL (a string)", "metadata": "a JSON object",
            "max_attempts": "an integer", "delay_seconds": "a number of seconds",
            "timeout_seconds": "a number of seconds",
        ]

        enum CodingKeys: String, CodingKey {
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
        /// An upload's own file name (``JobResource/sourceName``); nil for a URL.
        var sourceName: String?
        /// False when the same source with the same settings was already queued or running and
        /// that job is returned.
        var created: Bool
        var links: JobResource.Links

        enum CodingKeys: String, CodingKey {
            case id, state, source, created, links
            case sourceName = "source_name"
        }

        /// Every member, `source_name` as null for a URL: one shape for clients, as in a job.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(state, forKey: .state)
            try container.encode(source, forKey: .source)
            try container.encode(sourceName, forKey: .sourceName)
            try container.encode(created, forKey: .created)
            try container.encode(links, forKey: .links)
        }
    }

    struct CreatedJobs: Encodable {
        var jobs: [CreatedJob]
    }

    func create(_ request: Request, _ context: APIRequestContext) async throws -> Response {
        let body = try await RequestBody.collect(request, maxBytes: configuration.maxBodyBytes)
        let create = try RequestBody.decode(CreateRequest.self, from: body, allowedKeys: CreateRequest.keys)
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

    // MARK: Reading

    func show(_ request: Request, _ context: APIRequestContext) async throws -> Response {
        let id = try Self.id(context)
        guard var job = try await queue.job(id) else { throw Self.notFound(id) }
        if let text = request.uri.queryParameters["wait"], !job.state.isFinished {
            let wait = try QueryDuration.parse(String(text), name: "wait", range: 0...configuration.maxWaitSeconds)
            if wait > .zero {
                var request = request
                let waited = try await longPoll(&request, context) {
                    try await watch.wait(for: [id], until: .allFinished, upTo: wait)?.first
                }
                if let waited { job = waited }
                var response = try json(resource(job))
                response.headers[.connection] = "close"
                return response
            }
        }
        return try json(resource(job))
    }

    /// Runs a long poll's `body` holding one of the client's wait slots (`429` when they are
    /// taken up), and ends it as soon as the client goes away: Hummingbird cancels `body` when
    /// the connection's inbound side closes, so a dropped client frees its slot, its
    /// descriptor and its share of the polling within moments, not at the wait's end. The
    /// access log shows such a request as `499` (the client closed it; nobody reads the answer).
    ///
    /// The connection is not reused after a long poll (watching for its end consumes it): the
    /// answer says `Connection: close`. The request's body is collected first (a `GET`'s too, up
    /// to `--max-body-bytes`), in `request` itself: the watch then starts after the body's end
    /// whoever read it before (see `RequestBody.collect(_:maxBytes:)`, the `inout` one), and a body nobody
    /// reads cannot stall it.
    func longPoll<Value: Sendable>(
        _ request: inout Request, _ context: APIRequestContext, _ body: () async throws -> Value
    ) async throws -> Value {
        _ = try await RequestBody.collect(&request, maxBytes: configuration.maxBodyBytes)
        let request = request
        return try await watch.withSlot(client: context.waitClient) {
            do {
                return try await request.body.consumeWithCancellationOnInboundClose { _ in try await body() }
            } catch is CancellationError {
                throw Problem(
                    HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request"), .cancelled,
                    "the client closed the connection before the wait ended")
            }
        }
    }

    struct JobPage: Encodable {
        var jobs: [JobResource]
        /// Pass as `cursor` for the next page; null on the last.
        var nextCursor: String?

        enum CodingKeys: String, CodingKey {
            case jobs
            case nextCursor = "next_cursor"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(jobs, forKey: .jobs)
            try container.encode(nextCursor, forKey: .nextCursor)
        }
    }

    func list(_ request: Request, _ context: APIRequestContext) async throws -> Response {
        let state = try ListQuery.state(request, as: JobState.self)
        let limit = try ListQuery.limit(request)
        let before = try request.uri.queryParameters["cursor"].map { try JobCursor.decode(String($0)) }
        // One more than asked tells whether there is a next page.
        let records = try await queue.list(state: state, limit: limit + 1, before: before)
        let page = Array(records.prefix(limit))
        let next = records.count > limit ? page.last.map { JobCursor.encode($0.id) } : nil
        var response = try json(JobPage(jobs: page.map(resource), nextCursor: next))
        if let next {
            var link = "/v1/jobs?limit=\(limit)&cursor=\(next)"
            if let state { link += "&state=\(state.rawValue)" }
            response.headers[.link] = "<\(link)>; rel=\"next\""
        }
        return response
    }

    // MARK: Synchronous processing

    /// `POST /v1/process`: the jobs of a create request, run through the queue (so its limits
    /// and the workers' concurrency hold) at a high priority, answered when all have finished,
    /// or at once when one of them fails (`complete` false: the failed job with its `error`,
    /// the others as they are, still running), or, after `?timeout=` (default 30 s), with `504`
    /// and the jobs to poll (each with its last error: a job waiting for a retry says why).
    ///
    /// A wait slot is taken before the jobs are enqueued, so a `429` for too many waits leaves
    /// no jobs behind.
    func process(_ request: Request, _ context: APIRequestContext) async throws -> Response {
        let timeout =
            try request.uri.queryParameters["timeout"].map {
                try QueryDuration.parse(String($0), name: "timeout", range: 0...configuration.maxWaitSeconds)
            } ?? min(.seconds(30), .milliseconds(Int64(configuration.maxWaitSeconds * 1000)))
        var request = request
        let body = try await RequestBody.collect(&request, maxBytes: configuration.maxBodyBytes)
        var create = try RequestBody.decode(CreateRequest.self, from: body, allowedKeys: CreateRequest.keys)
        create.priority = create.priority ?? JobSpec.priorities.upperBound
        let specs = try await specs(for: create, maxSources: configuration.maxProcessSources, context: context)
        let (ids, jobs) = try await longPoll(&request, context) {
            let ids = try await depth.admitting(specs.count) { try await queue.enqueue(specs) }.map(\.id)
            // Bound before the tuple is built (scripts/lint-tuple-await.py: issue 26 §0).
            let jobs = try await watch.wait(for: ids, until: .allFinishedOrAnyFailed, upTo: timeout) ?? []
            return (ids, jobs)
        }
        let failed = jobs.contains { $0.state.isFinished && $0.state != .succeeded }
        guard jobs.count == ids.count, failed || jobs.allSatisfy(\.state.isFinished) else {
            throw Problem(
                .gatewayTimeout, .timeout,
                "the jobs did not finish within \(timeout); poll them at /v1/jobs/{id}",
                extensions: [
                    "job_ids": .array(ids.map { JSONValue(Int($0)) }),
                    "jobs": .array(jobs.map(Self.progress)),
                ])
        }
        var response = try json(
            JobList(jobs: jobs.map(resource), complete: jobs.allSatisfy(\.state.isFinished)))
        response.headers[.connection] = "close"
        return response
    }

    /// `POST /v1/process`'s answer.
    struct JobList: Encodable {
        var jobs: [JobResource]
        /// False when the answer came early because a job failed while others still ran.
        var complete: Bool
    }

    /// A job in a `504` from `POST /v1/process`: its id, state, attempts and last error.
    static func progress(_ record: JobRecord) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("id", JSONValue(Int(record.id))), ("state", .string(record.state.rawValue)),
            ("attempt", JSONValue(record.attempt)),
        ]
        if let code = record.errorCode {
            let error: [(key: String, value: JSONValue)] = [
                ("code", .string(code)), ("message", .string(record.errorMessage ?? "")),
            ]
            members.append(("error", .object(JSONObject(error))))
        }
        return .object(JSONObject(members))
    }

    // MARK: Helpers

    /// A job as the API shows it: its attachment URLs signed with `--sign-attachments`.
    func resource(_ record: JobRecord) -> JobResource {
        renderer.resource(record)
    }

    /// The `{id}` of the path; a 404 for anything but a positive integer.
    static func id(_ context: APIRequestContext) throws -> JobID {
        guard let text = context.parameters.get("id"), let id = JobID(text), id > 0 else {
            throw Problem(.notFound, .jobNotFound, "no job has the id \(context.parameters.get("id") ?? "")")
        }
        return id
    }

    static func notFound(_ id: JobID) -> Problem {
        Problem(.notFound, .jobNotFound, "no job has the id \(id)")
    }
}

/// `GET /v1/stats`: jobs by state and the queue's health.
struct StatsResource: Encodable {
    var jobs: [String: Int]
    var ready: Int
    var scheduled: Int
    var expiredLeases: Int
    var oldestReadySeconds: Double?

    init(_ stats: QueueStats) {
        jobs = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0.rawValue, stats.byState[$0] ?? 0) })
        ready = stats.ready
        scheduled = stats.scheduled
        expiredLeases = stats.expiredLeases
        oldestReadySeconds = stats.oldestReadyAge
    }

    enum CodingKeys: String, CodingKey {
        case jobs, ready, scheduled
        case expiredLeases = "expired_leases"
        case oldestReadySeconds = "oldest_ready_seconds"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(jobs, forKey: .jobs)
        try container.encode(ready, forKey: .ready)
        try container.encode(scheduled, forKey: .scheduled)
        try container.encode(expiredLeases, forKey: .expiredLeases)
        try container.encode(oldestReadySeconds, forKey: .oldestReadySeconds)
    }
}

/// The opaque cursor of `GET /v1/jobs`: the last id of a page, base64url, so clients do not
/// build cursors of their own (the encoding may change).
enum JobCursor {
    static func encode(_ id: JobID) -> String {
        Data("j\(id)".utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) throws -> JobID {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.count <= 32, let data = Data(base64Encoded: base64),
            let decoded = String(data: data, encoding: .utf8), decoded.hasPrefix("j"),
            let id = JobID(decoded.dropFirst()), id > 0
        else { throw Problem(.badRequest, .invalidRequest, "cursor is not one this server gave") }
        return id
    }
}

/// Encodes a response body as the API's JSON.
func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
    let data = try APICoding.encoder().encode(value)
    return Response(
        status: status, headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
}
