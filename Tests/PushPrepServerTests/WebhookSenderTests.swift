import Foundation
import Logging
import NIOPosix
import PushPrepCore
import PushPrepQueue
import PushPrepServer
import PushPrepTestSupport
import Synchronization
import Testing

/// Webhooks sent to a real receiver on 127.0.0.1 (``WebhookReceiver``), which checks the
/// signatures on its own, from the spec and not PushPrep's signer: what PushPrep signs is what
/// the spec says.
@Suite
struct WebhookSenderTests {
    /// 32 bytes, as `whsec_` base64.
    static let secret = "whsec_" + Data((0..<32).map { UInt8($0 * 7 % 251) }).base64EncodedString()
    /// Another 32 bytes.
    static let otherSecret = "whsec_" + Data((0..<32).map { UInt8(255 - $0) }).base64EncodedString()

    static func signer(_ secrets: String...) throws -> StandardWebhook {
        try StandardWebhook(secrets: secrets.map { try WebhookSecret($0) })
    }

    /// Settings for a receiver on 127.0.0.1: private networks allowed, short timeouts.
    static func localSettings(timeout: Duration = .seconds(5)) -> WebhookSettings {
        var settings = WebhookSettings()
        settings.allowPrivateNetworks = true
        settings.connectTimeout = .seconds(2)
        settings.timeout = timeout
        return settings
    }

    /// A job as it ended.
    static func finishedJob(id: JobID = 42, state: JobState = .succeeded) -> JobRecord {
        let created = Date(timeIntervalSince1970: 1_780_000_000)
        let finished = created.addingTimeInterval(3.25)
        return JobRecord(
            id: id, state: state, source: "https://media.example/cat.jpg", payload: "{}", dedupKey: nil, priority: 0,
            attempt: 1, maxAttempts: 5, timeoutSeconds: nil, runAt: created, createdAt: created, updatedAt: finished,
            finishedAt: finished, leaseOwner: nil, leaseToken: 1, leaseExpiresAt: nil, cancelRequested: false,
            errorCode: state == .failed ? "corrupt_input" : nil, errorMessage: state == .failed ? "truncated" : nil,
            result: nil)
    }

    static func sender(_ settings: WebhookSettings, signer: StandardWebhook) -> WebhookSender {
        WebhookSender(settings: settings, signer: signer, logger: Logger(label: "test"))
    }

    @Test("a delivered webhook verifies at an independent receiver, with the spec's headers and body")
    func signatureVerifies() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.secret)
        let sender = Self.sender(Self.localSettings(), signer: try Self.signer(Self.secret))
        let event = try WebhookEvent(messageID: "msg_7", type: "job.succeeded", job: Self.finishedJob())
        let sentAt = Date(timeIntervalSince1970: 1_780_000_100.9)
        let result = await sender.send(event, to: receiver.url("/hooks/pushprep?x=1"), at: sentAt)
        await sender.shutdown()

        #expect(result.verdict == .delivered, "\(result)")
        #expect(result.status == 200)
        let requests = try receiver.requests
        try #require(requests.count == 1)
        let request = requests[0]
        #expect(request.verified, "the receiver's own HMAC check failed: \(request)")
        #expect(request.method == "POST")
        #expect(request.path == "/hooks/pushprep?x=1")
        #expect(request.id == "msg_7")
        #expect(request.timestamp == "1780000100")
        #expect(request.signature.hasPrefix("v1,") && !request.signature.contains(" "))
        #expect(request.contentType == "application/json")
        #expect(request.userAgent == "pushprep/\(PushPrepVersion.current)")
        #expect(Array(request.body.utf8) == event.body)

        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
        #expect(body["type"] as? String == "job.succeeded")
        #expect(body["timestamp"] as? String == "2026-05-28T20:26:43.250Z", "the job's finished_at")
        let data = try #require(body["data"] as? [String: Any])
        #expect(data["id"] as? Int == 42)
        #expect(data["state"] as? String == "succeeded")
        #expect(data["finished_at"] as? String == "2026-05-28T20:26:43.250Z")
        let text = String(decoding: event.body, as: UTF8.self)
        #expect(
            text.hasPrefix(#"{"data":{"attachment":null,"attempt":1,"callback_url":null,"cancel_requested":false,"#),
            "keys sorted")
        #expect(text.hasSuffix(#""timestamp":"2026-05-28T20:26:43.250Z","type":"job.succeeded"}"#))
    }

    @Test("a signature made with another secret is refused by the receiver")
    func wrongSecretIsDetected() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.secret)
        let sender = Self.sender(Self.localSettings(), signer: try Self.signer(Self.otherSecret))
        let event = try WebhookEvent(messageID: "msg_8", type: "job.failed", job: Self.finishedJob(state: .failed))
        let result = await sender.send(event, to: receiver.url())
        await sender.shutdown()

        #expect(result.verdict == .delivered, "the receiver still answers 200; only its check tells")
        let requests = try receiver.requests
        try #require(requests.count == 1)
        #expect(!requests[0].verified)
    }

    @Test("while secrets rotate, each is signed with and either one verifies")
    func rotationSignsWithEverySecret() async throws {
        let sender = Self.sender(Self.localSettings(), signer: try Self.signer(Self.otherSecret, Self.secret))
        let event = try WebhookEvent(messageID: "msg_9", type: "job.dead", job: Self.finishedJob(state: .dead))
        for secret in [Self.secret, Self.otherSecret] {
            let receiver = try await WebhookReceiver.start(secret: secret)
            let result = await sender.send(event, to: receiver.url())
            #expect(result.verdict == .delivered, "\(result)")
            let requests = try receiver.requests
            try #require(requests.count == 1)
            #expect(requests[0].verified, "receiver with one of the two secrets")
            #expect(requests[0].signature.split(separator: " ").count == 2)
        }
        await sender.shutdown()
    }

    @Test("500 is an attempt to retry; the retry carries the same webhook-id and the same bytes")
    func retryAfterServerError() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.secret, failFirst: 1)
        let sender = Self.sender(Self.localSettings(), signer: try Self.signer(Self.secret))
        let job = Self.finishedJob()
        let first = await sender.send(
            try WebhookEvent(messageID: "msg_11", type: "job.succeeded", job: job), to: receiver.url(),
            at: Date(timeIntervalSince1970: 1_780_000_200))
        #expect(first.verdict == .retry, "\(first)")
        #expect(first.status == 500)
        #expect(first.error?.message.contains("HTTP 500") == true)

        // The dispatcher renders the event again from the stored job for the next claim.
        let second = await sender.send(
            try WebhookEvent(messageID: "msg_11", type: "job.succeeded", job: job), to: receiver.url(),
            at: Date(timeIntervalSince1970: 1_780_000_205))
        await sender.shutdown()
        #expect(second.verdict == .delivered, "\(second)")

        let requests = try receiver.requests
        try #require(requests.count == 2)
        #expect(requests.map(\.status) == [500, 200])
        #expect(requests.map(\.verified) == [true, true])
        #expect(requests[0].id == "msg_11" && requests[1].id == "msg_11")
        #expect(requests[0].body == requests[1].body)
        #expect(requests.map(\.timestamp) == ["1780000200", "1780000205"], "each attempt's own time")
        #expect(requests[0].signature != requests[1].signature)
    }

    @Test("410 Gone fails the delivery for good")
    func goneFailsForGood() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.secret, status: 410)
        let sender = Self.sender(Self.localSettings(), signer: try Self.signer(Self.secret))
        let result = await sender.send(
            try WebhookEvent(messageID: "msg_12", type: "job.cancelled", job: Self.finishedJob(state: .cancelled)),
            to: receiver.url())
        await sender.shutdown()
        #expect(result.verdict == .failed, "\(result)")
        #expect(result.status == 410)
        #expect(try receiver.requests.count == 1)
    }

    @Test("a redirect is not followed: it is a failed attempt, retried later")
    func redirectIsNotFollowed() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.secret, status: 307)
        let sender = Self.sender(Self.localSettings(), signer: try Self.signer(Self.secret))
        let result = await sender.send(
            try WebhookEvent(messageID: "msg_13", type: "job.succeeded", job: Self.finishedJob()), to: receiver.url())
        await sender.shutdown()
        #expect(result.verdict == .retry, "\(result)")
        #expect(result.status == 307)
        #expect(try receiver.requests.count == 1)
    }

    /// Without `allowPrivateNetworks` a callback on loopback is refused before any connection:
    /// as an IP literal and as a name that resolves there.
    @Test("a callback URL on a blocked address is refused without connecting", arguments: ["127.0.0.1", "localhost"])
    func blockedAddressIsRefused(host: String) async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.secret)
        var settings = Self.localSettings()
        settings.allowPrivateNetworks = false
        let sender = Self.sender(settings, signer: try Self.signer(Self.secret))
        let result = await sender.send(
            try WebhookEvent(messageID: "msg_14", type: "job.succeeded", job: Self.finishedJob()),
            to: "http://\(host):\(receiver.port)/hook")
        await sender.shutdown()
        #expect(result.verdict == .failed, "\(result)")
        #expect(result.error?.code == .blockedAddress)
        #expect(result.error?.message.contains("loopback") == true)
        #expect(receiver.connections == 0)
        #expect(try receiver.requests.isEmpty)
    }

    @Test("a receiver slower than the timeout is an attempt to retry, and the send ends at the timeout")
    func timeoutIsRetried() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.secret, delay: 5)
        let sender = Self.sender(Self.localSettings(timeout: .milliseconds(500)), signer: try Self.signer(Self.secret))
        let start = ContinuousClock.now
        let result = await sender.send(
            try WebhookEvent(messageID: "msg_15", type: "job.succeeded", job: Self.finishedJob()), to: receiver.url())
        let elapsed = ContinuousClock.now - start
        await sender.shutdown()
        #expect(result.verdict == .retry, "\(result)")
        #expect(result.status == nil)
        #expect(result.error?.code == .timeout, "\(result)")
        #expect(elapsed < .seconds(3), "took \(elapsed)")
        #expect(try receiver.requests.count == 1)
    }

    /// The issue's receiver: `200` at once, then its body one byte at a time, each byte within
    /// the idle read timeout. The status decides the delivery, so the send ends at the status
    /// line and closes the connection instead of reading the body to its end.
    @Test("a receiver that answers 200 and then trickles its body is delivered at its status line")
    func tricklingBodyIsNotWaitedFor() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.secret, trickle: 20, trickleInterval: 0.5)
        let sender = Self.sender(Self.localSettings(timeout: .seconds(2)), signer: try Self.signer(Self.secret))
        let result = await sender.send(
            try WebhookEvent(messageID: "msg_18", type: "job.succeeded", job: Self.finishedJob()), to: receiver.url())
        #expect(result.verdict == .delivered, "\(result)")
        #expect(result.status == 200)
        // The receiver notes how far its body got once it is written or the client has gone.
        let responses = try await Poll.value("the receiver to see its answer end", within: .seconds(30)) {
            try receiver.responses.first
        }
        await sender.shutdown()
        #expect(!responses.complete, "the sender read the trickled body to its end: \(responses)")
        #expect(try receiver.requests.count == 1)
    }

    /// The send's deadline holds even for work that cancellation cannot stop (a `getaddrinfo`
    /// on the thread pool is one): here a thread-pool job that sleeps past the deadline.
    @Test("the send deadline returns on time even when the work ignores cancellation")
    func deadlineDoesNotWaitForStuckWork() async throws {
        let finished = Mutex(false)
        let value = await WebhookSender.value(before: .now + .milliseconds(200)) { () async -> Int in
            _ = try? await NIOThreadPool.singleton.runIfActive {
                usleep(3_000_000)
                finished.withLock { $0 = true }
            }
            return 1
        }
        #expect(value == nil)
        #expect(!finished.withLock { $0 }, "returned only once the stuck work had finished")
        // Work that ends in time gives its value.
        #expect(await WebhookSender.value(before: .now + .seconds(30)) { 7 } == 7)
    }

    @Test("a refused connection is an attempt to retry")
    func connectionRefusedIsRetried() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.secret)
        let url = receiver.url()
        receiver.stop()
        let sender = Self.sender(Self.localSettings(), signer: try Self.signer(Self.secret))
        let result = await sender.send(
            try WebhookEvent(messageID: "msg_16", type: "job.succeeded", job: Self.finishedJob()), to: url)
        await sender.shutdown()
        #expect(result.verdict == .retry, "\(result)")
        #expect(result.status == nil)
    }

    @Test("an unusable callback URL fails for good", arguments: ["ftp://example.com/x", "http://user:pw@example.com/"])
    func unusableURLFails(url: String) async throws {
        let sender = Self.sender(Self.localSettings(), signer: try Self.signer(Self.secret))
        let result = await sender.send(
            try WebhookEvent(messageID: "msg_17", type: "job.succeeded", job: Self.finishedJob()), to: url)
        await sender.shutdown()
        #expect(result.verdict == .failed, "\(result)")
        #expect(result.error?.code == .invalidSettings)
    }

    @Test("the same job renders the same bytes every time")
    func eventRenderingIsStable() throws {
        let job = Self.finishedJob()
        let first = try WebhookEvent(messageID: "msg_3", type: "job.succeeded", job: job)
        // Foundation on Linux orders an object's keys by hash, differently from one encoding to
        // the next: many renderings must all be the same bytes.
        for _ in 0..<50 {
            #expect(try WebhookEvent(messageID: "msg_3", type: "job.succeeded", job: job) == first)
        }
        #expect(first.messageID == "msg_3")
        var later = job
        later.finishedAt = job.finishedAt?.addingTimeInterval(1)
        #expect(try WebhookEvent(messageID: "msg_3", type: "job.succeeded", job: later).body != first.body)
    }
}
