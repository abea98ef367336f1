import Foundation
import PushPrepCore
import PushPrepPayload
import PushPrepTestSupport
import Testing

@testable import PushPrepJSON

/// `pushprep payload` as a real process on a real manifest: a photo and a sound processed by
/// `pushprep process`, the photo given Android and web renditions made by the `vips` program
/// (real JPEG and PNG files, their sizes and digests in the manifest). Standard output holds the
/// providers' Android and web keys; standard error says, one line per attachment and platform,
/// what a platform's push goes without.
@Suite(
    .serialized,
    .enabled(if: TestTools.programAvailable("vips"), "needs the vips program (make deps installs libvips-tools)"),
    .enabled(if: TestTools.programAvailable("ffmpeg"), "needs the ffmpeg program"),
    .timeLimit(.minutes(5)))
final class PayloadPlatformCLITests {
    let directory: URL
    static let base = "https://cdn.example.com/push"

    init() throws {
        directory = try TestTools.temporaryDirectory()
    }

    deinit {
        TestTools.removeDirectory(directory)
    }

    private func pushprep(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let result = try TestTools.run(binary.path, arguments, currentDirectory: directory, timeout: .seconds(120))
        return (
            result.status, String(decoding: result.stdout, as: UTF8.self),
            String(decoding: result.stderr, as: UTF8.self)
        )
    }

    /// A rendition named `id` in `out/`, made by `vips` from the photo (the `crop` of it, scaled to
    /// `width` × `height`), described as the manifest describes one.
    private func rendition(
        _ id: String, ext: String, mime: String, width: Int, height: Int, crop: CropRectangle
    ) throws -> Rendition {
        let out = directory.appendingPathComponent("out")
        let name = "\(id).\(ext)"
        try TestTools.vips(
            "crop", out.appendingPathComponent("photo-source.png").path, out.appendingPathComponent("crop.v").path,
            "\(crop.x)", "\(crop.y)", "\(crop.width)", "\(crop.height)")
        try TestTools.vips(
            "thumbnail", out.appendingPathComponent("crop.v").path, out.appendingPathComponent(name).path,
            "\(width)", "--height", "\(height)", "--size", "force")
        let file = out.appendingPathComponent(name)
        let probe = try ImageProbe.probe(file)
        #expect(probe.width == width && probe.height == height)
        // The digest by coreutils, not by PushPrep's code.
        let digest = String(decoding: try TestTools.runChecked("sha256sum", [file.path]), as: UTF8.self)
        return Rendition(
            id: id, file: name, url: "\(Self.base)/\(name)", mime: mime,
            bytes: try Data(contentsOf: file).count, sha256: String(digest.prefix(64)), width: width, height: height,
            crop: crop)
    }

    @Test("payload writes each provider's Android and web keys from the renditions, and names what is left out")
    func platforms() throws {
        try TestTools.vips("gaussnoise", directory.appendingPathComponent("photo.png").path, "1200", "900")
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "sine=frequency=440:duration=2", directory.appendingPathComponent("jingle.wav").path)
        let processed = try pushprep(["process", "photo.png", "jingle.wav", "--out", "out", "--base-url", Self.base])
        try #require(processed.status == 0, "\(processed.stderr)")
        let manifestURL = directory.appendingPathComponent("out/manifest.json")
        var manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: manifestURL))
        let photo = try #require(manifest.attachments.first?.attachment)
        let sound = try #require(manifest.attachments.last?.attachment)
        #expect(photo.kind == .image && sound.kind == .audio)
        // Renditions as the processing writes them, made from the source by vips.
        try FileManager.default.copyItem(
            at: directory.appendingPathComponent("photo.png"),
            to: directory.appendingPathComponent("out/photo-source.png"))
        let hash = String(photo.id.dropFirst(4))
        var withRenditions = photo
        withRenditions.renditions = Renditions(
            android: try rendition(
                "and-\(hash)", ext: "jpg", mime: "image/jpeg", width: 1024, height: 512,
                crop: CropRectangle(x: 0, y: 150, width: 1200, height: 600)),
            web: try rendition(
                "web-\(hash)", ext: "jpg", mime: "image/jpeg", width: 1200, height: 600,
                crop: CropRectangle(x: 0, y: 150, width: 1200, height: 600)),
            webIcon: try rendition(
                "wic-\(hash)", ext: "png", mime: "image/png", width: 192, height: 192,
                crop: CropRectangle(x: 150, y: 0, width: 900, height: 900)))
        manifest.settings.platforms = PlatformSet([.ios, .android, .web])
        manifest.attachments[0] = .ok(withRenditions)
        try manifest.jsonData().write(to: manifestURL)
        let android = "\(Self.base)/and-\(hash).jpg"
        let web = "\(Self.base)/web-\(hash).jpg"
        let icon = "\(Self.base)/wic-\(hash).png"
        let photoURL = try #require(photo.url)

        // Each dialect's keys, by pointer, for the photo.
        let keys: [PushDialect: [String: JSONValue]] = [
            .fcm: [
                "/message/apns/fcm_options/image": .string(photoURL),
                "/message/android/notification/image": .string(android),
                "/message/webpush/notification/image": .string(web),
                "/message/webpush/notification/icon": .string(icon),
            ],
            .onesignal: [
                "/ios_attachments/\(photo.id)": .string(photoURL), "/big_picture": .string(android),
                "/chrome_web_image": .string(web), "/chrome_web_icon": .string(icon),
            ],
            .airship: [
                "/device_types": .array([.string("ios"), .string("android"), .string("web")]),
                "/notification/ios/media_attachment/url": .string(photoURL),
                "/notification/android/style/type": .string("big_picture"),
                "/notification/android/style/big_picture": .string(android),
                "/notification/web/image/url": .string(web), "/notification/web/icon/url": .string(icon),
            ],
            .braze: [
                "/messages/apple_push/asset_url": .string(photoURL),
                "/messages/android_push/extra/appboy_image_url": .string(android),
                "/messages/web_push/large_image_url": .string(web), "/messages/web_push/image_url": .string(icon),
            ],
        ]
        for (dialect, expected) in keys {
            let result = try pushprep([
                "payload", "out/manifest.json", "--dialect", dialect.rawValue, "--id", photo.id, "--title", "Hello",
                "--body", "A new photo",
            ])
            #expect(result.status == 0, "\(dialect): \(result.stderr)")
            let payload = try JSONValue.parse(Array(result.stdout.utf8)).value
            for (pointer, value) in expected {
                let path = try #require(JSONPath(pointer: pointer))
                #expect(payload[path] == value, "\(dialect) \(pointer): \(result.stdout)")
            }
            #expect(ProviderShape.violations(payload, dialect) == [], "\(dialect)")
            // Nothing is left out: standard error is the summary line only.
            #expect(result.stderr.split(separator: "\n").count == 1, "\(dialect): \(result.stderr)")
        }

        // The sound has no Android rendition: its push carries no picture, and payload says so.
        // Its Android push still goes, with the text (Airship's device_types names android, Braze
        // has an android_push).
        let notes: [PushDialect: String] = [
            .onesignal: "the Android push carries no image",
            .airship: "the Android push carries no image",
            .braze: "the Android push carries no image",
        ]
        for (dialect, consequence) in notes {
            let result = try pushprep([
                "payload", "out/manifest.json", "--dialect", dialect.rawValue, "--id", sound.id, "--title", "Hello",
                "--body", "Listen",
            ])
            #expect(result.status == 0, "\(dialect): \(result.stderr)")
            #expect(
                result.stderr.split(separator: "\n").first
                    == "android: \(sound.id) has no Android rendition (a sound); \(consequence)"[...],
                "\(dialect): \(result.stderr)")
            #expect(!result.stdout.contains("and-"), "\(dialect): \(result.stdout)")
        }

        // Both in one OneSignal push (--all): the photo's pictures, and one line for the sound per platform.
        let both = try pushprep(["payload", "out/manifest.json", "--dialect", "onesignal", "--body", "Hi", "--all"])
        #expect(both.status == 0, "\(both.stderr)")
        #expect(
            both.stderr.split(separator: "\n").prefix(2) == [
                "android: \(sound.id) has no Android rendition (a sound); the Android push shows \(photo.id)'s picture",
                "web: \(sound.id) has no web rendition (a sound); the web push shows \(photo.id)'s picture",
            ], "\(both.stderr)")
        try Data(both.stdout.utf8).write(to: directory.appendingPathComponent("onesignal.json"))
        let check = try pushprep(["preflight", "onesignal.json", "--strict"])
        #expect(check.status == 0, "\(check.stdout)")
    }
}
