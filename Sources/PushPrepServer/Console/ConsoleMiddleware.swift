import Foundation
import HTTPTypes
import Hummingbird
import PushPrepCore
import Synchronization

/// The console pages' gate: a valid session cookie, else a redirect to `/login` (a server
/// with keys) or a fresh anonymous session on the first visit (a server without keys, so that
/// its forms carry a CSRF token too; a POST without a session is refused, its form expired).
/// Every error of the page's handler and of the middleware inside becomes an HTML page; every
/// answer gets the console's security headers (``ConsoleRoutes/pagePolicy``).
struct ConsoleSessionMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    let routes: ConsoleRoutes

    /// `next` with the session in the context; its errors as pages; the headers on every answer.
    func handle(_ request: Request, context: ConsoleRequestContext, next: Next) async throws -> Response {
        let sessions = routes.sessions
        var setCookie: String?
        var response: Response
        do {
            var session = sessions.session(of: request)
            if session == nil {
                if routes.configuration.apiKeys != nil {
                    // Back here after the login (a form's page, for a POST: its body is gone).
                    let back = ConsoleRoutes.returnPath(request.method == .post ? "/" : request.uri.string)
                    return ConsoleRoutes.secured(
                        ConsoleRoutes.redirect("/login?next=" + ConsoleRoutes.percentEncoded(back)))
                }
                if request.method == .post {
                    throw Problem(.forbidden, .forbidden, "this form has expired; reload the page and try again")
                }
                let opened = sessions.open(keyID: ConsoleSession.anonymous, scopes: Set(APIKey.Scope.allCases))
                setCookie = sessions.cookie(for: opened, secure: routes.secure(request))
                session = opened
            }
            guard let session else { throw Problem(.forbidden, .forbidden, "no session") }
            var context = context
            context.session = ConsoleVisit(
                session: session, csrf: sessions.csrfToken(for: session), path: request.uri.path,
                notice: request.uri.queryParameters["notice"].flatMap { ConsoleRoutes.notices[String($0)] })
            response = try await next(request, context)
        } catch {
            response = routes.errorPage(RequestIDMiddleware.problem(for: error), session: sessions.session(of: request))
        }
        if let setCookie { response.headers[.setCookie] = setCookie }
        return ConsoleRoutes.secured(response, policy: routes.pagePolicy)
    }
}

/// A POST to a page must come from this server's own page (else 403) and carry the session's
/// CSRF token in its form's `csrf` field (else 403: the form has expired). The body, capped at
/// `--max-body-bytes` (413 beyond), is left in the context for the page (``ConsoleRequestContext/form(_:)``).
struct ConsoleCSRFMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    let sessions: ConsoleSessions
    /// The names this server answers to, for the same-origin check.
    let names: ServerNames
    let maxBodyBytes: Int

    /// `next` for a GET; for a POST, once its origin and token pass, with its form in the context.
    func handle(_ request: Request, context: ConsoleRequestContext, next: Next) async throws -> Response {
        guard request.method == .post else { return try await next(request, context) }
        let visit = try context.visit()
        guard RequestOrigin.isSameOrigin(request, names: names) else {
            throw Problem(.forbidden, .forbidden, "this form was sent from another site and is refused")
        }
        var request = request
        var context = context
        context.formBody = String(
            decoding: try await RequestBody.collect(&request, maxBytes: maxBodyBytes), as: UTF8.self)
        // A body that is no form has no token either.
        guard sessions.checkCSRF((try? context.form(ConsoleCSRFField.self))?.csrf, for: visit.session) else {
            throw Problem(.forbidden, .forbidden, "this form has expired; reload the page and try again")
        }
        return try await next(request, context)
    }
}

/// The scope a group of pages needs (`read` to see, `write` to change jobs): else 403. The
/// access log then names the session's key, as it does a bearer key.
struct ConsoleScopeMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    let scope: APIKey.Scope

    /// `next` once the session has the scope.
    func handle(_ request: Request, context: ConsoleRequestContext, next: Next) async throws -> Response {
        let session = try context.visit().session
        guard session.scopes.contains(scope) else {
            throw Problem(.forbidden, .forbidden, "your API key lacks the \(scope.rawValue) scope")
        }
        if session.keyID != ConsoleSession.anonymous {
            context.notes.keyID.withLock { $0 = session.keyID }
        }
        return try await next(request, context)
    }
}

/// The console's security headers (``ConsoleRoutes/secured(_:policy:)``) on the answers that
/// need no session: login, logout and the assets.
struct ConsoleHeadersMiddleware: RouterMiddleware {
    typealias Context = ConsoleRequestContext

    /// `next`'s answer with the security headers.
    func handle(_ request: Request, context: ConsoleRequestContext, next: Next) async throws -> Response {
        ConsoleRoutes.secured(try await next(request, context))
    }
}
