import Foundation
import Hummingbird
import Logging
import PushPrepCore

/// `GET /login`, `POST /login` and `POST /logout`: the session cookie given for an API key and
/// taken back. ``ConsoleHeadersMiddleware`` gives their answers the security headers.
extension ConsoleRoutes {
    /// The login form; a server without keys has nothing to log in to (`/`).
    func loginPage(_ request: Request) -> Response {
        guard configuration.apiKeys != nil else { return Self.redirect("/") }
        var answer = page(
            nil, title: "Log in",
            ConsoleLoginView(next: Self.returnPath(request.uri.queryParameters["next"].map(String.init))))
        if request.uri.queryParameters["notice"] == "logged-out" { answer.notice = Self.notices["logged-out"] }
        return html("login", answer)
    }

    /// `POST /login`: the key is checked like a bearer key and then forgotten; the answer sets
    /// the session cookie and sends the browser where it was going. A form from another site is
    /// refused (login CSRF); an address that failed too often gets `429` (``AuthFailureLimiter``,
    /// shared with the API's keys).
    func login(_ request: Request, _ context: ConsoleRequestContext) async -> Response {
        guard let keys = configuration.apiKeys else { return Self.redirect("/") }
        guard RequestOrigin.isSameOrigin(request, names: names) else {
            return errorPage(
                Problem(.forbidden, .forbidden, "this form was sent from another site and is refused"), session: nil)
        }
        let form: ConsoleLoginForm
        do {
            var request = request
            let body = try await RequestBody.collect(&request, maxBytes: 16 * 1024)
            form = try ConsoleRequestContext.decode(ConsoleLoginForm.self, from: String(decoding: body, as: UTF8.self))
        } catch {
            return errorPage(RequestIDMiddleware.problem(for: error), session: nil)
        }
        let next = Self.returnPath(form.next)
        if let wait = failures.retryAfter(context.remoteAddress) {
            var response = errorPage(AuthMiddleware.tooManyFailures(wait), session: nil)
            response.headers[.retryAfter] = String(wait)
            return response
        }
        guard let presented = form.key, let key = keys.authenticate(presented) else {
            failures.recordFailure(context.remoteAddress)
            context.logger.notice("console login refused")
            return html(
                "login", page(nil, title: "Log in", ConsoleLoginView(next: next, failed: true)), status: .unauthorized)
        }
        context.logger.info("console login", metadata: ["key": "\(key.id)"])
        let session = sessions.open(keyID: key.id, scopes: key.scopes)
        var response = Self.redirect(next)
        response.headers[.setCookie] = sessions.cookie(for: session, secure: secure(request))
        return response
    }

    /// `POST /logout`: clears the cookie (a form from another site cannot log anyone out).
    func logout(_ request: Request) async -> Response {
        guard RequestOrigin.isSameOrigin(request, names: names) else {
            return errorPage(
                Problem(.forbidden, .forbidden, "this form was sent from another site and is refused"), session: nil)
        }
        if let session = sessions.session(of: request) {
            var request = request
            let body = (try? await RequestBody.collect(&request, maxBytes: 16 * 1024)) ?? []
            let form = try? ConsoleRequestContext.decode(
                ConsoleCSRFField.self, from: String(decoding: body, as: UTF8.self))
            guard sessions.checkCSRF(form?.csrf, for: session) else {
                return errorPage(
                    Problem(.forbidden, .forbidden, "this form has expired; reload the page and try again"),
                    session: session)
            }
        }
        var response = Self.redirect(configuration.apiKeys == nil ? "/" : "/login?notice=logged-out")
        response.headers[.setCookie] = ConsoleSessions.clearingCookie(secure: secure(request))
        return response
    }
}

/// The login form's fields.
struct ConsoleLoginForm: Decodable {
    var key: String?
    /// Where the browser goes after the login (``ConsoleRoutes/returnPath(_:)`` checks it).
    var next: String?
}

/// What the login page's template reads.
struct ConsoleLoginView {
    /// Where the form sends the browser after the login.
    var next: String
    /// True after a key this server does not know.
    var failed: Bool?
}

/// What the error page's template reads.
struct ConsoleErrorView {
    var heading, message: String
}
