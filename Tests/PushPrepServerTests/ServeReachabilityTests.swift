import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// `serve` warns once it is listening when the attachment URLs it will hand out name a host a
/// phone cannot reach (issue 28: without `--public-url` they are `http://127.0.0.1:PORT/…`), and
/// `POST /v1/preflight` reports such a URL as `unreachable_url`, as `pushprep preflight` does.
/// The API runs in this process.
@Suite(.timeLimit(.minutes(2)))
struct ServeReachabilityTests {
    /// The warning lines the server logged on start-up with `configure`'s settings, publishing
    /// into an out directory.
    private func startupWarnings(_ configure: (inout ServerConfiguration) -> Void) async throws -> [String] {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        var configuration = ServerConfiguration(port: 0, attachmentsDirectory: out.path)
        configure(&configuration)
        let settings = configuration
        let log = CapturedLog()
        try await JobQueues.withBackend(.sqlite(path: dir.appendingPathComponent("q.db").path), logger: .quiet) {
            queue in
            let application = APIServer.application(
                configuration: settings, queue: queue, publicURL: PublicURL(configured: settings.publicURL),
                registry: nil, readiness: {}, logger: log.logger(level: .info), onListening: nil)
            try await application.test(.ahc(.http)) { client in
                let health = try await client.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok)
            }
        }
        return log.lines.filter { $0.level == .warning }.map(\.message)
    }

    @Test("the default (the bound 127.0.0.1 address) warns once, naming --public-url")
    func defaultWarns() async throws {
        let warnings = try await startupWarnings { _ in }
        #expect(warnings.count == 1, "\(warnings)")
        let warning = try #require(warnings.first)
        #expect(warning.contains("attachment URLs will be http://127.0.0.1:"), "\(warning)")
        #expect(warning.contains("/v1/attachments/…"), "\(warning)")
        #expect(warning.contains("a loopback address") && warning.contains("set --public-url"), "\(warning)")
    }

    @Test(
        "a public URL or base URL on a host a phone cannot reach warns, naming the option to set",
        arguments: [
            (nil, "http://192.168.1.5/push", "--base-url"), ("http://localhost:8080", nil, "--public-url"),
            ("https://mac-mini.local", nil, "--public-url"), ("https://203.0.113.10", nil, "--public-url"),
        ] as [(String?, String?, String)])
    func unreachableConfiguredWarns(_ publicURL: String?, _ baseURL: String?, _ option: String) async throws {
        let warnings = try await startupWarnings {
            $0.publicURL = publicURL
            $0.baseURL = baseURL
        }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.contains("set \(option)") == true, "\(warnings)")
    }

    @Test(
        "a public host name is quiet",
        arguments: [
            ("https://push.example.com", nil), (nil, "https://cdn.example.com/push"),
            ("http://127.0.0.1:8080", "https://cdn.example.com/push"),
        ] as [(String?, String?)])
    func reachableIsQuiet(_ publicURL: String?, _ baseURL: String?) async throws {
        let warnings = try await startupWarnings {
            $0.publicURL = publicURL
            $0.baseURL = baseURL
        }
        #expect(warnings.isEmpty, "\(warnings)")
    }

    @Test("POST /v1/preflight reports an attachment on 127.0.0.1 as unreachable_url, beside insecure_url")
    func preflightRoute() async throws {
        let payload =
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"http://127.0.0.1:8080/v1/attachments/a.jpg"},{"id":"b","url":"https://cdn.example.com/b.jpg"}]}"#
        try await HostileRequestTests.withServer { client, _, _ in
            let answer = try await client.execute(
                uri: "/v1/preflight", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"payload": \#(payload)}"#))
            #expect(answer.status == .ok)
            let report = try #require((try HostileRequestTests.json(answer)["reports"] as? [[String: Any]])?.first)
            let findings = (report["findings"] as? [[String: Any]] ?? []).map {
                "\($0["severity"] as? String ?? "") \($0["code"] as? String ?? "") \($0["pointer"] as? String ?? "")"
            }
            #expect(
                findings.sorted() == [
                    "error insecure_url /attachments/0/url", "error unreachable_url /attachments/0/url",
                    // Two attachments in one push: the second shows only in a content extension.
                    "warning attachments_beyond_first /attachments/1",
                ], "\(findings)")
        }
    }
}
