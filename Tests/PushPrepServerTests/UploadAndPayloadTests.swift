import Crypto
import Foundation
import NIOHTTP1
import PushPrepTestSupport
import Testing

/// `POST /v1/uploads`, `POST /v1/payload` and `POST /v1/preflight` against a real
/// `pushprep serve` process, with AsyncHTTPClient and curl as clients; payloads and pre-flight
/// findings compared with what the CLI prints for the same input.
@Suite(.serialized)
struct UploadAndPayloadTests {
    /// The files in the uploads directory, hidden temporaries included.
    static func uploads(_ dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("uploads").path)) ?? [])
            .sorted()
    }

    static func sha256(_ bytes: some DataProtocol) -> String {
        SHA256.hash(data: Data(bytes)).map { String(format: "%02x", $0) }.joined()
    }

    static func firstJob(_ answer: APITestClient.Answer) throws -> [String: Any] {
        try #require((try answer.json()["jobs"] as? [[String: Any]])?.first, "\(answer.text)")
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: text, options: .fragmentsAllowed), as: UTF8.self)
    }

    /// Waits for job `id` and returns it once finished.
    static func finished(_ api: APITestClient, _ id: Int) async throws -> [String: Any] {
        try await api.get("/v1/jobs/\(id)?wait=30s").json()
    }

    /// A raw upload is stored under its hash with the detected type's extension and becomes a
    /// job the worker processes; the same bytes again leave one file.
    @Test func rawUploadBecomesASucceededJob() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let image = TinyBMP.bytes(11)
        let created = try await api.send(
            .POST, "/v1/uploads?filename=holiday.png", body: image, contentType: "application/octet-stream")
        #expect(created.status == 202, "\(created.text)")
        let job = try Self.firstJob(created)
        let stored = dir.appendingPathComponent("uploads/\(Self.sha256(image)).bmp").path
        #expect(job["source"] as? String == stored)
        #expect(job["created"] as? Bool == true)
        #expect(FileManager.default.contents(atPath: stored) == Data(image))
        let id = try #require(job["id"] as? Int)

        let done = try await Self.finished(api, id)
        #expect(done["state"] as? String == "succeeded", "\(done)\n\(server.logTail())")
        let attachment = try #require(done["attachment"] as? [String: Any])
        #expect(attachment["status"] as? String == "ok")
        #expect(attachment["width"] as? Int == 8)

        // The same bytes again (a new job: the first has finished) meet the same file.
        let again = try await api.send(.POST, "/v1/uploads", body: image, contentType: "image/bmp")
        #expect(again.status == 202)
        #expect(try Self.firstJob(again)["source"] as? String == stored)
        #expect(Self.uploads(dir) == ["\(Self.sha256(image)).bmp"])
        #expect(server.stderrText.contains("filename=holiday.png"))
    }

    /// A form with the file and settings, from curl (an independent client) and from
    /// AsyncHTTPClient with the fields after the file: the settings reach the job.
    @Test func multipartUploadWithSettings() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let jpeg = dir.appendingPathComponent("photo.jpg").path
        try TestTools.vips("gaussnoise", jpeg, "640", "480")
        let server = try await InProcessServe.start(in: dir)
        let api = APITestClient(baseURL: server.baseURL)

        let curl = try await TestTools.runAsync(
            "curl",
            [
                "-sS", "-w", "\n%{http_code}", "-F", "file=@\(jpeg)", "-F", #"settings={"width":320}"#, "-F",
                "priority=7", "\(server.baseURL)/v1/uploads",
            ])
        let lines = String(decoding: curl.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.last == "202", "\(lines)")
        let body = try #require(lines.first.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) })
        let job = try #require(((body as? [String: Any])?["jobs"] as? [[String: Any]])?.first)
        let stored = dir.appendingPathComponent(
            "uploads/\(Self.sha256(try Data(contentsOf: URL(fileURLWithPath: jpeg)))).jpg")
        #expect(job["source"] as? String == stored.path)
        let done = try await Self.finished(api, try #require(job["id"] as? Int))
        #expect(done["state"] as? String == "succeeded", "\(done)\n\(server.logTail())")
        #expect(done["priority"] as? Int == 7)
        #expect((done["attachment"] as? [String: Any])?["width"] as? Int == 320)
        #expect((done["settings"] as? [String: Any])?["width"] as? Int == 320)

        // Fields after the file, a quoted boundary, another width.
        let boundary = "----pushprep boundary"
        let form =
            Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"p.jpg\"\r\n\r\n".utf8)
            + Array(try Data(contentsOf: URL(fileURLWithPath: jpeg)))
            + Array("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"settings\"\r\n\r\n".utf8)
            + Array(#"{"width": 200}"#.utf8) + Array("\r\n--\(boundary)--\r\n".utf8)
        let created = try await api.send(
            .POST, "/v1/uploads", body: form, contentType: "multipart/form-data; boundary=\"\(boundary)\"")
        #expect(created.status == 202, "\(created.text)")
        let second = try await Self.finished(api, try #require(try Self.firstJob(created)["id"] as? Int))
        #expect((second["attachment"] as? [String: Any])?["width"] as? Int == 200)
        #expect(Self.uploads(dir) == [stored.lastPathComponent], "one file for both uploads of the same bytes")
    }

    /// Uploads refused: text (422 unsupported_type), nothing (422 corrupt_input), bad settings
    /// (422 before the body is read), a form without a file, with an unknown field, cut short
    /// (400); nothing is left in the uploads directory. Payloads of jobs that are not
    /// succeeded (409) or do not exist (404).
    @Test func refusedUploadsAndPayloads() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let text = Array(String(repeating: "just some text\n", count: 1000).utf8)
        func form(_ parts: [(String, String)], close: Bool = true) -> [UInt8] {
            Array(
                (parts.map { "--b\r\nContent-Disposition: form-data; name=\"\($0.0)\"\r\n\r\n\($0.1)\r\n" }.joined()
                    + (close ? "--b--\r\n" : "")).utf8)
        }
        let multipart = "multipart/form-data; boundary=b"
        let cases: [(String, [UInt8], String, Int, String)] = [
            ("/v1/uploads", text, "text/plain", 422, "unsupported_type"),
            ("/v1/uploads", Array(text.prefix(10)), "text/plain", 422, "unsupported_type"),
            ("/v1/uploads", [], "application/octet-stream", 422, "corrupt_input"),
            ("/v1/uploads?settings=%7B%22width%22:0%7D", TinyBMP.bytes(1), "image/bmp", 422, "invalid_settings"),
            ("/v1/uploads?colour=red", TinyBMP.bytes(1), "image/bmp", 400, "invalid_request"),
            ("/v1/uploads?settings=%7Bnope", TinyBMP.bytes(1), "image/bmp", 400, "invalid_request"),
            ("/v1/uploads", form([("settings", "{}")]), multipart, 400, "invalid_request"),
            ("/v1/uploads", form([("file", "x"), ("colour", "red")]), multipart, 400, "invalid_request"),
            ("/v1/uploads", form([("file", "\u{FF}\u{D8}\u{FF}")], close: false), multipart, 400, "invalid_request"),
            ("/v1/uploads", form([("file", "x")]), "multipart/mixed; boundary=b", 400, "invalid_request"),
        ]
        for (path, body, type, status, code) in cases {
            let answer = try await api.send(.POST, path, body: body, contentType: type)
            #expect(answer.status == status, "\(path) \(type): \(answer.text)")
            #expect(try answer.json()["code"] as? String == code, "\(path) \(type)")
            #expect(answer.header("Content-Type") == "application/problem+json")
        }
        #expect(Self.uploads(dir).isEmpty, "\(Self.uploads(dir))")

        let queued = try await api.send(.POST, "/v1/uploads", body: TinyBMP.bytes(2), contentType: "image/bmp")
        let id = try #require(try Self.firstJob(queued)["id"] as? Int)
        let notYet = try await api.post("/v1/payload", json: #"{"job_ids": [\#(id)], "body": "Hi"}"#)
        #expect(notYet.status == 409, "\(notYet.text)")
        #expect(try notYet.json()["code"] as? String == "invalid_job_state")
        let missing = try await api.post("/v1/payload", json: #"{"job_ids": [987654], "body": "Hi"}"#)
        #expect(missing.status == 404)
        #expect(try missing.json()["code"] as? String == "job_not_found")
        let both = try await api.post("/v1/payload", json: #"{"job_ids": [1], "entries": [], "body": "Hi"}"#)
        #expect(both.status == 400)
    }

    /// Over `--max-upload-bytes`, chunked (so the server must count) or announced, the answer
    /// is 413 and no file is left; a body under the cap streams to disk: the server's peak
    /// resident memory stays far below the bytes it received.
    @Test func uploadsOverTheCapAreRefusedWithoutBuffering() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        // A process: its resident memory (/proc/PID/status).
        let server = try await RunningServe.start(["--workers", "0", "--max-upload-bytes", "100000000"], in: dir)
        // A JPEG header, then zeros: detected as a JPEG, so only the cap stops it.
        func zerosJPEG(_ size: Int, name: String) throws -> String {
            let path = dir.appendingPathComponent(name).path
            #expect(FileManager.default.createFile(atPath: path, contents: Data([0xFF, 0xD8, 0xFF, 0xE0])))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: UInt64(size))
            try handle.close()
            return path
        }
        func post(_ file: String, chunked: Bool) async throws -> String {
            var arguments = ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Expect:"]
            arguments += ["-H", "Content-Type: application/octet-stream", "--data-binary", "@\(file)"]
            if chunked { arguments += ["-H", "Transfer-Encoding: chunked"] }
            let result = try await TestTools.runAsync(
                "curl", arguments + ["\(server.baseURL)/v1/uploads"], timeout: .seconds(300))
            return String(decoding: result.stdout, as: UTF8.self)
        }
        func peakMegabytes() throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(server.process.pid)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
            let kilobytes = try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
            return kilobytes / 1024
        }
        let before = try peakMegabytes()
        let large = try zerosJPEG(150_000_000, name: "large.jpg")
        #expect(try await post(large, chunked: true) == "413")
        #expect(try await post(large, chunked: false) == "413")
        #expect(Self.uploads(dir).isEmpty, "\(Self.uploads(dir))")
        let afterRefused = try peakMegabytes()

        let fits = try zerosJPEG(90_000_000, name: "fits.jpg")
        #expect(try await post(fits, chunked: true) == "202")
        #expect(Self.uploads(dir).count == 1)
        let afterStored = try peakMegabytes()
        print(
            "serve VmHWM: \(before) MB at start, \(afterRefused) MB after 2 × 150 MB refused, "
                + "\(afterStored) MB after 90 MB stored")
        // 390 MB went through; the peak moves by a few buffers at most.
        #expect(afterStored - before < 30, "grew from \(before) MB to \(afterStored) MB")
        #expect(afterStored < 150, "peak resident memory \(afterStored) MB")
    }

    /// A payload from job ids and one from the same manifest entries are byte for byte what
    /// `pushprep payload --compact` prints for a manifest holding them; `--id` and a dialect
    /// too. Its pre-flight (an object, and as text with a duplicate key) is what
    /// `pushprep preflight --json` prints for the same file.
    @Test func payloadAndPreflightMatchTheCLI() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        var ids: [Int] = []
        var entries: [Any] = []
        for index in [21, 22] {
            let created = try await api.send(.POST, "/v1/uploads", body: TinyBMP.bytes(index), contentType: "image/bmp")
            let id = try #require(try Self.firstJob(created)["id"] as? Int)
            let done = try await Self.finished(api, id)
            #expect(done["state"] as? String == "succeeded", "\(done)")
            ids.append(id)
            entries.append(try #require(done["attachment"]))
        }
        let manifest: [String: Any] = [
            "version": 1, "generator": ["name": "pushprep", "version": "test"], "settings": [String: Any](),
            "attachments": entries,
        ]
        let manifestFile = dir.appendingPathComponent("manifest.json")
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifestFile)
        let entriesJSON = String(decoding: try JSONSerialization.data(withJSONObject: entries), as: UTF8.self)
        let firstID = try #require((entries.first as? [String: Any])?["id"] as? String)

        let variants: [(cli: [String], api: String)] = [
            (["--title", "New", "--body", "Tap to see"], #""title": "New", "body": "Tap to see""#),
            (
                ["--dialect", "onesignal", "--body", "Hi", "--sound", "ping.caf"],
                #""dialect": "onesignal", "body": "Hi", "sound": "ping.caf""#
            ),
            (
                ["--dialect", "braze", "--id", firstID, "--body", "Hi"],
                #""dialect": "braze", "ids": ["\#(firstID)"], "body": "Hi""#
            ),
            (["--all", "--body", "Hi"], #""all": true, "body": "Hi""#),
        ]
        var apnsPayload: [UInt8] = []
        for variant in variants {
            let cli = try await PushPrepCLI.runAsync(
                ["payload", manifestFile.path, "--compact"] + variant.cli, in: dir)
            #expect(cli.status == 0, "\(cli.stderrText)")
            let expected = Array(cli.stdoutText.trimmingCharacters(in: .newlines).utf8)
            let fromJobs = try await api.post(
                "/v1/payload", json: #"{"job_ids": [\#(ids.map(String.init).joined(separator: ","))], \#(variant.api)}"#
            )
            #expect(fromJobs.status == 200, "\(fromJobs.text)")
            #expect(fromJobs.body == expected, "\(variant.cli)\n\(fromJobs.text)\n\(cli.stdoutText)")
            let fromEntries = try await api.post("/v1/payload", json: #"{"entries": \#(entriesJSON), \#(variant.api)}"#)
            #expect(fromEntries.body == expected, "\(variant.cli)")
            if apnsPayload.isEmpty { apnsPayload = fromJobs.body }
        }
        // Braze carries one: all is refused, naming both ids and this API's field, not the CLI's option.
        let tooMany = try await api.post(
            "/v1/payload", json: #"{"dialect": "braze", "entries": \#(entriesJSON), "all": true, "body": "Hi"}"#)
        #expect(tooMany.status == 422)
        #expect(try tooMany.json()["code"] as? String == "invalid_payload")
        let detail = try #require(try tooMany.json()["detail"] as? String, "\(tooMany.text)")
        let secondID = try #require((entries.last as? [String: Any])?["id"] as? String)
        #expect(
            detail.contains(firstID) && detail.contains(secondID) && detail.hasSuffix("choose one with ids")
                && !detail.contains("--id"), "\(detail)")

        // Pre-flight: the payload above (its attachments on 127.0.0.1 over http), as an object
        // and as text with a repeated key; the CLI's report names its file, the API's "payload".
        let withDuplicate =
            "{\"sound\": \"a\", \"sound\": \"b\", " + String(decoding: apnsPayload.dropFirst(), as: UTF8.self)
        let apnsText = String(decoding: apnsPayload, as: UTF8.self)
        for (payload, member) in [(apnsText, apnsText), (withDuplicate, try Self.jsonString(withDuplicate))] {
            let file = dir.appendingPathComponent("payload.json")
            try Data(payload.utf8).write(to: file)
            let cli = try await PushPrepCLI.runAsync(["preflight", file.path, "--json"], in: dir)
            var expected = try #require(try JSONSerialization.jsonObject(with: cli.stdout) as? [String: Any])
            let answer = try await api.post("/v1/preflight", json: #"{"payload": \#(member), "dialect": "auto"}"#)
            #expect(answer.status == 200, "\(answer.text)")
            var reports = try #require(expected["reports"] as? [[String: Any]])
            reports[0]["file"] = "payload"
            expected["reports"] = reports
            #expect(
                NSDictionary(dictionary: try answer.json()) == NSDictionary(dictionary: expected),
                "\(answer.text)\n\(cli.stdoutText)")
        }
        let unsure = try await api.post("/v1/preflight", json: #"{"payload": [1], "dialect": "auto"}"#)
        #expect(unsure.status == 400)

        // With fetch, the attachments are downloaded through the server's remote settings
        // (loopback allowed for the test) from where a payload's base_url says they are; the
        // findings are the CLI's for the same payload and settings.
        let out = dir.appendingPathComponent("out")
        var files: [String: [UInt8]] = [:]
        for case let entry as [String: Any] in entries {
            let name = try #require(entry["file"] as? String)
            files[name] = Array(try Data(contentsOf: out.appendingPathComponent(name)))
        }
        try await TestServer.with(files: files) { host in
            let served = try await api.post(
                "/v1/payload",
                json:
                    #"{"entries": \#(entriesJSON), "all": true, "base_url": "\#(host.url("/files"))", "body": "Hi"}"#)
            #expect(served.status == 200, "\(served.text)")
            let file = dir.appendingPathComponent("served.json")
            try Data(served.body).write(to: file)
            let cli = try await PushPrepCLI.runAsync(
                ["preflight", file.path, "--json", "--fetch", "--allow-private-networks", "--allow-http"], in: dir)
            let expected = try #require(try JSONSerialization.jsonObject(with: cli.stdout) as? [String: Any])
            let fetched = try await api.post(
                "/v1/preflight",
                json:
                    #"{"payload": \#(String(decoding: served.body, as: UTF8.self)), "fetch": true, "allow_http": true}"#
            )
            #expect(fetched.status == 200, "\(fetched.text)")
            let report = try #require((try fetched.json()["reports"] as? [[String: Any]])?.first)
            let attachments = try #require(report["attachments"] as? [[String: Any]])
            #expect(attachments.count == 2)
            #expect(
                attachments.allSatisfy { ($0["fetched"] as? [String: Any])?["status"] as? Int == 200 },
                "\(fetched.text)")
            let cliReport = try #require((expected["reports"] as? [[String: Any]])?.first)
            #expect(
                NSArray(array: report["findings"] as? [Any] ?? [0])
                    == NSArray(array: cliReport["findings"] as? [Any] ?? [1]), "\(fetched.text)\n\(cli.stdoutText)")
        }
    }
}

// MARK: - Uploads are deleted once no unfinished job needs them (issue 26 §1.8)

extension UploadAndPayloadTests {
    /// The files of the uploads directory, hidden temporaries included, and their total size.
    static func uploadsUsage(_ dir: URL) -> (files: Int, bytes: Int) {
        let directory = dir.appendingPathComponent("uploads").path
        var bytes = 0
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names {
            let size = (try? FileManager.default.attributesOfItem(atPath: "\(directory)/\(name)")[.size]) as? Int
            bytes += size ?? 0
        }
        return (names.count, bytes)
    }

    /// A batch of raw and form uploads to a real `serve --keep-uploads 0` (queue `queue`, nil
    /// for SQLite), 8 whose jobs succeed and 4 whose jobs fail (BMPs cut short): once every job
    /// has ended, the uploads directory is back to its baseline, files and bytes; an upload
    /// already there when the batch began is deleted too once its job ended.
    static func uploadsReturnToBaseline(queue: String?, in dir: URL) async throws {
        var arguments = ["--keep-uploads", "0"]
        if let queue { arguments += ["--queue", queue] }
        let server = try await InProcessServe.start(arguments, in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let baseline = Self.uploadsUsage(dir)
        var ids: [Int] = []
        var broken: Set<Int> = []
        for index in 0..<12 {
            let image = TinyBMP.bytes(1000 + index)
            let fails = index % 3 == 2
            let body = fails ? Array(image.prefix(120)) : image
            let created = try await api.send(
                .POST, "/v1/uploads?filename=batch-\(index).bmp", body: body, contentType: "image/bmp")
            #expect(created.status == 202, "\(created.text)")
            let id = try #require(try Self.firstJob(created)["id"] as? Int)
            ids.append(id)
            if fails { broken.insert(id) }
        }
        for id in ids {
            let done = try await Self.finished(api, id)
            let state = done["state"] as? String
            if broken.contains(id) {
                #expect(state == "failed" || state == "dead", "\(done)")
            } else {
                #expect(state == "succeeded", "\(done)\n\(server.logTail())")
            }
        }
        try await Poll.until(
            "the uploads directory is back to its baseline \(baseline) (now \(Self.uploadsUsage(dir)))",
            within: .seconds(30), diagnostics: { server.logTail() }
        ) { Self.uploadsUsage(dir) == baseline }
        // The sweep logs what it deleted once its pass is over.
        try await Poll.until("the sweep logs its deletions", within: .seconds(10)) {
            server.stderrText.contains("uploads deleted")
        }
        _ = await server.stop()
    }

    @Test(.timeLimit(.minutes(2)))
    func uploadsAreDeletedOnceTheirJobsEndSQLite() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await Self.uploadsReturnToBaseline(queue: nil, in: dir)
    }

    @Test(.timeLimit(.minutes(2)))
    func uploadsAreDeletedOnceTheirJobsEndPostgreSQL() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await PostgresTestServer.shared.withFreshDatabase { url in
            try await Self.uploadsReturnToBaseline(queue: url.commandLineArgument, in: dir)
        }
    }
}
