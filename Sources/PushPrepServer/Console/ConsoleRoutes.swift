import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PushPrep
import PushPrepCore
import PushPrepPayload
import PushPrepQueue
import PushPrepReport
import Synchronization

/// `pushprep serve`'s console: server-rendered pages over the queue for people (overview, jobs,
/// one job, pre-flight, login), readable without JavaScript; `/console/app.js` only adds live
/// updates by polling `/console/live`.
///
/// Authentication is a signed session cookie (``ConsoleSessions``), not `Authorization`: the
/// API's ``AuthMiddleware`` lets these paths through (``owns(_:)``) and every handler here goes
/// through ``handle(_:_:needs:_:)``, which checks the session, the scope, and on POST the
/// request's origin and CSRF token.
struct ConsoleRoutes {
    let queue: any JobQueueAdmin & WebhookOutbox & ConsoleQueries
    let configuration: ServerConfiguration
    let renderer: JobRenderer
    let publicURL: PublicURL
    let sessions: ConsoleSessions
    /// The names this server answers to, for the same-origin check of forms.
    let names: ServerNames
    /// Failed logins per client address (shared with the API's bearer keys).
    let failures: AuthFailureLimiter
    /// The origin of `--base-url` when published files live elsewhere (a CDN or a bucket's
    /// website): the job page loads an output's picture from it, and the pages' CSP allows
    /// images from there and nowhere else outside this server.
    let pictureOrigin: String?
    /// The pages' CSP: ``contentSecurityPolicy`` with ``pictureOrigin`` among the image sources.
    /// Both are worked out once here, not on every page.
    let pagePolicy: String

    init(
        queue: any JobQueueAdmin & WebhookOutbox & ConsoleQueries, configuration: ServerConfiguration,
        renderer: JobRenderer, publicURL: PublicURL,
        sessions: ConsoleSessions, names: ServerNames, failures: AuthFailureLimiter
    ) {
        self.names = names
        self.failures = failures
        self.queue = queue
        self.configuration = configuration
        self.renderer = renderer
        self.publicURL = publicURL
        self.sessions = sessions
        let pictureOrigin = configuration.baseURL.flatMap(ImageOrigin.init(baseURL:))?.origin
        self.pictureOrigin = pictureOrigin
        pagePolicy =
            pictureOrigin.map {
                Self.contentSecurityPolicy.replacingOccurrences(
                    of: "img-src 'self' data:;", with: "img-src 'self' data: \($0);")
            } ?? Self.contentSecurityPolicy
    }

    /// The paths the console answers, which the API's bearer check leaves to it.
    static func owns(_ path: String) -> Bool {
        if ["/", "/jobs", "/preflight", "/login", "/logout"].contains(path) { return true }
        return path.hasPrefix("/jobs/") || path.hasPrefix("/console/")
    }

    func register(on router: Router<APIRequestContext>) {
        router.get("/") { request, context in
            await handle(request, context, needs: .read) { visit, _ in try await overview(visit) }
        }
        router.get("jobs") { request, context in
            await handle(request, context, needs: .read) { visit, _ in try await jobs(request, visit) }
        }
        router.post("jobs/bulk-retry") { request, context in
            await handle(request, context, needs: .write) { _, form in try await bulkRetry(form) }
        }
        router.get("jobs/:id") { request, context in
            await handle(request, context, needs: .read) { visit, _ in try await job(try Self.id(context), visit) }
        }
        router.post("jobs/:id/retry") { request, context in
            await handle(request, context, needs: .write) { _, form in
                let id = try Self.id(context)
                _ = try await queue.retry(id)
                return Self.redirect(Self.returnPath(form["return"]), notice: "retried")
            }
        }
        router.post("jobs/:id/cancel") { request, context in
            await handle(request, context, needs: .write) { _, form in
                let id = try Self.id(context)
                _ = try await queue.cancel(id)
                return Self.redirect(Self.returnPath(form["return"]), notice: "cancelled")
            }
        }
        router.get("preflight") { request, context in
            await handle(request, context, needs: .read) { visit, _ in
                try await preflightPage(visit, form: nil, logger: context.logger)
            }
        }
        router.post("preflight") { request, context in
            await handle(request, context, needs: .read) { visit, form in
                try await preflightPage(visit, form: form, logger: context.logger)
            }
        }
        router.get("login") { request, _ in loginPage(request) }
        router.post("login") { request, context in await login(request, context) }
        router.post("logout") { request, context in await logout(request, context) }
        router.get("console/style.css") { _, _ in
            Self.asset(ConsoleStyle.stylesheet, type: "text/css; charset=utf-8")
        }
        router.get("console/app.js") { _, _ in
            Self.asset(ConsoleAssets.javascript, type: "text/javascript; charset=utf-8")
        }
        // Declared by every page, so the browser does not ask for /favicon.ico (behind the login
        // when keys are set: a 401 and a console error on every page).
        router.get("console/icon.svg") { _, _ in
            Self.asset(ConsoleAssets.icon, type: "image/svg+xml")
        }
        router.get("console/live") { request, context in
            await handle(request, context, needs: .read) { _, _ in try await live(request) }
        }
    }

    // MARK: The gate

    /// What a console handler runs with: the session, and the cookie to set when this request
    /// opened it (a server without keys opens an anonymous session on the first visit, so that
    /// its forms carry a CSRF token too).
    struct Visit {
        var session: ConsoleSession
        var csrf: String
        var notice: String?
        var path: String

        var canWrite: Bool { session.scopes.contains(.write) }
    }

    /// Runs `body` for a request that may: a valid session (else a redirect to `/login`, or a
    /// fresh anonymous session on a server without keys), `scope` (else 403), and for a POST a
    /// same-origin request (else 403) whose form's `csrf` field is the session's token (else
    /// 403). Errors become HTML pages; every answer gets the console's security headers.
    func handle(
        _ request: Request, _ context: APIRequestContext, needs scope: APIKey.Scope,
        _ body: (Visit, [String: String]) async throws -> Response
    ) async -> Response {
        var setCookie: String?
        var response: Response
        do {
            let isPost = request.method == .post
            var session = sessions.session(of: request)
            if session == nil {
                if configuration.apiKeys != nil {
                    // Back here after the login (a form's page, for a POST: its body is gone).
                    let next = Self.returnPath(isPost ? "/" : request.uri.string)
                    return Self.secured(Self.redirect("/login?next=" + Self.percentEncoded(next)))
                }
                if isPost {
                    throw Problem(.forbidden, .forbidden, "this form has expired; reload the page and try again")
                }
                let opened = sessions.open(keyID: ConsoleSession.anonymous, scopes: Set(APIKey.Scope.allCases))
                setCookie = sessions.cookie(for: opened, secure: secure(request))
                session = opened
            }
            guard let session else { throw Problem(.forbidden, .forbidden, "no session") }
            var form: [String: String] = [:]
            if isPost {
                guard RequestOrigin.isSameOrigin(request, names: names) else {
                    throw Problem(.forbidden, .forbidden, "this form was sent from another site and is refused")
                }
                form = FormBody.parse(try await RequestBody.collect(request, maxBytes: configuration.maxBodyBytes))
                guard sessions.checkCSRF(form["csrf"], for: session) else {
                    throw Problem(.forbidden, .forbidden, "this form has expired; reload the page and try again")
                }
            }
            guard session.scopes.contains(scope) else {
                throw Problem(.forbidden, .forbidden, "your API key lacks the \(scope.rawValue) scope")
            }
            var visit = Visit(
                session: session, csrf: sessions.csrfToken(for: session), path: request.uri.path)
            visit.notice = request.uri.queryParameters["notice"].flatMap { Self.notices[String($0)] }
            // The access log names the session's key, as it does a bearer key.
            if session.keyID != ConsoleSession.anonymous {
                context.notes.keyID.withLock { $0 = session.keyID }
            }
            response = try await body(visit, form)
        } catch {
            response = errorPage(RequestIDMiddleware.problem(for: error), session: sessions.session(of: request))
        }
        if let setCookie { response.headers[.setCookie] = setCookie }
        return Self.secured(response, policy: pagePolicy)
    }

    /// The fixed notices a redirect after a POST may ask for (never text from the URL).
    static let notices: [String: String] = [
        "retried": "The job was queued again.",
        "cancelled": "The job was cancelled (a running job stops at its next step).",
        "bulk": "The matching jobs were queued again.",
        "bulk-none": "No failed, dead or cancelled job matched the filter.",
        "logged-out": "You are logged out.",
    ]

    func secure(_ request: Request) -> Bool {
        RequestOrigin.isSecure(request, publicURL: publicURL.url)
    }

    // MARK: Pages

    /// The values every page's header needs.
    func common(_ visit: Visit?, title: String) -> [String: Any] {
        var values: [String: Any] = ["title": title]
        if let visit {
            var session: [String: Any] = [:]
            if visit.session.keyID != ConsoleSession.anonymous {
                session["loggedIn"] = true
                session["keyID"] = visit.session.keyID
            }
            session["navOverview"] = visit.path == "/"
            session["navJobs"] = visit.path.hasPrefix("/jobs")
            session["navPreflight"] = visit.path == "/preflight"
            values["session"] = session
            values["csrf"] = visit.csrf
            values["canWrite"] = visit.canWrite
            if let notice = visit.notice { values["notice"] = notice }
        }
        return values
    }

    /// How recently a worker must have been seen to count as alive: its heartbeats come every
    /// third of its lease (20 s by default), so this covers leases up to 6 minutes.
    static let aliveWithin: TimeInterval = 120

    func overview(_ visit: Visit) async throws -> Response {
        let now = Date()
        let stats = try await queue.stats()
        let activity = ConsoleActivity(
            buckets: try await queue.activity(since: now - 3600, bucket: .seconds(60)), end: now)
        let workers = try await queue.workers(seenSince: now - Self.aliveWithin)
        var values = common(visit, title: "Overview")
        values["counts"] = JobState.allCases.map {
            ["state": $0.rawValue, "count": stats.byState[$0] ?? 0] as [String: Any]
        }
        values["ready"] = stats.ready
        values["scheduled"] = stats.scheduled
        values["expiredLeases"] = stats.expiredLeases
        values["oldestReady"] = stats.oldestReadyAge.map { ConsoleFormat.age(seconds: $0) } ?? "no job is waiting"
        if let pending = stats.pendingDeliveries { values["pendingDeliveries"] = String(pending) }
        values["finishedLastHour"] = activity.succeeded + activity.failed
        values["succeededLastHour"] = activity.succeeded
        values["failedLastHour"] = activity.failed
        values["activityChart"] = activity.svg()
        values["activityLegend"] = activity.legend
        values["workers"] = workers.map { worker -> [String: Any] in
            [
                "name": worker.id, "host": worker.host, "concurrency": worker.concurrency,
                "busy": "\(worker.runningJobs.count) of \(worker.concurrency)",
                "seen": ConsoleFormat.age(seconds: now.timeIntervalSince(worker.lastSeenAt)) + " ago",
                "jobs": worker.runningJobs.sorted(),
            ]
        }
        values["workersNote"] = "seen in the last \(Int(Self.aliveWithin / 60)) minutes"
        return html("overview", values)
    }

    func jobs(_ request: Request, _ visit: Visit) async throws -> Response {
        let filter = try ConsoleJobFilter(query: request.uri.query)
        let before = request.uri.queryParameters["before"].flatMap { JobID(String($0)) }.flatMap { $0 > 0 ? $0 : nil }
        let page = try await filter.page(queue, before: before)
        var values = common(visit, title: "Jobs")
        values["filter"] = filter.values
        // A filter on a state that cannot be retried offers no bulk retry.
        values["canBulkRetry"] =
            visit.canWrite && (filter.state.map(\.isRetryable) ?? true)
        values["states"] = JobState.allCases.map {
            ["value": $0.rawValue, "selected": $0 == filter.state] as [String: Any]
        }
        values["kinds"] = MediaKind.allCases.map {
            ["value": $0.rawValue, "selected": $0 == filter.kind] as [String: Any]
        }
        let returnTo = request.uri.string
        let now = Date()
        values["rows"] = page.jobs.map { record -> [String: Any] in
            var row = ConsoleJobView(record, renderer: renderer).values(now: now)
            row["returnTo"] = returnTo
            return row
        }
        let total = try await queue.count(filter: filter.queueFilter)
        values["caption"] =
            page.jobs.isEmpty
            ? "No job matches"
            : "Jobs \(page.jobs.first?.id ?? 0) to \(page.jobs.last?.id ?? 0), newest first; \(total) match"
        if let next = page.nextBefore { values["olderLink"] = "/jobs?" + filter.query(before: next) }
        if before != nil { values["newestLink"] = "/jobs?" + filter.query(before: nil) }
        return html("jobs", values)
    }

    /// `POST /jobs/bulk-retry`: every failed, dead or cancelled job the filter matches, queued
    /// again by the queue in batches of at most ``JobFilter/retryLimit``.
    ///
    /// A batch retries fewer than the limit whenever it leaves some of its jobs alone (a dedup
    /// key that a queued job or a newer retried one holds), so only a batch that retries nothing
    /// ends the work. It is bounded by how many jobs matched when the form came: jobs a worker
    /// fails again meanwhile are not chased round and round.
    func bulkRetry(_ form: [String: String]) async throws -> Response {
        let filter = try ConsoleJobFilter(form: form)
        let retryable = JobState.allCases.filter(\.isRetryable)
        var matching = filter.queueFilter
        matching.states = Set(filter.state.map { retryable.contains($0) ? [$0] : [] } ?? retryable)
        let total = matching.states.isEmpty ? 0 : try await queue.count(filter: matching)
        var retried = 0
        while retried < total {
            let batch = try await queue.retry(matching: filter.queueFilter)
            guard batch > 0 else { break }
            retried += batch
        }
        let query = filter.query(before: nil)
        return Self.redirect(
            "/jobs" + (query.isEmpty ? "" : "?" + query), notice: retried > 0 ? "bulk" : "bulk-none")
    }

    func job(_ id: JobID, _ visit: Visit) async throws -> Response {
        guard let record = try await queue.job(id) else { throw JobRoutes.notFound(id) }
        let deliveries = try await queue.deliveries(job: id)
        let attempts = try await queue.attempts(job: id)
        let view = ConsoleJobView(record, renderer: renderer)
        var values = common(visit, title: "Job \(id)")
        values["mainID"] = "job"
        values.merge(view.values) { _, new in new }
        values.merge(
            view.detailValues(
                deliveries: deliveries, attempts: attempts, publicURL: publicURL.url, pictureOrigin: pictureOrigin,
                files: ConsoleFiles(configuration))
        ) {
            _, new in new
        }
        return html("job", values)
    }

    /// The pre-flight page, and with `form` its check. A session with the `write` scope may
    /// tick `fetch`: the attachments are downloaded and checked (as `POST /v1/preflight` with
    /// `fetch` does) within `fetch_max_urls` and `fetch_max_bytes`, which the server's
    /// `--max-preflight-urls` and `--max-preflight-bytes` bound with the API's own check
    /// (``PreflightSession/FetchBudget/requested(maxURLs:maxBytes:within:)``). A read-only
    /// session is not offered it and is refused it (`403`): a download is work the server does
    /// for the caller, against hosts the caller names.
    func preflightPage(_ visit: Visit, form: [String: String]?, logger: Logger) async throws -> Response {
        var values = common(visit, title: "Pre-flight")
        let ceiling = configuration.preflightFetchCeiling
        let chosen = form?["dialect"] ?? "auto"
        values["dialects"] =
            [
                ["value": "auto", "label": "Detect from the payload's keys", "selected": chosen == "auto"]
                    as [String: Any]
            ]
            + PushDialect.allCases.map {
                ["value": $0.rawValue, "label": $0.displayName, "selected": chosen == $0.rawValue] as [String: Any]
            }
        let fetch = !(form?["fetch"] ?? "").isEmpty
        if visit.canWrite {
            values["fetchForm"] =
                [
                    "checked": fetch, "maxURLs": ceiling.maxURLs, "maxBytes": ceiling.maxBytes,
                    "minBytes": PreflightSession.FetchBudget.byteRange.lowerBound,
                    "urls": form?["fetch_max_urls"] ?? "", "bytes": form?["fetch_max_bytes"] ?? "",
                ] as [String: Any]
        }
        guard let form else { return html("preflight", values) }
        let payload = form["payload"] ?? ""
        if !payload.isEmpty { values["payload"] = payload }
        var options = PreflightOptions()
        if chosen != "auto" {
            guard let dialect = PushDialect(rawValue: chosen) else {
                return errorPage(
                    Problem(.badRequest, .invalidRequest, "pick a dialect from the list"), session: visit.session)
            }
            options.dialect = dialect
        }
        let bytes = Array(payload.utf8)
        let report: PreflightReport
        var picture: AttachmentPicture?
        if fetch {
            guard visit.canWrite else {
                throw Problem(
                    .forbidden, .forbidden, "downloading the attachments needs a key with the write scope")
            }
            let budget: PreflightSession.FetchBudget
            do throws(PushPrepError) {
                budget = try PreflightSession.FetchBudget.requested(
                    maxURLs: try Self.wholeNumber(form, "fetch_max_urls"),
                    maxBytes: try Self.wholeNumber(form, "fetch_max_bytes"), within: ceiling)
            } catch {
                throw Problem(error)
            }
            (report, picture) = try await PayloadRoutes.fetchingCheck(
                bytes, options: options, budget: budget, configuration: configuration,
                picturing: PreflightPictures(payloads: 1, maxPixels: ProcessingSettings().maxPixels), logger: logger)
            values["fetched"] = true
        } else {
            report = Preflight.check(bytes, file: "payload", options: options)
        }
        values.merge(ConsolePreflightView(report: report).values) { _, new in new }
        // What the preview says of an attachment it has not downloaded: the form's own option,
        // never the CLI's flag.
        let notDownloaded =
            visit.canWrite
            ? "Not downloaded: tick \u{201C}Download the attachments\u{201D} and check again to see it"
            : "Not downloaded: downloading the attachments needs a key with the write scope"
        values["previewHTML"] =
            NotificationPreview(
                preflight: report, payload: bytes, options: options, picture: picture,
                notDownloadedNote: notDownloaded
            ).html
        return html("preflight", values)
    }

    /// A form's field as a whole number; nil when empty or absent, `invalid_settings` (422)
    /// for anything else, naming the field as the API names it.
    static func wholeNumber(_ form: [String: String], _ name: String) throws(PushPrepError) -> Int? {
        guard let text = form[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        guard let number = Int(text) else {
            throw PushPrepError(.invalidSettings, "\(name) must be a whole number, got \(UntrustedText.escaped(text))")
        }
        return number
    }

    /// The most jobs one `/console/live` request asks about (a page of the table shows 50).
    static let maxLiveIDs = 200

    /// `GET /console/live?ids=1,2,3`: the states of those jobs (the first ``maxLiveIDs``
    /// distinct ones) and the counts by state, for the script's live updates. A longer list is
    /// not split to its end, and an id repeated is looked up once.
    func live(_ request: Request) async throws -> Response {
        let text = request.uri.queryParameters["ids"] ?? ""
        var ids: [JobID] = []
        var seen: Set<JobID> = []
        for part in text.split(separator: ",", maxSplits: Self.maxLiveIDs) where ids.count < Self.maxLiveIDs {
            if let id = JobID(part), id > 0, seen.insert(id).inserted { ids.append(id) }
        }
        var jobs: [ConsoleLive.Job] = []
        let now = Date()
        for id in ids {
            if let record = try await queue.job(id) {
                let retry = ConsoleRetry(record, now: now)
                jobs.append(
                    .init(
                        id: record.id, state: record.state.rawValue,
                        shownState: retry == nil ? record.state.rawValue : ConsoleRetry.shownState,
                        nextAttempt: retry?.label, nextAttemptISO: retry.map { ConsoleFormat.iso($0.at) },
                        nextAttemptIn: retry?.wait(now: now),
                        attempts: "\(record.attempt) of \(record.maxAttempts)",
                        errorCode: record.errorCode))
            }
        }
        let stats = try await queue.stats()
        let counts = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0.rawValue, stats.byState[$0] ?? 0) })
        var response = try json(ConsoleLive(jobs: jobs, counts: counts))
        response.headers[.cacheControl] = "no-store"
        return response
    }

    // MARK: Login

    func loginPage(_ request: Request) -> Response {
        guard configuration.apiKeys != nil else { return Self.secured(Self.redirect("/")) }
        var values = common(nil, title: "Log in")
        values["next"] = Self.returnPath(request.uri.queryParameters["next"].map(String.init))
        if request.uri.queryParameters["notice"] == "logged-out" { values["notice"] = Self.notices["logged-out"] }
        return Self.secured(html("login", values))
    }

    /// `POST /login`: the key is checked like a bearer key and then forgotten; the answer sets
    /// the session cookie and sends the browser where it was going. A form from another site is
    /// refused (login CSRF); an address that failed too often gets `429` (``AuthFailureLimiter``,
    /// shared with the API's keys).
    func login(_ request: Request, _ context: APIRequestContext) async -> Response {
        guard let keys = configuration.apiKeys else { return Self.secured(Self.redirect("/")) }
        guard RequestOrigin.isSameOrigin(request, names: names) else {
            return Self.secured(
                errorPage(
                    Problem(.forbidden, .forbidden, "this form was sent from another site and is refused"), session: nil
                ))
        }
        let form: [String: String]
        do {
            form = FormBody.parse(try await RequestBody.collect(request, maxBytes: 16 * 1024))
        } catch {
            return Self.secured(errorPage(RequestIDMiddleware.problem(for: error), session: nil))
        }
        let next = Self.returnPath(form["next"])
        if let wait = failures.retryAfter(context.remoteAddress) {
            var response = errorPage(AuthMiddleware.tooManyFailures(wait), session: nil)
            response.headers[.retryAfter] = String(wait)
            return Self.secured(response)
        }
        guard let presented = form["key"], let key = keys.authenticate(presented) else {
            failures.recordFailure(context.remoteAddress)
            context.logger.notice("console login refused")
            var values = common(nil, title: "Log in")
            values["failed"] = true
            values["next"] = next
            return Self.secured(html("login", values, status: .unauthorized))
        }
        context.logger.info("console login", metadata: ["key": "\(key.id)"])
        let session = sessions.open(keyID: key.id, scopes: key.scopes)
        var response = Self.redirect(next)
        response.headers[.setCookie] = sessions.cookie(for: session, secure: secure(request))
        return Self.secured(response)
    }

    /// `POST /logout`: clears the cookie (a form from another site cannot log anyone out).
    func logout(_ request: Request, _ context: APIRequestContext) async -> Response {
        guard RequestOrigin.isSameOrigin(request, names: names) else {
            return Self.secured(
                errorPage(
                    Problem(.forbidden, .forbidden, "this form was sent from another site and is refused"), session: nil
                ))
        }
        if let session = sessions.session(of: request) {
            let form = FormBody.parse((try? await RequestBody.collect(request, maxBytes: 16 * 1024)) ?? [])
            guard sessions.checkCSRF(form["csrf"], for: session) else {
                return Self.secured(
                    errorPage(
                        Problem(.forbidden, .forbidden, "this form has expired; reload the page and try again"),
                        session: session))
            }
        }
        var response = Self.redirect(configuration.apiKeys == nil ? "/" : "/login?notice=logged-out")
        response.headers[.setCookie] = ConsoleSessions.clearingCookie(secure: secure(request))
        return Self.secured(response)
    }

    // MARK: Answers

    func html(_ template: String, _ values: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: ConsoleTemplates.render(template, values))))
    }

    /// An error as a page: the problem's status, its code and detail in words.
    func errorPage(_ problem: Problem, session: ConsoleSession?) -> Response {
        var values = common(
            session.map { Visit(session: $0, csrf: sessions.csrfToken(for: $0), path: "") }, title: "Error")
        values["heading"] =
            problem.status == .notFound
            ? "Not found" : problem.status == .forbidden ? "Not allowed" : "Something went wrong"
        values["message"] = problem.detail + " (\(problem.code.rawValue))"
        return html("error", values, status: problem.status)
    }

    /// A 303 to `path` (Post/Redirect/Get), with one of the fixed ``notices``.
    static func redirect(_ path: String, notice: String? = nil) -> Response {
        var location = path
        if let notice { location += (path.contains("?") ? "&" : "?") + "notice=" + notice }
        return Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    /// `path` when it is a path of this server (one leading slash, no scheme, no backslash, no
    /// control character), else `/`: a form's return address cannot send the browser away.
    static func returnPath(_ path: String?) -> String {
        guard let path, path.hasPrefix("/"), !path.hasPrefix("//"), path.utf8.count <= 2048,
            !path.contains("\\"), path.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { return "/" }
        // A notice from an earlier redirect is not carried into the next.
        if let range = path.range(of: "notice=") {
            let kept = path[..<range.lowerBound]
            return String(kept.hasSuffix("?") || kept.hasSuffix("&") ? kept.dropLast() : kept)
        }
        return path
    }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~/"))) ?? "/"
    }

    static func asset(_ text: String, type: String) -> Response {
        secured(
            Response(
                status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=300"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: text))))
    }

    /// The console's security headers: a CSP that allows nothing inline and nothing from
    /// elsewhere, no framing, no MIME sniffing, no referrer leaving the server.
    static func secured(_ response: Response, policy: String = contentSecurityPolicy) -> Response {
        var response = response
        response.headers[.contentSecurityPolicy] = policy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "same-origin"
        response.headers[.xFrameOptions] = "DENY"
        return response
    }

    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The `{id}` of the path; a 404 for anything but a positive integer.
    static func id(_ context: APIRequestContext) throws -> JobID {
        guard let text = context.parameters.get("id"), let id = JobID(text), id > 0 else {
            throw Problem(.notFound, .jobNotFound, "no job has this id")
        }
        return id
    }
}

/// `/console/live`'s answer.
struct ConsoleLive: Encodable {
    struct Job: Encodable {
        var id: JobID
        var state: String
        /// What the pages write for the state: `retrying` for a job waiting out a retry's
        /// backoff (``ConsoleRetry``), else the state.
        var shownState: String
        /// While retrying: the next attempt (`attempt 2 of 5`), its time, and how long until it
        /// (`in 14 s`).
        var nextAttempt: String?
        var nextAttemptISO: String?
        var nextAttemptIn: String?
        /// `2 of 5`, as the table writes it.
        var attempts: String
        var errorCode: String?

        enum CodingKeys: String, CodingKey {
            case id, state, attempts
            case shownState = "shown_state"
            case nextAttempt = "next_attempt"
            case nextAttemptISO = "next_attempt_at"
            case nextAttemptIn = "next_attempt_in"
            case errorCode = "error_code"
        }
    }

    var jobs: [Job]
    var counts: [String: Int]
}

/// `application/x-www-form-urlencoded` bodies.
enum FormBody {
    /// The fields of `bytes` (the first of a repeated name wins); `+` is a space.
    static func parse(_ bytes: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: bytes, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? {
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = parts.first.flatMap(decode), fields[name] == nil else { continue }
            fields[name] = parts.count == 2 ? decode(parts[1]) ?? "" : ""
        }
        return fields
    }
}

extension HTTPField.Name {
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
}
