import Foundation
import PushPrepTestSupport
import Testing

/// The in-process `serve` the server tests run (``InProcessServe``) shuts down as the process
/// does on SIGTERM, and refuses at start what the command refuses.
struct InProcessServeTests {
    /// ``InProcessServe/stop(within:)`` drains: a long poll in flight is answered once the
    /// embedded worker finishes its running job, the services stop in time, and the job is done
    /// (``AuthAndLimitsTests/sigtermDrainsRequestsAndWorkers()`` is the same with a process).
    @Test func stopDrainsRequestsAndWorkers() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(3)]) { files in
            let server = try await InProcessServe.start(in: dir)
            try await Self.drains(server, source: files.url("/hold-first/2500/drain/a.bmp")) {
                await server.stop(within: .seconds(60))
            }
            #expect(!server.isRunning)
        }
    }

    /// Submits `source` (its first request held 2.5 s) and, once its job runs and a long poll on
    /// it is in flight, shuts `server` down with `stop`: the poll is answered with the finished
    /// job, and `stop` says the server is gone in time. The one drain check of both harnesses.
    static func drains(
        _ server: some ServeUnderTest, source: String, stop: @escaping @Sendable () async -> Bool
    ) async throws {
        let api = APITestClient(baseURL: server.baseURL)
        let created = try await api.post("/v1/jobs", json: #"{"sources": ["\#(source)"]}"#)
        let id = try #require((try created.json()["jobs"] as? [[String: Any]])?.first?["id"] as? Int)
        _ = try await Poll.value("the job to run", within: .seconds(30)) { () -> Bool? in
            let state = try await api.get("/v1/jobs/\(id)").json()["state"] as? String
            return state == "running" ? true : nil
        }
        async let waited = api.get("/v1/jobs/\(id)?wait=30s")
        try await Task.sleep(for: .milliseconds(300))
        async let stopped = stop()
        let answer = try await waited
        #expect(answer.status == 200)
        #expect(try answer.json()["state"] as? String == "succeeded", "\(answer.text)")
        #expect(await stopped, "the server did not stop within 60 s\n\(server.logTail(40))")
    }

    /// What the command refuses before it starts anything is refused here too, with its words.
    @Test func refusesWhatTheCommandRefuses() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let missing = dir.appendingPathComponent("no-such-keys").path
        await #expect {
            _ = try await InProcessServe.start(["--api-keys-file", missing], in: dir)
        } throws: { error in
            "\(error)".contains(missing)
        }
    }
}
