import Foundation
import PushPrepCore
import PushPrepPayload
import PushPrepTestSupport
import Testing

@testable import PushPrepJSON

/// `pushprep payload` and `pushprep preflight` as real processes: exit statuses, `--json`,
/// standard input, `--fetch` through `--allow-host`, `--fix`, and every dialect's payload from
/// a real manifest fed back into pre-flight.
@Suite(
    .serialized,
    .enabled(if: TestTools.programAvailable("vips"), "needs the vips program (make deps installs libvips-tools)"),
    .timeLimit(.minutes(5)))
final class PreflightCLITests {
    let directory: URL

    init() throws {
        directory = try TestTools.temporaryDirectory()
    }

    deinit {
        TestTools.removeDirectory(directory)
    }

    private struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    private func pushprep(_ arguments: [String], stdin: String? = nil) throws -> Result {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let result = try TestTools.run(
            binary.path, arguments, stdin: stdin.map { Data($0.utf8) }, currentDirectory: directory,
            timeout: .seconds(120))
        return Result(
            status: result.status, stdout: String(decoding: result.stdout, as: UTF8.self),
            stderr: String(decoding: result.stderr, as: UTF8.self))
    }

    private func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    private let clean =
        #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"https://cdn.example.com/a.jpg"}]}"#
    private let warningOnly =
        #"{"aps":{"alert":"B","mutable-content":1,"custom":1},"attachments":[{"id":"a","url":"https://cdn.example.com/a.jpg"}]}"#
    private let broken = #"{"aps":{"alert":"B"},"attachments":[{"id":"a","url":"http://cdn.example.com/a.webp"}]}"#

    @Test("exit status: 0 clean, 1 on an error, 3 on warnings with --strict, 2 on usage errors")
    func exitStatus() throws {
        try write("clean.json", clean)
        try write("warning.json", warningOnly)
        try write("broken.json", broken)
        #expect(try pushprep(["preflight", "clean.json"]).status == 0)
        #expect(try pushprep(["preflight", "warning.json"]).status == 0)
        #expect(try pushprep(["preflight", "warning.json", "--strict"]).status == 3)
        #expect(try pushprep(["preflight", "clean.json", "broken.json", "--strict"]).status == 1)
        let human = try pushprep(["preflight", "broken.json"])
        #expect(human.status == 1)
        #expect(human.stdout.contains("error    missing_mutable_content at /aps/mutable-content"))
        #expect(human.stdout.contains("error    insecure_url at /attachments/0/url"))
        #expect(human.stdout.contains("unsupported_extension"))
        for usage in [
            ["preflight", "clean.json", "--dialect", "pigeon"], ["preflight", "missing.json"],
            ["preflight", "clean.json", "warning.json", "--fix", "out.json"], ["preflight"],
            ["preflight", "clean.json", "--push-type", "loud"],
            ["preflight", "clean.json", "--assume-bandwidth", "fast"],
            ["preflight", "clean.json", "--assume-bandwidth", "0"],
        ] {
            let result = try pushprep(usage)
            #expect(result.status == 2, "\(usage): \(result.stderr)")
        }
        let missing = try pushprep(["preflight", "clean.json", "missing.json"])
        #expect(missing.status == 2)
        #expect(missing.stdout.isEmpty, "nothing is checked when a file cannot be read")
        #expect(
            missing.stderr == "Error: cannot read the payload missing.json: No such file or directory\n",
            "the reason, without the root command's usage")
    }

    @Test("--manifest judges the Android and web images a manifest made; --assume-bandwidth sets the estimate")
    func manifestAndBandwidth() async throws {
        let (manifest, attachment) = try await PreflightPlatformTests.manifest { directory in
            Renditions(
                android: try PreflightPlatformTests.rendition(
                    .android, width: 1024, height: 512, in: directory),
                webIcon: try PreflightPlatformTests.rendition(.webIcon, width: 96, height: 96, in: directory))
        }
        try JSONEncoder().encode(manifest).write(to: directory.appendingPathComponent("manifest.json"))
        let android = try #require(attachment.renditions.android)
        let payload = PreflightTableTests.oneSignal(
            #""contents":{"en":"B"},"ios_attachments":{"img":"\#(attachment.url!)"},"big_picture":"\#(android.url!)","chrome_web_icon":"\#(attachment.renditions.webIcon!.url!)""#
        )
        try write("onesignal.json", payload)
        // The speed at which the rendition takes exactly FCM's 5 s; checked 10% below and above it.
        let threshold = Double(android.bytes) * 8 / AndroidRules.downloadTimeout
        let slow = try pushprep([
            "preflight", "onesignal.json", "--manifest", "manifest.json", "--json", "--assume-bandwidth",
            String(Int(threshold * 0.9)),
        ])
        #expect(slow.status == 0, "warnings only: \(slow.stderr)")
        let findings = try #require(
            (try json(slow.stdout)["reports"] as? [[String: Any]])?.first?["findings"] as? [[String: Any]])
        #expect(
            Set(
                findings.compactMap { finding in
                    (finding["code"] as? String).map { "\($0) \(finding["pointer"] as? String ?? "")" }
                }) == ["android_image_slow /big_picture", "web_icon_too_small /chrome_web_icon"])
        let fast = try pushprep([
            "preflight", "onesignal.json", "--manifest", "manifest.json", "--strict", "--assume-bandwidth",
            String(Int(threshold * 1.1)),
        ])
        #expect(fast.status == 3, "the icon is still too small: \(fast.stdout)")
        #expect(fast.stdout.contains("warning  web_icon_too_small at /chrome_web_icon"))
        #expect(!fast.stdout.contains("android_image_slow"), "\(fast.stdout)")
        #expect(fast.stdout.contains("android_image /big_picture: \(android.url!)"))
        let without = try pushprep(["preflight", "onesignal.json", "--strict"])
        #expect(without.status == 0, "without the manifest nothing is known: \(without.stdout)")
        let bad = try pushprep(["preflight", "onesignal.json", "--assume-bandwidth", "1mbyte"])
        #expect(bad.status == 2 && bad.stderr.contains("--assume-bandwidth must be a speed"), "\(bad.stderr)")
        try write("not-a-manifest.json", "{}")
        let notManifest = try pushprep(["preflight", "onesignal.json", "--manifest", "not-a-manifest.json"])
        #expect(notManifest.status != 0 && notManifest.stderr.contains("is not a PushPrep manifest"))
    }

    @Test("standard input is read up to the cap: an endless stream fails at once instead of filling memory")
    func endlessStandardInput() throws {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        for command in [["preflight", "-"], ["payload", "-", "--body", "B"]] {
            let result = try TestTools.run(
                binary.path, command, stdinFile: URL(fileURLWithPath: "/dev/zero"), currentDirectory: directory,
                timeout: .seconds(60))
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            #expect(result.status == 1, "\(command): \(stderr)")
            #expect(stderr.contains("invalid_payload") && stderr.contains("is over 16777216 bytes"), "\(stderr)")
        }
    }

    @Test("--json: reports with findings, totals; standard input as -")
    func jsonOutput() throws {
        let result = try pushprep(["preflight", "-", "--json"], stdin: broken)
        #expect(result.status == 1)
        let output = try json(result.stdout)
        let reports = try #require(output["reports"] as? [[String: Any]])
        #expect(reports.first?["file"] as? String == "-")
        #expect(reports.first?["dialect"] as? String == "apns")
        let findings = try #require(reports.first?["findings"] as? [[String: Any]])
        #expect(findings.allSatisfy { $0["severity"] is String && $0["message"] is String && $0["pointer"] is String })
        #expect(
            Set(findings.compactMap { $0["code"] as? String }) == [
                "missing_mutable_content", "insecure_url", "unsupported_extension",
            ])
        #expect(output["errors"] as? Int == 3)
        #expect(output["warnings"] as? Int == 0)
    }

    @Test("--fetch through --allow-host, and --fix end to end")
    func fetchAndFix() async throws {
        let webp = directory.appendingPathComponent("banner.webp")
        try TestTools.vips("gaussnoise", webp.path, "64", "48")
        let bytes = Array(try Data(contentsOf: webp))
        try await TestServer.with(files: ["banner.webp": bytes]) { server in
            try fetchAndFix(url: server.url("/files/banner.webp"), webpBytes: bytes.count)
        }
    }

    @Test("keys holding control characters reach the terminal escaped, not as escape sequences or new lines")
    func controlCharactersInKeysAreEscaped() throws {
        try write(
            "hostile.json",
            #"{"aps":{"alert":"B","mutable-content":1,"\u001b[2Jx":1},"message":{},"\u001b]0;t\u0007y\nz":2}"#)
        let result = try pushprep(["preflight", "hostile.json", "--dialect", "apns"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(!result.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(result.stdout)")
        #expect(result.stdout.contains(#"\u001b[2Jx"#), "\(result.stdout)")
    }

    @Test("--fix re-hosts an attachment only a loopback URL reaches (unreachable_url)")
    func fixRehostsAnUnreachableURL() async throws {
        let jpeg = directory.appendingPathComponent("photo.jpg")
        try TestTools.vips("gaussnoise", jpeg.path + "[Q=80]", "64", "48")
        let bytes = Array(try Data(contentsOf: jpeg))
        try await TestServer.with(files: ["photo.jpg": bytes]) { server in
            let url = server.url("/files/photo.jpg")
            try write("loopback.json", #"{"aps":{"alert":"B"},"attachments":[{"id":"a","url":"\#(url)"}]}"#)
            let before = try pushprep(["preflight", "loopback.json", "--allow-http"])
            #expect(before.status == 1)
            #expect(before.stdout.contains("unreachable_url at /attachments/0/url"), "\(before.stdout)")
            let fixed = try pushprep([
                "preflight", "loopback.json", "--fix", "fixed.json", "--out", "fix-out", "--base-url",
                "https://cdn.example.com/push", "--allow-host", "127.0.0.1", "--allow-http",
            ])
            #expect(fixed.status == 0, "\(fixed.stdout)\n\(fixed.stderr)")
            #expect(fixed.stdout.contains("after the fix: clean"), "\(fixed.stdout)")
            let written = try json(
                String(decoding: try Data(contentsOf: directory.appendingPathComponent("fixed.json")), as: UTF8.self))
            let newURL = (written["attachments"] as? [[String: Any]])?.first?["url"] as? String
            #expect(newURL?.hasPrefix("https://cdn.example.com/push/img-") == true, "\(String(describing: newURL))")
        }
    }

    private func fetchAndFix(url: String, webpBytes: Int) throws {
        try write("remote.json", #"{"aps":{"alert":"B"},"attachments":[{"id":"a","url":"\#(url)"}]}"#)

        let blocked = try pushprep(["preflight", "remote.json", "--fetch", "--allow-http", "--json"])
        #expect(blocked.status == 1)
        #expect(blocked.stdout.contains("blocked_address"))

        let fetched = try pushprep([
            "preflight", "remote.json", "--fetch", "--allow-http", "--allow-host", "127.0.0.1", "--json",
        ])
        #expect(fetched.status == 1)
        let report = try #require((try json(fetched.stdout)["reports"] as? [[String: Any]])?.first)
        let codes = (report["findings"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? []
        #expect(codes.contains("content_not_accepted") && codes.contains("unsupported_extension"))
        #expect(
            ((report["attachments"] as? [[String: Any]])?.first?["fetched"] as? [String: Any])?["type"] as? String
                == "webp")

        let text = try pushprep(["preflight", "remote.json", "--fetch", "--allow-http", "--allow-host", "127.0.0.1"])
        #expect(text.status == 1)
        #expect(text.stdout.contains("    HTTP 200, \(webpBytes) bytes, webp, "), "\(text.stdout)")
        #expect(text.stdout.contains("error    content_not_accepted at /attachments/0/url"), "\(text.stdout)")

        let fixed = try pushprep([
            "preflight", "remote.json", "--fix", "fixed.json", "--out", "fix-out", "--base-url",
            "https://cdn.example.com/push", "--allow-host", "127.0.0.1", "--allow-http",
        ])
        #expect(fixed.status == 0, "\(fixed.stdout)\n\(fixed.stderr)")
        #expect(fixed.stdout.contains("changes:") && fixed.stdout.contains("after the fix: clean"))
        // The verdict once: not `after the fix: clean` and then `clean` again.
        #expect(fixed.stdout.components(separatedBy: "clean").count == 2, "\(fixed.stdout)")
        let written = try json(
            String(decoding: try Data(contentsOf: directory.appendingPathComponent("fixed.json")), as: UTF8.self))
        let attachment = try #require((written["attachments"] as? [[String: Any]])?.first)
        let newURL = try #require(attachment["url"] as? String)
        #expect(newURL.hasPrefix("https://cdn.example.com/push/img-") && newURL.hasSuffix(".jpg"))
        let name = String(newURL.split(separator: "/").last!)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("fix-out/\(name)").path))
        #expect((written["aps"] as? [String: Any])?["mutable-content"] as? Int == 1)
        #expect(try pushprep(["preflight", "fixed.json", "--strict"]).status == 0)
    }

    /// The keys each provider documents for an attachment push (see `payload --help`), as JSON
    /// Pointers to the values `payload` must write for one JPEG with these texts and category.
    private static func documentedShape(_ dialect: PushDialect, id: String, url: String) -> [String: JSONValue] {
        let title = JSONValue.string("Hello")
        let body = JSONValue.string("A new photo")
        let category = JSONValue.string("NEWS")
        switch dialect {
        case .apns:
            return [
                "/aps/alert/title": title, "/aps/alert/body": body, "/aps/mutable-content": JSONValue(1),
                "/aps/category": category, "/attachments/0/id": .string(id), "/attachments/0/url": .string(url),
                "/attachments/0/type": .string("public.jpeg"),
                "/attachments/0/options/UNNotificationAttachmentOptionsTypeHintKey": .string("public.jpeg"),
            ]
        case .onesignal:
            return [
                "/headings/en": title, "/contents/en": body, "/ios_attachments/\(id)": .string(url),
                "/mutable_content": .bool(true), "/ios_category": category,
            ]
        case .airship:
            return [
                "/device_types/0": .string("ios"), "/notification/alert": body, "/notification/ios/title": title,
                "/notification/ios/mutable_content": .bool(true),
                "/notification/ios/media_attachment/url": .string(url), "/notification/ios/category": category,
            ]
        case .braze:
            return [
                "/messages/apple_push/alert/title": title, "/messages/apple_push/alert/body": body,
                "/messages/apple_push/asset_url": .string(url), "/messages/apple_push/asset_file_type": .string("jpg"),
                "/messages/apple_push/mutable_content": .bool(true), "/messages/apple_push/category": category,
            ]
        case .fcm:
            return [
                "/message/notification/title": title, "/message/notification/body": body,
                "/message/apns/payload/aps/mutable-content": JSONValue(1),
                "/message/apns/payload/aps/category": category, "/message/apns/fcm_options/image": .string(url),
            ]
        }
    }

    @Test("payload: every dialect from a real manifest has the provider's keys and pre-flights clean")
    func payloadEveryDialect() throws {
        try TestTools.vips("gaussnoise", directory.appendingPathComponent("photo.jpg").path, "300", "200")
        let processed = try pushprep([
            "process", "photo.jpg", "--out", "out", "--base-url", "https://cdn.example.com/push",
        ])
        try #require(processed.status == 0, "\(processed.stderr)")
        let manifest = try JSONDecoder().decode(
            Manifest.self, from: Data(contentsOf: directory.appendingPathComponent("out/manifest.json")))
        let attachment = try #require(manifest.attachments.first?.attachment)
        let url = try #require(attachment.url)
        #expect(url == "https://cdn.example.com/push/\(attachment.file)")

        for dialect in PushDialect.allCases {
            let result = try pushprep([
                "payload", "out/manifest.json", "--dialect", dialect.rawValue, "--title", "Hello", "--body",
                "A new photo", "--category", "NEWS",
            ])
            #expect(result.status == 0, "\(dialect): \(result.stderr)")
            let payload = try JSONValue.parse(Array(result.stdout.utf8)).value
            for (pointer, expected) in Self.documentedShape(dialect, id: attachment.id, url: url) {
                let path = try #require(JSONPath(pointer: pointer))
                #expect(payload[path] == expected, "\(dialect) \(pointer): \(result.stdout)")
            }
            try write("\(dialect.rawValue).json", result.stdout)
            for arguments in [["--dialect", dialect.rawValue], []] {
                let check = try pushprep(["preflight", "\(dialect.rawValue).json", "--strict", "--json"] + arguments)
                #expect(check.status == 0, "\(dialect) \(arguments): \(check.stdout)")
                let report = try #require((try json(check.stdout)["reports"] as? [[String: Any]])?.first)
                #expect(report["dialect"] as? String == dialect.rawValue)
            }
        }
        let compact = try pushprep(["payload", "out/manifest.json", "--body", "Hi", "--compact"])
        #expect(compact.status == 0 && !compact.stdout.dropLast().contains("\n"))

        let noAlert = try pushprep(["payload", "out/manifest.json"])
        #expect(noAlert.status == 2, "\(noAlert.stderr)")
        let noScheme = try pushprep(["payload", "out/manifest.json", "--body", "Hi", "--base-url", "cdn.example.com"])
        #expect(noScheme.status == 2 && noScheme.stdout.isEmpty)
        #expect(noScheme.stderr.contains("--base-url must start with https://"), "\(noScheme.stderr)")
        let tooLong = try pushprep(["payload", "out/manifest.json", "--body", String(repeating: "x", count: 5000)])
        #expect(tooLong.status == 1)
        #expect(tooLong.stderr.contains("payload_too_large"))
        let unknown = try pushprep(["payload", "out/manifest.json", "--body", "Hi", "--id", "img-nope"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("img-nope"))
        try write("not-a-manifest.json", clean)
        let notManifest = try pushprep(["payload", "not-a-manifest.json", "--body", "Hi"])
        #expect(notManifest.status == 1)
        #expect(notManifest.stderr.contains("invalid_payload"))
    }

    @Test("payload warns on standard error when a signed attachment URL expires within a day, and pre-flight agrees")
    func payloadWarnsOfExpiringURLs() throws {
        try TestTools.vips("gaussnoise", directory.appendingPathComponent("photo.jpg").path, "64", "48")
        let made = try pushprep(["process", "photo.jpg", "--out", "out"])
        try #require(made.status == 0, "\(made.stderr)")
        // Signed 23 hours ago for a day: an hour left.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let signed = Date().addingTimeInterval(-23 * 3600)
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: signed)
        let stamp = String(
            format: "%04d%02d%02dT%02d%02d%02dZ", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!,
            parts.second!)
        let base = "https://b.s3.example/push?X-Amz-Date=\(stamp)&X-Amz-Expires=86400&X-Amz-Signature=ab"

        let soon = try pushprep(["payload", "out/manifest.json", "--body", "Hi", "--base-url", base])
        #expect(soon.status == 0, "\(soon.stderr)")
        #expect(
            soon.stderr.contains("warning: img-") && soon.stderr.contains("the signed URL expires at")
                && soon.stderr.contains(" min: a push held"), "\(soon.stderr)")
        try write("soon.json", soon.stdout)
        let checked = try pushprep(["preflight", "soon.json", "--strict"])
        #expect(checked.status == 3, "a warning only: \(checked.stdout)")
        #expect(checked.stdout.contains("url_expires_soon"), "\(checked.stdout)")

        let plain = try pushprep([
            "payload", "out/manifest.json", "--body", "Hi", "--base-url", "https://cdn.example/p",
        ])
        #expect(plain.status == 0 && !plain.stderr.contains("warning"), "\(plain.stderr)")
    }
}
