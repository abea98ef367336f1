import Crypto
import Foundation
import NIOHTTP1
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// The console of `pushprep serve` (pages at `/`), against a real server process: what the pages
/// show of the queue, the forms that change it, and the session, CSRF and header checks that
/// guard them.
@Suite(.serialized)
struct ConsoleTests {
    static let csp =
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    static let hostile = #"https://media.example.com/a.jpg?x="><script>alert(1)</script><img src=x onerror=alert(2)>"#

    /// Overview, jobs table, filters, job page, assets and the live endpoint show the jobs the
    /// test wrote, with the security headers; a hostile source is escaped everywhere.
    @Test func pagesShowTheQueue() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let browser = ConsoleBrowser(baseURL: server.baseURL)
        defer { Task { try? await browser.shutdown() } }
        let failed = try await ConsoleQueue.failed(dir, ["https://media.example.com/broken.jpg"])[0]
        let queued = try await ConsoleQueue.enqueue(dir, ["https://media.example.com/fine.jpg", Self.hostile])

        let overview = try await browser.get("/")
        #expect(overview.status == 200)
        #expect(overview.header("Content-Security-Policy") == Self.csp)
        #expect(overview.header("X-Content-Type-Options") == "nosniff")
        #expect(overview.header("Referrer-Policy") != nil)
        #expect(overview.header("Content-Type")?.hasPrefix("text/html") == true)
        let cookie = try #require(overview.header("Set-Cookie"), "a server without keys opens an anonymous session")
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        #expect(overview.text.contains(#"data-count-state="queued">2<"#), "\(overview.text)")
        #expect(overview.text.contains(#"data-count-state="failed">1<"#))
        #expect(overview.text.contains(#"<svg id="activity-chart""#))
        #expect(overview.text.contains("1 failed"), "the failure within the hour is counted")
        #expect(overview.text.contains(##"<a class="skip" href="#content">"##))
        #expect(!overview.text.contains("<script>") && !overview.text.contains("style="), "no inline script or style")

        let jobs = try await browser.get("/jobs")
        #expect(jobs.status == 200)
        #expect(jobs.text.contains(#"<table id="jobs" class="cards-on-phone">"#))
        for id in [failed] + queued { #expect(jobs.text.contains(#"data-job-id="\#(id)""#)) }
        #expect(jobs.text.contains(#"<tr data-job-id="\#(failed)" data-state="failed""#))
        #expect(jobs.text.contains(#"<form class="retry inline" method="post" action="/jobs/\#(failed)/retry">"#))
        #expect(jobs.text.contains(#"<form class="cancel inline" method="post" action="/jobs/\#(queued[0])/cancel">"#))
        #expect(jobs.text.contains(#"<form class="bulk-retry""#))
        #expect(!jobs.text.contains("<script>alert(1)"), "the hostile source is escaped")
        #expect(!jobs.text.contains("<img src=x"))
        #expect(jobs.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(jobs.text.contains("&quot;&gt;"))

        #expect(jobs.text.contains("3 match"), "the caption counts the matching jobs")
        let byState = try await browser.get("/jobs?state=failed")
        #expect(byState.text.contains(#"data-job-id="\#(failed)""#))
        #expect(!byState.text.contains(#"data-job-id="\#(queued[0])""#))
        #expect(byState.text.contains(#"<form class="bulk-retry""#))
        #expect(!(try await browser.get("/jobs?state=queued")).text.contains("bulk-retry"), "nothing to retry")
        let byCode = try await browser.get("/jobs?code=fetch_failed")
        #expect(byCode.text.contains(#"data-job-id="\#(failed)""#))
        #expect(!byCode.text.contains(#"data-job-id="\#(queued[1])""#))
        let bySource = try await browser.get("/jobs?source=SCRIPT")
        #expect(bySource.text.contains(#"data-job-id="\#(queued[1])""#))
        #expect(!bySource.text.contains(#"data-job-id="\#(failed)""#))
        #expect(bySource.text.contains(#"name="source" value="SCRIPT""#), "the form shows the filter back")
        let byKind = try await browser.get("/jobs?kind=image")
        #expect(!byKind.text.contains("data-job-id="), "no job has an image result yet")
        #expect(try await browser.get("/jobs?state=nonsense").status == 400)

        let job = try await browser.get("/jobs/\(failed)")
        #expect(job.status == 200)
        #expect(job.text.contains(#"<main id="job" data-job-id="\#(failed)" data-state="failed""#))
        for section in ["manifest", "operations", "attempts", "deliveries"] {
            #expect(job.text.contains(#"id="\#(section)""#), "\(section)")
        }
        #expect(job.text.contains("fetch_failed"))
        #expect(job.text.contains(#"<tr data-attempt="1">"#), "the attempt with its error")
        #expect(job.text.contains(#"<td data-label="Worker">console-test-worker</td>"#), "the attempt names its worker")
        let hostileJob = try await browser.get("/jobs/\(queued[1])")
        #expect(!hostileJob.text.contains("<script>alert(1)"))
        let missing = try await browser.get("/jobs/999999")
        #expect(missing.status == 404)
        #expect(missing.header("Content-Type")?.hasPrefix("text/html") == true)

        let script = try await browser.get("/console/app.js")
        #expect(script.status == 200)
        #expect(script.header("Content-Type")?.hasPrefix("text/javascript") == true)
        #expect(script.text.contains("/console/live"))
        let style = try await browser.get("/console/style.css")
        #expect(style.header("Content-Type")?.hasPrefix("text/css") == true)
        #expect(style.text.contains(":focus-visible"))
        // Every page names its icon, so the browser never asks for /favicon.ico (a 401 with keys).
        #expect(job.text.contains(#"<link rel="icon" href="/console/icon.svg""#))
        let icon = try await browser.get("/console/icon.svg")
        #expect(icon.status == 200)
        #expect(icon.header("Content-Type") == "image/svg+xml")
        #expect(icon.text.hasPrefix("<svg"))

        let live = try await browser.get("/console/live?ids=\(failed),\(queued[0]),999999")
        #expect(live.status == 200)
        let body = try live.json()
        let states = (body["jobs"] as? [[String: Any]] ?? []).compactMap { $0["state"] as? String }
        #expect(states == ["failed", "queued"])
        #expect((body["counts"] as? [String: Int])?["queued"] == 2)
        // An id repeated is looked up and answered once.
        let repeated = try await browser.get("/console/live?ids=\(failed),\(failed),\(failed)")
        let repeatedJobs = try repeated.json()["jobs"] as? [[String: Any]] ?? []
        #expect(repeatedJobs.compactMap { $0["state"] as? String } == ["failed"])
        // The API is untouched: still problem JSON.
        #expect(try await browser.get("/v1/jobs/999999").header("Content-Type") == "application/problem+json")
    }

    /// 50 jobs a page, newest first, and an "Older jobs" link to the rest; a filter's pages
    /// keep the filter.
    @Test func paging() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let browser = ConsoleBrowser(baseURL: server.baseURL)
        defer { Task { try? await browser.shutdown() } }
        let ids = try await ConsoleQueue.enqueue(dir, (0..<60).map { "https://media.example.com/\($0).jpg" })

        let first = try await browser.get("/jobs?state=queued")
        #expect(Self.rows(first.text).count == 50)
        #expect(Self.rows(first.text).first == ids.last)
        let older = try #require(Self.link(first.text, rel: "next"))
        #expect(older.contains("state=queued") && older.contains("before=\(ids[10])"), "\(older)")
        let second = try await browser.get(older.replacingOccurrences(of: "&amp;", with: "&"))
        #expect(Self.rows(second.text) == Array(ids.prefix(10).reversed()))
        #expect(Self.link(second.text, rel: "next") == nil, "the last page has no older link")
        #expect(second.text.contains(">Newest</a>"))
    }

    /// Retry, cancel and bulk retry through the forms change the queue and redirect back (PRG);
    /// a form without the session's token, from another origin, or without a session is
    /// refused with 403 and changes nothing.
    @Test func formsChangeTheQueue() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let browser = ConsoleBrowser(baseURL: server.baseURL)
        defer { Task { try? await browser.shutdown() } }
        let failed = try await ConsoleQueue.failed(
            dir, (0..<3).map { "https://media.example.com/broken-\($0).jpg" }, code: .fetchFailed)
        let queued = try await ConsoleQueue.enqueue(dir, ["https://media.example.com/fine.jpg"])[0]

        let page = try await browser.get("/jobs")
        let csrf = try ConsoleBrowser.csrf(in: page.text)

        // Refusals first: nothing changes.
        let noToken = try await browser.post("/jobs/\(failed[0])/retry", form: [("return", "/jobs")])
        #expect(noToken.status == 403)
        let wrongToken = try await browser.post("/jobs/\(failed[0])/retry", form: [("csrf", csrf + "x")])
        #expect(wrongToken.status == 403)
        let crossSite = try await browser.post(
            "/jobs/\(failed[0])/retry", form: [("csrf", csrf)], headers: [("Sec-Fetch-Site", "cross-site")])
        #expect(crossSite.status == 403)
        let otherOrigin = try await browser.post(
            "/jobs/\(failed[0])/retry", form: [("csrf", csrf)], headers: [("Origin", "https://evil.example")])
        #expect(otherOrigin.status == 403)
        let stranger = ConsoleBrowser(baseURL: server.baseURL)
        defer { Task { try? await stranger.shutdown() } }
        let noSession = try await stranger.post("/jobs/\(failed[0])/retry", form: [("csrf", csrf)])
        #expect(noSession.status == 403, "a token without its session's cookie is worthless")
        _ = try await stranger.get("/")
        let otherSession = try await stranger.post("/jobs/\(failed[0])/retry", form: [("csrf", csrf)])
        #expect(otherSession.status == 403, "a token is bound to the session it was made for")
        #expect(try await ConsoleQueue.state(dir, failed[0]) == .failed)

        let origin = server.baseURL
        let retried = try await browser.post(
            "/jobs/\(failed[0])/retry", form: [("csrf", csrf), ("return", "/jobs?state=failed")],
            headers: [("Origin", origin), ("Sec-Fetch-Site", "same-origin")])
        #expect(retried.status == 303)
        #expect(retried.header("Location") == "/jobs?state=failed&notice=retried")
        #expect(try await ConsoleQueue.state(dir, failed[0]) == .queued)
        let notice = try await browser.get("/jobs?state=failed&notice=retried")
        #expect(notice.text.contains("The job was queued again."))

        let cancelled = try await browser.post(
            "/jobs/\(queued)/cancel", form: [("csrf", csrf), ("return", "https://evil.example/")])
        #expect(cancelled.status == 303)
        #expect(cancelled.header("Location") == "/?notice=cancelled", "a return address off the server is dropped")
        #expect(try await ConsoleQueue.state(dir, queued) == .cancelled)

        let bulk = try await browser.post(
            "/jobs/bulk-retry", form: [("csrf", csrf), ("state", "failed"), ("code", "fetch_failed")])
        #expect(bulk.status == 303)
        #expect(bulk.header("Location")?.hasPrefix("/jobs?") == true)
        for id in failed.dropFirst() { #expect(try await ConsoleQueue.state(dir, id) == .queued) }
        #expect(try await ConsoleQueue.state(dir, queued) == .cancelled, "bulk retry keeps to its filter")

        let conflict = try await browser.post("/jobs/\(queued)/cancel", form: [("csrf", csrf)])
        #expect(conflict.status == 409, "cancelling a finished job is refused")
        #expect(conflict.text.contains("invalid_job_state"))
    }

    static let writer = "writer-key-0123456789abcdef"
    static let reader = "reader-key-0123456789abcdef"

    /// With API keys: no session redirects to `/login`; a login sets a signed HttpOnly,
    /// SameSite=Strict cookie that does not hold the key; a read key cannot use the forms (403);
    /// a tampered cookie is no session; logout clears it.
    @Test func loginSessionsAndScopes() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let keys = dir.appendingPathComponent("keys").path
        try "\(Self.writer)\n\(Self.reader) read\n".write(toFile: keys, atomically: true, encoding: .utf8)
        let server = try await InProcessServe.start(["--workers", "0", "--api-keys-file", keys], in: dir)
        let browser = ConsoleBrowser(baseURL: server.baseURL)
        defer { Task { try? await browser.shutdown() } }
        let queued = try await ConsoleQueue.enqueue(dir, ["https://media.example.com/fine.jpg"])[0]

        let anonymous = try await browser.get("/jobs?state=queued")
        #expect(anonymous.status == 303)
        #expect(anonymous.header("Location") == "/login?next=/jobs%3Fstate%3Dqueued")
        #expect(anonymous.header("Set-Cookie") == nil)
        let postWithout = try await browser.post("/jobs/\(queued)/cancel", form: [("csrf", "x")])
        #expect(postWithout.status == 303)
        #expect(postWithout.header("Location")?.hasPrefix("/login") == true)
        #expect(try await browser.get("/v1/stats").status == 401, "the API still wants a bearer key")

        let form = try await browser.get("/login?next=/jobs")
        #expect(form.status == 200)
        #expect(form.text.contains(#"<input type="password" name="key""#))
        #expect(form.text.contains("<label>API key"))
        let wrong = try await browser.post("/login", form: [("key", "not-a-key-of-this-server"), ("next", "/")])
        #expect(wrong.status == 401)
        #expect(browser.cookies.isEmpty)
        let foreign = try await browser.post(
            "/login", form: [("key", Self.reader)], headers: [("Origin", "https://evil.example")])
        #expect(foreign.status == 403, "login CSRF")

        let login = try await browser.post("/login", form: [("key", Self.reader), ("next", "/jobs")])
        #expect(login.status == 303)
        #expect(login.header("Location") == "/jobs")
        let cookie = try #require(login.header("Set-Cookie"))
        #expect(cookie.hasPrefix("pushprep_session="))
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"))
        #expect(!cookie.contains("Secure"), "plain http")
        let token = try #require(browser.cookies["pushprep_session"])
        #expect(!token.contains(Self.reader))
        let decoded = Data(base64Encoded: Self.padded(String(token.split(separator: ".")[0]))) ?? Data()
        #expect(!String(decoding: decoded, as: UTF8.self).contains(Self.reader), "the cookie never holds the key")

        let jobs = try await browser.get("/jobs")
        #expect(jobs.status == 200)
        #expect(jobs.text.contains(#"data-job-id="\#(queued)""#))
        #expect(!jobs.text.contains(#"class="cancel"#), "no write forms for a read key")
        #expect(jobs.text.contains("Log out"))
        let csrf = try ConsoleBrowser.csrf(in: jobs.text)
        let refused = try await browser.post("/jobs/\(queued)/cancel", form: [("csrf", csrf)])
        #expect(refused.status == 403)
        #expect(refused.text.contains("write scope"))
        #expect(try await ConsoleQueue.state(dir, queued) == .queued)

        let parts = token.split(separator: ".")
        let widened = String(decoding: decoded, as: UTF8.self).replacingOccurrences(of: "|read|", with: "|read,write|")
        #expect(widened != String(decoding: decoded, as: UTF8.self))
        let forged = Data(widened.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        browser.setCookie("pushprep_session", forged + "." + parts[1])
        #expect(try await browser.get("/jobs").status == 303, "a tampered cookie is no session")
        browser.setCookie("pushprep_session", nil)

        let writer = try await browser.post(
            "/login", form: [("key", Self.writer), ("next", "//evil.example/")],
            headers: [("X-Forwarded-Proto", "https")])
        #expect(writer.header("Location") == "/", "next must be a path of this server")
        #expect(writer.header("Set-Cookie")?.contains("; Secure") == true, "https through a proxy")
        let writerPage = try await browser.get("/jobs")
        let writerCSRF = try ConsoleBrowser.csrf(in: writerPage.text)
        #expect(writerCSRF != csrf, "every session has its own token")
        let cancelled = try await browser.post("/jobs/\(queued)/cancel", form: [("csrf", writerCSRF)])
        #expect(cancelled.status == 303)
        #expect(try await ConsoleQueue.state(dir, queued) == .cancelled)

        let logout = try await browser.post("/logout", form: [("csrf", writerCSRF)])
        #expect(logout.status == 303)
        #expect(logout.header("Set-Cookie")?.contains("Max-Age=0") == true)
        #expect(browser.cookies.isEmpty)
        #expect(try await browser.get("/").status == 303)

        let log = server.stderrText + server.stdoutText
        for key in [Self.writer, Self.reader] { #expect(!log.contains(key), "a key reached the log") }
    }

    /// With `--console-secret-file`, a login on one server opens the console on another that
    /// shares the secret (replicas behind one name, or a restart); a server with its own random
    /// key does not take it; a short secret is refused at start.
    @Test func sharedSecretSessions() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let keys = dir.appendingPathComponent("keys").path
        try "\(Self.writer)\n".write(toFile: keys, atomically: true, encoding: .utf8)
        let secret = dir.appendingPathComponent("console.secret").path
        try "s3cr3t-0123456789abcdef-0123456789abcdef\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let shared = ["--workers", "0", "--api-keys-file", keys, "--console-secret-file", secret]
        let first = try await InProcessServe.start(shared, in: dir)
        let second = try await InProcessServe.start(shared + ["--public-url", "https://console.example.com"], in: dir)
        let other = try await InProcessServe.start(["--workers", "0", "--api-keys-file", keys], in: dir)

        let browser = ConsoleBrowser(baseURL: first.baseURL)
        defer { Task { try? await browser.shutdown() } }
        #expect(try await browser.post("/login", form: [("key", Self.writer)]).status == 303)
        let token = try #require(browser.cookies["pushprep_session"])
        for (server, status) in [(second, 200), (other, 303)] {
            let elsewhere = ConsoleBrowser(baseURL: server.baseURL)
            elsewhere.setCookie("pushprep_session", token)
            #expect(try await elsewhere.get("/jobs").status == status, "\(server.baseURL)")
            try await elsewhere.shutdown()
        }
        // Behind a proxy that sends its own Host, the origin of --public-url is this server's.
        let proxied = ConsoleBrowser(baseURL: second.baseURL)
        defer { Task { try? await proxied.shutdown() } }
        let viaProxy = try await proxied.post(
            "/login", form: [("key", Self.writer)],
            headers: [("Origin", "https://console.example.com"), ("Sec-Fetch-Site", "same-origin")])
        #expect(viaProxy.status == 303)
        #expect(viaProxy.header("Set-Cookie")?.contains("; Secure") == true, "an https public URL")
        let elsewhere = try await proxied.post(
            "/login", form: [("key", Self.writer)], headers: [("Origin", "https://other.example.com")])
        #expect(elsewhere.status == 403)

        // Published files on another origin (`--base-url`, a CDN): the pages may load pictures
        // from that origin, and from nowhere else outside the server.
        let withCDN = try await InProcessServe.start(
            ["--workers", "0", "--base-url", "https://cdn.example.com/push"], in: dir)
        let cdnBrowser = ConsoleBrowser(baseURL: withCDN.baseURL)
        let cdnPage = try await cdnBrowser.get("/jobs")
        try await cdnBrowser.shutdown()
        #expect(cdnPage.status == 200)
        #expect(
            cdnPage.header("Content-Security-Policy")
                == Self.csp.replacingOccurrences(
                    of: "img-src 'self' data:;", with: "img-src 'self' data: https://cdn.example.com;"))

        try "too short\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let refused = try await PushPrepCLI.runAsync(
            [
                "serve", "--port", "0", "--api-keys-file", keys, "--console-secret-file", secret, "--queue",
                "sqlite:\(dir.path)/q.db",
            ], in: dir)
        #expect(refused.status == 2)
        #expect(refused.stderrText.contains("at least 32 bytes"))
    }

    /// The pre-flight form checks a pasted payload with the API's pre-flight code and lists the
    /// findings with their codes; the payload is shown back escaped.
    @Test func preflightForm() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let browser = ConsoleBrowser(baseURL: server.baseURL)
        defer { Task { try? await browser.shutdown() } }

        let page = try await browser.get("/preflight")
        #expect(page.status == 200)
        #expect(page.text.contains(#"<textarea name="payload""#))
        #expect(page.text.contains(#"<option value="onesignal""#))
        let csrf = try ConsoleBrowser.csrf(in: page.text)

        let broken = try await browser.post(
            "/preflight",
            form: [("csrf", csrf), ("payload", "{\"aps\": </textarea><script>x()</script>"), ("dialect", "apns")])
        #expect(broken.status == 200)
        #expect(broken.text.contains(#"<li class="finding" data-code="invalid_json" data-severity="error">"#))
        #expect(!broken.text.contains("</textarea><script>"))
        #expect(broken.text.contains("&lt;/textarea&gt;&lt;script&gt;"))

        let payload = #"{"aps": {"alert": {"title": "Hi"}}, "image": "http://media.example.com/a.webp"}"#
        let checked = try await browser.post(
            "/preflight", form: [("csrf", csrf), ("payload", payload), ("dialect", "auto")])
        #expect(checked.text.contains(#"id="preflight-result""#))
        #expect(checked.text.contains(#"class="finding""#))
        #expect(checked.text.contains(#"<div class="notification""#), "the payload's preview")
        let api = APITestClient(baseURL: server.baseURL)
        let viaAPI = try await api.post(
            "/v1/preflight", json: #"{"payload": \#(payload)}"#)
        let reports = try #require(try viaAPI.json()["reports"] as? [[String: Any]])
        let codes = (reports.first?["findings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        #expect(!codes.isEmpty)
        for code in codes { #expect(checked.text.contains(#"data-code="\#(code)""#), "\(code) as the API finds it") }
        #expect(try await browser.post("/preflight", form: [("payload", payload)]).status == 403, "CSRF")
    }

    /// A processed upload's job page draws the notification preview, its picture loaded from
    /// this server (the CSP allows no other), beside the manifest entry and the operations; the
    /// kind filter finds it.
    @Test func jobPageShowsThePreview() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(in: dir)
        let browser = ConsoleBrowser(baseURL: server.baseURL)
        defer { Task { try? await browser.shutdown() } }
        let api = APITestClient(baseURL: server.baseURL)
        let created = try await api.send(
            .POST, "/v1/uploads", body: TinyBMP.bytes(11), contentType: "application/octet-stream")
        let id = try #require(try UploadAndPayloadTests.firstJob(created)["id"] as? Int)
        let done = try await UploadAndPayloadTests.finished(api, id)
        #expect(done["state"] as? String == "succeeded", "\(done)")

        let page = try await browser.get("/jobs/\(id)")
        #expect(page.text.contains(#"<main id="job" data-job-id="\#(id)" data-state="succeeded""#))
        for part in [#"<div class="notification""#, #"<div class="banner""#, "banner-thumb", #"<div class="expanded""#]
        {
            #expect(page.text.contains(part), "\(part)")
        }
        let start = try #require(page.text.range(of: #"<img src=""#)).upperBound
        let source = String(page.text[start...].prefix { $0 != "\"" })
        #expect(source.hasPrefix("/v1/attachments/"), "\(source)")
        let picture = try await browser.get(source.replacingOccurrences(of: "&amp;", with: "&"))
        #expect(picture.status == 200)
        let operations = try #require(page.text.components(separatedBy: #"id="operations""#).dropFirst().first)
        #expect(operations.components(separatedBy: #"id="attempts""#)[0].contains("<li>"), "the operations are listed")
        let overview = try await browser.get("/")
        #expect(overview.text.contains(#"data-count-state="succeeded">1<"#))
        #expect(overview.text.contains("1 succeeded, 0 failed"), "the last hour's activity")
        #expect(overview.text.contains(#"<rect class="succeeded""#), "a bar in the chart")
        #expect(overview.text.contains(#"data-concurrency=""#), "the embedded worker is alive")
        #expect(!overview.text.contains("No worker has been seen."))
        let images = try await browser.get("/jobs?kind=image")
        #expect(images.text.contains(#"data-kind="image""#))
        #expect(Self.rows(images.text) == [Int64(id)])
    }

    /// The ids of the jobs table's rows, in order.
    static func rows(_ page: String) -> [Int64] {
        page.components(separatedBy: "<tr data-job-id=\"").dropFirst().compactMap { Int64($0.prefix { $0.isNumber }) }
    }

    static func link(_ page: String, rel: String) -> String? {
        guard let range = page.range(of: "\" rel=\"\(rel)\"") else { return nil }
        let before = page[..<range.lowerBound]
        guard let start = before.range(of: "href=\"", options: .backwards) else { return nil }
        return String(before[start.upperBound...])
    }

    static func padded(_ base64url: String) -> String {
        let base64 = base64url.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4)
    }
}
