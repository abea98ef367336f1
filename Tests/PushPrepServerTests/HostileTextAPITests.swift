import Foundation
import NIOHTTP1
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// Client text with control characters, over HTTP, against a real `pushprep serve` on SQLite
/// and on PostgreSQL: sources, metadata keys and upload file names are refused with
/// `400 invalid_request` and nothing is queued; a URL source is stored normalised; a file name
/// that spells log fields stays one field of the log line.
@Suite(.serialized)
struct HostileTextAPITests {
    /// JSON string escapes of the characters the issue reproduced: ESC ] 0;PWN BEL ESC [31m, a
    /// newline, a NUL, a C1 CSI, a Unicode line separator.
    static let escapes = [
        #"\u001b]0;PWN\u0007\u001b[31m"#, #"\n2026-01-01T00:00:00+0000 error pushprep: [PushPrepQueue] FORGED"#,
        #"\u0000"#, #"\u009b31m"#, #"\u2028"#,
    ]

    @Test(arguments: QueueBackend.testedBackends)
    func apiRefusesControlsAndLogsFileNamesAsOneField(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await QueueFixture.withQueue(backend) { queue, url in
            let server = try await InProcessServe.start(
                ["--queue", url.commandLineArgument, "--workers", "0"], in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            var bodies = Self.escapes.map { #"{"sources": ["https://media.example.com/a\#($0).jpg"]}"# }
            bodies += Self.escapes.map {
                #"{"sources": ["https://media.example.com/a.jpg"], "metadata": {"k\#($0)": 1}}"#
            }
            bodies.append(#"{"sources": ["https://media.example.com/a.jpg"], "metadata": {"x": {"\u0085": 1}}}"#)
            for body in bodies {
                let answer = try await api.post("/v1/jobs", json: body)
                #expect(answer.status == 400, "\(body): \(answer.status) \(answer.text)")
                #expect(try answer.json()["code"] as? String == "invalid_request", "\(body): \(answer.text)")
            }
            let image = TinyBMP.bytes(21)
            for filename in ["a%1B%5B2Jb.png", "a%0Ab.png", "a%C2%85b.png", "a%E2%80%A8b.png"] {
                let answer = try await api.send(
                    .POST, "/v1/uploads?filename=\(filename)", body: image, contentType: "application/octet-stream")
                #expect(answer.status == 400, "\(filename): \(answer.status) \(answer.text)")
                #expect(try answer.json()["code"] as? String == "invalid_request", "\(filename): \(answer.text)")
            }
            #expect(try await queue.list(state: nil, limit: 10).isEmpty, "nothing was queued")

            // A URL is stored (and answered) in its normalised form, not as typed.
            let typed = try await api.post("/v1/jobs", json: #"{"sources": ["HTTP://Media.EXAMPLE.com/a.jpg"]}"#)
            #expect(typed.status == 202, "\(typed.text)")
            let created = try #require((try typed.json()["jobs"] as? [[String: Any]])?.first)
            #expect(created["source"] as? String == "http://media.example.com/a.jpg")
            let id = try #require(created["id"] as? Int)
            #expect(try await queue.job(JobID(id))?.source == "http://media.example.com/a.jpg")

            // A row that holds a hostile source anyway (written before the check, or by hand) is
            // shown escaped by the console's pages, as `jobs` prints it.
            let character = backend == .sqlite ? "char" : "chr"
            let update =
                "UPDATE pushprep_jobs SET source = 'http://media.example.com/a' || \(character)(27) || ']0;PWN' || "
                + "\(character)(7) || \(character)(155) || '31m' || \(character)(10) || 'b.jpg' WHERE id = \(id)"
            switch url {
            case .postgres(let location):
                _ = try await PostgresTestServer.shared.execute(update, database: location.database)
            case .sqlite(let path):
                _ = try await TestTools.runAsync("sqlite3", [path, update])
            }
            #expect(try await queue.job(JobID(id))?.source.contains("\u{1B}]0;PWN") == true)
            let browser = ConsoleBrowser(baseURL: server.baseURL)
            defer { Task { try? await browser.shutdown() } }
            _ = try await browser.get("/")
            for path in ["/jobs", "/jobs/\(id)"] {
                let page = try await browser.get(path)
                #expect(page.status == 200, "\(path): \(page.text)")
                let controls = page.text.unicodeScalars.filter {
                    UntrustedText.isControl($0) && $0 != "\n" && $0 != "\t" && $0 != "\r"
                }
                #expect(controls.isEmpty, "\(path) shows raw controls \(controls.map(\.value))")
                #expect(page.text.contains(#"a\u001b]0;PWN\u0007\u009b31m\nb.jpg"#), "\(path): \(page.text)")
            }

            // Spaces and = in a file name are the client's own; in the log they stay one value.
            let forged = "a.png key=admin request_id=forged"
            let upload = try await api.send(
                .POST, "/v1/uploads?filename=a.png%20key%3Dadmin%20request_id%3Dforged", body: image,
                contentType: "application/octet-stream", headers: [("X-Request-Id", "real-request-1")])
            #expect(upload.status == 202, "\(upload.text)")
            let line = try await Poll.value(
                "the upload's log line", within: .seconds(30), diagnostics: { server.logTail() }
            ) { server.stderrText.split(separator: "\n").first { $0.hasSuffix("] upload stored") } }
            let parsed = try LogfmtLine(String(line))
            #expect(parsed.value("filename") == forged, "\(line)")
            #expect(parsed.value("request_id") == "real-request-1", "\(line)")
            #expect(!parsed.fields.contains { $0.key == "key" }, "\(line)")
            _ = await server.stop()
        }
    }
}
