import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// The console as a group of routes beside the API's (in this process): the API's key check
/// is the middleware of the API's group and of requests no route answers, never of the
/// console's pages, which have their session instead; the console's forms read by Hummingbird's
/// `URLEncodedFormDecoder` as browsers send them.
@Suite(.serialized)
struct ConsoleGroupTests {
    /// A server with keys, asked without one: the console's pages send the browser to the login
    /// (a session, not a bearer key, is what they take; the test client follows the redirect),
    /// its assets and login page are served, health and the contract are open, and the API,
    /// like any path no route answers, is 401.
    @Test func eachGroupHasItsOwnGate() async throws {
        try await HostileRequestTests.withServer(keys: true) { client, _, _ in
            let overview = try await client.execute(uri: "/", method: .get)
            #expect(overview.status == .ok)
            #expect(String(buffer: overview.body).contains(#"<form class="stacked" id="login""#))
            #expect(String(buffer: overview.body).contains(#"name="next" value="/""#))
            #expect(overview.headers[.wwwAuthenticate] == nil, "the console asks for no bearer key")
            #expect(overview.headers[.contentSecurityPolicy] == ConsoleRoutes.contentSecurityPolicy)
            let keyed = try await client.execute(
                uri: "/jobs", method: .get, headers: [.authorization: "Bearer \(HostileRequestTests.writer)"])
            #expect(
                String(buffer: keyed.body).contains(#"name="next" value="/jobs""#), "a bearer key opens no console page"
            )
            for path in ["/login", "/console/style.css", "/console/app.js", "/console/icon.svg"] {
                let answer = try await client.execute(uri: path, method: .get)
                #expect(answer.status == .ok, "\(path)")
                #expect(answer.headers[.xFrameOptions] == "DENY", "\(path)")
            }
            for path in ["/healthz", "/readyz", "/openapi.json"] {
                #expect(try await client.execute(uri: path, method: .get).status == .ok, "\(path)")
            }
            for path in ["/v1/jobs", "/v1/deliveries", "/nope", "/v1/nope", "/metrics"] {
                let answer = try await client.execute(uri: path, method: .get)
                #expect(answer.status == .unauthorized, "\(path)")
                #expect(try HostileRequestTests.json(answer)["code"] as? String == "unauthorized", "\(path)")
            }
            let api = try await client.execute(
                uri: "/v1/jobs", method: .get, headers: [.authorization: "Bearer \(HostileRequestTests.writer)"])
            #expect(api.status == .ok)
        }
    }

    /// A form that is not one the pages send (a repeated field, a malformed percent-encoding)
    /// has no token to check: 403, and nothing changes. A GET filter with a repeated field is 400.
    @Test func malformedFormsAreRefused() async throws {
        try await HostileRequestTests.withServer { client, _, _ in
            let created = try await client.execute(
                uri: "/v1/jobs", method: .post, headers: [.contentType: "application/json"],
                body: HostileRequestTests.jobBody)
            #expect(created.status == .accepted)
            let page = try await client.execute(uri: "/preflight", method: .get)
            let cookie = try #require(page.headers[.setCookie]).split(separator: ";")[0]
            let csrf = try ConsoleBrowser.csrf(in: String(buffer: page.body))
            let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded", .cookie: String(cookie)]
            let good = try await client.execute(
                uri: "/jobs/1/cancel", method: .post, headers: form, body: ByteBuffer(string: "csrf=\(csrf)&return=%2F")
            )
            #expect(good.status == .ok, "the same session's token is accepted (the redirect followed)")
            for body in ["csrf=\(csrf)&csrf=\(csrf)&return=%2F", "csrf=\(csrf)&return=%zz", "csrf[]=\(csrf)"] {
                let answer = try await client.execute(
                    uri: "/jobs/1/retry", method: .post, headers: form, body: ByteBuffer(string: body))
                #expect(answer.status == .forbidden, "\(body)")
                #expect(String(buffer: answer.body).contains("this form has expired"), "\(body)")
            }
            let job = try await client.execute(uri: "/v1/jobs/1", method: .get)
            #expect(try HostileRequestTests.json(job)["state"] as? String == "cancelled", "no retry went through")
            let repeated = try await client.execute(
                uri: "/jobs?state=failed&state=dead", method: .get, headers: [.cookie: String(cookie)])
            #expect(repeated.status == .badRequest)
            #expect(String(buffer: repeated.body).contains("(invalid_request)"))
        }
    }

    /// The fields of every form the pages post, as a browser encodes them: empty fields are
    /// empty texts, absent ones nil, `+` a space, percent-encoded UTF-8 decoded; a field sent
    /// twice, a malformed encoding or a bracketed name where a text is expected is 400.
    @Test func formsDecodeAsBrowsersSendThem() throws {
        let filter = try ConsoleRequestContext.decode(
            ConsoleJobFilter.Fields.self, from: "csrf=t&state=&kind=image&source=summer+sale+%C3%A9t%C3%A9&code=")
        #expect(filter.state == "" && filter.kind == "image" && filter.code == "")
        #expect(filter.source == "summer sale été")
        let nothing = try ConsoleRequestContext.decode(ConsoleJobFilter.Fields.self, from: "")
        #expect(nothing.state == nil && nothing.kind == nil && nothing.source == nil && nothing.code == nil)
        #expect(
            try ConsoleJobFilter(query: "source=a%2Bb&state=failed").query(before: 7)
                == "source=a%2Bb&state=failed&before=7")

        let preflight = try ConsoleRequestContext.decode(
            ConsolePreflightForm.self,
            from: "csrf=t&payload=%7B%22aps%22%3A+%7B%7D%7D&dialect=auto&fetch=1&fetch_max_urls=&fetch_max_bytes=20")
        #expect(preflight.payload == #"{"aps": {}}"#)
        #expect(preflight.dialect == "auto" && preflight.fetch == "1")
        #expect(preflight.maxURLs == "" && preflight.maxBytes == "20")
        let unticked = try ConsoleRequestContext.decode(ConsolePreflightForm.self, from: "csrf=t&payload=&dialect=apns")
        #expect(unticked.fetch == nil && unticked.payload == "" && unticked.maxURLs == nil)

        let back = try ConsoleRequestContext.decode(
            ConsoleReturnForm.self, from: "csrf=t&return=%2Fjobs%3Fstate%3Dfailed")
        #expect(back.returnPath == "/jobs?state=failed")
        let login = try ConsoleRequestContext.decode(ConsoleLoginForm.self, from: "next=%2Fjobs&key=k+1%26")
        #expect(login.next == "/jobs" && login.key == "k 1&")
        #expect(try ConsoleRequestContext.decode(ConsoleCSRFField.self, from: "csrf=a%3Db").csrf == "a=b")

        // Bytes that are not UTF-8 read as U+FFFD (no token has it).
        #expect(try ConsoleRequestContext.decode(ConsoleCSRFField.self, from: "csrf=%FF").csrf == "\u{FFFD}")
        for text in ["csrf=a&csrf=b", "csrf=%zz", "csrf=%", "csrf[]=a", "csrf[x]=a"] {
            #expect(throws: Problem.self, "\(text)") {
                try ConsoleRequestContext.decode(ConsoleCSRFField.self, from: text)
            }
            do {
                _ = try ConsoleRequestContext.decode(ConsoleCSRFField.self, from: text)
            } catch let problem as Problem {
                #expect(problem.status == .badRequest && problem.code == .invalidRequest, "\(text)")
            }
        }
    }

    /// The typed views render the pages as the dictionaries did: the failed login page and the
    /// error page without a session, byte for byte as the console wrote them before its views
    /// were typed (its answers of 2026-11-29, kept here).
    @Test func typedViewsRenderThePagesAsBefore() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let configuration = ServerConfiguration(port: 0)
        let routes = ConsoleRoutes(
            queue: try SQLiteJobQueue(path: dir.appendingPathComponent("q.db").path, logger: .quiet),
            configuration: configuration,
            renderer: JobRenderer(configuration: configuration, publicURL: PublicURL(configured: nil)),
            publicURL: PublicURL(configured: nil), sessions: ConsoleSessions(keys: nil),
            names: ServerNames(configuration), failures: AuthFailureLimiter(limit: 1, window: .seconds(1)))
        let login = routes.page(nil, title: "Log in", ConsoleLoginView(next: "/jobs", failed: true))
        #expect(ConsoleTemplates.render("login", login) == Self.failedLogin)
        let error = routes.page(
            nil, title: "Error",
            ConsoleErrorView(
                heading: "Not allowed", message: "this form was sent from another site and is refused (forbidden)"))
        #expect(ConsoleTemplates.render("error", error) == Self.notAllowed)
    }

    static let failedLogin = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Log in · PushPrep console</title>
        <link rel="icon" href="/console/icon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/console/style.css">
        <script src="/console/app.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#content">Skip to content</a>
        <header class="site">
        <a class="brand" href="/">PushPrep</a>
        </header>
        <main id="content">
        <h1>Log in</h1>
        <p class="notice error" role="alert">That API key is not known to this server.</p>
        <form class="stacked" id="login" method="post" action="/login">
        <input type="hidden" name="next" value="/jobs">
        <label>API key <input type="password" name="key" required autocomplete="current-password" minlength="16" maxlength="512"></label>
        <p><button type="submit" class="primary">Log in</button></p>
        </form>
        <p>The key is checked and forgotten: the browser keeps a signed session that expires, never the key.</p>
        </main>
        <footer class="site"><p id="live-status" role="status" aria-live="polite"></p></footer>
        </body>
        </html>
        """

    static let notAllowed = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Error · PushPrep console</title>
        <link rel="icon" href="/console/icon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/console/style.css">
        <script src="/console/app.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#content">Skip to content</a>
        <header class="site">
        <a class="brand" href="/">PushPrep</a>
        </header>
        <main id="content">
        <h1>Not allowed</h1>
        <p class="notice error" role="alert">this form was sent from another site and is refused (forbidden)</p>
        <p><a href="/">Back to the overview</a></p>
        </main>
        <footer class="site"><p id="live-status" role="status" aria-live="polite"></p></footer>
        </body>
        </html>
        """
}
