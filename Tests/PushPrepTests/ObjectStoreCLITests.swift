import Crypto
import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

/// `pushprep process --store s3://…` against moto's S3 server with IAM auth on (a wrong
/// signature is refused): what lands in the bucket is read back with boto3, presigned URLs are
/// checked with botocore's signer and downloaded with curl, and failures are failed entries.
/// The program runs with the key in `AWS_*` and no home directory, as an operator's would.
@Suite(
    MotoS3Server.required,
    .enabled(if: TestTools.programAvailable("ffmpeg") && TestTools.programAvailable("vips"), "needs ffmpeg and vips"))
struct ObjectStoreCLITests {
    /// A JPEG, a PNG with real transparency and a one-second MP4 (which gets a poster), made here.
    static func makeSamples(in directory: URL) throws -> [String] {
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try TestTools.vips("gaussnoise", path("photo.jpg"), "96", "64")
        try TestTools.vips("black", path("rgb.v"), "80", "40", "--bands", "3")
        try TestTools.vips("black", path("clear.v"), "40", "40")
        try TestTools.vips("linear", path("clear.v"), path("solid.v"), "1", "255", "--uchar")
        try TestTools.vips("join", path("clear.v"), path("solid.v"), path("alpha.v"), "horizontal")
        try TestTools.vips("bandjoin", "\(path("rgb.v")) \(path("alpha.v"))", path("alpha.png"))
        try TestTools.ffmpeg(
            "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-t", "1", "-c:v", "libx264",
            "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "+faststart", path("clip.mp4"))
        return ["photo.jpg", "alpha.png", "clip.mp4"]
    }

    struct Run {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    static func pushprep(_ arguments: [String], in directory: URL, environment: [String: String]) throws -> Run {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let result = try TestTools.run(
            binary.path, arguments, currentDirectory: directory, environment: environment, timeout: .seconds(180))
        return Run(status: result.status, stdout: result.stdout, stderr: String(decoding: result.stderr, as: UTF8.self))
    }

    /// The manifest on standard output, checked against the schema first.
    static func manifest(_ run: Run) throws -> Manifest {
        #expect(try ManifestSchema.violations(of: run.stdout) == [], "\(String(decoding: run.stdout, as: UTF8.self))")
        return try JSONDecoder().decode(Manifest.self, from: run.stdout)
    }

    static func inTemporaryDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        try await body(directory)
    }

    @Test("process --store s3:// uploads every output and poster as boto3 reads them; a second run only HEADs")
    func publishesAndSkips() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let store = try await server.storeURL(prefix: "push", bucket: bucket)
        let environment = try await server.pushprepEnvironment()
        try await Self.inTemporaryDirectory { directory in
            let inputs = try Self.makeSamples(in: directory)
            let first = try Self.pushprep(
                ["process"] + inputs + ["--store", store], in: directory, environment: environment)
            #expect(first.status == 0, "\(first.stderr)")
            let manifest = try Self.manifest(first)
            let attachments = manifest.attachments.compactMap(\.attachment)
            #expect(attachments.count == 3)
            #expect(attachments.map(\.mime) == ["image/jpeg", "image/png", "video/mp4"])
            let endpoint = try await server.endpoint.absoluteString
            for attachment in attachments {
                let stored = try #require(try await server.readBack("push/\(attachment.file)", bucket: bucket))
                #expect(SHA256.hash(data: stored.body).hexString == attachment.sha256)
                #expect(stored.body.count == attachment.bytes)
                #expect(stored.contentType == attachment.mime)
                #expect(stored.cacheControl == "public, max-age=31536000, immutable")
                #expect(stored.metadata == ["sha256": attachment.sha256])
                #expect(stored.contentDisposition == nil)
                // No --base-url, no --presign: the bucket's own (path-style) URL, which does not expire.
                #expect(attachment.url == "\(endpoint)/\(bucket)/push/\(attachment.file)")
                #expect(attachment.urlExpires == nil)
                // The poster and the renditions go after the attachment itself.
                #expect(
                    attachment.operations.last
                        == "stored push/\(attachment.companionFiles.last?.file ?? attachment.file)")
                for (_, rendition) in attachment.renditions.all {
                    let object = try #require(try await server.readBack("push/\(rendition.file)", bucket: bucket))
                    #expect(SHA256.hash(data: object.body).hexString == rendition.sha256)
                    #expect(object.contentType == rendition.mime)
                    #expect(rendition.url == "\(endpoint)/\(bucket)/push/\(rendition.file)")
                }
                #expect(attachment.renditions.android != nil, "the default platforms include Android")
            }
            let movie = try #require(attachments.last)
            let poster = try #require(movie.poster)
            let storedPoster = try #require(try await server.readBack("push/\(poster.file)", bucket: bucket))
            #expect(storedPoster.contentType == "image/jpeg")
            #expect(storedPoster.metadata["sha256"] == SHA256.hash(data: storedPoster.body).hexString)
            #expect(poster.url == "\(endpoint)/\(bucket)/push/\(poster.file)")
            // The staging folder is gone, and nothing was written beside the inputs.
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("pushprep-out").path))
            // Where outputs are stored changes neither their ids nor their bytes.
            let local = try Self.pushprep(
                ["process"] + inputs + ["--out", "out", "--manifest", "-"], in: directory, environment: environment)
            let localAttachments = try Self.manifest(local).attachments.compactMap(\.attachment)
            #expect(localAttachments.map(\.id) == attachments.map(\.id))
            #expect(localAttachments.map(\.sha256) == attachments.map(\.sha256))

            let second = try Self.pushprep(
                ["process"] + inputs + ["--store", store], in: directory, environment: environment)
            #expect(second.status == 0, "\(second.stderr)")
            let again = try Self.manifest(second).attachments.compactMap(\.attachment)
            #expect(again.map(\.id) == attachments.map(\.id))
            for attachment in again {
                let published = attachment.operations.filter {
                    $0.hasPrefix("stored ") || $0.hasPrefix("already stored ")
                }
                let expected = [attachment.file] + attachment.companionFiles.map(\.file)
                #expect(published == expected.map { "already stored push/\($0) (same SHA-256)" })
            }
        }
    }

    /// Issue 26 §0: in release builds every run of this wrote 7 entries for 4 or 5 distinct
    /// sources, 3 to 5 of them without a URL. The child task built its `(index, entry)` result
    /// around a throwing `try await`, and Swift 6.3's optimiser lost the index across that
    /// suspension (every result came back for index 0). `make test` runs this suite against the
    /// release build too (PUSHPREP_BINARY), which is the build that failed.
    @Test(
        "every entry of a published manifest is its own input's, with its own URL, at any --jobs",
        arguments: [1, 3])
    func entriesKeepTheirInputs(jobs: Int) async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let store = try await server.storeURL(prefix: "order", bucket: bucket)
        let environment = try await server.pushprepEnvironment()
        let samples = TestTools.packageRoot.appendingPathComponent("samples")
        let inputs = try FileManager.default.contentsOfDirectory(atPath: samples.path).sorted()
            .map { samples.appendingPathComponent($0).path }
        try #require(inputs.count >= 7, "samples/ holds the 7 inputs of `make demo`")
        try await Self.inTemporaryDirectory { directory in
            let run = try Self.pushprep(
                ["process"] + inputs + ["--store", store, "--jobs", "\(jobs)"], in: directory,
                environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
            let manifest = try Self.manifest(run)
            #expect(manifest.attachments.map(\.source) == inputs, "entries in the inputs' order, each once")
            let endpoint = try await server.endpoint.absoluteString
            for entry in manifest.attachments {
                let attachment = try #require(
                    entry.attachment, "\(entry.source) failed: \(String(describing: entry.failure))")
                // The attachment in the entry was made from that entry's own input.
                #expect(attachment.source == entry.source)
                let url = try #require(attachment.url, "\(entry.source) has no url")
                #expect(url == "\(endpoint)/\(bucket)/order/\(attachment.file)")
                let stored = try #require(try await server.readBack("order/\(attachment.file)", bucket: bucket))
                #expect(SHA256.hash(data: stored.body).hexString == attachment.sha256)
            }
            #expect(Set(manifest.attachments.compactMap(\.attachment?.file)).count == inputs.count)
        }
    }

    @Test("--base-url names each URL as the base joined with the object's key, the poster's too")
    func baseURL() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let store = try await server.storeURL(prefix: "a/b", bucket: bucket)
        let environment = try await server.pushprepEnvironment()
        try await Self.inTemporaryDirectory { directory in
            let inputs = try Self.makeSamples(in: directory)
            let run = try Self.pushprep(
                ["process", inputs[2], "--store", store, "--base-url", "https://cdn.example.com/media"], in: directory,
                environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
            let movie = try #require(try Self.manifest(run).attachments.first?.attachment)
            #expect(movie.url == "https://cdn.example.com/media/a/b/\(movie.file)")
            #expect(movie.poster?.url == "https://cdn.example.com/media/a/b/\(movie.poster?.file ?? "?")")
            #expect(movie.urlExpires == nil && movie.poster?.urlExpires == nil)
            #expect(try await server.readBack("a/b/\(movie.file)", bucket: bucket) != nil)
        }
    }

    /// What `scripts/presign_check.py` (botocore's S3SigV4QueryAuth at the URL's own time)
    /// says of `url`.
    static func botocoreAgrees(_ url: String, environment: [String: String], region: String) throws -> Bool {
        try presignVerdict(url, environment: environment, region: region).match
    }

    /// What the independent checker (`scripts/presign_check.py`, botocore) says of a presigned
    /// URL: whether its signature is the one botocore computes, and whether it has expired.
    static func presignVerdict(_ url: String, environment: [String: String], region: String) throws
        -> (match: Bool, expired: Bool)
    {
        let request: [String: String] = [
            "url": url, "access_key_id": environment["AWS_ACCESS_KEY_ID"] ?? "",
            "secret_access_key": environment["AWS_SECRET_ACCESS_KEY"] ?? "", "region": region,
        ]
        let script = TestTools.packageRoot.appendingPathComponent("scripts/presign_check.py").path
        let result = try TestTools.run(
            MotoS3Server.python, [script], stdin: try JSONSerialization.data(withJSONObject: request))
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        let answer = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        return (answer?["match"] as? Bool == true, answer?["expired"] as? Bool ?? false)
    }

    @Test("--presign 1s: once its second is over the URL is expired to the independent checker, and payload says so")
    func expiredPresignedURL() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let store = try await server.storeURL(prefix: "short", bucket: bucket)
        let environment = try await server.pushprepEnvironment()
        try await Self.inTemporaryDirectory { directory in
            let inputs = try Self.makeSamples(in: directory)
            let run = try Self.pushprep(
                ["process", inputs[0], "--store", store, "--presign", "1s", "--manifest", "manifest.json"],
                in: directory, environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
            let manifest = try JSONDecoder().decode(
                Manifest.self, from: Data(contentsOf: directory.appendingPathComponent("manifest.json")))
            let attachment = try #require(manifest.attachments.first?.attachment)
            let link = try #require(attachment.url)
            #expect(link.contains("X-Amz-Expires=1"))
            // Past its one second (the signing time is whole seconds, so up to two).
            try await Task.sleep(for: .seconds(2.5))
            let verdict = try Self.presignVerdict(link, environment: environment, region: server.region)
            #expect(verdict.match && verdict.expired, "\(verdict)")
            let payload = try Self.pushprep(
                ["payload", "manifest.json", "--body", "Hi"], in: directory, environment: environment)
            #expect(payload.status == 0, "\(payload.stderr)")
            #expect(payload.stderr.contains("the signed URL expired at"), "\(payload.stderr)")
        }
    }

    @Test(
        "--presign 1d: botocore computes the same signature, a tampered URL differs, curl downloads the bytes",
        .enabled(if: TestTools.programAvailable("curl"), "needs curl"))
    func presigned() async throws {
        // moto with IAM auth answers presigned GETs with 500: the download is checked on the server without.
        for server in [MotoS3Server.shared, MotoS3Server.withoutIAM] {
            let bucket = try await server.makeBucket()
            let store = try await server.storeURL(prefix: "signed", bucket: bucket)
            let environment = try await server.pushprepEnvironment()
            try await Self.inTemporaryDirectory { directory in
                let inputs = try Self.makeSamples(in: directory)
                let before = Date()
                let run = try Self.pushprep(
                    ["process", inputs[1], inputs[2], "--store", store, "--presign", "1d"], in: directory,
                    environment: environment)
                #expect(run.status == 0, "\(run.stderr)")
                for attachment in try Self.manifest(run).attachments.compactMap(\.attachment) {
                    let urls = [attachment.url] + [attachment.poster?.url]
                    let expiries = [attachment.urlExpires] + [attachment.poster?.urlExpires]
                    for (link, expires) in zip(urls, expiries) {
                        guard let link else { continue }
                        #expect(link.contains("X-Amz-Expires=86400"))
                        let expiry = try #require(expires.flatMap { try? Date($0, strategy: .iso8601) })
                        #expect(abs(expiry.timeIntervalSince(before) - 86_400) < 120, "\(expires ?? "nil")")
                        #expect(try Self.botocoreAgrees(link, environment: environment, region: server.region))
                        let tampered = link.replacingOccurrences(of: "X-Amz-Expires=86400", with: "X-Amz-Expires=86401")
                        #expect(try !Self.botocoreAgrees(tampered, environment: environment, region: server.region))
                        guard !server.iamAuth else { continue }
                        let curl = try TestTools.run("curl", ["--silent", "--show-error", "--fail", "--globoff", link])
                        #expect(curl.status == 0, "\(String(decoding: curl.stderr, as: UTF8.self))")
                        if link == attachment.url {
                            #expect(SHA256.hash(data: curl.stdout).hexString == attachment.sha256)
                        }
                        #expect(!curl.stdout.isEmpty)
                    }
                }
            }
        }
    }

    @Test("a wrong secret fails every input with storage_denied (exit 1); no message or trace log holds a secret")
    func wrongSecret() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let store = try await server.storeURL(prefix: "push", bucket: bucket)
        let wrong = "wrongSecretValue1234567890abcdefWRONG"
        let environment = try await server.pushprepEnvironment(secret: wrong)
        try await Self.inTemporaryDirectory { directory in
            let inputs = try Self.makeSamples(in: directory)
            // The most verbose logs, the HTTP client's included.
            let run = try Self.pushprep(
                ["process"] + inputs + ["--store", store, "--log-level", "trace"], in: directory,
                environment: environment)
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.stderr.contains("storage_denied"))
            let manifest = try Self.manifest(run)
            #expect(
                manifest.attachments.map { $0.failure?.error.code }
                    == [PushPrepError.Code?](repeating: .storageDenied, count: 3))
            #expect(!run.stderr.contains(wrong) && !String(decoding: run.stdout, as: UTF8.self).contains(wrong))
            #expect(try await server.readBack("push/\(inputs[0])", bucket: bucket) == nil)
        }
    }

    @Test("a server that does not answer fails the inputs with storage_unavailable (exit 1)")
    func unreachable() async throws {
        let server = MotoS3Server.shared
        let environment = try await server.pushprepEnvironment()
        // A port nothing listens on: a stopped server, as the client sees it.
        let port = try ChildProcessTools.freePort()
        let store = "s3://pushprep-gone/push?region=us-east-1&endpoint=http://127.0.0.1:\(port)"
        try await Self.inTemporaryDirectory { directory in
            let inputs = try Self.makeSamples(in: directory)
            let run = try Self.pushprep(
                ["process", inputs[0], "--store", store], in: directory, environment: environment)
            #expect(run.status == 1, "\(run.stderr)")
            #expect(try Self.manifest(run).attachments.first?.failure?.error.code == .storageUnavailable)
        }
    }

    @Test("a bucket that does not exist fails the inputs with storage_unavailable (NoSuchBucket, exit 1)")
    func missingBucket() async throws {
        let server = MotoS3Server.shared
        let environment = try await server.pushprepEnvironment()
        let store = try await server.storeURL(prefix: "push", bucket: "pushprep-never-made")
        try await Self.inTemporaryDirectory { directory in
            let inputs = try Self.makeSamples(in: directory)
            let run = try Self.pushprep(
                ["process", inputs[0], "--store", store], in: directory, environment: environment)
            #expect(run.status == 1, "\(run.stderr)")
            let failure = try #require(try Self.manifest(run).attachments.first?.failure)
            #expect(failure.error.code == .storageUnavailable)
            #expect(failure.error.message.contains("NoSuchBucket"), "\(failure.error.message)")
        }
    }

    @Test("--out with --store, and --presign over 7 days or without a bucket, are usage errors (exit 2)")
    func usageErrors() async throws {
        let server = MotoS3Server.shared
        let store = try await server.storeURL(prefix: "push")
        let environment = try await server.pushprepEnvironment()
        try await Self.inTemporaryDirectory { directory in
            for arguments in [
                ["--store", store, "--out", "out"], ["--store", store, "--presign", "8d"],
                ["--out", "out", "--presign", "1d"],
                ["--store", store, "--presign", "1d", "--base-url", "https://cdn.example.com"],
            ] {
                let run = try Self.pushprep(["process", "x.jpg"] + arguments, in: directory, environment: environment)
                #expect(run.status == 2, "\(arguments): \(run.stderr)")
            }
        }
    }
}
