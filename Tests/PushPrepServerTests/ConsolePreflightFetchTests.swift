import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushPrepCore
import PushPrepPayload
import PushPrepQueue
import PushPrepRemote
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// The console's pre-flight page downloads the attachments when a `write`-scoped session ticks
/// `fetch`, within the server's `--max-preflight-urls` and `--max-preflight-bytes` (the check
/// `POST /v1/preflight` makes), and finds what the API finds; a read-only session is not offered
/// it and is refused it. Against the server running in this process and a real file server on
/// 127.0.0.1.
@Suite(
    .serialized, .enabled(if: TestTools.programAvailable("vips"), "needs the vips program"),
    .timeLimit(.minutes(2)))
struct ConsolePreflightFetchTests {
    static let writer = "console-fetch-writer-0123456789"
    static let reader = "console-fetch-reader-0123456789"

    /// An APNs payload whose one attachment is `url`.
    static func payload(_ url: String) -> String {
        #"{"aps":{"alert":{"title":"Spring sale","body":"Half off"},"mutable-content":1},"attachments":[{"id":"hero","url":"\#(url)"}]}"#
    }

    /// A console session of `key`: the cookie the login set, and the page's CSRF token.
    struct Session {
        var cookie: String
        var csrf: String
        var page: String
    }

    static func login(_ client: any TestClientProtocol, key: String) async throws -> Session {
        let login = try await client.execute(
            uri: "/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: "key=\(key)&next=/preflight"))
        #expect(login.status == .seeOther)
        let cookie = String(try #require(login.headers[.setCookie]).split(separator: ";")[0])
        let page = try await client.execute(uri: "/preflight", method: .get, headers: [.cookie: cookie])
        #expect(page.status == .ok)
        let text = String(buffer: page.body)
        return Session(cookie: cookie, csrf: try ConsoleBrowser.csrf(in: text), page: text)
    }

    static func check(
        _ client: any TestClientProtocol, _ session: Session, payload: String, fields: [(String, String)]
    ) async throws -> (status: HTTPResponse.Status, text: String) {
        let form = ConsoleBrowser.encode([("csrf", session.csrf), ("payload", payload), ("dialect", "auto")] + fields)
        let answer = try await client.execute(
            uri: "/preflight", method: .post,
            headers: [.contentType: "application/x-www-form-urlencoded", .cookie: session.cookie],
            body: ByteBuffer(string: form))
        return (answer.status, String(buffer: answer.body))
    }

    /// The finding codes a page lists, sorted.
    static func codes(_ page: String) -> [String] {
        page.components(separatedBy: #"<li class="finding" data-code=""#).dropFirst().map {
            String($0.prefix { $0 != "\"" })
        }.sorted()
    }

    @Test func fetchIsForWriteSessionsWithinTheServersCaps() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let path = dir.appendingPathComponent("hero.jpg").path
        try TestTools.vips("gaussnoise", path, "300", "200")
        let jpeg = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        try await TestServer.with(files: ["hero.jpg": jpeg]) { host in
            let payload = Self.payload(host.url("/files/hero.jpg"))
            var configuration = ServerConfiguration(
                port: 0, apiKeys: try APIKeyStore(parsing: "\(Self.writer) read,write\n\(Self.reader) read\n"))
            configuration.remote.allowedHosts = ["127.0.0.1"]
            // The test client names the server `localhost`.
            configuration.allowedHosts = ["localhost"]
            configuration.preflightFetchCeiling = PreflightSession.FetchBudget(maxURLs: 2, maxBytes: 2_000_000)
            let settings = configuration
            try await JobQueues.withBackend(.sqlite(path: dir.appendingPathComponent("q.db").path), logger: .quiet) {
                queue in
                let application = APIServer.application(
                    configuration: settings, queue: queue, publicURL: PublicURL(configured: nil), registry: nil,
                    readiness: {}, logger: .quiet, onListening: nil)
                // `.live`: a real connection whose client follows no redirect (the login's 303
                // carries the cookie).
                try await application.test(.live) { client in
                    let writer = try await Self.login(client, key: Self.writer)
                    #expect(writer.page.contains(#"<input type="checkbox" name="fetch""#), "offered to a writer")
                    #expect(writer.page.contains(#"name="fetch_max_urls" min="1" max="2""#), "the server's cap")
                    #expect(writer.page.contains(#"max="2000000""#), "the server's byte cap")

                    // Past the server's caps, or not a number: refused as the API refuses it,
                    // before anything is downloaded.
                    let refusals: [([(String, String)], String)] = [
                        ([("fetch_max_urls", "3")], "fetch_max_urls must be in 1...2 on this server, got 3"),
                        ([("fetch_max_urls", "0")], "fetch_max_urls must be in 1...2 on this server, got 0"),
                        (
                            [("fetch_max_bytes", "2000001")],
                            "fetch_max_bytes must be in 1000000...2000000 on this server"
                        ),
                        ([("fetch_max_bytes", "999")], "fetch_max_bytes must be in 1000000...2000000 on this server"),
                        ([("fetch_max_urls", "two")], "fetch_max_urls must be a whole number"),
                    ]
                    for (fields, message) in refusals {
                        let refused = try await Self.check(
                            client, writer, payload: payload, fields: [("fetch", "1")] + fields)
                        #expect(refused.status == .unprocessableContent, "\(fields)")
                        #expect(refused.text.contains(message), "\(fields): \(refused.text)")
                        #expect(refused.text.contains("invalid_settings"), "\(fields)")
                    }
                    #expect(host.hits("/files/hero.jpg") == 0, "nothing downloaded for a refused form")

                    // Unticked: the static check, and the preview's words are the form's, not the CLI's.
                    let unticked = try await Self.check(client, writer, payload: payload, fields: [])
                    #expect(unticked.status == .ok)
                    #expect(host.hits("/files/hero.jpg") == 0)
                    #expect(!unticked.text.contains("--fetch"), "a console user is told of no CLI flag")
                    #expect(unticked.text.contains("Download the attachments"))

                    // Ticked, within the caps: downloaded, and the findings are the API's with fetch.
                    let fetched = try await Self.check(
                        client, writer, payload: payload, fields: [("fetch", "1"), ("fetch_max_urls", "2")])
                    #expect(fetched.status == .ok, "\(fetched.text)")
                    #expect(host.hits("/files/hero.jpg") == 1, "the attachment was downloaded")
                    #expect(fetched.text.contains("the attachments were downloaded"))
                    #expect(fetched.text.contains(#"<input type="checkbox" name="fetch" value="1" checked>"#))
                    let api = try await client.execute(
                        uri: "/v1/preflight", method: .post,
                        headers: [.contentType: "application/json", .authorization: "Bearer \(Self.writer)"],
                        body: ByteBuffer(string: #"{"payload": \#(payload), "fetch": true}"#))
                    #expect(api.status == .ok)
                    let report = try #require((try HostileRequestTests.json(api)["reports"] as? [[String: Any]])?.first)
                    let expected = (report["findings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
                    #expect(!expected.isEmpty)
                    #expect(Self.codes(fetched.text) == expected.sorted())
                    #expect(fetched.text.contains("src=\"data:image/jpeg;base64,"), "the preview pictures the download")

                    // A read-only session: not offered, and refused when it asks anyway.
                    let hitsBefore = host.hits("/files/hero.jpg")
                    let reader = try await Self.login(client, key: Self.reader)
                    #expect(!reader.page.contains(#"name="fetch""#), "not offered to a reader")
                    #expect(reader.page.contains("needs a key with the write scope"))
                    let forged = try await Self.check(client, reader, payload: payload, fields: [("fetch", "1")])
                    #expect(forged.status == .forbidden)
                    #expect(forged.text.contains("write scope"))
                    let plain = try await Self.check(client, reader, payload: payload, fields: [])
                    #expect(plain.status == .ok)
                    #expect(!plain.text.contains("--fetch"))
                    #expect(host.hits("/files/hero.jpg") == hitsBefore, "a reader downloaded nothing")
                }
            }
        }
    }
}
