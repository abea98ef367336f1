import Crypto
import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

/// `pushprep payload MANIFEST --store s3://…` against moto: the manifest's objects were stored by
/// `process --store`, and `payload` gives each attachment its URL from the store when it builds
/// the push (presigned then, or a base URL joined with the key), after a HEAD finds the object.
/// `preflight --fix --store s3://…` publishes the attachments it replaces to the bucket and points
/// the fixed payload at them. The helpers are ``ObjectStoreCLITests``'s.
@Suite(
    MotoS3Server.required,
    .enabled(if: TestTools.programAvailable("ffmpeg") && TestTools.programAvailable("vips"), "needs ffmpeg and vips"))
struct ObjectStorePayloadCLITests {
    private typealias CLI = ObjectStoreCLITests

    /// `process INPUTS --store STORE --manifest manifest.json`; the manifest's ready attachments.
    private static func stored(
        _ inputs: [String], store: String, in directory: URL, environment: [String: String]
    ) throws -> [PushPrepCore.Attachment] {
        let run = try CLI.pushprep(
            ["process"] + inputs + ["--store", store, "--manifest", "manifest.json"], in: directory,
            environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
        return try JSONDecoder().decode(Manifest.self, from: data).attachments.compactMap(\.attachment)
    }

    /// The APNs payload's attachment URLs, by id.
    private static func urls(_ run: CLI.Run) throws -> [String: String] {
        let payload = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        let attachments = try #require(payload["attachments"] as? [[String: Any]])
        var urls: [String: String] = [:]
        for attachment in attachments {
            urls[try #require(attachment["id"] as? String)] = try #require(attachment["url"] as? String)
        }
        return urls
    }

    /// The `X-Amz-Date` of a presigned URL.
    private static func signingDate(_ url: String) throws -> Date {
        let query = try #require(URLComponents(string: url)?.queryItems)
        let text = try #require(query.first { $0.name == "X-Amz-Date" }?.value)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return try #require(formatter.date(from: text))
    }

    @Test(
        "payload --store --presign 2d: URLs signed when the payload is built, botocore agrees, curl downloads them",
        .enabled(if: TestTools.programAvailable("curl"), "needs curl"))
    func presigned() async throws {
        // moto with IAM auth answers presigned GETs with 500: the download is checked on the server without.
        for server in [MotoS3Server.shared, MotoS3Server.withoutIAM] {
            let bucket = try await server.makeBucket()
            let store = try await server.storeURL(prefix: "push", bucket: bucket)
            let environment = try await server.pushprepEnvironment()
            try await CLI.inTemporaryDirectory { directory in
                let inputs = try CLI.makeSamples(in: directory)
                let attachments = try Self.stored(
                    [inputs[0], inputs[2]], store: store, in: directory,
                    environment: environment)
                #expect(attachments.count == 2)
                // The manifest holds the bucket's URLs; the payload's are signed at its own time.
                let before = Date().addingTimeInterval(-1)
                let run = try CLI.pushprep(
                    ["payload", "manifest.json", "--store", store, "--presign", "2d", "--body", "Hi", "--all"],
                    in: directory,
                    environment: environment)
                let after = Date().addingTimeInterval(1)
                #expect(run.status == 0, "\(run.stderr)")
                #expect(!run.stderr.contains("warning"), "\(run.stderr)")
                let urls = try Self.urls(run)
                for attachment in attachments {
                    let link = try #require(urls[attachment.id])
                    #expect(
                        link.hasPrefix("\(try await server.endpoint.absoluteString)/\(bucket)/push/\(attachment.file)?")
                    )
                    #expect(link.contains("X-Amz-Expires=172800"))
                    let signed = try Self.signingDate(link)
                    #expect(signed >= before && signed <= after, "\(signed) not in \(before)...\(after)")
                    #expect(try CLI.botocoreAgrees(link, environment: environment, region: server.region))
                    let tampered = link.replacingOccurrences(of: "/push/", with: "/push//")
                    #expect(try !CLI.botocoreAgrees(tampered, environment: environment, region: server.region))
                    guard !server.iamAuth else { continue }
                    let curl = try TestTools.run("curl", ["--silent", "--show-error", "--fail", "--globoff", link])
                    #expect(curl.status == 0, "\(String(decoding: curl.stderr, as: UTF8.self))")
                    #expect(SHA256.hash(data: curl.stdout).hexString == attachment.sha256)
                }
            }
        }
    }

    @Test("payload --store --base-url joins the base with each object's key, the poster's too (FCM sends it)")
    func baseURL() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let store = try await server.storeURL(prefix: "a/b", bucket: bucket)
        let environment = try await server.pushprepEnvironment()
        try await CLI.inTemporaryDirectory { directory in
            let inputs = try CLI.makeSamples(in: directory)
            let movie = try #require(
                try Self.stored([inputs[2]], store: store, in: directory, environment: environment).first)
            let poster = try #require(movie.poster)
            let base = "https://cdn.example.com/media"
            let apns = try CLI.pushprep(
                ["payload", "manifest.json", "--store", store, "--base-url", base, "--body", "Hi"], in: directory,
                environment: environment)
            #expect(apns.status == 0, "\(apns.stderr)")
            #expect(try Self.urls(apns) == [movie.id: "\(base)/a/b/\(movie.file)"])
            let fcm = try CLI.pushprep(
                ["payload", "manifest.json", "--store", store, "--base-url", base, "--body", "Hi", "--dialect", "fcm"],
                in: directory, environment: environment)
            #expect(fcm.status == 0, "\(fcm.stderr)")
            let payload = try #require(try JSONSerialization.jsonObject(with: fcm.stdout) as? [String: Any])
            let image = ((payload["message"] as? [String: Any])?["apns"] as? [String: Any])?["fcm_options"]
            #expect((image as? [String: Any])?["image"] as? String == "\(base)/a/b/\(poster.file)")
        }
    }

    @Test("payload --store refuses an attachment whose object is not in the store (invalid_payload, exit 1)")
    func missingObject() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let environment = try await server.pushprepEnvironment()
        try await CLI.inTemporaryDirectory { directory in
            let inputs = try CLI.makeSamples(in: directory)
            let store = try await server.storeURL(prefix: "push", bucket: bucket)
            let photo = try #require(
                try Self.stored([inputs[0]], store: store, in: directory, environment: environment).first)
            // The same bucket under another prefix: no such object.
            let other = try await server.storeURL(prefix: "elsewhere", bucket: bucket)
            let run = try CLI.pushprep(
                ["payload", "manifest.json", "--store", other, "--presign", "1d", "--body", "Hi"], in: directory,
                environment: environment)
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains("invalid_payload"), "\(run.stderr)")
            #expect(run.stderr.contains("no object elsewhere/\(photo.file) in the bucket \(bucket)"), "\(run.stderr)")
            // The right store still gives the payload.
            let good = try CLI.pushprep(
                ["payload", "manifest.json", "--store", store, "--presign", "1d", "--body", "Hi"], in: directory,
                environment: environment)
            #expect(good.status == 0, "\(good.stderr)")
        }
    }

    @Test(
        "payload --store refuses an object another client put under an entry's key without x-amz-meta-sha256: 31 bytes for a larger entry are invalid_payload, saying what was expected and found"
    )
    func objectWithoutDigest() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let environment = try await server.pushprepEnvironment()
        try await CLI.inTemporaryDirectory { directory in
            let inputs = try CLI.makeSamples(in: directory)
            let store = try await server.storeURL(prefix: "push", bucket: bucket)
            let photo = try #require(
                try Self.stored([inputs[0]], store: store, in: directory, environment: environment).first)
            #expect(photo.bytes > 31)
            // boto3 puts 31 other bytes under the entry's key, with no x-amz-meta-sha256.
            try await server.put(
                "push/\(photo.file)", body: Data("not the attachment, 31 bytes...".utf8), bucket: bucket)
            #expect(try await server.readBack("push/\(photo.file)", bucket: bucket)?.metadata["sha256"] == nil)
            let run = try CLI.pushprep(
                ["payload", "manifest.json", "--store", store, "--presign", "1d", "--body", "Hi"], in: directory,
                environment: environment)
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains("invalid_payload"), "\(run.stderr)")
            #expect(
                run.stderr.contains(
                    "the object push/\(photo.file) holds other bytes than the manifest's entry: expected "
                        + "\(photo.bytes) bytes with SHA-256 \(photo.sha256), found 31 bytes"), "\(run.stderr)")
        }
    }

    @Test(
        "payload --store checks each rendition's object (a HEAD, its size and SHA-256) before a provider's Android key carries its URL"
    )
    func renditionObjects() async throws {
        let server = MotoS3Server.shared
        let bucket = try await server.makeBucket()
        let environment = try await server.pushprepEnvironment()
        try await CLI.inTemporaryDirectory { directory in
            let inputs = try CLI.makeSamples(in: directory)
            let store = try await server.storeURL(prefix: "push", bucket: bucket)
            let photo = try #require(
                try Self.stored([inputs[0]], store: store, in: directory, environment: environment).first)
            // The photo's Android rendition, a real JPEG named in the manifest as processing names it.
            let name = "and-\(photo.id.dropFirst(4)).jpg"
            let file = directory.appendingPathComponent(name)
            try TestTools.vips("black", file.path, "64", "32")
            let bytes = try Data(contentsOf: file)
            let manifestURL = directory.appendingPathComponent("manifest.json")
            var manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: manifestURL))
            var entry = photo
            entry.renditions.android = Rendition(
                id: String(name.dropLast(4)), file: name, mime: "image/jpeg", bytes: bytes.count,
                sha256: SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined(), width: 64, height: 32,
                crop: CropRectangle(x: 0, y: 0, width: 64, height: 32))
            manifest.attachments[0] = .ok(entry)
            try manifest.jsonData().write(to: manifestURL)
            func payload() throws -> CLI.Run {
                try CLI.pushprep(
                    [
                        "payload", "manifest.json", "--store", store, "--presign", "1d", "--dialect", "fcm", "--body",
                        "Hi",
                    ],
                    in: directory, environment: environment)
            }

            // Not in the bucket: the Android push would carry a URL that answers 404.
            let missing = try payload()
            #expect(missing.status == 1, "\(missing.stderr)")
            #expect(missing.stdout.isEmpty)
            #expect(missing.stderr.contains("invalid_payload"), "\(missing.stderr)")
            #expect(missing.stderr.contains("no object push/\(name) in the bucket \(bucket)"), "\(missing.stderr)")
            // Other bytes under its key.
            try await server.put("push/\(name)", body: Data("not the rendition".utf8), bucket: bucket)
            let other = try payload()
            #expect(other.status == 1, "\(other.stderr)")
            #expect(
                other.stderr.contains("the object push/\(name) holds other bytes than the manifest's entry"),
                "\(other.stderr)")
            // Its bytes: the Android key carries its URL, signed now.
            try await server.put("push/\(name)", body: bytes, bucket: bucket)
            let good = try payload()
            #expect(good.status == 0, "\(good.stderr)")
            let message = try #require(
                (try JSONSerialization.jsonObject(with: good.stdout) as? [String: Any])?["message"] as? [String: Any])
            let image = try #require(
                ((message["android"] as? [String: Any])?["notification"] as? [String: Any])?["image"] as? String)
            #expect(image.hasPrefix("\(try await server.endpoint.absoluteString)/\(bucket)/push/\(name)?"), "\(image)")
            #expect(image.contains("X-Amz-Signature="))
        }
    }

    @Test("payload: --presign without --store, a file: store, and --presign with --base-url are usage errors")
    func usageErrors() async throws {
        let server = MotoS3Server.shared
        let store = try await server.storeURL(prefix: "push")
        let environment = try await server.pushprepEnvironment()
        try await CLI.inTemporaryDirectory { directory in
            // A real manifest, so that only the options can make the run a usage error.
            let inputs = try CLI.makeSamples(in: directory)
            let local = try CLI.pushprep(
                ["process", inputs[0], "--out", "out", "--manifest", "manifest.json"], in: directory,
                environment: environment)
            #expect(local.status == 0, "\(local.stderr)")
            let plain = try CLI.pushprep(
                ["payload", "manifest.json", "--body", "Hi", "--base-url", "https://cdn.example.com"], in: directory,
                environment: environment)
            #expect(plain.status == 0, "\(plain.stderr)")
            for arguments in [
                ["--presign", "1d"], ["--store", "file:out"], ["--store", store, "--presign", "8d"],
                ["--store", store, "--presign", "1d", "--base-url", "https://cdn.example.com"],
            ] {
                let run = try CLI.pushprep(
                    ["payload", "manifest.json", "--body", "Hi"] + arguments, in: directory, environment: environment)
                #expect(run.status == 2, "\(arguments): \(run.stderr)")
            }
        }
    }

    /// The findings of a `preflight --json` run's one report, as (code, severity).
    private static func findings(_ run: CLI.Run) throws -> [(code: String, severity: String)] {
        let output = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        let report = try #require((output["reports"] as? [[String: Any]])?.first)
        let findings = try #require(report["findings"] as? [[String: Any]])
        return findings.map { ($0["code"] as? String ?? "?", $0["severity"] as? String ?? "?") }
    }

    @Test("preflight --fix --store --presign: the WebP's JPEG is in the bucket and the fixed payload points at it")
    func preflightFix() async throws {
        let webpDirectory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(webpDirectory) }
        let webp = webpDirectory.appendingPathComponent("banner.webp")
        try TestTools.vips("gaussnoise", webp.path, "64", "48")
        let bytes = Array(try Data(contentsOf: webp))
        // moto with IAM auth checks the uploads' signatures; the one without serves presigned GETs.
        for server in [MotoS3Server.shared, MotoS3Server.withoutIAM] {
            let bucket = try await server.makeBucket()
            let store = try await server.storeURL(prefix: "fixed", bucket: bucket)
            let environment = try await server.pushprepEnvironment()
            try await CLI.inTemporaryDirectory { directory in
                try await TestServer.with(files: ["banner.webp": bytes]) { http in
                    let payload =
                        #"{"aps":{"alert":"B"},"attachments":[{"id":"a","url":"\#(http.url("/files/banner.webp"))"}]}"#
                    try Data(payload.utf8).write(to: directory.appendingPathComponent("remote.json"))
                    let fix = try CLI.pushprep(
                        [
                            "preflight", "remote.json", "--fix", "fixed.json", "--store", store, "--presign", "2d",
                            "--allow-host", "127.0.0.1", "--allow-http",
                        ], in: directory, environment: environment)
                    // The store's URL is moto's, http://127.0.0.1:PORT: with --allow-http a warning, but
                    // no phone reaches 127.0.0.1, so unreachable_url remains, an error: exit 1.
                    #expect(fix.status == 1, "\(fix.stdout)\n\(fix.stderr)")
                    #expect(String(decoding: fix.stdout, as: UTF8.self).contains("unreachable_url"))
                    let fixedData = try Data(contentsOf: directory.appendingPathComponent("fixed.json"))
                    let fixed = try #require(try JSONSerialization.jsonObject(with: fixedData) as? [String: Any])
                    let link = try #require((fixed["attachments"] as? [[String: Any]])?.first?["url"] as? String)
                    let prefix = "\(try await server.endpoint.absoluteString)/\(bucket)/fixed/"
                    #expect(link.hasPrefix(prefix) && link.contains(".jpg?"), "\(link)")
                    #expect(link.contains("X-Amz-Expires=172800"))
                    #expect(try CLI.botocoreAgrees(link, environment: environment, region: server.region))
                    let file = String(link.dropFirst(prefix.count).prefix { $0 != "?" })
                    let stored = try #require(try await server.readBack("fixed/\(file)", bucket: bucket))
                    #expect(stored.contentType == "image/jpeg")
                    #expect(Array(stored.body.prefix(3)) == [0xFF, 0xD8, 0xFF])
                    #expect(stored.metadata["sha256"] == SHA256.hash(data: stored.body).hexString)
                    // Nothing was written beside the payload: the staging folder was private.
                    #expect(
                        !FileManager.default.fileExists(atPath: directory.appendingPathComponent("pushprep-out").path))

                    // The fixed payload pre-flights clean but for its URL on moto (http, and 127.0.0.1).
                    var check = ["preflight", "fixed.json", "--allow-http", "--json"]
                    if !server.iamAuth { check += ["--fetch", "--allow-host", "127.0.0.1"] }
                    let recheck = try CLI.pushprep(check, in: directory, environment: environment)
                    #expect(recheck.status == 1, "\(String(decoding: recheck.stdout, as: UTF8.self))")
                    let findings = try Self.findings(recheck)
                    #expect(findings.map(\.code) == ["unreachable_url", "insecure_url"], "\(findings)")
                    #expect(findings.map(\.severity) == ["error", "warning"])
                }
            }
        }
    }

    @Test("preflight --fix --store with an unreachable store: the attachment is not fixed (storage_unavailable)")
    func preflightFixUnreachable() async throws {
        let environment = try await MotoS3Server.shared.pushprepEnvironment()
        // A port nothing listens on: a stopped server, as the client sees it.
        let port = try ChildProcessTools.freePort()
        let store = "s3://pushprep-gone/push?region=us-east-1&endpoint=http://127.0.0.1:\(port)"
        let webpDirectory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(webpDirectory) }
        let webp = webpDirectory.appendingPathComponent("banner.webp")
        try TestTools.vips("gaussnoise", webp.path, "64", "48")
        let bytes = Array(try Data(contentsOf: webp))
        try await CLI.inTemporaryDirectory { directory in
            try await TestServer.with(files: ["banner.webp": bytes]) { http in
                let original = http.url("/files/banner.webp")
                let payload = #"{"aps":{"alert":"B"},"attachments":[{"id":"a","url":"\#(original)"}]}"#
                try Data(payload.utf8).write(to: directory.appendingPathComponent("remote.json"))
                let fix = try CLI.pushprep(
                    [
                        "preflight", "remote.json", "--fix", "fixed.json", "--store", store, "--allow-host",
                        "127.0.0.1", "--allow-http",
                    ], in: directory, environment: environment)
                let text = String(decoding: fix.stdout, as: UTF8.self)
                #expect(fix.status == 1, "\(text)\n\(fix.stderr)")
                #expect(
                    text.contains("/attachments/0/url: not fixed: ") && text.contains("storage_unavailable"), "\(text)")
                let fixedData = try Data(contentsOf: directory.appendingPathComponent("fixed.json"))
                let fixed = try #require(try JSONSerialization.jsonObject(with: fixedData) as? [String: Any])
                #expect((fixed["attachments"] as? [[String: Any]])?.first?["url"] as? String == original)
            }
        }
    }

    @Test("preflight: --store without --fix, and --out with --store, are usage errors")
    func preflightUsageErrors() async throws {
        let server = MotoS3Server.shared
        let store = try await server.storeURL(prefix: "push")
        let environment = try await server.pushprepEnvironment()
        try await CLI.inTemporaryDirectory { directory in
            try Data(#"{"aps":{"alert":"B"}}"#.utf8).write(to: directory.appendingPathComponent("p.json"))
            #expect(try CLI.pushprep(["preflight", "p.json"], in: directory, environment: environment).status == 0)
            for arguments in [
                ["--store", store], ["--presign", "1d"], ["--fix", "f.json", "--store", store, "--out", "out"],
                ["--fix", "f.json", "--out", "out", "--presign", "1d"],
            ] {
                let run = try CLI.pushprep(
                    ["preflight", "p.json"] + arguments, in: directory, environment: environment)
                #expect(run.status == 2, "\(arguments): \(run.stderr)")
            }
        }
    }
}
