import Crypto
import Foundation
import PushPrepTestSupport
import Testing

/// `GET`/`HEAD /v1/attachments/{file}` against a real `pushprep serve`, asked with curl (the
/// HTTP semantics as a client other than ours reads them): the bytes, the headers, conditional
/// and range requests, names that must reach nothing, and signed URLs.
@Suite(.serialized)
struct AttachmentRoutesTests {
    /// A published output is served as the manifest describes it: the same bytes, its MIME
    /// type, its SHA-256 as the ETag, immutable caching; HEAD gives the same headers and no
    /// body; If-None-Match (exact, weak, in a list, `*`) is a 304.
    @Test func servesAPublishedOutputAsTheManifestSays() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(11)]) { files in
            let server = try await InProcessServe.start(in: dir)
            let attachment = try await Self.processedAttachment(files.url("/files/a.bmp"), server: server)
            let file = try #require(attachment["file"] as? String)
            let url = try #require(attachment["url"] as? String)
            let sha256 = try #require(attachment["sha256"] as? String)
            let onDisk = try Data(contentsOf: dir.appendingPathComponent("out/\(file)"))

            let full = try await Curl.get(url)
            #expect(full.status == 200)
            #expect(full.body == onDisk)
            #expect(full.header("Content-Type") == attachment["mime"] as? String)
            #expect(full.header("Content-Type") == "image/jpeg")
            #expect(full.header("Content-Length") == String(onDisk.count))
            #expect(full.header("ETag") == "\"\(sha256)\"")
            #expect(full.header("Accept-Ranges") == "bytes")
            #expect(full.header("Cache-Control") == "public, max-age=31536000, immutable")
            #expect(full.header("Last-Modified")?.hasSuffix(" GMT") == true)

            let head = try await Curl.run(["-I", url])
            #expect(head.status == 200)
            // What the server sent after the head, read off the socket (curl -I would not read it).
            let path = try #require(URLComponents(string: url)?.path)
            let raw = try await Curl.exchange(
                server.baseURL, "HEAD \(path) HTTP/1.1\r\nHost: \(server.host)\r\nConnection: close\r\n\r\n")
            let separator = try #require(raw.range(of: Data("\r\n\r\n".utf8)))
            #expect(raw.starts(with: Data("HTTP/1.1 200".utf8)))
            #expect(raw[separator.upperBound...].isEmpty, "a HEAD answer has no body")
            for name in ["Content-Type", "Content-Length", "ETag", "Last-Modified", "Cache-Control", "Accept-Ranges"] {
                #expect(head.header(name) == full.header(name), "HEAD's \(name)")
            }

            for condition in ["\"\(sha256)\"", "W/\"\(sha256)\"", "\"0000\", \"\(sha256)\"", "*"] {
                let cached = try await Curl.get(url, headers: ["If-None-Match: \(condition)"])
                #expect(cached.status == 304, "If-None-Match: \(condition)")
                #expect(cached.body.isEmpty)
                #expect(cached.header("ETag") == "\"\(sha256)\"")
            }
            let changed = try await Curl.get(url, headers: ["If-None-Match: \"0000\""])
            #expect(changed.status == 200)
            #expect(changed.body == onDisk)
        }
    }

    /// One byte range is a 206 with its Content-Range (first bytes, a suffix, open-ended, an end
    /// past the file); a range starting past the end is a 416 problem with `bytes */size`;
    /// If-Range with this ETag keeps the range, with another gives the whole file, as do
    /// several ranges and a unit other than bytes.
    @Test func byteRanges() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(12)]) { files in
            let server = try await InProcessServe.start(in: dir)
            let attachment = try await Self.processedAttachment(files.url("/files/a.bmp"), server: server)
            let url = try #require(attachment["url"] as? String)
            let sha256 = try #require(attachment["sha256"] as? String)
            let bytes = try Data(
                contentsOf: dir.appendingPathComponent("out/\(try #require(attachment["file"] as? String))"))
            let size = bytes.count
            try #require(size > 200, "the output is large enough for these ranges")

            let cases: [(range: String, slice: Range<Int>)] = [
                ("bytes=0-99", 0..<100),
                ("bytes=-10", (size - 10)..<size),
                ("bytes=100-", 100..<size),
                ("bytes=\(size - 5)-\(size + 1000)", (size - 5)..<size),
                ("bytes=-\(size * 2)", 0..<size),
            ]
            for (range, slice) in cases {
                let part = try await Curl.get(url, headers: ["Range: \(range)"])
                #expect(part.status == 206, "\(range)")
                #expect(part.body == bytes[slice], "\(range)")
                #expect(part.header("Content-Range") == "bytes \(slice.lowerBound)-\(slice.upperBound - 1)/\(size)")
                #expect(part.header("Content-Length") == String(slice.count))
                #expect(part.header("ETag") == "\"\(sha256)\"")
            }

            for range in ["bytes=\(size)-", "bytes=\(size + 10)-\(size + 20)", "bytes=-0", "bytes=9-3"] {
                let refused = try await Curl.get(url, headers: ["Range: \(range)"])
                #expect(refused.status == 416, "\(range)")
                #expect(refused.header("Content-Range") == "bytes */\(size)", "\(range)")
                #expect(refused.header("Content-Type") == "application/problem+json")
                #expect(try refused.json()["status"] as? Int == 416)
            }

            let kept = try await Curl.get(url, headers: ["Range: bytes=0-9", "If-Range: \"\(sha256)\""])
            #expect(kept.status == 206)
            #expect(kept.body == bytes[0..<10])
            let lastModified = try #require(kept.header("Last-Modified"))
            let byDate = try await Curl.get(url, headers: ["Range: bytes=0-9", "If-Range: \(lastModified)"])
            #expect(byDate.status == 206)
            for ignored in [
                ["Range: bytes=0-9", "If-Range: \"0000\""], ["Range: bytes=0-9", "If-Range: W/\"\(sha256)\""],
                ["Range: bytes=0-9,20-29"], ["Range: pages=1-2"],
            ] {
                let whole = try await Curl.get(url, headers: ignored)
                #expect(whole.status == 200, "\(ignored)")
                #expect(whole.body == bytes, "\(ignored)")
            }
        }
    }

    /// Nothing but published files is reachable: traversal in every spelling, the staging
    /// folder, dot-files, a manifest, a symbolic link to /etc/passwd and a FIFO planted in the
    /// out directory, a name with a slash. All are 404 problems and none shows other content.
    @Test func namesOutsideThePublishedFilesAreNotFound() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(
            at: out.appendingPathComponent(".staging/w1"), withIntermediateDirectories: true)
        let secret = Data("SECRET-CONTENT-\(UUID())".utf8)
        let published = "img-\(String(repeating: "ab", count: 20)).jpg"
        try Data("published".utf8).write(to: out.appendingPathComponent(published))
        for name in [".secret.jpg", ".staging/w1/img-a.jpg", "manifest.json", "notes.txt", "img-x.jpg.tmp"] {
            try secret.write(to: out.appendingPathComponent(name))
        }
        try secret.write(to: dir.appendingPathComponent("outside.jpg"))
        try FileManager.default.createSymbolicLink(
            atPath: out.appendingPathComponent("img-passwd.jpg").path, withDestinationPath: "/etc/passwd")
        try FileManager.default.createSymbolicLink(
            atPath: out.appendingPathComponent("img-outside.jpg").path,
            withDestinationPath: dir.appendingPathComponent("outside.jpg").path)
        try #require(mkfifo(out.appendingPathComponent("img-fifo.jpg").path, 0o644) == 0, "mkfifo: errno \(errno)")

        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let base = server.baseURL + "/v1/attachments/"
        let served = try await Curl.get(base + published)
        #expect(served.status == 200)
        #expect(served.body == Data("published".utf8))

        let names = [
            "img-passwd.jpg", "img-outside.jpg", "img-fifo.jpg", ".secret.jpg", ".staging", ".staging/w1/img-a.jpg",
            "manifest.json", "notes.txt", "img-x.jpg.tmp", "..%2F..%2F..%2Fetc%2Fpasswd",
            "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
            "%2e%2e", "..", "../outside.jpg", "..%2Foutside.jpg", "a/b.jpg", "%2Fetc%2Fpasswd", "img%2D1.jpg",
            "..%5C..%5Coutside.jpg", "img-\(String(repeating: "ab", count: 20)).jpg%00.txt", "",
        ]
        for name in names {
            for method in [[], ["-I"]] {
                let answer = try await Curl.run(method + [base + name])
                #expect(answer.status == 404, "\(method) \(name)")
                let text = String(decoding: answer.body, as: UTF8.self)
                #expect(!text.contains("root:") && !text.contains("SECRET-CONTENT"), "\(name) leaked: \(text)")
                if method.isEmpty { #expect(try answer.json()["code"] as? String == "not_found", "\(name)") }
            }
        }
        let stillServing = try await Curl.get(base + published)
        #expect(stillServing.status == 200, "the FIFO did not hang the server")
    }

    /// With `--sign-attachments`, `GET /v1/jobs/{id}` shows signed URLs (expiring after the
    /// TTL, recorded in `urlExpires`) that work; an unsigned, tampered, re-targeted or expired
    /// URL is a 403 problem, before the disk is looked at.
    @Test func signedAttachmentURLs() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let key = Data((0..<48).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        let keyFile = dir.appendingPathComponent("attachment.key")
        try key.write(to: keyFile)
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(13)]) { files in
            let server = try await InProcessServe.start(
                ["--sign-attachments", "--attachment-key-file", keyFile.path, "--attachment-url-ttl", "2h"], in: dir)
            let before = Date()
            let attachment = try await Self.processedAttachment(files.url("/files/a.bmp"), server: server)
            let file = try #require(attachment["file"] as? String)
            let signed = try #require(attachment["url"] as? String)
            let onDisk = try Data(contentsOf: dir.appendingPathComponent("out/\(file)"))
            let plain = "\(server.baseURL)/v1/attachments/\(file)"
            #expect(signed.hasPrefix(plain + "?expires="), "\(signed)")
            let query = try #require(URLComponents(string: signed)?.queryItems)
            let expires = try #require(query.first { $0.name == "expires" }?.value.flatMap { Int64($0) })
            let signature = try #require(query.first { $0.name == "signature" }?.value)
            #expect(abs(Double(expires) - (before.timeIntervalSince1970 + 7200)) < 60)
            #expect(signature == Self.sign("\(file):\(expires)", key: key))
            #expect(attachment["urlExpires"] as? String != nil)

            let ok = try await Curl.get(signed)
            #expect(ok.status == 200)
            #expect(ok.body == onDisk)
            #expect(try await Curl.run(["-I", signed]).status == 200)

            let pastExpiry = Int64(Date().timeIntervalSince1970) - 10
            let refused: [String] = [
                plain,
                plain + "?expires=\(expires)",
                plain + "?signature=\(signature)",
                plain + "?expires=\(expires)&signature=\(Self.flipped(signature))",
                plain + "?expires=\(expires + 1)&signature=\(signature)",
                plain + "?expires=\(expires)&signature=\(signature)=",
                "\(server.baseURL)/v1/attachments/img-\(String(repeating: "0", count: 40)).jpg?expires=\(expires)&signature=\(signature)",
                plain + "?expires=\(pastExpiry)&signature=\(Self.sign("\(file):\(pastExpiry)", key: key))",
            ]
            for url in refused {
                let answer = try await Curl.get(url)
                #expect(answer.status == 403, "\(url)")
                #expect(try answer.json()["code"] as? String == "forbidden", "\(url)")
                #expect(answer.body != onDisk)
            }
            let expired = try await Curl.get(refused[refused.count - 1])
            #expect((try expired.json()["detail"] as? String)?.contains("expired") == true)
            #expect(!server.stderrText.contains(signature), "signatures stay out of the logs")
        }
    }

    /// The signing options belong together: a key without signing, signing without a key, a
    /// key shorter than 32 bytes, a TTL that is not one are usage errors (exit status 2).
    @Test func signingOptionsAreChecked() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let short = dir.appendingPathComponent("short.key")
        try Data("too short\n".utf8).write(to: short)
        let good = dir.appendingPathComponent("good.key")
        try Data(String(repeating: "k", count: 40).utf8).write(to: good)
        let common = ["serve", "--port", "0", "--queue", "sqlite:\(dir.path)/q.db", "--out", "\(dir.path)/out"]
        let cases: [([String], String)] = [
            (["--attachment-key-file", good.path], "--sign-attachments"),
            (["--sign-attachments"], "--attachment-key-file"),
            (["--sign-attachments", "--attachment-key-file", short.path], "at least 32 bytes"),
            (["--sign-attachments", "--attachment-key-file", dir.appendingPathComponent("none").path], "no such file"),
            (["--sign-attachments", "--attachment-key-file", good.path, "--attachment-url-ttl", "soon"], "7d"),
            (["--sign-attachments", "--attachment-key-file", good.path, "--attachment-url-ttl", "30s"], "60 s"),
        ]
        for (options, message) in cases {
            let result = try await PushPrepCLI.runAsync(common + options, in: dir)
            #expect(result.status == 2, "\(options): \(result.stderrText)")
            #expect(result.stderrText.contains(message), "\(options): \(result.stderrText)")
        }
    }

    /// Small files are answered from memory, but a file pruned from the out directory is a 404
    /// once the cache's revalidation interval (a second) has passed, and a name that now holds
    /// another file serves the new bytes and ETag.
    @Test func aPrunedFileIsNotFoundAfterTheRevalidationInterval() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let pruned = "img-\(String(repeating: "cd", count: 20)).jpg"
        let replaced = "img-\(String(repeating: "ef", count: 20)).jpg"
        try Data("first bytes".utf8).write(to: out.appendingPathComponent(pruned))
        try Data("old bytes".utf8).write(to: out.appendingPathComponent(replaced))
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let base = server.baseURL + "/v1/attachments/"
        for _ in 0..<3 {
            #expect(try await Curl.get(base + pruned).body == Data("first bytes".utf8))
            #expect(try await Curl.get(base + replaced).body == Data("old bytes".utf8))
        }
        try FileManager.default.removeItem(at: out.appendingPathComponent(pruned))
        // A new file renamed over the name, as a publisher would (a new inode).
        let staged = dir.appendingPathComponent("staged.jpg")
        try Data("new bytes!".utf8).write(to: staged)
        #expect(rename(staged.path, out.appendingPathComponent(replaced).path) == 0)
        try await Task.sleep(for: .milliseconds(1500))
        let gone = try await Curl.get(base + pruned)
        #expect(gone.status == 404)
        #expect(try gone.json()["code"] as? String == "not_found")
        let renewed = try await Curl.get(base + replaced)
        #expect(renewed.status == 200)
        #expect(renewed.body == Data("new bytes!".utf8))
        let sha256 = SHA256.hash(data: Data("new bytes!".utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(renewed.header("ETag") == "\"\(sha256)\"")
        #expect(renewed.header("Content-Length") == "10")
    }

    /// The in-memory cache is bounded: serving 160 distinct files of 2 MiB (320 MiB, five times
    /// what the cache holds) grows the server's resident memory by far less than that, and
    /// every answer still has the file's bytes (a range of one included).
    @Test func memoryStaysBoundedWithMoreFilesThanTheCacheHolds() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let size = 2 << 20
        let count = 160
        func name(_ index: Int) -> String { "img-\(String(format: "%040d", index)).jpg" }
        for index in 0..<count {
            // Sparse files of zeros, with a distinct mark at the start and the end.
            let url = out.appendingPathComponent(name(index))
            #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
            let handle = try FileHandle(forWritingTo: url)
            try handle.write(contentsOf: Data("\(index)".utf8))
            try handle.truncate(atOffset: UInt64(size))
            try handle.seek(toOffset: UInt64(size - 8))
            try handle.write(contentsOf: Data(String(format: "%08d", index).utf8))
            try handle.close()
        }
        // A process: its resident memory (/proc/PID/status).
        let server = try await RunningServe.start(["--workers", "0", "--log-level", "warning"], in: dir)
        let api = APITestClient(baseURL: server.baseURL)
        let pid = server.process.pid
        func residentKiB() throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
            return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        }
        let first = try await api.get("/v1/attachments/\(name(0))")
        #expect(first.status == 200)
        let before = try residentKiB()
        var peak = before
        for round in 0..<2 {
            for index in 0..<count {
                let answer = try await api.get("/v1/attachments/\(name(index))")
                #expect(answer.status == 200, "\(name(index))")
                #expect(answer.body.count == size)
                #expect(answer.body.starts(with: Array("\(index)".utf8)), "round \(round): \(name(index))")
                #expect(answer.body.suffix(8).elementsEqual(Array(String(format: "%08d", index).utf8)))
                if index % 16 == 0 { peak = max(peak, try residentKiB()) }
            }
        }
        let part = try await Curl.get(server.baseURL + "/v1/attachments/\(name(7))", headers: ["Range: bytes=-8"])
        #expect(part.status == 206)
        #expect(part.body == Data("00000007".utf8))
        peak = max(peak, try residentKiB())
        // 64 MiB of cache plus allocator slack; an unbounded cache would hold all 320 MiB.
        #expect(peak - before < 150 << 10, "VmRSS grew from \(before) KiB to \(peak) KiB")
    }

    /// A file too large for the cache (5 MiB and 3 bytes) streams from disk in chunks: the whole
    /// file, a range across a chunk boundary, HEAD's length, a 304 for its ETag.
    @Test func aFileLargerThanTheCacheStreamsFromDisk() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let bytes = Data((0..<(5 << 20) + 3).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) })
        let name = "vid-\(String(repeating: "12", count: 20)).mp4"
        try bytes.write(to: out.appendingPathComponent(name))
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let url = server.baseURL + "/v1/attachments/" + name
        let sha256 = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        for _ in 0..<2 {
            let whole = try await Curl.get(url)
            #expect(whole.status == 200)
            #expect(whole.body == bytes)
            #expect(whole.header("ETag") == "\"\(sha256)\"")
            #expect(whole.header("Content-Type") == "video/mp4")
        }
        let part = try await Curl.get(url, headers: ["Range: bytes=262000-786500"])
        #expect(part.status == 206)
        #expect(part.body == bytes[262_000...786_500])
        let head = try await Curl.run(["-I", url])
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == String(bytes.count))
        #expect(try await Curl.get(url, headers: ["If-None-Match: \"\(sha256)\""]).status == 304)
    }

    // MARK: Helpers

    /// Creates a job for `source`, waits for it and returns its manifest entry.
    static func processedAttachment(_ source: String, server: some ServeUnderTest) async throws -> [String: Any] {
        let api = APITestClient(baseURL: server.baseURL)
        let created = try await api.post("/v1/jobs", json: #"{"sources": ["\#(source)"]}"#)
        let id = try #require((try created.json()["jobs"] as? [[String: Any]])?.first?["id"] as? Int, "\(created.text)")
        let done = try await api.get("/v1/jobs/\(id)?wait=30s")
        let job = try done.json()
        try #require(job["state"] as? String == "succeeded", "\(done.text)\n\(server.logTail())")
        return try #require(job["attachment"] as? [String: Any])
    }

    /// The signature the server should give: base64url HMAC-SHA256, unpadded.
    static func sign(_ message: String, key: Data) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: SymmetricKey(data: key))
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// `signature` with its first character changed.
    static func flipped(_ signature: String) -> String {
        (signature.first == "A" ? "B" : "A") + signature.dropFirst()
    }
}

/// One curl request: the status, headers and body of the final response.
struct Curl {
    var status: Int
    var headers: [(String, String)]
    var body: Data

    func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }

    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw TestTools.Failure(description: "not a JSON object: \(String(decoding: body, as: UTF8.self))")
        }
        return object
    }

    /// Sends `request` as it is to the server at `baseURL` (`http://127.0.0.1:PORT`) and returns
    /// every byte it answers until it closes (bash's /dev/tcp: nothing parses the answer).
    static func exchange(_ baseURL: String, _ request: String) async throws -> Data {
        let port = try #require(baseURL.split(separator: ":").last.map(String.init))
        let script = "exec 3<>/dev/tcp/127.0.0.1/$0; printf '%s' \"$1\" >&3; timeout 10 cat <&3"
        let result = try await TestTools.runAsync("bash", ["-c", script, port, request])
        return result.stdout
    }

    static func get(_ url: String, headers: [String] = []) async throws -> Curl {
        try await run(headers.flatMap { ["-H", $0] } + [url])
    }

    /// `curl -s --path-as-is -D HEADERS -o BODY ARGUMENTS` (the URL as written: no `..`
    /// folded away, no percent-decoding).
    static func run(_ arguments: [String]) async throws -> Curl {
        let scratch = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(scratch) }
        let headerFile = scratch.appendingPathComponent("headers")
        let bodyFile = scratch.appendingPathComponent("body")
        let result = try await TestTools.runAsync(
            "curl",
            ["-s", "-S", "--path-as-is", "--max-time", "30", "-D", headerFile.path, "-o", bodyFile.path] + arguments)
        guard result.status == 0 else {
            throw TestTools.Failure(
                description: "curl \(arguments) failed: \(String(decoding: result.stderr, as: UTF8.self))")
        }
        let lines = String(decoding: try Data(contentsOf: headerFile), as: UTF8.self)
            .split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = try #require(lines.first { $0.hasPrefix("HTTP/") })
        let status = try #require(Int(statusLine.split(separator: " ")[1]))
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let body = (try? Data(contentsOf: bodyFile)) ?? Data()
        return Curl(status: status, headers: headers, body: body)
    }
}
