import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepReport

/// `pushprep process … --report` and `pushprep preflight … --report` as real processes on inputs
/// made here; the pages are parsed by Python's html.parser and held to the DOM contract of
/// issue 17 (the one the browser tests select), the manifest, and their own CSP.
@Suite(
    .serialized,
    .enabled(
        if: TestTools.programAvailable("vips") && TestTools.programAvailable("ffmpeg"),
        "needs the vips and ffmpeg programs (make deps)"),
    .timeLimit(.minutes(5)))
final class ReportCLITests {
    let directory: URL

    init() throws {
        directory = try TestTools.temporaryDirectory()
    }

    deinit {
        TestTools.removeDirectory(directory)
    }

    /// A source name no page may carry as markup.
    static let hostileName = #"a<script>alert(1)<&"'.jpg"#

    private func pushprep(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let result = try TestTools.run(binary.path, arguments, currentDirectory: directory, timeout: .seconds(180))
        return (result.status, String(decoding: result.stderr, as: UTF8.self))
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A photo, a transparent PNG, a movie, a sound, a corrupt JPEG and a photo with a hostile name.
    private func makeInputs() throws -> [String] {
        try TestTools.vips("gaussnoise", path("photo.jpg"), "900", "600")
        try TestTools.vips("black", path("alpha.v"), "300", "200", "--bands", "4")
        try TestTools.vips("copy", path("alpha.v"), path("logo.png"))
        let codec = TestTools.ffmpegCanEncode("libx264") ? "libx264" : "mpeg4"
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=640x360:rate=15:duration=2", "-c:v", codec, "-pix_fmt", "yuv420p",
            path("clip.mp4"))
        try TestTools.ffmpeg("-f", "lavfi", "-i", "sine=duration=3", path("sound.wav"))
        let photo = try Data(contentsOf: URL(fileURLWithPath: path("photo.jpg")))
        try photo.prefix(600).write(to: URL(fileURLWithPath: path("broken.jpg")))
        try photo.write(to: URL(fileURLWithPath: path(Self.hostileName)))
        return ["photo.jpg", "logo.png", "clip.mp4", "sound.wav", "broken.jpg", Self.hostileName]
    }

    private func manifest() throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: path("out/manifest.json"))))
    }

    @Test func processReportHoldsEveryInputAsTheManifestSays() throws {
        let inputs = try makeInputs()
        let run = try pushprep(["process"] + inputs + ["--out", "out", "--report", "pages/report.html"])
        #expect(run.status == 1, "one input is corrupt: \(run.stderr)")
        let manifest = try manifest()
        let html = try String(contentsOfFile: path("pages/report.html"), encoding: .utf8)
        let page = try ParsedHTML.parse(html)
        #expect(page.mismatched.isEmpty && page.unclosed.isEmpty, "\(page.mismatched) \(page.unclosed)")
        // Written through a temporary and a rename: nothing else is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: path("pages")) == ["report.html"])

        // The policy: nothing but data: images and the one stylesheet, by its hash.
        let meta = try page.one("meta", attribute: ("http-equiv", "Content-Security-Policy"))
        let policy = try #require(page[meta].attrs["content"])
        let style = try page.one("style")
        let hash = try #require(page[style].hash)
        #expect(policy.contains("default-src 'none'") && policy.contains("img-src data:"))
        #expect(policy.contains("style-src '\(hash)'"), "policy \(policy), style \(hash)")
        #expect(page.select("script").isEmpty)
        for node in page.nodes {
            for name in ["src", "href", "xlink:href", "action"] {
                guard let value = node.attrs[name] else { continue }
                #expect(value.hasPrefix("data:") || value.hasPrefix("#"), "\(node.tag) \(name)=\(value.prefix(40))")
            }
            #expect(node.attrs["style"] == nil, "an inline style on \(node.tag), which the CSP refuses")
        }
        #expect(!html.lowercased().contains("http://") && !html.lowercased().contains("https://"))
        #expect(!html.contains("<script"), "the hostile name reached the page as markup")

        // Summary: the manifest's counts and bytes.
        let report = try page.one("main", attribute: ("id", "report"))
        let summary = try page.one("section", attribute: ("id", "summary"), within: report)
        let ok = manifest.attachments.compactMap(\.attachment)
        let failed = manifest.attachments.compactMap(\.failure)
        #expect(ok.count == 5 && failed.count == 1)
        #expect(page[summary].attrs["data-count-ok"] == "\(ok.count)")
        #expect(page[summary].attrs["data-count-failed"] == "\(failed.count)")
        #expect(page[summary].attrs["data-bytes-after"] == "\(ok.map(\.bytes).reduce(0, +))")
        let broken = try #require(FileManager.default.attributesOfItem(atPath: path("broken.jpg"))[.size] as? Int)
        #expect(page[summary].attrs["data-bytes-before"] == "\(ok.map(\.input.bytes).reduce(0, +) + broken)")
        _ = try page.one("svg", attribute: ("id", "size-chart"), within: summary)

        // One article per input as the manifest says: the failed ones first, each part in order.
        let articles = page.select("article", classes: ["input"], within: report)
        try #require(articles.count == manifest.attachments.count)
        let ordered =
            manifest.attachments.filter { $0.failure != nil } + manifest.attachments.filter { $0.failure == nil }
        for (article, entry) in zip(articles, ordered) {
            let attrs = page[article].attrs
            #expect(attrs["data-source"] == entry.source)
            switch entry {
            case .ok(let attachment):
                #expect(attrs["data-status"] == "ok" && attrs["data-code"] == nil)
                #expect(attrs["data-kind"] == attachment.kind.rawValue)
                #expect(attrs["data-bytes-before"] == "\(attachment.input.bytes)")
                #expect(attrs["data-bytes-after"] == "\(attachment.bytes)")
                try checkPreview(page, article: article, attachment: attachment)
            case .failed(let failure):
                #expect(failure.source == "broken.jpg" && failure.error.code == .corruptInput)
                #expect(attrs["data-status"] == "failed" && attrs["data-kind"] == nil)
                #expect(attrs["data-code"] == "corrupt_input")
                #expect(attrs["data-bytes-before"] == "\(broken)" && attrs["data-bytes-after"] == "0")
                let text = page[article].text
                #expect(page.select("div", classes: ["notification"], within: article).isEmpty)
                #expect(text.contains("corrupt_input") && text.contains(Explanation(.corruptInput).meaning))
                #expect(text.contains(Explanation(.corruptInput).action))
            }
        }
        // The hostile name came through as text, whole.
        #expect(page.select("article", attribute: ("data-source", Self.hostileName)).count == 1)
        #expect(page.select("code").contains { page[$0].text == Self.hostileName })
    }

    /// A PNG named `.jpg` is processed with the extension-mismatch warning, which the report lists
    /// with its code, its meaning and what to do, as it does a failure.
    @Test func processReportExplainsAWarning() throws {
        try TestTools.vips("black", path("alpha.v"), "300", "200", "--bands", "4")
        try TestTools.vips("copy", path("alpha.v"), path("logo.png"))
        try FileManager.default.moveItem(atPath: path("logo.png"), toPath: path("logo.jpg"))
        let run = try pushprep(["process", "logo.jpg", "--out", "out", "--report", "report.html"])
        #expect(run.status == 0, "\(run.stderr)")
        let attachment = try #require(try manifest().attachments.first?.attachment)
        let warning = try #require(attachment.warnings.first?.message)
        #expect(attachment.warnings.count == 1 && warning.hasPrefix("the extension .jpg does not match"), "\(warning)")

        let page = try ParsedHTML.parse(String(contentsOfFile: path("report.html"), encoding: .utf8))
        let article = try page.one("article", attribute: ("data-source", "logo.jpg"))
        let item = try page.one("li", classes: ["problem-warning"], within: article)
        #expect(page[item].attrs["data-code"] == "extension_mismatch")
        let code = try page.one(classes: ["problem-code"], within: item)
        #expect(page[code].text == "extension_mismatch")
        let words = Explanation(ProcessingWarning.Code.extensionMismatch)
        #expect(page[try page.one(classes: ["meaning"], within: item)].text == words.meaning)
        #expect(page[try page.one(classes: ["advice"], within: item)].text == "What to do: " + words.action)
        #expect(page[item].text.contains(warning), "the message as the manifest has it")
    }

    /// The preview of a successful input: banner with app, title, body and (for pictures) a
    /// thumbnail box whose image is a small JPEG; expanded view by kind.
    private func checkPreview(_ page: ParsedHTML, article: Int, attachment: PushPrepCore.Attachment) throws {
        let notification = try page.one("div", classes: ["notification"], within: article)
        let banner = try page.one("div", classes: ["banner"], within: notification)
        for part in ["banner-icon", "banner-title", "banner-body"] {
            _ = try page.one(classes: [part], within: banner)
        }
        let expanded = try page.one("div", classes: ["expanded"], within: notification)
        switch attachment.kind {
        case .image, .video:
            let box = try page.one("div", classes: ["banner-thumb"], within: banner)
            let image = try page.one("image", within: box)
            let thumb = try jpeg(page[image].attrs["href"])
            #expect(min(thumb.width, thumb.height) <= 2 * NotificationPreview.thumbnailSide, "\(thumb)")
            let picture = try page.one("img", within: expanded)
            let large = try jpeg(page[picture].attrs["src"])
            #expect(max(large.width, large.height) <= NotificationPreview.expandedWidth, "\(large)")
            if attachment.kind == .video {
                _ = try page.one(classes: ["play-badge"], within: expanded)
                #expect(page[notification].text.contains("ThumbnailTime"))
            }
        case .audio:
            let bar = try page.one("div", classes: ["audio-bar"], within: expanded)
            #expect(page[bar].text.contains("0:03"), "\(page[bar].text)")
        }
    }

    /// A `data:image/jpeg;base64,` URL's image, decoded by libvips from a file.
    private func jpeg(_ url: String?) throws -> (width: Int, height: Int) {
        let url = try #require(url)
        let prefix = "data:image/jpeg;base64,"
        try #require(url.hasPrefix(prefix), "\(url.prefix(40))")
        let bytes = try #require(Data(base64Encoded: String(url.dropFirst(prefix.count))))
        let file = directory.appendingPathComponent("thumb-\(UUID().uuidString).jpg")
        try bytes.write(to: file)
        let probe = try ImageProbe.probe(file)
        #expect(probe.loader == "jpegload" && ImageProbe.decodesFully(file))
        return (probe.width, probe.height)
    }

    @Test func preflightReportPutsFindingsBesideTheParts() throws {
        let payload = #"""
            {"aps": {"alert": {"title": "Spring sale", "body": "Half off today"}, "sound": "default"},
             "attachments": [{"id": "hero", "url": "http://cdn.example.com/push/hero.webp", "type": "public.jpeg",
               "options": {"UNNotificationAttachmentOptionsThumbnailClippingRectKey":
                 {"X": 0.1, "Y": 0.1, "Width": 0.5, "Height": 0.5}}}]}
            """#
        try Data(payload.utf8).write(to: URL(fileURLWithPath: path("payload.json")))
        let run = try pushprep(["preflight", "payload.json", "--report", "preflight.html"])
        #expect(run.status == 1, "the payload has errors: \(run.stderr)")
        let json = try TestTools.run(
            try #require(TestTools.pushprepBinary()).path, ["preflight", "--json", "payload.json"],
            currentDirectory: directory)
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        let reports = try #require(object?["reports"] as? [[String: Any]])
        let expected = Set(
            try #require(reports.first?["findings"] as? [[String: Any]]).map {
                "\($0["code"] ?? "") \($0["severity"] ?? "")"
            })
        #expect(expected.contains("insecure_url error") && expected.contains("missing_mutable_content error"))

        let html = try String(contentsOfFile: path("preflight.html"), encoding: .utf8)
        let page = try ParsedHTML.parse(html)
        #expect(page.mismatched.isEmpty && page.unclosed.isEmpty, "\(page.mismatched) \(page.unclosed)")
        let meta = try page.one("meta", attribute: ("http-equiv", "Content-Security-Policy"))
        let hash = try #require(page[try page.one("style")].hash)
        #expect(page[meta].attrs["content"]?.contains("style-src '\(hash)'") == true)

        let findings = page.select("li", classes: ["finding"])
        let shown = Set(
            findings.map { "\(page[$0].attrs["data-code"] ?? "") \(page[$0].attrs["data-severity"] ?? "")" })
        #expect(shown == expected)
        func part(of code: String) -> String? {
            guard let finding = findings.first(where: { page[$0].attrs["data-code"] == code }) else { return nil }
            let parts = page.select("div", classes: ["findings-part"]).filter { page.isInside(finding, $0) }
            return parts.first.flatMap { page[$0].attrs["data-part"] }
        }
        #expect(part(of: "insecure_url") == "attachment")
        #expect(part(of: "unsupported_extension") == "attachment")
        #expect(part(of: "missing_mutable_content") == "payload")

        let banner = try page.one("div", classes: ["banner"])
        #expect(page[try page.one(classes: ["banner-title"], within: banner)].text == "Spring sale")
        #expect(page[try page.one("div", classes: ["banner-body"], within: banner)].text == "Half off today")
        // Not downloaded (no --fetch): the thumbnail box and the expanded view say so, no picture.
        _ = try page.one("div", classes: ["banner-thumb"], within: banner)
        #expect(page.select("img").isEmpty && page.select("image").isEmpty)
        #expect(page[try page.one("div", classes: ["expanded"])].text.contains("--fetch"))
    }
}

/// `preflight --fetch --report` and `--fix --report` against a real HTTP server on 127.0.0.1
/// (allowed with `--allow-host`), serving files made with `vips`.
extension ReportCLITests {
    /// Runs `body` with a server of a 300×200 JPEG (`photo.jpg`) and a 64×48 WebP (`banner.webp`).
    private func withServedImages(_ body: (TestServer<SourceFixtures>) async throws -> Void) async throws {
        try TestTools.vips("gaussnoise", path("served.jpg"), "300", "200")
        try TestTools.vips("gaussnoise", path("served.webp"), "64", "48")
        let files = [
            "photo.jpg": Array(try Data(contentsOf: URL(fileURLWithPath: path("served.jpg")))),
            "banner.webp": Array(try Data(contentsOf: URL(fileURLWithPath: path("served.webp")))),
        ]
        try await TestServer.with(files: files, body)
    }

    /// The page's one notification: its thumbnail's `<image>` and its expanded `<img>`, each
    /// with its JPEG's size.
    private func pictures(
        _ page: ParsedHTML
    ) throws -> (thumb: Int, banner: (width: Int, height: Int), expanded: (width: Int, height: Int)) {
        let notification = try page.one("div", classes: ["notification"])
        let box = try page.one("div", classes: ["banner-thumb"], within: notification)
        let thumb = try page.one("image", within: box)
        let expanded = try page.one("div", classes: ["expanded"], within: notification)
        let picture = try page.one("img", within: expanded)
        return (thumb, try jpeg(page[thumb].attrs["href"]), try jpeg(page[picture].attrs["src"]))
    }

    @Test func preflightFetchReportDrawsTheDownloadedPicture() async throws {
        try await withServedImages { server in
            let payload = #"""
                {"aps": {"alert": {"title": "Spring sale", "body": "Half off today"}, "mutable-content": 1},
                 "attachments": [{"id": "hero", "url": "\#(server.url("/files/photo.jpg"))",
                   "options": {"UNNotificationAttachmentOptionsThumbnailClippingRectKey":
                     {"X": 0.5, "Y": 0, "Width": 0.5, "Height": 1}}}]}
                """#
            try Data(payload.utf8).write(to: URL(fileURLWithPath: path("fetched.json")))
            let run = try pushprep([
                "preflight", "fetched.json", "--fetch", "--allow-http", "--allow-host", "127.0.0.1", "--report",
                "fetched.html",
            ])
            // The http warning, and unreachable_url (an error) for the test server's 127.0.0.1.
            #expect(run.status == 1, "\(run.stderr)")
            let html = try String(contentsOfFile: path("fetched.html"), encoding: .utf8)
            #expect(html.contains("unreachable_url"))
            let page = try ParsedHTML.parse(html)
            #expect(page.mismatched.isEmpty && page.unclosed.isEmpty, "\(page.mismatched) \(page.unclosed)")
            let (thumb, banner, expanded) = try pictures(page)
            // The batch report's sizes: within 320 × 320 (never enlarged), a short side of 76.
            #expect(expanded.width == 300 && expanded.height == 200, "\(expanded)")
            #expect(banner.height == 2 * NotificationPreview.thumbnailSide, "\(banner)")
            #expect(abs(Double(banner.width) / Double(banner.height) - 1.5) < 0.02, "\(banner)")
            // The thumbnail shows the clipping rectangle's right half of the 300 × 200 picture.
            let crop = try #require(
                ThumbnailCrop(
                    imageWidth: 300, imageHeight: 200, clip: ClippingRect(x: 0.5, y: 0, width: 0.5, height: 1)))
            let attrs = page[thumb].attrs
            #expect(
                [attrs["x"], attrs["y"], attrs["width"], attrs["height"]]
                    == [
                        crop.svgAttributes.x, crop.svgAttributes.y, crop.svgAttributes.width, crop.svgAttributes.height,
                    ])
            #expect(attrs["x"] == "-100" && attrs["width"] == "200")
            let img = try page.one("img")
            #expect(page[img].attrs["width"] == "300" && page[img].attrs["height"] == "200")
            let meta = try page.one("meta", attribute: ("http-equiv", "Content-Security-Policy"))
            #expect(page[meta].attrs["content"]?.contains("img-src data:") == true)
        }
    }

    /// An FCM message for iPhones, Android phones and browsers: the page shows each platform's
    /// part with the picture its key names (`--fetch` downloads Android's and the web's for the
    /// page), and where the payload gives a platform none, says so.
    @Test func preflightFetchReportShowsEachPlatformsPicture() async throws {
        try await withServedImages { server in
            let payload = #"""
                {"message": {"token": "t", "notification": {"title": "Spring sale", "body": "Half off today"},
                 "android": {"notification": {"image": "\#(server.url("/files/photo.jpg"))"}},
                 "webpush": {"notification": {"icon": "\#(server.url("/files/banner.webp"))"}},
                 "apns": {"payload": {"aps": {"mutable-content": 1}},
                          "fcm_options": {"image": "\#(server.url("/files/banner.webp"))"}}}}
                """#
            try Data(payload.utf8).write(to: URL(fileURLWithPath: path("fcm.json")))
            _ = try pushprep([
                "preflight", "fcm.json", "--fetch", "--allow-http", "--allow-host", "127.0.0.1", "--report", "fcm.html",
            ])
            let page = try ParsedHTML.parse(try String(contentsOfFile: path("fcm.html"), encoding: .utf8))
            #expect(page.mismatched.isEmpty && page.unclosed.isEmpty, "\(page.mismatched) \(page.unclosed)")
            let parts = page.select("div", classes: ["platform-part"])
            #expect(parts.map { page[$0].attrs["data-platform"] } == ["ios", "android", "web"])
            let androidPart = try #require(parts.first { page[$0].attrs["data-platform"] == "android" })
            let url = try page.one("code", classes: ["image-url"], within: androidPart)
            #expect(page[url].text == server.url("/files/photo.jpg"))
            #expect(page[androidPart].text.contains("/message/android/notification/image"))

            let android = try page.one("div", classes: ["android-notification"])
            #expect(page[android].attrs["data-has-picture"] == "true")
            let big = try page.one("img", classes: ["android-big-picture"], within: android)
            let picture = try jpeg(page[big].attrs["src"])
            #expect(picture.width == 300 && picture.height == 200, "the served 300 × 200 JPEG: \(picture)")
            #expect(page[big].attrs["width"] == "300" && page[big].attrs["height"] == "150", "drawn at 2:1")
            _ = try jpeg(page[try page.one("img", classes: ["android-large-icon"], within: android)].attrs["src"])
            #expect(page[android].text.contains("Spring sale") && page[android].text.contains("Half off today"))

            // The web: an icon (the WebP, drawn) but no image, which the card says.
            let web = try page.one("div", classes: ["web-notification"])
            #expect(page[web].attrs["data-has-picture"] == "false")
            _ = try jpeg(page[try page.one("img", classes: ["web-icon"], within: web)].attrs["src"])
            #expect(page[web].text.contains("this payload gives web no image (message.webpush.notification.image)"))
        }
    }

    /// An Android image over the FCM SDK's 1 MiB cap is not drawn: the phone shows the
    /// notification without it, and so does the page, saying why; iOS, under Apple's 10 MB, has it.
    @Test func preflightReportDrawsNoAndroidPictureOverTheCap() async throws {
        try TestTools.vips("gaussnoise", path("big.jpg") + "[Q=100]", "1600", "1200")
        let big = Array(try Data(contentsOf: URL(fileURLWithPath: path("big.jpg"))))
        try #require(big.count > AndroidRules.maxBytes, "the test image is \(big.count) bytes")
        try await TestServer.with(files: ["big.jpg": big]) { server in
            let url = server.url("/files/big.jpg")
            let payload = #"""
                {"message": {"token": "t", "notification": {"title": "Spring sale", "body": "Half off today"},
                 "android": {"notification": {"image": "\#(url)"}},
                 "apns": {"payload": {"aps": {"mutable-content": 1}}, "fcm_options": {"image": "\#(url)"}}}}
                """#
            try Data(payload.utf8).write(to: URL(fileURLWithPath: path("big.json")))
            _ = try pushprep([
                "preflight", "big.json", "--fetch", "--allow-http", "--allow-host", "127.0.0.1", "--report", "big.html",
            ])
            let page = try ParsedHTML.parse(try String(contentsOfFile: path("big.html"), encoding: .utf8))
            let android = try page.one("div", classes: ["android-notification"])
            #expect(page[android].attrs["data-has-picture"] == "false")
            #expect(page.select("img", within: android).isEmpty)
            let note = try page.one("p", classes: ["platform-no-picture"], within: android)
            #expect(
                page[note].text.contains("at \(big.count) bytes it is over the FCM SDK's 1048576-byte cap"),
                "\(page[note].text)")
            let ios = try page.one("div", classes: ["notification"])
            _ = try jpeg(page[try page.one("img", within: ios)].attrs["src"])
        }
    }

    @Test func preflightFixReportPreviewsTheCorrectedPayload() async throws {
        try await withServedImages { server in
            // No mutable-content, and a WebP: the fix adds the flag and re-hosts a JPEG of it.
            let payload = #"""
                {"aps": {"alert": {"title": "Spring sale", "body": "Half off today"}},
                 "attachments": [{"id": "hero", "url": "\#(server.url("/files/banner.webp"))"}]}
                """#
            try Data(payload.utf8).write(to: URL(fileURLWithPath: path("broken.json")))
            let before = try pushprep([
                "preflight", "broken.json", "--fetch", "--allow-http", "--allow-host", "127.0.0.1", "--report",
                "before.html",
            ])
            #expect(before.status == 1)
            let original = try ParsedHTML.parse(try String(contentsOfFile: path("before.html"), encoding: .utf8))
            let codes = Set(original.select("li", classes: ["finding"]).compactMap { original[$0].attrs["data-code"] })
            #expect(codes.contains("missing_mutable_content") && codes.contains("content_not_accepted"), "\(codes)")
            #expect(original.select("img").isEmpty, "iOS refuses the WebP: no picture of it")

            let run = try pushprep([
                "preflight", "broken.json", "--fix", "fixed.json", "--out", "fix-out", "--base-url",
                "https://cdn.example.com/push", "--allow-http", "--allow-host", "127.0.0.1", "--report", "fixed.html",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            let page = try ParsedHTML.parse(try String(contentsOfFile: path("fixed.html"), encoding: .utf8))
            #expect(page.select("li", classes: ["finding"]).isEmpty, "nothing is left after the fix")
            #expect(page[try page.one("p", classes: ["fixed-note"])].text.contains("fixed.json"))
            let banner = try page.one("div", classes: ["banner"])
            #expect(page[try page.one(classes: ["banner-title"], within: banner)].text == "Spring sale")
            #expect(page[try page.one("div", classes: ["banner-body"], within: banner)].text == "Half off today")
            // The corrected payload's attachment: the JPEG the fix made of the 64 × 48 WebP.
            let (_, thumb, expanded) = try pictures(page)
            #expect(expanded.width == 64 && expanded.height == 48, "\(expanded)")
            #expect(thumb.width == 64 && thumb.height == 48, "smaller than the banner's copy: as it is")
            let written = try String(contentsOfFile: path("fixed.json"), encoding: .utf8)
            #expect(written.contains("\"mutable-content\"") && written.contains("https://cdn.example.com/push/img-"))
        }
    }
}
