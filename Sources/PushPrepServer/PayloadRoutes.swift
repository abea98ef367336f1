import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PushPrep
import PushPrepCore
import PushPrepJSON
import PushPrepPayload
import PushPrepQueue
import PushPrepRemote

/// `POST /v1/payload` and `POST /v1/preflight`: the push payload of processed attachments and
/// the pre-flight check of a payload, computed by the code `pushprep payload` and
/// `pushprep preflight` run (``PayloadSelection``, ``PayloadBuilder``, ``Preflight``,
/// ``PreflightSession``), so the API and the CLI answer alike.
struct PayloadRoutes {
    let queue: any JobQueueAdmin
    let configuration: ServerConfiguration
    /// Jobs' entries as clients see them: signed URLs with `--sign-attachments`.
    let renderer: JobRenderer

    func register(on router: some RouterMethods<APIRequestContext>) {
        router.post("v1/payload") { request, context in try await payload(request, context) }
        router.post("v1/preflight") { request, context in try await preflight(request, context) }
    }

    // MARK: Payload

    /// `POST /v1/payload`'s body: the attachments (manifest entries, or the ids of succeeded
    /// jobs) and what `pushprep payload` takes as options: `ids` as `--id`, `all` as `--all`
    /// (without either, the first ready attachment). `merge` is read from the parsed document,
    /// so its numbers keep their spelling.
    struct PayloadRequest: KeyedRequestBody {
        var entries: [ManifestEntry]?
        var jobIDs: [JobID]?
        var dialect: String?
        var ids: [String]?
        var all: Bool?
        var title: String?
        var subtitle: String?
        var body: String?
        var category: String?
        var threadID: String?
        var sound: String?
        var baseURL: String?

        /// `merge` (any JSON object, laid over the payload) is read from the document.
        static let documentKeys: Set<String> = ["merge"]

        enum CodingKeys: String, CodingKey, CaseIterable {
            case entries, dialect, ids, all, title, subtitle, body, category, sound
            case jobIDs = "job_ids"
            case threadID = "thread_id"
            case baseURL = "base_url"
        }
    }

    /// One note per host among the attachments' URLs (the iOS attachment's and its renditions')
    /// that a phone cannot reach (``PhoneReachability``: the default `http://127.0.0.1:8080/…` of
    /// a `serve` without `--public-url`), so a client that sends the payload on is told at once,
    /// not only by `serve`'s start-up log or a pre-flight's `unreachable_url`.
    static func unreachableNotes(_ attachments: [Attachment]) -> [String] {
        var hosts: [String] = []
        var notes: [String] = []
        let urls = attachments.flatMap { [$0.url] + $0.renditions.all.map(\.rendition.url) }
        for case let url? in urls {
            guard let parsed = try? RemoteURL(url), !hosts.contains(parsed.host),
                let reason = PhoneReachability.reason(host: parsed.host)
            else { continue }
            hosts.append(parsed.host)
            notes.append(
                "unreachable_url: \(parsed.host) is \(reason): a phone cannot download this payload's attachments "
                    + "from it; run serve with --public-url (or --base-url) naming a host phones reach")
        }
        return notes
    }

    func payload(_ request: Request, _ context: APIRequestContext) async throws -> Response {
        let bytes = try await RequestBody.collect(request, maxBytes: configuration.maxBodyBytes)
        let body = try RequestBody.decode(PayloadRequest.self, from: bytes)
        let dialect = try Self.dialect(body.dialect ?? PushDialect.apns.rawValue)
        let entries: [ManifestEntry]
        let source: String
        switch (body.entries, body.jobIDs) {
        case (let given?, nil):
            entries = given
            source = "entries"
        case (nil, let ids?):
            entries = try await succeededEntries(ids)
            source = "the jobs"
        default:
            throw Problem(.badRequest, .invalidRequest, "give either entries (manifest entries) or job_ids")
        }
        guard (1...configuration.maxSourcesPerRequest).contains(entries.count) else {
            throw Problem(
                .badRequest, .invalidRequest,
                "a payload is built from 1 to \(configuration.maxSourcesPerRequest) attachments, got \(entries.count)")
        }
        let merge: JSONObject
        switch try JSONValue.parse(bytes).value["merge"] {
        case nil: merge = [:]
        case .object(let object)?: merge = object
        default: throw Problem(.badRequest, .invalidRequest, "merge must be a JSON object")
        }
        let built: BuiltPayload
        let selection: PayloadSelection
        do throws(PushPrepError) {
            if let baseURL = body.baseURL { try ProcessingSettings.validate(baseURL: baseURL) }
            // The code `pushprep payload` runs, its messages naming this API's fields.
            selection = try PayloadSelection(
                from: entries, ids: body.ids ?? [], all: body.all ?? false, dialect: dialect, baseURL: body.baseURL,
                source: source, spelling: .http)
            let content = PayloadContent(
                title: body.title, subtitle: body.subtitle, body: body.body, category: body.category,
                threadID: body.threadID, sound: body.sound)
            built = try PayloadBuilder.buildWithNotes(
                dialect: dialect, attachments: selection.attachments, content: content, extra: merge)
        } catch {
            throw Problem(error)
        }
        // The body stays the payload, exactly; what it leaves out for a platform (the lines
        // `pushprep payload` prints on standard error) goes in one header per note, and which
        // attachment the default took, when there were more, in its own.
        var headers: HTTPFields = [.contentType: "application/json"]
        if let note = selection.note { headers.append(HTTPField(name: .pushPrepSelection, value: note)) }
        for note in built.notes { headers.append(HTTPField(name: .pushPrepNote, value: note.description)) }
        for note in Self.unreachableNotes(selection.attachments) {
            headers.append(HTTPField(name: .pushPrepNote, value: note))
        }
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: built.payload.serialized())))
    }

    /// The manifest entries of jobs that succeeded, in the order given: a job that does not
    /// exist is 404, one that has not succeeded (or whose entry this build cannot read) 409.
    func succeededEntries(_ ids: [JobID]) async throws -> [ManifestEntry] {
        guard ids.count <= configuration.maxSourcesPerRequest else {
            throw Problem(
                .badRequest, .invalidRequest, "job_ids holds at most \(configuration.maxSourcesPerRequest) ids")
        }
        var entries: [ManifestEntry] = []
        for id in ids {
            guard id > 0, let record = try await queue.job(id) else { throw JobRoutes.notFound(id) }
            guard record.state == .succeeded else {
                throw Problem(
                    .conflict, .invalidJobState,
                    "job \(id) is \(record.state.rawValue); a payload takes succeeded jobs only")
            }
            guard let entry = renderer.resource(record).attachment else {
                throw Problem(.conflict, .invalidJobState, "job \(id) has no manifest entry this server can read")
            }
            entries.append(entry)
        }
        return entries
    }

    static func dialect(_ name: String) throws -> PushDialect {
        guard let dialect = PushDialect(rawValue: name) else {
            throw Problem(
                .badRequest, .invalidRequest,
                "dialect must be one of \(PushDialect.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return dialect
    }

    // MARK: Pre-flight

    /// `POST /v1/preflight`'s body besides `payload`: what `pushprep preflight` takes as
    /// options. `payload` is the payload as a JSON object, or its text as a string (checked
    /// byte for byte as sent, duplicate keys included, as the CLI checks a file).
    struct PreflightRequest: KeyedRequestBody {
        var dialect: String?
        var pushType: String?
        var fetch: Bool?
        var allowHTTP: Bool?
        var timeBudget: Double?
        var slowLinkKbps: Double?
        var fetchMaxURLs: Int?
        var fetchMaxBytes: Int?

        /// `payload` (the payload to check, any JSON) and `assume_bandwidth` (a number or a text
        /// such as `3g`) are read from the document.
        static let documentKeys: Set<String> = ["payload", "assume_bandwidth"]

        enum CodingKeys: String, CodingKey, CaseIterable {
            case dialect, fetch
            case pushType = "push_type"
            case allowHTTP = "allow_http"
            case timeBudget = "time_budget"
            case slowLinkKbps = "slow_link_kbps"
            case fetchMaxURLs = "fetch_max_urls"
            case fetchMaxBytes = "fetch_max_bytes"
        }
    }

    /// `assume_bandwidth`: a speed as the CLI spells it (`"1mbit"`, `"500kbit"`), or bits per
    /// second as a number; nil when absent or null. Anything else is `invalid_settings`.
    static func bandwidth(_ value: JSONValue?) throws -> Bandwidth? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            guard let bandwidth = Bandwidth(text: text) else {
                throw Problem(Bandwidth.invalid(text, what: "assume_bandwidth"))
            }
            return bandwidth
        case let value?:
            guard let number = value.doubleValue, let bandwidth = Bandwidth(bitsPerSecond: number) else {
                throw Problem(Bandwidth.invalid(value.serialized(), what: "assume_bandwidth"))
            }
            return bandwidth
        }
    }

    func preflight(_ request: Request, _ context: APIRequestContext) async throws -> Response {
        let bytes = try await RequestBody.collect(request, maxBytes: configuration.maxBodyBytes)
        let body = try RequestBody.decode(PreflightRequest.self, from: bytes)
        let payload: [UInt8]
        let document = try JSONValue.parse(bytes).value
        switch document["payload"] {
        case .string(let text)?: payload = Array(text.utf8)
        case let value? where value.objectValue != nil: payload = Array(value.serialized().utf8)
        default:
            throw Problem(.badRequest, .invalidRequest, "payload must be the payload: a JSON object, or its text")
        }
        var options = PreflightOptions()
        if let name = body.dialect, name != "auto" { options.dialect = try Self.dialect(name) }
        if let name = body.pushType {
            guard let pushType = PushType(rawValue: name) else {
                throw Problem(.badRequest, .invalidRequest, "push_type must be alert, voip or background")
            }
            options.pushType = pushType
        }
        options.allowHTTP = body.allowHTTP ?? false
        options.timeBudget = body.timeBudget ?? options.timeBudget
        options.slowLinkKbps = body.slowLinkKbps ?? options.slowLinkKbps
        options.assumedBandwidth = try Self.bandwidth(document["assume_bandwidth"]) ?? options.assumedBandwidth
        let budget: PreflightSession.FetchBudget
        do throws(PushPrepError) {
            try options.validate()
            // The server's `--max-preflight-urls` and `--max-preflight-bytes` bound what any
            // client (a read key too) may make it download.
            budget = try PreflightSession.FetchBudget.requested(
                maxURLs: body.fetchMaxURLs, maxBytes: body.fetchMaxBytes, within: configuration.preflightFetchCeiling)
        } catch {
            throw Problem(error)
        }
        let report: PreflightReport
        if body.fetch == true {
            report = try await Self.fetchingCheck(
                payload, options: options, budget: budget, configuration: configuration, logger: context.logger
            ).report
        } else {
            report = Preflight.check(payload, file: "payload", options: options)
        }
        return try json(PreflightOutput(reports: [report]))
    }

    /// Pre-flight with downloads, as `POST /v1/preflight` with `fetch` and the console's
    /// pre-flight page run it: the remote-source rules of `configuration` and `budget` (already
    /// checked against the server's ceiling with ``PreflightSession/FetchBudget/requested(maxURLs:maxBytes:within:)``).
    /// With `picturing`, the preview's attachment is pictured while its download is held.
    static func fetchingCheck(
        _ payload: [UInt8], options: PreflightOptions, budget: PreflightSession.FetchBudget,
        configuration: ServerConfiguration, picturing: (any AttachmentPicturing)? = nil, logger: Logger
    ) async throws -> (report: PreflightReport, picture: AttachmentPicture?) {
        let session: PreflightSession
        do throws(PushPrepError) {
            session = try PreflightSession(
                options: options, remote: configuration.remote, budget: budget, logger: logger)
        } catch {
            throw Problem(error)
        }
        let checked: (report: PreflightReport, picture: AttachmentPicture?)
        if let picturing {
            checked = await session.check(payload, file: "payload", picturing: picturing)
        } else {
            checked = (await session.check(payload, file: "payload"), nil)
        }
        await session.shutdown()
        return checked
    }
}
