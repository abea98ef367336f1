import Foundation
import PushPrepTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Webhooks from a real `pushprep serve`: a job with a callback URL ends, and an independent
/// receiver (its own HMAC check) verifies the signed event; a delivery pending when the server is
/// killed is sent by the next server on the same queue.
@Suite(.serialized)
struct ServeWebhookTests {
    static func secretFile(in dir: URL) throws -> String {
        let path = dir.appendingPathComponent("webhook-secret").path
        try (WebhookSenderTests.secret + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func jobEndsAndItsWebhookArrivesSigned() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret)
        defer { receiver.stop() }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(5)]) { files in
            let server = try await InProcessServe.start(
                ["--webhook-secret-file", try Self.secretFile(in: dir)], in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            let created = try await api.post(
                "/v1/jobs",
                json: #"""
                    {"sources": ["\#(files.url("/files/a.bmp"))"], "callback_url": "\#(receiver.url())",
                     "metadata": {"order": 7}}
                    """#)
            #expect(created.status == 202, "\(created.text)")
            let request = try await Poll.value(
                "the webhook to arrive", within: .seconds(60), diagnostics: { server.logTail() }
            ) { try receiver.requests.first }
            #expect(request.verified, "the receiver's own HMAC check failed")
            let event = try #require(try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
            #expect(event["type"] as? String == "job.succeeded")
            let data = try #require(event["data"] as? [String: Any])
            #expect(data["state"] as? String == "succeeded")
            #expect((data["metadata"] as? [String: Any])?["order"] as? Int == 7)
            #expect((data["attachment"] as? [String: Any])?["status"] as? String == "ok")
            let id = try #require(data["id"] as? Int)
            let deliveries = try await Poll.value("the delivery to be recorded", within: .seconds(30)) {
                () -> [[String: Any]]? in
                let list = try await api.get("/v1/jobs/\(id)/deliveries").json()["deliveries"] as? [[String: Any]]
                return list?.first?["state"] as? String == "delivered" ? list : nil
            }
            #expect(deliveries.count == 1)
            #expect(deliveries.first?["attempts"] as? Int == 1)
            #expect(deliveries.first?["webhook_id"] as? String == request.id, "the id the receiver got")
            #expect(request.id.hasPrefix("msg_") && UUID(uuidString: String(request.id.dropFirst(4))) != nil)
            #expect(deliveries.first?["last_status"] as? Int == 200)
            #expect(deliveries.first?["event"] as? String == "job.succeeded")
        }
    }

    /// A receiver that answers 410 Gone ends the delivery for good: it is listed as failed.
    @Test func aGoneReceiverIsListedAsFailed() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret, status: 410)
        defer { receiver.stop() }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(7)]) { files in
            let server = try await InProcessServe.start(
                ["--webhook-secret-file", try Self.secretFile(in: dir)], in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            let created = try await api.post(
                "/v1/jobs",
                json: #"{"sources": ["\#(files.url("/files/a.bmp"))"], "callback_url": "\#(receiver.url())"}"#)
            #expect(created.status == 202)
            let failed = try await Poll.value("the delivery to fail", within: .seconds(60)) { () -> [String: Any]? in
                let list = try await api.get("/v1/deliveries?state=failed").json()["deliveries"] as? [[String: Any]]
                return list?.first
            }
            #expect(failed["last_status"] as? Int == 410)
            #expect(failed["url"] as? String == receiver.url())
            #expect(try await api.get("/v1/deliveries?state=delivered").json()["deliveries"] as? [Any] != nil)
            #expect(try await api.get("/v1/deliveries?state=lost").status == 400)
            #expect(try await api.get("/v1/jobs/999999/deliveries").status == 404)
        }
    }

    /// Without a signing secret, a callback URL is refused: an unsigned webhook could be forged.
    @Test func callbacksNeedASecret() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let answer = try await APITestClient(baseURL: server.baseURL).post(
            "/v1/jobs",
            json: #"{"sources": ["https://a.example/x.jpg"], "callback_url": "https://hooks.example.com/x"}"#)
        #expect(answer.status == 422)
        #expect(try answer.json()["code"] as? String == "invalid_request")
    }

    /// The receiver fails the first attempt; the server is killed (SIGKILL) before the retry;
    /// the next server on the same queue file sends it, with the same webhook id and bytes.
    @Test func aPendingDeliverySurvivesAKilledServer() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret, failFirst: 1)
        defer { receiver.stop() }
        let secret = try Self.secretFile(in: dir)
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(6)]) { files in
            // Processes: the first is killed (SIGKILL) with a delivery pending.
            let first = try await RunningServe.start(["--webhook-secret-file", secret], in: dir)
            let created = try await APITestClient(baseURL: first.baseURL).post(
                "/v1/jobs",
                json: #"{"sources": ["\#(files.url("/files/a.bmp"))"], "callback_url": "\#(receiver.url())"}"#)
            #expect(created.status == 202)
            _ = try await Poll.value("the first attempt", within: .seconds(60)) { try receiver.requests.first }
            try await first.process.kill()

            let second = try await RunningServe.start(["--webhook-secret-file", secret], in: dir)
            // The standard schedule retries 5 s (±10%) after the first failure.
            let requests = try await Poll.value(
                "the retry from the next server", within: .seconds(60), diagnostics: { second.logTail() }
            ) { try receiver.requests.count >= 2 ? receiver.requests : nil }
            #expect(requests[0].status == 500 && requests[1].status == 200)
            #expect(requests[1].verified)
            #expect(requests[0].id == requests[1].id)
            #expect(requests[0].body == requests[1].body)
            _ = second
        }
    }

    /// With `--sign-attachments`, the URL in a webhook and in a payload built from job ids is
    /// signed like the API's, and downloads.
    @Test func signedURLsInWebhooksAndPayloads() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let keyFile = dir.appendingPathComponent("attachment.key")
        try Data((0..<40).map { UInt8($0 * 3 + 1) }).write(to: keyFile)
        let receiver = try await WebhookReceiver.start(secret: WebhookSenderTests.secret)
        defer { receiver.stop() }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(8)]) { files in
            let server = try await InProcessServe.start(
                [
                    "--webhook-secret-file", try Self.secretFile(in: dir), "--sign-attachments",
                    "--attachment-key-file", keyFile.path,
                ], in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            let created = try await api.post(
                "/v1/jobs",
                json: #"{"sources": ["\#(files.url("/files/a.bmp"))"], "callback_url": "\#(receiver.url())"}"#)
            let id = try #require((try created.json()["jobs"] as? [[String: Any]])?.first?["id"] as? Int)
            let request = try await Poll.value("the webhook", within: .seconds(60)) { try receiver.requests.first }
            let event = try #require(try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
            let attachment = try #require((event["data"] as? [String: Any])?["attachment"] as? [String: Any])
            let hooked = try #require(attachment["url"] as? String)
            #expect(hooked.contains("?expires=") && hooked.contains("&signature="), "\(hooked)")
            #expect(try await APITestClient(baseURL: "").get(hooked).status == 200)

            let payload = try await api.post("/v1/payload", json: #"{"job_ids": [\#(id)], "title": "Hi"}"#)
            #expect(payload.status == 200, "\(payload.text)")
            #expect(payload.text.contains("signature="), "\(payload.text)")
            let unsigned = "\(server.baseURL)/v1/attachments/\(try #require(attachment["file"] as? String))"
            #expect(try await APITestClient(baseURL: "").get(unsigned).status == 403)
        }
    }
}
