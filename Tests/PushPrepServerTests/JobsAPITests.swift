import AsyncHTTPClient
import Foundation
import NIOHTTP1
import PushPrepTestSupport
import Testing

/// The `/v1/jobs` API against a real `pushprep serve` process with one embedded worker and a
/// SQLite queue, sources served by a real HTTP server on 127.0.0.1, and a real HTTP client.
@Suite(.serialized)
struct JobsAPITests {
    /// A URL source becomes a job that the embedded worker processes; the long poll returns it
    /// finished with its manifest entry, whose URL points at the server's attachments.
    @Test func createWaitAndReadAJob() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(1)]) { files in
            let server = try await InProcessServe.start(in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            let created = try await api.post(
                "/v1/jobs", json: #"{"sources": ["\#(files.url("/files/a.bmp"))"], "settings": {"width": 320}}"#,
                headers: [("X-Request-Id", "test-request-1")])
            #expect(created.status == 202, "\(created.text)")
            #expect(created.header("X-Request-Id") == "test-request-1")
            let jobs = try #require(try created.json()["jobs"] as? [[String: Any]])
            #expect(jobs.count == 1)
            let id = try #require(jobs.first?["id"] as? Int)
            #expect(jobs.first?["state"] as? String == "queued")
            #expect((jobs.first?["links"] as? [String: Any])?["self"] as? String == "/v1/jobs/\(id)")

            let done = try await api.get("/v1/jobs/\(id)?wait=30s")
            #expect(done.status == 200)
            let job = try done.json()
            #expect(job["state"] as? String == "succeeded", "\(done.text)\n\(server.logTail())")
            let attachment = try #require(job["attachment"] as? [String: Any])
            #expect(attachment["status"] as? String == "ok")
            let file = try #require(attachment["file"] as? String)
            #expect(attachment["url"] as? String == "\(server.baseURL)/v1/attachments/\(file)")
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/\(file)").path))
            #expect((job["settings"] as? [String: Any])?["width"] as? Int == 320)
            // The request id follows the job into the worker's own lines, not only the access log.
            let workerLines = server.stderrText.split(separator: "\n").filter {
                $0.contains("job=\(id)") && $0.contains("[PushPrepQueue]")
            }
            #expect(!workerLines.isEmpty)
            #expect(workerLines.allSatisfy { $0.contains("request_id=test-request-1") }, "\(workerLines)")
        }
    }

    /// Pages of `GET /v1/jobs` cover every job once, newest first, with a `Link` to the next;
    /// the state filter applies; a cursor the server did not give is a 400 problem.
    @Test func listingPagesWithACursor() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let sources = (1...7).map { "\"https://media.example.com/\($0).jpg\"" }.joined(separator: ",")
        let created = try await api.post("/v1/jobs", json: #"{"sources": [\#(sources)]}"#)
        #expect(created.status == 202)
        var seen: [Int] = []
        var path = "/v1/jobs?limit=3"
        var pages = 0
        while true {
            let page = try await api.get(path)
            #expect(page.status == 200, "\(page.text)")
            let body = try page.json()
            seen += (body["jobs"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
            pages += 1
            guard let next = body["next_cursor"] as? String else {
                #expect(page.header("Link") == nil)
                break
            }
            #expect(page.header("Link")?.contains("cursor=\(next)") == true)
            path = "/v1/jobs?limit=3&cursor=\(next)"
            try #require(pages < 10)
        }
        #expect(seen == Array((1...7).reversed()))
        #expect(pages == 3)
        let queued = try await api.get("/v1/jobs?state=succeeded")
        #expect((try queued.json()["jobs"] as? [Any])?.isEmpty == true)
        let bad = try await api.get("/v1/jobs?cursor=nonsense")
        #expect(bad.status == 400)
        #expect(try bad.json()["code"] as? String == "invalid_request")
        #expect(bad.header("Content-Type") == "application/problem+json")
    }

    /// Cancelling a queued job ends it `cancelled`; cancelling it again is a 409; retrying it
    /// queues it again; stats count it.
    @Test func cancelRetryAndStats() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let created = try await api.post("/v1/jobs", json: #"{"sources": ["https://media.example.com/a.jpg"]}"#)
        let id = try #require((try created.json()["jobs"] as? [[String: Any]])?.first?["id"] as? Int)
        let cancelled = try await api.send(.DELETE, "/v1/jobs/\(id)")
        #expect(cancelled.status == 200)
        #expect(try cancelled.json()["state"] as? String == "cancelled")
        let again = try await api.send(.DELETE, "/v1/jobs/\(id)")
        #expect(again.status == 409)
        #expect(try again.json()["code"] as? String == "invalid_job_state")
        let stats = try await api.get("/v1/stats")
        #expect((try stats.json()["jobs"] as? [String: Int])?["cancelled"] == 1)
        let retried = try await api.post("/v1/jobs/\(id)/retry", json: "")
        #expect(retried.status == 200)
        #expect(try retried.json()["state"] as? String == "queued")
        let missing = try await api.get("/v1/jobs/999999")
        #expect(missing.status == 404)
        #expect(try missing.json()["code"] as? String == "job_not_found")
    }

    /// Requests the API refuses, each with its problem: a local path, a file URL, settings out
    /// of range, an unknown field, JSON that is not JSON, a body over the cap, no such route.
    @Test func refusedRequestsAreProblems() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0", "--max-body-bytes", "2000"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let cases: [(String, Int, String)] = [
            (#"{"sources": ["/etc/passwd"]}"#, 400, "invalid_request"),
            (#"{"sources": ["file:///etc/passwd"]}"#, 400, "invalid_request"),
            (#"{"sources": []}"#, 400, "invalid_request"),
            (#"{"sources": ["https://a.example/x.jpg"], "settings": {"width": 0}}"#, 422, "invalid_settings"),
            (#"{"sources": ["https://a.example/x.jpg"], "priority": 5000}"#, 422, "invalid_settings"),
            (#"{"sources": ["https://a.example/x.jpg"], "colour": "red"}"#, 400, "invalid_request"),
            (#"{"sources": "https://a.example/x.jpg"}"#, 400, "invalid_request"),
            (#"{"sources": ["https://a.example/x.jpg"],}"#, 400, "invalid_request"),
            (#"{"sources": ["https://a.example/x.jpg"], "sources": []}"#, 400, "invalid_request"),
            (#"{"sources": ["https://a.example/\#(String(repeating: "x", count: 3000))"]}"#, 413, "request_too_large"),
        ]
        for (body, status, code) in cases {
            let answer = try await api.post("/v1/jobs", json: body)
            #expect(answer.status == status, "\(body.prefix(80)): \(answer.text)")
            let problem = try answer.json()
            #expect(problem["code"] as? String == code, "\(body.prefix(80))")
            #expect(problem["status"] as? Int == status)
            #expect(problem["type"] as? String == "urn:pushprep:problem:\(code)")
            #expect((problem["detail"] as? String)?.isEmpty == false)
        }
        let none = try await api.get("/v1/nothing-here")
        #expect(none.status == 404)
        #expect(try none.json()["code"] as? String == "not_found")
        let stats = try await api.get("/v1/stats")
        #expect((try stats.json()["jobs"] as? [String: Int])?.values.reduce(0, +) == 0, "nothing was queued")
    }

    /// `POST /v1/process` answers with the finished jobs; with a timeout shorter than the work,
    /// a 504 problem lists the job ids to poll.
    @Test func synchronousProcessing() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(2)]) { files in
            let server = try await InProcessServe.start(in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            let done = try await api.post(
                "/v1/process?timeout=60s", json: #"{"sources": ["\#(files.url("/files/a.bmp"))"]}"#)
            #expect(done.status == 200, "\(done.text)")
            let jobs = try #require(try done.json()["jobs"] as? [[String: Any]])
            #expect(jobs.first?["state"] as? String == "succeeded")
            #expect((jobs.first?["attachment"] as? [String: Any])?["status"] as? String == "ok")
            #expect(try done.json()["complete"] as? Bool == true)

            let slow = try await api.post(
                "/v1/process?timeout=200ms",
                json: #"{"sources": ["\#(files.url("/slow-first-byte/3000/a.bmp"))"]}"#)
            #expect(slow.status == 504, "\(slow.text)")
            let problem = try slow.json()
            #expect(problem["code"] as? String == "timeout")
            #expect((problem["job_ids"] as? [Int])?.count == 1)
            // Each job as it is: its state and attempt (and last error, once an attempt failed).
            let progress = try #require((problem["jobs"] as? [[String: Any]])?.first)
            #expect(progress["id"] as? Int == (problem["job_ids"] as? [Int])?.first)
            #expect(["queued", "running"].contains(progress["state"] as? String ?? ""), "\(progress)")
            #expect(progress["attempt"] is Int)
        }
    }

    /// An `Idempotency-Key` sent again returns the first request's jobs (and says so); the same
    /// key with another body is 422 `idempotency_conflict`; another key makes new jobs only when
    /// the source or settings differ (dedup). Metadata and the callback URL come back as given.
    @Test func idempotencyMetadataAndCallback() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(
            ["--workers", "0", "--webhook-secret-file", try ServeWebhookTests.secretFile(in: dir)], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let body = #"""
            {"sources": ["https://media.example.com/a.jpg", "https://media.example.com/b.jpg"],
             "metadata": {"campaign": "spring", "n": 3, "tags": ["a", "b"]},
             "callback_url": "https://203.0.114.9/pushprep"}
            """#
        let key = [("Idempotency-Key", "order-7781")]
        let first = try await api.post("/v1/jobs", json: body, headers: key)
        #expect(first.status == 202)
        #expect(first.header("Idempotent-Replayed") == nil)
        let ids = (try first.json()["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
        let again = try await api.post("/v1/jobs", json: body, headers: key)
        #expect(again.status == 202)
        #expect(again.header("Idempotent-Replayed") == "true")
        #expect((try again.json()["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == ids)
        let conflict = try await api.post(
            "/v1/jobs", json: #"{"sources": ["https://media.example.com/c.jpg"]}"#, headers: key)
        #expect(conflict.status == 422)
        #expect(try conflict.json()["code"] as? String == "idempotency_conflict")
        let badKey = try await api.post("/v1/jobs", json: body, headers: [("Idempotency-Key", "")])
        #expect(badKey.status == 400)
        let stats = try await api.get("/v1/stats").json()["jobs"] as? [String: Int]
        #expect(stats?["queued"] == 2)

        let job = try await api.get("/v1/jobs/\(try #require(ids?.first))").json()
        let metadata = try #require(job["metadata"] as? [String: Any])
        #expect(metadata["campaign"] as? String == "spring")
        #expect(metadata["n"] as? Int == 3)
        #expect(metadata["tags"] as? [String] == ["a", "b"])
        #expect(job["callback_url"] as? String == "https://203.0.114.9/pushprep")
        #expect((job["request_id"] as? String)?.count == 32)

        // Every refusal of a callback URL is a 422 (issue 28), as its address policy's is.
        for (field, value, status) in [
            ("metadata", #"[1, 2]"#, 400), ("callback_url", #""file:///etc/passwd""#, 422),
        ] {
            let refused = try await api.post(
                "/v1/jobs", json: #"{"sources": ["https://media.example.com/z.jpg"], "\#(field)": \#(value)}"#)
            #expect(refused.status == status, "\(field): \(refused.text)")
        }
    }

    /// Cancelling a running job asks its worker to stop: the answer says so, and the job ends
    /// `cancelled` at the worker's next step. The source is held until the worker has seen the
    /// request (a 3 s lease: a heartbeat every second), so the job is running throughout.
    @Test func cancelARunningJob() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(9)]) { files in
            let server = try await InProcessServe.start(
                ["--read-timeout", "60", "--fetch-timeout", "60", "--lease", "3"], in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            let created = try await api.post(
                "/v1/jobs", json: #"{"sources": ["\#(files.url("/held/cancel/a.bmp"))"]}"#)
            let id = try #require((try created.json()["jobs"] as? [[String: Any]])?.first?["id"] as? Int)
            _ = try await Poll.value("the job to run", within: .seconds(30)) { () -> Bool? in
                try await api.get("/v1/jobs/\(id)").json()["state"] as? String == "running" ? true : nil
            }
            let cancelling = try await api.send(.DELETE, "/v1/jobs/\(id)")
            #expect(cancelling.status == 200)
            let asked = try cancelling.json()
            #expect(asked["state"] as? String == "running" && asked["cancel_requested"] as? Bool == true)
            try await Poll.until(
                "the worker sees the cancellation", within: .seconds(30), diagnostics: { server.logTail() }
            ) { server.stderrText.contains("cancellation requested") }
            files.release("cancel")
            let done = try await api.get("/v1/jobs/\(id)?wait=30s").json()
            #expect(done["state"] as? String == "cancelled", "\(done)")
            #expect((done["error"] as? [String: Any])?["code"] as? String == "cancelled")
        }
    }

    /// `/metrics` has request counts and latency histograms by route and status, and the
    /// embedded worker's own metrics.
    @Test func metricsByRouteAndStatus() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        // A process: its metrics system (bootstrapped once per process) feeds /metrics.
        let server = try await RunningServe.start(in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        _ = try await api.get("/v1/stats")
        _ = try await api.get("/v1/jobs/12345")
        let text = try await Poll.value("the worker's metrics", within: .seconds(30)) { () -> String? in
            let text = try await api.get("/metrics").text
            return text.contains("pushprep_") ? text : nil
        }
        #expect(text.contains(#"http_route="/v1/stats""#) && text.contains(#"http_response_status_code="200""#))
        #expect(text.contains(#"http_route="/v1/jobs/{id}""#) && text.contains(#"http_response_status_code="404""#))
        #expect(text.contains("http_server_request_duration_bucket"))
    }

    /// Headers past the caps are refused without harm: the server answers the next request.
    @Test func oversizedHeadersAreRefused() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let huge = try? await api.get("/healthz", headers: [("X-Padding", String(repeating: "p", count: 40_000))])
        #expect(huge.map { $0.status >= 400 } ?? true, "a 40 KB header is refused or the connection closed")
        let many = try? await api.get("/healthz", headers: (0..<150).map { ("X-Field-\($0)", "v") })
        #expect(many.map { $0.status >= 400 } ?? true, "150 header fields are refused or the connection closed")
        #expect(try await api.get("/healthz").status == 200)
        #expect(server.isRunning)
    }
}
