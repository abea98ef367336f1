import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrep
@testable import PushPrepJSON
@testable import PushPrepPayload

/// Android and web images judged without the network: `--assume-bandwidth`'s spelling, and the
/// numbers of a manifest (`--manifest`) whose outputs the payload names.
@Suite(.timeLimit(.minutes(3)))
struct PreflightPlatformTests {
    @Test(
        "--assume-bandwidth reads units and bits per second",
        arguments: [
            ("1mbit", 1_000_000.0), ("500kbit", 500_000), ("750000", 750_000), ("2.5Mbit/s", 2_500_000),
            ("1 gbit", 1_000_000_000), ("64kbps", 64_000), ("1000bit", 1_000),
        ])
    func bandwidth(_ text: String, _ bitsPerSecond: Double) {
        #expect(Bandwidth(text: text)?.bitsPerSecond == bitsPerSecond)
    }

    @Test(
        "--assume-bandwidth refuses what is not a speed in 1kbit...10gbit",
        arguments: ["", "fast", "0", "-1mbit", "1e6", "999", "20gbit", "mbit", "1.2.3kbit", "nan", "1mbyte"])
    func badBandwidth(_ text: String) {
        #expect(Bandwidth(text: text) == nil)
    }

    @Test("the estimate and how a speed is written")
    func bandwidthText() throws {
        let speed = try #require(Bandwidth(text: "1mbit"))
        #expect(speed == .default && speed.description == "1 Mbit/s")
        #expect(speed.seconds(for: 625_000) == 5)
        #expect(Bandwidth(text: "500kbit")?.description == "500 kbit/s")
        #expect(Bandwidth(text: "2.5mbit")?.description == "2.5 Mbit/s")
        #expect(Bandwidth.invalid("fast", what: "--assume-bandwidth").code == .invalidSettings)
    }

    // MARK: - Where each dialect keeps them

    static let u = "https://cdn.example.com/push/a.jpg"

    @Test(
        "each dialect's Android image, web image and web icon are found where the provider documents them",
        arguments: [
            (
                PreflightTableTests.fcm(
                    #""notification":{"body":"B","image":"\#(u)"},"android":{"notification":{"image":"\#(u)"}},"webpush":{"notification":{"image":"\#(u)","icon":"\#(u)"}}"#
                ),
                [
                    "android_image /message/android/notification/image",
                    "web_image /message/webpush/notification/image",
                    "web_icon /message/webpush/notification/icon",
                ]
            ),
            (
                PreflightTableTests.fcm(#""notification":{"body":"B","image":"\#(u)"}"#),
                ["android_image /message/notification/image"]
            ),
            (
                #"{"token":"t","android":{"notification":{"image":"\#(u)"}}}"#,
                ["android_image /android/notification/image"]
            ),
            (
                PreflightTableTests.oneSignal(
                    #""contents":{"en":"B"},"big_picture":"\#(u)","chrome_web_image":"\#(u)","chrome_web_icon":"\#(u)""#
                ),
                ["android_image /big_picture", "web_image /chrome_web_image", "web_icon /chrome_web_icon"]
            ),
            (
                PreflightTableTests.airship(
                    #"{"alert":"B","android":{"style":{"type":"big_picture","big_picture":"\#(u)"}},"web":{"image":{"url":"\#(u)"},"icon":"\#(u)"}}"#
                ),
                [
                    "android_image /notification/android/style/big_picture", "web_image /notification/web/image/url",
                    "web_icon /notification/web/icon",
                ]
            ),
            (
                #"{"external_user_ids":["u1"],"messages":{"android_push":{"alert":"B","title":"T","extra":{"appboy_image_url":"\#(u)"}},"web_push":{"alert":"B","title":"T","large_image_url":"\#(u)","image_url":"\#(u)"}}}"#,
                [
                    "android_image /messages/android_push/extra/appboy_image_url",
                    "web_image /messages/web_push/large_image_url", "web_icon /messages/web_push/image_url",
                ]
            ),
            // The payload a phone receives is an iPhone's, whatever keys it carries.
            (#"{"aps":{"alert":"B"},"big_picture":"\#(u)"}"#, []),
        ])
    func keys(_ payload: String, _ expected: [String]) {
        // As the dialect its keys show: a Braze body without apple_push, or an FCM message
        // without its wrapper and apns, is not detected (PushDialect.detect knows iOS keys only).
        var options = PreflightOptions()
        options.dialect = payload.contains("android_push") ? .braze : payload.hasPrefix(#"{"token""#) ? .fcm : nil
        let report = Preflight.check(Array(payload.utf8), file: "p.json", options: options)
        #expect(report.platformImages?.map { "\($0.role.rawValue) \($0.pointer)" } ?? [] == expected)
        #expect((report.platformImages ?? []).allSatisfy { $0.url == Self.u })
    }

    // MARK: - By the manifest

    /// A real JPEG of `width`x`height` made with `vips gaussnoise` (at `quality`), described as
    /// the manifest describes a rendition of `key`.
    static func rendition(
        _ key: Renditions.Key, width: Int, height: Int, quality: Int = 75, in directory: URL
    ) throws -> Rendition {
        let name = "\(key.idPrefix)-\(width)x\(height).jpg"
        let path = directory.appendingPathComponent(name).path
        try TestTools.vips("gaussnoise", "\(path)[Q=\(quality)]", "\(width)", "\(height)")
        let file = try InputFile.read(path: path, maxBytes: 50_000_000)
        return Rendition(
            id: String(name.dropLast(4)), file: name, url: "https://cdn.example.com/push/\(name)", mime: "image/jpeg",
            bytes: file.size, sha256: file.sha256, width: width, height: height,
            crop: CropRectangle(x: 0, y: 0, width: 200, height: 150))
    }

    /// A manifest of one real 200x150 photo processed with a base URL, with the given renditions.
    static func manifest(_ renditions: (URL) throws -> Renditions) async throws -> (Manifest, PushPrepCore.Attachment) {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let source = directory.appendingPathComponent("photo.jpg").path
        try TestTools.vips("gaussnoise", source, "200", "150")
        var settings = ProcessingSettings()
        settings.jobs = 1
        settings.baseURL = "https://cdn.example.com/push"
        let processor = Processor(
            settings: settings, outputDirectory: directory.appendingPathComponent("out").path, logger: .quiet)
        var manifest = try await processor.process([InputItem(source: source, path: source)], animationsAsMovies: true)
        guard case .ok(var attachment) = try #require(manifest.attachments.first) else {
            throw PushPrepError(.invalidSettings, "the photo did not process")
        }
        attachment.renditions = try renditions(directory)
        manifest.attachments[0] = .ok(attachment)
        return (manifest, attachment)
    }

    private func found(_ payload: String, manifest: Manifest?) -> [ExpectedFinding] {
        var options = PreflightOptions()
        options.manifestImages = manifest.map(ManifestImages.init)
        return Preflight.check(Array(payload.utf8), file: "p.json", options: options).findings
            .map(ExpectedFinding.init).sorted()
    }

    @Test(
        "by the manifest: an Android image over 1 MiB (and slow at 1 Mbit/s), a 4:3 web image, a 96 px icon",
        .enabled(if: TestTools.programAvailable("vips"), "needs the vips program"))
    func manifestNumbers() async throws {
        let (manifest, attachment) = try await Self.manifest { directory in
            Renditions(
                android: try Self.rendition(.android, width: 2048, height: 1024, quality: 100, in: directory),
                web: try Self.rendition(.web, width: 800, height: 600, in: directory),
                webIcon: try Self.rendition(.webIcon, width: 96, height: 96, in: directory))
        }
        let renditions = attachment.renditions
        #expect((renditions.android?.bytes ?? 0) > AndroidRules.maxBytes, "the noise at Q=100 is over 1 MiB")
        let payload = PreflightTableTests.oneSignal(
            #""contents":{"en":"B"},"ios_attachments":{"img":"\#(attachment.url!)"},"big_picture":"\#(renditions.android!.url!)","chrome_web_image":"\#(renditions.web!.url!)","chrome_web_icon":"\#(renditions.webIcon!.url!)""#
        )
        #expect(
            found(payload, manifest: manifest)
                == [
                    .error(.androidImageTooLarge, "/big_picture"), .warning(.androidImageSlow, "/big_picture"),
                    .warning(.webImageAspect, "/chrome_web_image"), .warning(.webIconTooSmall, "/chrome_web_icon"),
                ].sorted())
        #expect(found(payload, manifest: nil) == [], "without the manifest nothing is known of the images")

        // The iPhone's 4:3 attachment as the Android image: Android crops it.
        let ios = PreflightTableTests.oneSignal(
            #""contents":{"en":"B"},"ios_attachments":{"img":"\#(attachment.url!)"},"big_picture":"\#(attachment.url!)""#
        )
        #expect(found(ios, manifest: manifest) == [.warning(.androidImageAspect, "/big_picture")])
    }

    @Test(
        "by the manifest: renditions of the right shape and size are clean",
        .enabled(if: TestTools.programAvailable("vips"), "needs the vips program"))
    func manifestClean() async throws {
        let (manifest, attachment) = try await Self.manifest { directory in
            Renditions(
                android: try Self.rendition(.android, width: 720, height: 360, in: directory),
                web: try Self.rendition(.web, width: 1350, height: 675, in: directory),
                webIcon: try Self.rendition(.webIcon, width: 192, height: 192, in: directory))
        }
        let renditions = attachment.renditions
        let payload = PreflightTableTests.fcm(
            #""notification":{"body":"B"},"android":{"notification":{"image":"\#(renditions.android!.url!)"}},"webpush":{"notification":{"image":"\#(renditions.web!.url!)","icon":"\#(renditions.webIcon!.url!)"}},\#(PreflightTableTests.fcmAPNs(#"{"mutable-content":1}"#, image: attachment.url!))"#
        )
        #expect(found(payload, manifest: manifest) == [])
    }
}
