import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import PushPrepTestSupport
import Testing

/// Long polls (`GET /v1/jobs/{id}?wait=`, `POST /v1/process`) against a real `pushprep serve`
/// process: a client that goes away ends its wait at once, waits are bounded per client and in
/// all, they share one look at the queue, and `/v1/process` answers a failure when it happens.
@Suite(.serialized)
struct LongPollTests {
    /// Defect (issue 26, 2): 400 requests to `GET /v1/jobs/2?wait=30s`, each closed at once,
    /// left 431 descriptors open and polled the database for 30 s. Now every dropped wait ends
    /// within moments: the server's descriptors return to their baseline, no wait is counted,
    /// the shared poller stops reading the queue, and the access log shows short requests.
    @Test func droppedWaitsLeaveNothingBehind() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let count = 400
        // A process: its descriptors (/proc/PID/fd) and the wait gauges of its metrics system.
        let server = try await RunningServe.start(
            ["--workers", "0", "--max-waits", "\(count + 50)", "--max-waits-per-client", "\(count + 50)"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let created = try await api.post("/v1/jobs", json: #"{"sources": ["https://media.example.com/a.jpg"]}"#)
        let id = try #require((try created.json()["jobs"] as? [[String: Any]])?.first?["id"] as? Int)
        _ = try await api.get("/v1/stats")
        let pid = server.process.pid
        let baseline = try Self.descriptors(of: pid)

        let port = try #require(URL(string: server.baseURL)?.port)
        let request = "GET /v1/jobs/\(id)?wait=60s HTTP/1.1\r\nHost: \(server.host)\r\n\r\n"
        let clients = try await RawClients.connect(count, port: port, sending: request)
        // Each wait holds its connection's descriptor.
        try await Poll.until(
            "\(count) waits to hold their connections", within: .seconds(60), every: .milliseconds(200),
            diagnostics: { "descriptors \((try? Self.descriptors(of: pid)) ?? -1), baseline \(baseline)" }
        ) { try Self.descriptors(of: pid) >= baseline + count }
        try await Poll.until(
            "\(count) waits to be counted", within: .seconds(30), every: .milliseconds(200),
            diagnostics: { server.logTail() }
        ) { try await Self.metric("pushprep_api_waits", api) == Double(count) }

        await clients.closeAll()
        // Generous: the wait is 60 s, so only an ended wait can pass.
        try await Poll.until(
            "the dropped waits to end", within: .seconds(15), every: .milliseconds(200),
            diagnostics: {
                "descriptors \((try? Self.descriptors(of: pid)) ?? -1), baseline \(baseline)\n"
                    + server.logTail()
            }
        ) { try Self.descriptors(of: pid) <= baseline + 10 }
        #expect(try await Self.metric("pushprep_api_waits", api) == 0)
        // Nobody waits: the shared poller no longer reads the queue.
        let polls = try await Self.metric("pushprep_api_wait_polls_total", api)
        try await Task.sleep(for: .seconds(1))
        #expect(try await Self.metric("pushprep_api_wait_polls_total", api) == polls)
        // One access line per dropped wait, each ended well before its 60 s.
        let lines = server.stderrText.split(separator: "\n").filter {
            $0.contains("path=/v1/jobs/\(id)") && $0.contains("status=499")
        }
        #expect(lines.count == count, "\(lines.prefix(3))")
        let durations = lines.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("duration_ms=") }.flatMap {
                Double($0.dropFirst("duration_ms=".count))
            }
        }
        #expect(durations.count == count && durations.allSatisfy { $0 < 30_000 }, "\(durations.max() ?? -1) ms")

        // `POST /v1/process` waits the same way: its dropped clients end their waits too.
        let body = #"{"sources": ["https://media.example.com/p.jpg"]}"#
        let process = try await RawClients.connect(
            5, port: port,
            sending:
                "POST /v1/process?timeout=60s HTTP/1.1\r\nHost: \(server.host)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        try await Poll.until("5 process waits", within: .seconds(30), diagnostics: { server.logTail() }) {
            try await Self.metric("pushprep_api_waits", api) == 5
        }
        await process.closeAll()
        try await Poll.until(
            "the dropped process waits to end", within: .seconds(15), diagnostics: { server.logTail() }
        ) {
            server.stderrText.split(separator: "\n").filter {
                $0.contains("path=/v1/process") && $0.contains("status=499")
            }.count == 5
        }
        #expect(try await Self.metric("pushprep_api_waits", api) == 0)
    }

    /// Waits are bounded per API key and in all: past either bound, `429 rate_limited` with
    /// `Retry-After`; a `POST /v1/process` refused so creates no job; a slot is free again as soon
    /// as its client goes away.
    @Test func waitsAreBoundedPerKeyAndInAll() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        // A process: the wait gauge of its metrics system.
        let server = try await RunningServe.start(
            [
                "--workers", "0", "--api-keys-file", try AuthAndLimitsTests.keysFile(in: dir), "--max-waits", "3",
                "--max-waits-per-client", "2",
            ], in: dir)
        let reader = APITestClient(baseURL: server.baseURL, apiKey: AuthAndLimitsTests.reader)
        let writer = APITestClient(baseURL: server.baseURL, apiKey: AuthAndLimitsTests.writer)
        let created = try await writer.post("/v1/jobs", json: #"{"sources": ["https://media.example.com/a.jpg"]}"#)
        let id = try #require((try created.json()["jobs"] as? [[String: Any]])?.first?["id"] as? Int)
        let port = try #require(URL(string: server.baseURL)?.port)
        func request(_ key: String) -> String {
            "GET /v1/jobs/\(id)?wait=60s HTTP/1.1\r\nHost: \(server.host)\r\nAuthorization: Bearer \(key)\r\n\r\n"
        }
        func waiting(_ count: Int) async throws {
            try await Poll.until("\(count) waits", within: .seconds(30), diagnostics: { server.logTail() }) {
                try await Self.metric("pushprep_api_waits", writer) == Double(count)
            }
        }

        let readers = try await RawClients.connect(2, port: port, sending: request(AuthAndLimitsTests.reader))
        try await waiting(2)
        let third = try await reader.get("/v1/jobs/\(id)?wait=60s")
        #expect(third.status == 429, "\(third.text)")
        #expect(third.header("Retry-After") == "1")
        #expect(third.header("Content-Type") == "application/problem+json")
        #expect(try third.json()["code"] as? String == "rate_limited")
        // A finished job's read waits for nothing and needs no slot.
        #expect(try await reader.get("/v1/jobs/\(id)").status == 200)

        let writers = try await RawClients.connect(1, port: port, sending: request(AuthAndLimitsTests.writer))
        try await waiting(3)
        let overall = try await writer.get("/v1/jobs/\(id)?wait=60s")
        #expect(overall.status == 429, "\(overall.text)")
        let process = try await writer.post(
            "/v1/process?timeout=10s", json: #"{"sources": ["https://media.example.com/b.jpg"]}"#)
        #expect(process.status == 429, "\(process.text)")
        let stats = try await writer.get("/v1/stats").json()["jobs"] as? [String: Int]
        #expect(stats?["queued"] == 1, "a refused process enqueued nothing: \(stats ?? [:])")

        await readers.close(0)
        try await waiting(2)
        let again = try await reader.get("/v1/jobs/\(id)?wait=200ms")
        #expect(again.status == 200, "\(again.text)")
        await readers.closeAll()
        await writers.closeAll()
        try await waiting(0)
    }

    /// Many waits on one job share the poller and all return as soon as the job finishes, well
    /// before their wait is up; the connection of a long poll is not reused (`Connection: close`).
    @Test func waitsReturnWhenTheJobFinishes() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(31)]) { files in
            let server = try await InProcessServe.start(in: dir)
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: .init(
                    connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)))
            let api = APITestClient(baseURL: server.baseURL, client: client)
            let created = try await api.post(
                "/v1/jobs", json: #"{"sources": ["\#(files.url("/slow-first-byte/1500/a.bmp"))"]}"#)
            let id = try #require((try created.json()["jobs"] as? [[String: Any]])?.first?["id"] as? Int)
            let start = ContinuousClock.now
            let answers = try await withThrowingTaskGroup(of: (APITestClient.Answer, Duration).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let answer = try await api.get("/v1/jobs/\(id)?wait=60s")
                        return (answer, ContinuousClock.now - start)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await client.shutdown()
            #expect(answers.count == 20)
            for (answer, elapsed) in answers {
                #expect(answer.status == 200)
                #expect(try answer.json()["state"] as? String == "succeeded", "\(answer.text)")
                #expect(answer.header("Connection") == "close")
                #expect(elapsed < .seconds(30), "the wait returned when the job finished, not at its end")
            }
        }
    }

    /// Defect (issue 26, 11): `/v1/process` answered `504 timeout` while a job was being retried
    /// and said nothing of why. Now a job that fails is answered at once with its code and
    /// message, the others as they are (`complete` false), without waiting for them.
    @Test func processAnswersAFailureAtOnce() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(32)]) { files in
            let server = try await InProcessServe.start(["--workers", "2"], in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            let answer = try await api.post(
                "/v1/process?timeout=60s",
                json: #"""
                    {"sources": ["\#(files.url("/status/404"))", "\#(files.url("/slow-first-byte/45000/a.bmp"))"],
                     "max_attempts": 1}
                    """#)
            #expect(answer.status == 200, "\(answer.text)")
            let body = try answer.json()
            #expect(body["complete"] as? Bool == false, "\(answer.text)")
            let jobs = try #require(body["jobs"] as? [[String: Any]])
            #expect(jobs.count == 2)
            let failed = try #require(jobs.first)
            #expect(["failed", "dead"].contains(failed["state"] as? String ?? ""), "\(failed)")
            let error = try #require(failed["error"] as? [String: Any])
            #expect(error["code"] as? String == "fetch_failed", "\(error)")
            #expect((error["message"] as? String)?.contains("404") == true, "\(error)")
            #expect(["queued", "running"].contains(jobs.last?["state"] as? String ?? ""), "the other still runs")
        }
    }

    /// Defect (issue 26, 6): a replayed `Idempotency-Key` got `429 queue_full` when the queue was
    /// full. Now the key is looked up before admission: the replay returns the first request's
    /// jobs, while a new request is still refused. SQLite and PostgreSQL.
    @Test func replayIsAnsweredWhenTheQueueIsFull() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await Self.checkReplayWhenFull(queue: nil, in: dir.appendingPathComponent("sqlite"))
        try await PostgresTestServer.shared.withFreshDatabase { url in
            try await Self.checkReplayWhenFull(queue: url.commandLineArgument, in: dir.appendingPathComponent("pg"))
        }
    }

    private static func checkReplayWhenFull(queue: String?, in dir: URL) async throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let server = try await InProcessServe.start(
            ["--workers", "0", "--max-queued", "2"] + (queue.map { ["--queue", $0] } ?? []), in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let body = #"{"sources": ["https://media.example.com/a.jpg", "https://media.example.com/b.jpg"]}"#
        let key = [("Idempotency-Key", "order-full-1")]
        let first = try await api.post("/v1/jobs", json: body, headers: key)
        #expect(first.status == 202, "\(first.text)")
        let ids = (try first.json()["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
        #expect(ids?.count == 2)
        let replay = try await api.post("/v1/jobs", json: body, headers: key)
        #expect(replay.status == 202, "\(queue ?? "sqlite"): \(replay.text)")
        #expect(replay.header("Idempotent-Replayed") == "true")
        #expect((try? replay.json()["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == ids)
        let conflict = try await api.post(
            "/v1/jobs", json: #"{"sources": ["https://media.example.com/c.jpg"]}"#, headers: key)
        #expect(conflict.status == 422, "the key's fingerprint is checked before admission too: \(conflict.text)")
        let fresh = try await api.post(
            "/v1/jobs", json: #"{"sources": ["https://media.example.com/d.jpg"]}"#,
            headers: [("Idempotency-Key", "order-full-2")])
        #expect(fresh.status == 429, "\(fresh.text)")
        #expect(try fresh.json()["code"] as? String == "queue_full")
    }

    // MARK: Helpers

    /// The open descriptors of process `pid`.
    static func descriptors(of pid: Int32) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    /// The value of an unlabelled metric in `/metrics`.
    static func metric(_ name: String, _ api: APITestClient) async throws -> Double? {
        let text = try await api.get("/metrics").text
        return text.split(separator: "\n").lazy.compactMap { line -> Double? in
            let parts = line.split(separator: " ")
            guard parts.count == 2, parts[0] == name else { return nil }
            return Double(parts[1])
        }.first
    }
}

/// `POST /v1/preflight`'s download budget under the server's ceilings.
@Suite(.serialized)
struct PreflightCeilingTests {
    /// A payload naming `urls` as attachments.
    static func payload(_ urls: [String]) -> String {
        let entries = urls.enumerated().map { #"{"id":"a\#($0.offset)","url":"\#($0.element)"}"# }
        return #"{"aps":{"alert":"x","mutable-content":1},"attachments":["# + entries.joined(separator: ",") + "]}"
    }

    /// Defect (issue 26, 4): a read-scoped client raised the budget without bound
    /// (`fetch_max_urls: 1000`, `fetch_max_bytes: 10000000000` got `200` and every URL fetched).
    /// Now the server's `--max-preflight-urls` and `--max-preflight-bytes` (the CLI's defaults
    /// unless set) are ceilings: a request above one is `422 invalid_settings` and downloads
    /// nothing; a request that names none gets the ceiling.
    @Test func aRequestCannotRaiseTheBudget() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let names = (0..<5).map { "p\($0).bmp" }
        let files = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, TinyBMP.bytes(40 + $0)) })
        try await TestServer.with(files: files) { host in
            let payload = Self.payload(names.map { host.url("/files/\($0)") })
            func hits() -> Int { names.map { host.hits("/files/\($0)") }.reduce(0, +) }
            let server = try await InProcessServe.start(
                ["--workers", "0", "--api-keys-file", try AuthAndLimitsTests.keysFile(in: dir)], in: dir)
            let reader = APITestClient(baseURL: server.baseURL, apiKey: AuthAndLimitsTests.reader)
            for (field, value) in [("fetch_max_urls", "1000"), ("fetch_max_bytes", "10000000000")] {
                let refused = try await reader.post(
                    "/v1/preflight",
                    json: #"{"payload": \#(payload), "fetch": true, "allow_http": true, "\#(field)": \#(value)}"#)
                #expect(refused.status == 422, "\(field): \(refused.text)")
                #expect(refused.header("Content-Type") == "application/problem+json")
                let problem = try refused.json()
                #expect(problem["code"] as? String == "invalid_settings")
                #expect((problem["detail"] as? String)?.contains(field) == true, "\(problem)")
            }
            #expect(hits() == 0, "a refused request downloads nothing")
            // Within the ceiling, as asked.
            let within = try await reader.post(
                "/v1/preflight",
                json: #"{"payload": \#(payload), "fetch": true, "allow_http": true, "fetch_max_urls": 2}"#
            )
            #expect(within.status == 200, "\(within.text)")
            #expect(hits() == 2)

            // A lower ceiling is the budget of a request that names none.
            let cappedDir = try TestTools.temporaryDirectory()
            defer { TestTools.removeDirectory(cappedDir) }
            let capped = try await InProcessServe.start(["--workers", "0", "--max-preflight-urls", "3"], in: cappedDir)
            let api = APITestClient(baseURL: capped.baseURL)
            let answer = try await api.post(
                "/v1/preflight", json: #"{"payload": \#(payload), "fetch": true, "allow_http": true}"#)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(hits() == 2 + 3)
            let report = try #require((try answer.json()["reports"] as? [[String: Any]])?.first)
            let skipped = (report["findings"] as? [[String: Any]] ?? []).filter {
                $0["code"] as? String == "fetch_skipped"
            }
            #expect(skipped.count == 2, "\(report)")
            let over = try await api.post(
                "/v1/preflight",
                json: #"{"payload": \#(payload), "fetch": true, "allow_http": true, "fetch_max_urls": 4}"#
            )
            #expect(over.status == 422, "\(over.text)")
        }
        // Ceilings out of the CLI's own ranges are refused at start.
        for options in [
            ["--max-preflight-urls", "1001"], ["--max-preflight-bytes", "10"],
            ["--max-waits-per-client", "3", "--max-waits", "2"], ["--max-waits", "0"],
        ] {
            let result = try await PushPrepCLI.runAsync(["serve", "--port", "0"] + options, in: dir)
            #expect(result.status != 0, "\(options)")
            #expect(result.stderrText.contains(options[0]), "\(result.stderrText)")
        }
    }
}

/// Raw TCP clients that send one request each and never read: how a client that gives up on
/// a long poll looks to the server once it closes.
final class RawClients: Sendable {
    let channels: [any Channel]

    init(channels: [any Channel]) { self.channels = channels }

    /// `count` connections to 127.0.0.1:`port`, each sent `request`, 50 connecting at a time.
    static func connect(_ count: Int, port: Int, sending request: String) async throws -> RawClients {
        var channels: [any Channel] = []
        for start in stride(from: 0, to: count, by: 50) {
            let batch = try await withThrowingTaskGroup(of: (any Channel).self) { group in
                for _ in start..<min(start + 50, count) {
                    group.addTask {
                        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                            .connect(host: "127.0.0.1", port: port).get()
                        try await channel.writeAndFlush(ByteBuffer(string: request)).get()
                        return channel
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            channels += batch
        }
        return RawClients(channels: channels)
    }

    /// Closes connection `index`.
    func close(_ index: Int) async {
        try? await channels[index].close().get()
    }

    /// Closes every connection at once.
    func closeAll() async {
        await withTaskGroup(of: Void.self) { group in
            for channel in channels { group.addTask { try? await channel.close().get() } }
        }
    }
}
