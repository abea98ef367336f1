import Foundation
import PushPrepTestSupport
import Testing

/// What a source's HTTP status does to a job created over the API, against a real
/// `pushprep serve` with one embedded worker and a real HTTP server for the sources.
@Suite(.serialized)
struct SourceStatusAPITests {
    /// `POST /v1/process` for a source that answers 404 returns the failed job with its code and
    /// message as soon as the one attempt ends, well within its timeout, instead of a `504`
    /// after minutes of retries.
    @Test func processReturnsAClientErrorAtOnce() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: [:]) { files in
            let server = try await InProcessServe.start(["--retry-base", "600", "--retry-max", "600"], in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            let answer = try await api.post(
                "/v1/process?timeout=60s", json: #"{"sources": ["\#(files.url("/status/404"))"], "max_attempts": 4}"#)
            #expect(answer.status == 200, "\(answer.text)\n\(server.logTail())")
            let job = try #require((try answer.json()["jobs"] as? [[String: Any]])?.first, "\(answer.text)")
            #expect(job["state"] as? String == "failed", "\(answer.text)")
            let error = try #require(job["error"] as? [String: Any], "\(answer.text)")
            #expect(error["code"] as? String == "fetch_failed")
            #expect((error["message"] as? String)?.contains("HTTP 404") == true, "\(answer.text)")
            #expect(files.hits("/status/404") == 1, "one request, no retry")
            _ = await server.stop()
        }
    }
}
