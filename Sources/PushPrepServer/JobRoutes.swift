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
        var create = try RequestBody.decode(CreateRequest.self, from: body)
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
    /// Null when nothing is ready.
    @ExplicitNull var oldestReadySeconds: Double?

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
