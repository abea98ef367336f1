import Crypto
import Foundation
import NIOHTTP1
import PushPrepCore
import PushPrepServer
import PushPrepTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// API keys, scopes, rate limits, backpressure, caps and the graceful drain, against a real
/// `pushprep serve` process.
@Suite(.serialized)
struct AuthAndLimitsTests {
    static let writer = "writer-key-0123456789abcdef"
    static let reader = "reader-key-0123456789abcdef"
    static let hashed = "hashed-key-0123456789abcdef"

    /// A keys file with a read-write key, a read-only key, and a key given only by its hash.
    static func keysFile(in dir: URL) throws -> String {
        let digest = SHA256.hash(data: Array(hashed.utf8)).map { String(format: "%02x", $0) }.joined()
        let text = """
            # PushPrep API keys
            \(writer)
            \(reader) read

            sha256:\(digest) write
            """
        let path = dir.appendingPathComponent("keys").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// No key or an unknown key: 401 with `WWW-Authenticate`; a read key cannot write (403);
    /// the hashed key works; health needs no key; no key ever reaches the log.
    @Test func keysAndScopes() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(
            ["--workers", "0", "--api-keys-file", try Self.keysFile(in: dir)], in: dir)
        let anonymous = APITestClient(baseURL: server.baseURL)
        let body = #"{"sources": ["https://media.example.com/a.jpg"]}"#

        let none = try await anonymous.get("/v1/stats")
        #expect(none.status == 401)
        #expect(try none.json()["code"] as? String == "unauthorized")
        #expect(none.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        let wrong = try await APITestClient(baseURL: server.baseURL, apiKey: "not-a-key-of-this-server").get(
            "/v1/stats")
        #expect(wrong.status == 401)

        let reader = APITestClient(baseURL: server.baseURL, apiKey: Self.reader)
        #expect(try await reader.get("/v1/stats").status == 200)
        let refused = try await reader.post("/v1/jobs", json: body)
        #expect(refused.status == 403)
        #expect(try refused.json()["code"] as? String == "forbidden")

        let writer = APITestClient(baseURL: server.baseURL, apiKey: Self.writer)
        #expect(try await writer.post("/v1/jobs", json: body).status == 202)
        let hashed = APITestClient(baseURL: server.baseURL, apiKey: Self.hashed)
        #expect(try await hashed.post("/v1/jobs", json: body).status == 202)
        #expect(try await hashed.get("/v1/stats").status == 403, "the hashed key has only the write scope")

        #expect(try await anonymous.get("/healthz").status == 200)
        #expect(try await anonymous.get("/readyz").status == 200)

        let log = server.stderrText + server.stdoutText
        for key in [Self.writer, Self.reader, Self.hashed, "not-a-key-of-this-server"] {
            #expect(!log.contains(key), "a key reached the log")
        }
        #expect(log.contains("key="), "requests are logged with the key's id")
    }

    /// Without keys, anything but loopback is refused before binding.
    @Test func noKeysMeansLoopbackOnly() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let result = try await PushPrepCLI.runAsync(
            ["serve", "--host", "0.0.0.0", "--port", "0", "--queue", "sqlite:\(dir.path)/q.db"], in: dir)
        #expect(result.status == 2)
        #expect(result.stderrText.contains("loopback"))
    }

    /// `serve`'s own options reach the server: `--allowed-host` adds a name the `Host` may
    /// carry (any other gets `421`), `--auth-failure-limit` bounds failed keys per address, a
    /// malformed `--allowed-host` is refused before binding; a `Transfer-Encoding` the server does
    /// not read is a `400` that logs no error.
    @Test func hostAndFailureOptions() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let refused = try await PushPrepCLI.runAsync(
            ["serve", "--port", "0", "--queue", "sqlite:\(dir.path)/q.db", "--allowed-host", "evil.example/x"], in: dir)
        #expect(refused.status == 2)
        #expect(refused.stderrText.contains("--allowed-host"), "\(refused.stderrText)")

        let server = try await InProcessServe.start(
            [
                "--workers", "0", "--api-keys-file", try Self.keysFile(in: dir), "--allowed-host", "push.example.com",
                "--auth-failure-limit", "2",
            ], in: dir)
        let reader = APITestClient(baseURL: server.baseURL, apiKey: Self.reader)
        #expect(try await reader.get("/v1/stats", headers: [("Host", "Push.Example.com.")]).status == 200)
        let foreign = try await reader.get("/v1/stats", headers: [("Host", "rebind.evil.example")])
        #expect(foreign.status == 421)
        #expect(try foreign.json()["code"] as? String == "invalid_request")

        let guesser = APITestClient(baseURL: server.baseURL, apiKey: "not-a-key-of-this-server")
        var statuses: [Int] = []
        for _ in 0..<4 { statuses.append(try await guesser.get("/v1/stats").status) }
        #expect(statuses == [401, 401, 429, 429], "\(statuses)")

        let port = try #require(server.baseURL.split(separator: ":").last.flatMap { Int($0) })
        let identity = try await RawHTTP.exchange(
            port: port,
            "POST /v1/jobs HTTP/1.1\r\nHost: \(server.host)\r\nAuthorization: Bearer \(Self.writer)\r\n"
                + "Transfer-Encoding: identity\r\nConnection: close\r\n\r\n{\"sources\": []}")
        #expect(identity.status == 400, "\(identity.text)")
        #expect(!server.stderrText.contains(" error "), "\(server.logTail())")
    }

    /// A key over its rate gets 429 `rate_limited` with `Retry-After`.
    @Test func rateLimitPerKey() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(
            [
                "--workers", "0", "--api-keys-file", try Self.keysFile(in: dir), "--rate-limit", "0.5",
                "--rate-burst", "3",
            ], in: dir)
        let reader = APITestClient(baseURL: server.baseURL, apiKey: Self.reader)
        var statuses: [Int] = []
        for _ in 0..<5 { statuses.append(try await reader.get("/v1/stats").status) }
        #expect(statuses.prefix(3).allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(statuses.last == 429, "\(statuses)")
        let limited = try await reader.get("/v1/stats")
        #expect(try limited.json()["code"] as? String == "rate_limited")
        #expect(Int(limited.header("Retry-After") ?? "") ?? 0 >= 1)
        // Another key has its own bucket.
        #expect(try await APITestClient(baseURL: server.baseURL, apiKey: Self.writer).get("/v1/stats").status == 200)
    }

    /// Past `--max-queued` queued jobs, new jobs get 429 `queue_full` with `Retry-After`, and
    /// nothing more is queued; many concurrent clients never get a 5xx.
    @Test func backpressureUnderLoad() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0", "--max-queued", "20"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<60 {
                group.addTask {
                    try await api.post("/v1/jobs", json: #"{"sources": ["https://media.example.com/\#(index).jpg"]}"#)
                        .status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 202 || $0 == 429 }, "\(statuses)")
        #expect(statuses.filter { $0 == 429 }.count >= 40, "\(statuses)")
        let refused = try await api.post("/v1/jobs", json: #"{"sources": ["https://media.example.com/x.jpg"]}"#)
        #expect(refused.status == 429)
        #expect(try refused.json()["code"] as? String == "queue_full")
        #expect(refused.header("Retry-After") != nil)
        let queued = (try await api.get("/v1/stats").json()["jobs"] as? [String: Int])?["queued"] ?? -1
        #expect(queued == statuses.filter { $0 == 202 }.count)
        #expect(queued <= 20)
    }

    /// A URL over the cap is 414; a client's request id is kept when sane and replaced when not.
    @Test func urlCapAndRequestIDs() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let long = try await api.get("/v1/jobs?state=" + String(repeating: "q", count: 9000))
        #expect(long.status == 414)
        #expect(try long.json()["code"] as? String == "request_too_large")
        let kept = try await api.get("/healthz", headers: [("X-Request-Id", "abc-123")])
        #expect(kept.header("X-Request-Id") == "abc-123")
        let replaced = try await api.get("/healthz", headers: [("X-Request-Id", String(repeating: "z", count: 300))])
        #expect(replaced.header("X-Request-Id")?.count == 32)
    }

    /// SIGTERM drains: a long poll in flight is answered once the embedded worker finishes its
    /// running job, the process exits 0, and the job is done.
    @Test func sigtermDrainsRequestsAndWorkers() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(3)]) { files in
            // A process: SIGTERM and its exit status.
            let server = try await RunningServe.start(in: dir)
            try await InProcessServeTests.drains(server, source: files.url("/hold-first/2500/drain/a.bmp")) {
                server.process.send(SIGTERM)
                let exit = await server.process.waitForExit(within: .seconds(60))
                #expect(
                    exit?.status == 0 && exit?.signal == nil, "\(String(describing: exit))\n\(server.logTail())")
                return exit != nil
            }
        }
    }

    /// `/readyz` is 503 while outputs cannot be published (the out directory gone), 200 again
    /// once they can; `/healthz` stays 200 throughout (the process is alive).
    @Test func readinessFollowsTheStore() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        #expect(try await api.get("/readyz").status == 200)
        let out = dir.appendingPathComponent("out")
        try FileManager.default.removeItem(at: out)
        let notReady = try await api.get("/readyz")
        #expect(notReady.status == 503)
        #expect(try notReady.json()["code"] as? String == "storage_unavailable")
        // A 503 says when to try again (issue 31: clients of a cluster whose database restarts).
        #expect(notReady.header("Retry-After") == "\(Problem.unavailableRetry)")
        #expect(Problem(PushPrepError(.queueUnavailable, "down")).retryAfter == Problem.unavailableRetry)
        #expect(Problem(PushPrepError(.corruptInput, "bad")).retryAfter == nil)
        #expect(try await api.get("/healthz").status == 200)
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        #expect(try await api.get("/readyz").status == 200)
    }

    /// A client trickling an upload gets 408 once `--request-timeout` passes, and nothing it
    /// sent stays in the uploads directory.
    @Test func aTricklingUploadTimesOut() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(
            ["--workers", "0", "--request-timeout", "2", "--max-wait", "1"], in: dir)
        let port = try #require(server.baseURL.split(separator: ":").last.map(String.init))
        // One byte every 200 ms of a body that claims 100000: never done within 2 s.
        let script = """
            import socket, sys, time
            s = socket.create_connection(("127.0.0.1", \(port)))
            s.sendall(b"POST /v1/uploads HTTP/1.1\\r\\nHost: \(server.host)\\r\\nContent-Type: application/octet-stream\\r\\n"
                      b"Content-Length: 100000\\r\\n\\r\\n\\xff\\xd8\\xff")
            start = time.monotonic()
            s.settimeout(0.2)
            answer = b""
            while time.monotonic() - start < 20:
                try:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
                    if b"\\r\\n\\r\\n" in answer:
                        break
                except socket.timeout:
                    try:
                        s.sendall(b"x")
                    except OSError:
                        break
            print(answer.split(b"\\r\\n")[0].decode(), round(time.monotonic() - start, 1))
            """
        let result = try await TestTools.runAsync(TestTools.python, ["-c", script], timeout: .seconds(60))
        let line = String(decoding: result.stdout, as: UTF8.self)
        #expect(line.hasPrefix("HTTP/1.1 408"), "\(line) \(String(decoding: result.stderr, as: UTF8.self))")
        let seconds =
            Double(line.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 99
        #expect(seconds >= 1.5 && seconds < 15, "answered after \(seconds) s")
        let left = try await Poll.value("the partial upload to be removed", within: .seconds(10)) { () -> [String]? in
            let names =
                (try? FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("uploads").path)) ?? []
            return names.isEmpty ? names : nil
        }
        #expect(left.isEmpty)
        #expect(try await APITestClient(baseURL: server.baseURL).get("/healthz").status == 200)
    }
}
