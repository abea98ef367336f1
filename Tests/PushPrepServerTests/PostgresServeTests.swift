import Foundation
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// The API-only shape of a pipeline: `pushprep serve --workers 0` in front of a separate
/// `pushprep worker` process, sharing a real PostgreSQL database (started by the test support).
/// A job created over HTTP is processed by the other process, its webhook is sent by the API
/// node (which runs the dispatcher), and the long poll sees it end.
@Suite(.serialized)
struct PostgresServeTests {
    @Test func apiNodeAndWorkerShareAPostgresQueue() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret)
        defer { receiver.stop() }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(10)]) { files in
            try await PostgresTestServer.shared.withFreshDatabase { url in
                let queue = url.commandLineArgument
                let out = dir.appendingPathComponent("shared-out")
                let server = try await InProcessServe.start(
                    [
                        "--queue", queue, "--workers", "0", "--out", out.path, "--webhook-secret-file",
                        try ServeWebhookTests.secretFile(in: dir),
                    ], in: dir)
                let worker = try PushPrepCLI.startWorker(
                    queue: queue, out: out, in: dir, options: ["--sources", "remote"])
                let api = APITestClient(baseURL: server.baseURL)
                let created = try await api.post(
                    "/v1/jobs",
                    json: #"{"sources": ["\#(files.url("/files/a.bmp"))"], "callback_url": "\#(receiver.url())"}"#)
                #expect(created.status == 202, "\(created.text)")
                let id = try #require((try created.json()["jobs"] as? [[String: Any]])?.first?["id"] as? Int)
                let done = try await api.get("/v1/jobs/\(id)?wait=60s").json()
                #expect(done["state"] as? String == "succeeded", "\(done)\n\(worker.logTail())")
                let file = try #require((done["attachment"] as? [String: Any])?["file"] as? String)
                #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(file).path))
                let request = try await Poll.value(
                    "the webhook from the API node", within: .seconds(60), diagnostics: { server.logTail() }
                ) { try receiver.requests.first }
                #expect(request.verified)
                #expect(worker.stderrText.contains("job=\(id)"), "the separate worker ran the job")
                try await worker.kill()
                _ = await server.stop()
            }
        }
    }
}
