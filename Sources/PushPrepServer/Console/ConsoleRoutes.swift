import Foundation
import HTTPTypes
import Hummingbird
import PushPrepCore
import PushPrepQueue

/// `pushprep serve`'s console: server-rendered pages over the queue for people (overview, jobs,
/// one job, pre-flight, login), readable without JavaScript; `/console/app.js` only adds live
/// updates by polling `/console/live`.
///
/// The console is a group of routes with a request context of its own
/// (``ConsoleRequestContext``, a child of the API's), and the API's ``AuthMiddleware`` is not on
/// it: authentication is a signed session cookie (``ConsoleSessions``), not `Authorization`. Its
/// pages sit behind ``ConsoleSessionMiddleware`` (the session, and errors as pages),
/// ``ConsoleCSRFMiddleware`` (a POST's origin and token) and ``ConsoleScopeMiddleware``; login,
/// logout and the assets behind the security headers only (``ConsoleHeadersMiddleware``). Each
/// page's handler and view is in a file of its own (`ConsoleOverviewPage.swift`, ...).
struct ConsoleRoutes: Sendable {
    let configuration: ServerConfiguration
    let sessions: ConsoleSessions
    /// The origin of `--base-url` when published files live elsewhere (a CDN or a bucket's
    /// website): the job page loads an output's picture from it, and the pages' CSP allows
    /// images from there and nowhere else outside this server.
    let pictureOrigin: String?
    /// The pages' CSP: ``contentSecurityPolicy`` with ``pictureOrigin`` among the image sources.
    /// Both are worked out once here, not on every page.
    let pagePolicy: String
    let queue: any JobQueueAdmin & WebhookOutbox & ConsoleQueries
    let renderer: JobRenderer
    let publicURL: PublicURL
    /// The names this server answers to, for the same-origin check of forms.
    let names: ServerNames
    /// Failed logins per client address (shared with the API's bearer keys).
    let failures: AuthFailureLimiter

    /// The console over `queue`; its CSP and picture origin are worked out here from `--base-url`.
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

    /// The console's routes, in a group of `router` with ``ConsoleRequestContext``: the pages
    /// that need a session (reading ones, and the forms that change jobs, which need `write`),
    /// and beside them login, logout and the assets, which do not.
    func register(on router: some RouterMethods<APIRequestContext>) {
        let console = router.group(context: ConsoleRequestContext.self)
        let open = console.group().add(middleware: ConsoleHeadersMiddleware())
        open.get("login") { request, _ in loginPage(request) }
        open.post("login") { request, context in await login(request, context) }
        open.post("logout") { request, _ in await logout(request) }
        open.get("console/style.css") { _, _ in
            Self.asset(ConsoleStyle.stylesheet, type: "text/css; charset=utf-8")
        }
        open.get("console/app.js") { _, _ in
            Self.asset(ConsoleAssets.javascript, type: "text/javascript; charset=utf-8")
        }
        // Declared by every page, so the browser does not ask for /favicon.ico (behind the login
        // when keys are set: a 401 and a console error on every page).
        open.get("console/icon.svg") { _, _ in Self.asset(ConsoleAssets.icon, type: "image/svg+xml") }

        let pages = console.group()
            .add(middleware: ConsoleSessionMiddleware(routes: self))
            .add(
                middleware: ConsoleCSRFMiddleware(
                    sessions: sessions, names: names, maxBodyBytes: configuration.maxBodyBytes))
        let reading = pages.group().add(middleware: ConsoleScopeMiddleware(scope: .read))
        reading.get("/") { _, context in try await overview(try context.visit()) }
        reading.get("jobs") { request, context in try await jobs(request, try context.visit()) }
        reading.get("jobs/:id") { _, context in try await job(try Self.id(context), try context.visit()) }
        reading.get("preflight") { _, context in
            try await preflightPage(try context.visit(), form: nil, logger: context.logger)
        }
        reading.post("preflight") { _, context in
            try await preflightPage(
                try context.visit(), form: try context.form(ConsolePreflightForm.self), logger: context.logger)
        }
        reading.get("console/live") { request, _ in try await live(request) }
        let writing = pages.group().add(middleware: ConsoleScopeMiddleware(scope: .write))
        writing.post("jobs/bulk-retry") { _, context in
            try await bulkRetry(try context.form(ConsoleJobFilter.Fields.self))
        }
        writing.post("jobs/:id/retry") { _, context in
            let id = try Self.id(context)
            let form = try context.form(ConsoleReturnForm.self)
            _ = try await queue.retry(id)
            return Self.redirect(Self.returnPath(form.returnPath), notice: "retried")
        }
        writing.post("jobs/:id/cancel") { _, context in
            let id = try Self.id(context)
            let form = try context.form(ConsoleReturnForm.self)
            _ = try await queue.cancel(id)
            return Self.redirect(Self.returnPath(form.returnPath), notice: "cancelled")
        }
    }

    /// The fixed notices a redirect after a POST may ask for (never text from the URL).
    static let notices: [String: String] = [
        "retried": "The job was queued again.",
        "cancelled": "The job was cancelled (a running job stops at its next step).",
        "bulk": "The matching jobs were queued again.",
        "bulk-none": "No failed, dead or cancelled job matched the filter.",
        "logged-out": "You are logged out.",
    ]

    /// Whether `request` came over HTTPS (directly or through a proxy that says so): the
    /// session cookie is then `Secure`.
    func secure(_ request: Request) -> Bool {
        RequestOrigin.isSecure(request, publicURL: publicURL.url)
    }

    // MARK: Answers

    /// A page: `template` rendered with `page` (a ``ConsolePage``), never cached.
    func html(_ template: String, _ page: some Any, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: ConsoleTemplates.render(template, page))))
    }

    /// What every page's header shows of `visit` (nil: no session, as on the login page),
    /// around the page's own `view`.
    func page<View>(_ visit: ConsoleVisit?, title: String, _ view: View) -> ConsolePage<View> {
        ConsolePage(
            title: title, session: visit.map(ConsoleHeaderSession.init), csrf: visit?.csrf, notice: visit?.notice,
            canWrite: visit?.canWrite, view: view)
    }

    /// An error as a page: the problem's status, its code and detail in words.
    func errorPage(_ problem: Problem, session: ConsoleSession?) -> Response {
        let visit = session.map { ConsoleVisit(session: $0, csrf: sessions.csrfToken(for: $0), path: "") }
        let heading =
            problem.status == .notFound
            ? "Not found" : problem.status == .forbidden ? "Not allowed" : "Something went wrong"
        let view = ConsoleErrorView(heading: heading, message: problem.detail + " (\(problem.code.rawValue))")
        return html("error", page(visit, title: "Error", view), status: problem.status)
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

    /// `text` percent-encoded for a query's value (a path keeps its slashes).
    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~/"))) ?? "/"
    }

    /// A stylesheet, script or icon, cached for five minutes.
    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=300"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
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

    /// The CSP of every answer but the pages' own (``pagePolicy``).
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The `{id}` of the path; a 404 for anything but a positive integer.
    static func id(_ context: some RequestContext) throws -> JobID {
        guard let text = context.parameters.get("id"), let id = JobID(text), id > 0 else {
            throw Problem(.notFound, .jobNotFound, "no job has this id")
        }
        return id
    }
}

/// The console's security headers that HTTPTypes does not name.
extension HTTPField.Name {
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
