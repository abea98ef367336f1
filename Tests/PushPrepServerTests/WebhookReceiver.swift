import Foundation
import PushPrepTestSupport

/// `scripts/webhook_receiver.py` on 127.0.0.1: it verifies every request's Standard Webhooks
/// signature with Python's own `hmac`, independently of PushPrep's signing, and records what it
/// got. Killed by ``stop()`` or when it goes away.
final class WebhookReceiver: @unchecked Sendable {
    /// One request as the receiver saw it.
    struct Request: Decodable, Equatable {
        var method: String
        var path: String
        var id: String
        var timestamp: String
        var signature: String
        var contentType: String
        var userAgent: String
        var body: String
        var verified: Bool
        var status: Int

        enum CodingKeys: String, CodingKey {
            case method, path, id, timestamp, signature, body, verified, status
            case contentType = "content_type"
            case userAgent = "user_agent"
        }
    }

    private let process = Process()
    private let directory: URL
    private let record: URL
    private let log: URL
    /// Where the receiver listens, once it does.
    private(set) var port = 0

    /// Starts a receiver checking signatures with `secret`, answering 500 to the first
    /// `failFirst` requests and `status` after, each after `delay` seconds.
    init(secret: String, failFirst: Int = 0, status: Int = 200, delay: Double = 0) async throws {
        directory = try TestTools.temporaryDirectory()
        record = directory.appendingPathComponent("record.jsonl")
        log = directory.appendingPathComponent("receiver.log")
        _ = FileManager.default.createFile(atPath: record.path, contents: nil)
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: TestTools.python)
        process.arguments = [
            TestTools.packageRoot.appendingPathComponent("scripts/webhook_receiver.py").path, record.path,
            "--secret", secret, "--fail-first", "\(failFirst)", "--status", "\(status)", "--delay", "\(delay)",
        ]
        let output = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        port = try await Poll.value("the webhook receiver listens", within: .seconds(30), diagnostics: { self.output })
        {
            self.output.split(separator: "\n").first { $0.hasPrefix("listening ") }.flatMap { Int($0.dropFirst(10)) }
        }
    }

    deinit {
        stop()
        TestTools.removeDirectory(directory)
    }

    /// A URL on this receiver.
    func url(_ path: String = "/hook") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// What the receiver printed.
    var output: String { String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self) }

    private var lines: [Substring] {
        String(decoding: (try? Data(contentsOf: record)) ?? Data(), as: UTF8.self).split(separator: "\n")
    }

    /// The requests received so far, in order.
    var requests: [Request] {
        get throws {
            try lines.filter { $0.contains(#""kind": "request""#) }.map {
                try JSONDecoder().decode(Request.self, from: Data($0.utf8))
            }
        }
    }

    /// Connections accepted so far (with or without a request).
    var connections: Int { lines.filter { $0.contains(#""kind": "connection""#) }.count }

    /// SIGKILL: the test runner starts children with SIGTERM blocked.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
