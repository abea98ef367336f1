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

    /// How far one trickled answer got (`--trickle`): written once the body is sent or the
    /// client has gone.
    struct Response: Decodable, Equatable {
        var id: String
        /// Body bytes written (the last one or two may have gone to a connection already closed).
        var sent: Int
        /// Whether the whole announced body was written.
        var complete: Bool
    }

    private let process = Process()
    /// The address listened on.
    let host: String
    private let directory: URL
    private let record: URL
    private let log: URL
    /// Where the receiver listens, once it does.
    private(set) var port = 0

    /// Starts a receiver on `host` checking signatures with `secret`, answering 500 to the first
    /// `failFirst` requests and `status` after, each after `delay` seconds. With `trickle`, the
    /// answer's head comes at once and its body of `trickle` bytes follows one byte every
    /// `trickleInterval` seconds.
    init(
        secret: String, failFirst: Int = 0, status: Int = 200, delay: Double = 0, host: String = "127.0.0.1",
        trickle: Int = 0, trickleInterval: Double = 1
    ) async throws {
        self.host = host
        directory = try TestTools.temporaryDirectory()
        record = directory.appendingPathComponent("record.jsonl")
        log = directory.appendingPathComponent("receiver.log")
        _ = FileManager.default.createFile(atPath: record.path, contents: nil)
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: TestTools.python)
        process.arguments = [
            TestTools.packageRoot.appendingPathComponent("scripts/webhook_receiver.py").path, record.path,
            "--secret", secret, "--fail-first", "\(failFirst)", "--status", "\(status)", "--delay", "\(delay)",
            "--host", host, "--trickle", "\(trickle)", "--trickle-interval", "\(trickleInterval)",
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
    func url(_ path: String = "/hook") -> String {
        "http://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)"
    }

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

    /// The trickled answers that ended so far, in order.
    var responses: [Response] {
        get throws {
            try lines.filter { $0.contains(#""kind": "response""#) }.map {
                try JSONDecoder().decode(Response.self, from: Data($0.utf8))
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
