import Crypto
import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrep
@testable import PushPrepMedia

/// The platforms' renditions (issue 27): Android's 2:1 big picture under FCM's 1 MiB, the web
/// image and icon, made beside the iOS attachment from the same source, on the project's
/// samples and on pictures the tests make with the `vips` program.
@Suite(.enabled(if: TestTools.programPath("vips") != nil, "needs the vips program (make deps installs libvips-tools)"))
final class RenditionTests {
    let directory: URL

    init() throws {
        directory = try TestTools.temporaryDirectory()
    }

    deinit {
        TestTools.removeDirectory(directory)
    }

    private func run(
        _ files: [URL], configure: (inout ProcessingSettings) -> Void = { _ in }
    ) async throws -> (Manifest, URL) {
        var settings = ProcessingSettings()
        settings.jobs = 2
        configure(&settings)
        let out = directory.appendingPathComponent("out-\(UUID().uuidString)")
        let processor = Processor(settings: settings, outputDirectory: out.path, logger: .quiet)
        let manifest = try await processor.run(files.map { InputItem(source: $0.path, path: $0.path) })
        try ManifestAssertions.validate(manifest)
        return (manifest, out)
    }

    private func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    static var samples: [URL] {
        let folder = TestTools.packageRoot.appendingPathComponent("samples")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted().map {
            folder.appendingPathComponent($0)
        }
    }

    /// The samples' iOS outputs as PushPrep wrote them before it made renditions (the release
    /// build of 2236106, `pushprep process samples/*`): `--platforms ios`, and the renditions
    /// made beside, must not change a byte of them (nor their ids). The movie's SHA-256 is the
    /// one that run wrote; a transcode's bytes vary between runs, so only its id is compared.
    static let samplesBeforeRenditions: [String: (file: String, sha256: String)] = [
        "clip-vp9.webm": (
            "vid-0d0e5a129887a291f790a3ca0699d92c7d986b2c.mp4",
            "f43ed3ac547a68e30de56b1e0616a441793e9650f33d5823a7867e5f59add3a9"
        ),
        "jingle.ogg": (
            "aud-b6c1b3c1b2aa26146180666b08ac386f39b0f1c0.m4a",
            "72e42098a76ce11c4c28201d52249d0021f44f091de82e7ee35cd026ada222d3"
        ),
        "large-photo.jpg": (
            "img-d58ecea0157ed6ff83e05e0411e1999780d0165d.jpg",
            "cbda28815fe6781521ad52f597a4acb0572f547937da1d4e36f67e2d50890a79"
        ),
        "logo-transparent.png": (
            "img-596fc22f1270da15cca212527b785f766cc17994.png",
            "cc4a0d7b6cabefe8a430871d67f56afb560303a930a453de70a43c64e9f6367b"
        ),
        "photo-webp.webp": (
            "img-bc86093f124400f92c1a8b96a0c9ffb4ebc94acb.jpg",
            "2c44acaa031a7941fd5760816b1b869c938c473bab9cfc84c46515c70d9d68f6"
        ),
        "portrait-exif6.jpg": (
            "img-a9c947e23010b6f1977706472c8cac5b3a47428f.jpg",
            "7a365fdd99e77a25c32d1d3df8dba450ac03b8adab988a9ae90f75945b729917"
        ),
        "spinner-animated.gif": (
            "img-626a28c306f0f2a44c64ccf9dd791e4af79c9f37.gif",
            "2f547caa0b3fe94b46fe035dafee84749076072e1b3c3003068bd5965850a72b"
        ),
    ]

    @Test(
        "--platforms ios writes the samples' outputs of before, byte for byte, and no rendition",
        arguments: ["ios", "ios,android,web"])
    func iOSOutputsUnchanged(platforms: String) async throws {
        let (manifest, out) = try await run(Self.samples) { $0.platforms = try! #require(PlatformSet(text: platforms)) }
        #expect(manifest.attachments.count == Self.samplesBeforeRenditions.count)
        for entry in manifest.attachments {
            let name = URL(fileURLWithPath: entry.source).lastPathComponent
            let attachment = try #require(entry.attachment, "\(name) failed")
            let before = try #require(Self.samplesBeforeRenditions[name])
            #expect(attachment.file == before.file, "\(name)")
            if platforms == "ios" {
                #expect(attachment.renditions.isEmpty, "\(name)")
            }
            // A transcoded movie is not byte-reproducible from run to run, before renditions as after
            // (libx264's threads): its id and name are compared, the images' and the sound's bytes too.
            guard attachment.kind != .video else { continue }
            let bytes = try Data(contentsOf: out.appendingPathComponent(attachment.file))
            #expect(SHA256.hash(data: bytes).hexString == before.sha256, "\(name)")
        }
        if platforms == "ios" {
            let names = try FileManager.default.contentsOfDirectory(atPath: out.path)
            #expect(names.allSatisfy { $0.hasPrefix("img-") || $0.hasPrefix("vid-") || $0.hasPrefix("aud-") })
            let json = String(decoding: try manifest.jsonData(), as: UTF8.self)
            #expect(!json.contains("\"renditions\""))
        }
    }

    @Test("every sample but the sound gets an Android and web rendition within the platforms' rules")
    func samplesRenditions() async throws {
        let (manifest, out) = try await run(Self.samples) { $0.platforms = PlatformSet([.ios, .android, .web]) }
        var checked = 0
        for entry in manifest.attachments {
            let attachment = try #require(entry.attachment, "\(entry.source) failed")
            if attachment.kind == .audio {
                #expect(attachment.renditions.isEmpty, "a sound has no rendition")
                continue
            }
            #expect(attachment.renditions.android != nil, "\(attachment.source)")
            #expect(attachment.renditions.web != nil, "\(attachment.source)")
            #expect(attachment.renditions.webIcon != nil, "\(attachment.source)")
            checked += try RenditionAssertions.check(attachment, in: out)
        }
        #expect(checked == 18)
    }

    @Test("the attention crop keeps a small subject off centre that the centre crop cuts; a focal point overrides both")
    func attentionKeepsTheSubject() async throws {
        // A flat grey 1600x1200 picture with a small, busy, saturated subject near the top: a
        // 2:1 crop keeps 800 of its 1200 lines, and the centre's (lines 200...999) misses it.
        let subject = CropRectangle(x: 1100, y: 60, width: 120, height: 120)
        let source = file("subject.png")
        try TestTools.vips("black", file("grey.v").path, "1600", "1200", "--bands", "3")
        try TestTools.vips("linear", file("grey.v").path, file("bg.v").path, "1", "128")
        try TestTools.vips(
            "gaussnoise", file("noise.v").path, "\(subject.width)", "\(subject.height)", "--sigma", "120")
        try TestTools.vips("bandjoin_const", file("noise.v").path, file("noise3.v").path, "0 255")
        try TestTools.vips("cast", file("noise3.v").path, file("noise3u.v").path, "uchar")
        try TestTools.vips(
            "insert", file("bg.v").path, file("noise3u.v").path, file("composed.v").path, "\(subject.x)",
            "\(subject.y)")
        try TestTools.vips("copy", file("composed.v").path, source.path)

        func crop(_ configure: (inout ProcessingSettings) -> Void) async throws -> CropRectangle {
            let (manifest, out) = try await run([source], configure: configure)
            let attachment = try #require(manifest.attachments.first?.attachment)
            _ = try RenditionAssertions.check(attachment, in: out)
            return try #require(attachment.renditions.android).crop
        }
        let attention = try await crop { $0.crop = .attention }
        let centre = try await crop { $0.crop = .centre }
        let focused = try await crop { $0.focus = FocalPoint(x: 0.5, y: 1) }
        #expect(attention.height == 800 && centre.height == 800)
        #expect(contains(attention, subject), "attention cropped \(attention)")
        #expect(!contains(centre, subject), "the centre crop \(centre) should cut the subject")
        #expect(centre.y == 200)
        #expect(focused.y == 400, "a focal point at the bottom moves the crop there: \(focused)")
    }

    private func contains(_ outer: CropRectangle, _ inner: CropRectangle) -> Bool {
        inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width
            && inner.y + inner.height <= outer.y + outer.height
    }

    @Test("a panorama wider than 2:1 is decoded again for its Android rendition, not cut from the iOS-sized pixels")
    func panoramaDecodesAgain() async throws {
        let source = file("panorama.jpg")
        try TestTools.vips("gaussnoise", file("pano.v").path, "4000", "1000", "--sigma", "30")
        try TestTools.vips("copy", file("pano.v").path, source.path + "[Q=85]")
        let (manifest, out) = try await run([source])
        let attachment = try #require(manifest.attachments.first?.attachment)
        #expect(attachment.width == 1290)
        let android = try #require(attachment.renditions.android)
        #expect(android.width == 1024 && android.height == 512)
        #expect(android.crop.width == 2000 && android.crop.height == 1000)
        _ = try RenditionAssertions.check(attachment, in: out)
    }

    @Test("fit keeps the whole picture at its own ratio, within the 2:1 box")
    func fitKeepsEverything() async throws {
        let source = file("square.png")
        try TestTools.vips("black", file("sq.v").path, "900", "900", "--bands", "3")
        try TestTools.vips("copy", file("sq.v").path, source.path)
        let (manifest, _) = try await run([source]) { $0.crop = .fit }
        let android = try #require(manifest.attachments.first?.attachment?.renditions.android)
        #expect(android.width == 512 && android.height == 512)
        #expect(android.crop == CropRectangle(x: 0, y: 0, width: 900, height: 900))
    }

    @Test(
        "the byte cap steps the quality down and then the size; a picture that cannot fit is a warning, not a failure")
    func byteCap() throws {
        try TestTools.vips("gaussnoise", file("noise.v").path, "2400", "1200", "--sigma", "80")
        try TestTools.vips("copy", file("noise.v").path, file("noise.jpg").path + "[Q=95]")
        let input = try imageInput(file("noise.jpg"))
        let spec = { (maxBytes: Int) in
            RenditionSpec(
                key: .android, width: 1024, height: 512, maxBytes: maxBytes, quality: 82, crop: .centre, focus: nil)
        }
        let roomy = try RenditionStep.make(from: input, specs: [spec(AndroidRules.maxBytes)], maxPixels: 100_000_000)
        let tight = try RenditionStep.make(from: input, specs: [spec(60_000)], maxPixels: 100_000_000)
        let impossible = try RenditionStep.make(
            from: try imageInput(file("noise.jpg")), specs: [spec(500)], maxPixels: 100_000_000)
        let first = try #require(roomy.rendered.first)
        let reduced = try #require(tight.rendered.first)
        #expect(first.bytes.count <= AndroidRules.maxBytes && first.width == 1024)
        #expect(reduced.bytes.count <= 60_000)
        #expect(reduced.width < 1024, "noise needs a smaller picture than 1024 px to fit 60 kB")
        #expect(abs(reduced.width - 2 * reduced.height) <= 1)
        #expect(impossible.rendered.isEmpty)
        #expect(impossible.warnings.count == 1)
        #expect(ProcessingWarning.code(of: impossible.warnings[0].message) == .renditionNotMade)
    }

    @Test("a picture the renditions cannot be decoded from is a warning for each, not an error")
    func undecodableSourceIsAWarning() throws {
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16] + Array(repeating: 0x41, count: 64)).write(to: file("cut.jpg"))
        var settings = ProcessingSettings()
        settings.platforms = PlatformSet([.ios, .android, .web])
        let outcome = try RenditionStep.make(
            from: try imageInput(file("cut.jpg")), specs: RenditionSpec.specs(for: settings), maxPixels: 100_000_000)
        #expect(outcome.rendered.isEmpty)
        #expect(outcome.warnings.count == 3)
        #expect(
            outcome.warnings.allSatisfy { ProcessingWarning.code(of: $0.message) == .renditionNotMade },
            "\(outcome.warnings)")
    }

    private func imageInput(_ url: URL) throws -> ImageInput {
        let file = try InputFile.read(path: url.path, maxBytes: .max)
        return ImageInput(type: .jpeg, payload: .encoded(try ImageSource(descriptor: file.descriptor)))
    }

    @Test("renditions are content-addressed: the same source and settings give the same ids, another crop another id")
    func renditionIDs() async throws {
        let source = file("ids.jpg")
        try TestTools.vips("gaussnoise", file("ids.v").path, "1600", "1200", "--sigma", "30")
        try TestTools.vips("copy", file("ids.v").path, source.path)
        let (first, _) = try await run([source])
        let (second, _) = try await run([source])
        let (centred, _) = try await run([source]) { $0.crop = .centre }
        let a = try #require(first.attachments.first?.attachment)
        let b = try #require(second.attachments.first?.attachment)
        let c = try #require(centred.attachments.first?.attachment)
        #expect(a.renditions == b.renditions)
        #expect(a.id == c.id, "the crop does not change the iOS attachment")
        #expect(a.renditions.android?.id != c.renditions.android?.id)
        #expect(a.renditions.android?.id.hasPrefix("and-") == true)
    }
}

/// What every Android and web rendition must be, checked on the files themselves: Pillow
/// decodes them at the manifest's size, the manifest's bytes and SHA-256 are the file's, the
/// Android picture is at most FCM's 1 MiB and the web image 1 MB, both 2:1 within a pixel (or,
/// with `fit`, within the box), the icon 192 px square, and each crop lies inside the source.
enum RenditionAssertions {
    /// Checks `attachment`'s renditions in `out`; returns how many there were.
    @discardableResult
    static func check(_ attachment: PushPrepCore.Attachment, in out: URL, fit: Bool = false) throws -> Int {
        let renditions = attachment.renditions.all
        guard !renditions.isEmpty else { return 0 }
        let files = renditions.map { out.appendingPathComponent($0.rendition.file) }
        try #require(PillowProbe.isAvailable, "Pillow is missing from .build/pyenv: run make pyenv")
        let decoded = try PillowProbe.decode(files)
        let sourceWidth = try #require(attachment.input.width)
        let sourceHeight = try #require(attachment.input.height)
        for ((key, rendition), file) in zip(renditions, files) {
            let what = "\(attachment.source) \(key.rawValue)"
            let data = try Data(contentsOf: file)
            #expect(data.count == rendition.bytes, "\(what)")
            #expect(SHA256.hash(data: data).hexString == rendition.sha256, "\(what)")
            #expect(rendition.file == "\(rendition.id).\(rendition.mime == "image/png" ? "png" : "jpg")", "\(what)")
            let picture = try #require(decoded[file], "\(what)")
            #expect(picture.width == rendition.width && picture.height == rendition.height, "\(what)")
            #expect(picture.format == (rendition.mime == "image/png" ? "PNG" : "JPEG"), "\(what)")
            switch key {
            case .android:
                #expect(rendition.bytes <= AndroidRules.maxBytes, "\(what): \(rendition.bytes) bytes")
            case .web, .webIcon:
                #expect(rendition.bytes <= WebRules.maxBytes, "\(what): \(rendition.bytes) bytes")
            }
            if key == .webIcon {
                #expect(rendition.width == rendition.height && rendition.width <= WebRules.iconSize, "\(what)")
            } else if !fit {
                #expect(
                    abs(rendition.width - 2 * rendition.height) <= 1,
                    "\(what) is \(rendition.width)x\(rendition.height)")
            }
            let crop = rendition.crop
            #expect(crop.x >= 0 && crop.y >= 0 && crop.width > 0 && crop.height > 0, "\(what): \(crop)")
            #expect(
                crop.x + crop.width <= sourceWidth && crop.y + crop.height <= sourceHeight,
                "\(what): \(crop) outside \(sourceWidth)x\(sourceHeight)")
        }
        return renditions.count
    }
}
