import Foundation
import PushPrepCore
import PushPrepQueue
import PushPrepServer
import PushPrepTestSupport
import Testing

/// Secrets, the secret file and the retry schedule.
@Suite
struct StandardWebhookTests {
    static let key = Data((0..<32).map { UInt8($0) })

    @Test("a secret is whsec_ and base64, or bare base64, of at least 24 bytes")
    func secretParsing() throws {
        #expect(try WebhookSecret("whsec_" + Self.key.base64EncodedString()).description == "WebhookSecret(32 bytes)")
        #expect(try WebhookSecret(Self.key.base64EncodedString()).description == "WebhookSecret(32 bytes)")
        #expect(try WebhookSecret(Data(count: 24).base64EncodedString()).description == "WebhookSecret(24 bytes)")
        for text in ["whsec_" + Data(count: 23).base64EncodedString(), "whsec_not base64!", "", "whsec_"] {
            #expect {
                _ = try WebhookSecret(text)
            } throws: { error in
                (error as? PushPrepError)?.code == .invalidSettings
            }
        }
        #expect(throws: PushPrepError.self) { try StandardWebhook(secrets: []) }
    }

    /// The spec's example: `whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`, id `msg_p5jXN8AQM9LWM0D4loKWxJek`,
    /// timestamp 1614265330 and body `{"test": 2432232314}` sign to
    /// `v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=`.
    @Test("the signature of the spec's example")
    func specExample() throws {
        let signer = try StandardWebhook(secrets: [WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")])
        let signature = signer.signature(
            messageID: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330,
            body: Array(#"{"test": 2432232314}"#.utf8))
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test("the secret file: one secret a line, blank lines and a trailing newline ignored")
    func secretFile() throws {
        try TestTools.withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("secrets").path
            let a = "whsec_" + Self.key.base64EncodedString()
            let b = Data(repeating: 9, count: 40).base64EncodedString()
            try "\(a)\r\n\n  \(b)  \n".write(toFile: path, atomically: true, encoding: .utf8)
            let signer = try StandardWebhook(secretFile: path)
            #expect(signer.secrets.map(\.description) == ["WebhookSecret(32 bytes)", "WebhookSecret(40 bytes)"])
            #expect(signer.signature(messageID: "m", timestamp: 1, body: []).split(separator: " ").count == 2)

            // A short secret on line 2: the error names the line, never the secret.
            let short = Data(count: 10).base64EncodedString()
            try "\(a)\n\(short)\n".write(toFile: path, atomically: true, encoding: .utf8)
            let error = try #require(throws: PushPrepError.self) { try StandardWebhook(secretFile: path) }
            #expect(error.code == .invalidSettings)
            #expect(error.message.contains("line 2"))
            #expect(!error.message.contains(short) && !error.message.contains(a))
        }
    }

    @Test(
        "a secret file that is missing, empty, blank or endless is refused",
        arguments: ["missing", "empty", "blank", "/dev/zero"])
    func badSecretFiles(kind: String) throws {
        try TestTools.withTemporaryDirectory { directory in
            var path = directory.appendingPathComponent("secrets").path
            switch kind {
            case "empty": try "".write(toFile: path, atomically: true, encoding: .utf8)
            case "blank": try "\n \n".write(toFile: path, atomically: true, encoding: .utf8)
            case "/dev/zero": path = kind
            default: break
            }
            let error = try #require(throws: PushPrepError.self) { try StandardWebhook(secretFile: path) }
            #expect(error.code == .invalidSettings, "\(error)")
        }
    }

    @Test("a secret file over the cap is refused before it is read")
    func largeSecretFile() throws {
        try TestTools.withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("secrets").path
            let line = "whsec_" + Self.key.base64EncodedString() + "\n"
            try String(repeating: line, count: StandardWebhook.maxSecretFileBytes / line.utf8.count + 1)
                .write(toFile: path, atomically: true, encoding: .utf8)
            let error = try #require(throws: PushPrepError.self) { try StandardWebhook(secretFile: path) }
            #expect(error.code == .invalidSettings)
            #expect(error.message.contains("limit"), "\(error)")
        }
    }

    // MARK: - Schedule

    @Test("the standard schedule: 8 attempts over about a day, each wait within its jitter")
    func standardSchedule() {
        let schedule = WebhookRetrySchedule.standard
        #expect(schedule.maxAttempts == 8)
        let bases: [Duration] = [
            .seconds(5), .seconds(300), .seconds(1800), .seconds(7200), .seconds(18000), .seconds(36000),
            .seconds(36000),
        ]
        #expect(schedule.delays == bases)
        let total = bases.reduce(Duration.zero, +)
        #expect(total > .seconds(24 * 3600) && total < .seconds(30 * 3600))
        var generator = SplitMix64(seed: 7)
        for (index, base) in bases.enumerated() {
            let attempt = index + 1
            #expect(schedule.bounds(afterAttempt: attempt) == (base * 0.9)...(base * 1.1))
            var seen: Set<Duration> = []
            for _ in 0..<200 {
                let delay = try! #require(schedule.delay(afterAttempt: attempt, using: &generator))
                #expect(delay >= base * 0.9 && delay <= base * 1.1, "attempt \(attempt): \(delay)")
                seen.insert(delay)
            }
            #expect(seen.count > 100, "jittered, not constant")
        }
        #expect(schedule.delay(afterAttempt: 8) == nil, "the last attempt is final")
        #expect(schedule.delay(afterAttempt: 0) == nil)
        #expect(schedule.bounds(afterAttempt: 8) == nil)
    }

    @Test("a shortened schedule for tests, and one without jitter")
    func customSchedule() {
        let schedule = WebhookRetrySchedule(delays: [.milliseconds(10), .milliseconds(20)], jitter: 0)
        #expect(schedule.maxAttempts == 3)
        #expect(schedule.delay(afterAttempt: 1) == .milliseconds(10))
        #expect(schedule.delay(afterAttempt: 2) == .milliseconds(20))
        #expect(schedule.delay(afterAttempt: 3) == nil)
        #expect(WebhookRetrySchedule(delays: [], jitter: 3).jitter == 1)
        #expect(WebhookRetrySchedule(delays: []).maxAttempts == 1)
    }

    @Test("webhook settings are validated")
    func settingsValidation() {
        #expect(throws: Never.self) { try WebhookSettings().validate() }
        var settings = WebhookSettings()
        settings.timeout = .zero
        #expect(throws: PushPrepError.self) { try settings.validate() }
        settings = WebhookSettings()
        settings.schedule = WebhookRetrySchedule(delays: [.seconds(-1)])
        #expect(throws: PushPrepError.self) { try settings.validate() }
        settings = WebhookSettings()
        settings.concurrency = 0
        #expect(throws: PushPrepError.self) { try settings.validate() }
        settings = WebhookSettings()
        settings.concurrencyPerHost = 0
        #expect(throws: PushPrepError.self) { try settings.validate() }
    }

    /// The claim covers the longest wait before a send starts (the start allowance), the send
    /// itself (its one deadline) and the recording of its outcome, whatever the timeout.
    @Test("a claim's lease outlives the longest send", arguments: [Duration.seconds(10), .seconds(1), .seconds(120)])
    func leaseCoversTheSend(timeout: Duration) {
        var settings = WebhookSettings()
        settings.timeout = timeout
        #expect(settings.startAllowance == timeout)
        #expect(settings.lease == settings.startAllowance + timeout + WebhookSettings.recordingAllowance)
        #expect(WebhookSettings().lease == .seconds(50))
    }
}
