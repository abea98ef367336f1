import Foundation
import Logging
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrep
@testable import PushPrepMedia

/// The image pipeline end to end through ``Processor``, on fixtures the tests make with the
/// `vips` program (installed by the Makefile).
@Suite(.enabled(if: TestTools.programPath("vips") != nil, "needs the vips program (make deps installs libvips-tools)"))
final class ProcessorTests {
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

    @Test("a large photo is resized to the target width, sRGB, metadata stripped, under the limit")
    func resizesLargePhoto() async throws {
        let source = file("photo.jpg")
        try TestTools.vips("gaussnoise", file("noise.v").path, "4000", "3000", "--mean", "128", "--sigma", "40")
        try TestTools.vips("copy", file("noise.v").path, source.path + "[Q=90]")
        let (manifest, out) = try await run([source])
        let attachment = try #require(manifest.attachments.first?.attachment)
        #expect(attachment.kind == .image)
        #expect(attachment.width == 1290)
        #expect(attachment.height == 968)
        #expect(attachment.uti == "public.jpeg")
        #expect(attachment.file == "\(attachment.id).jpg")
        #expect(attachment.bytes <= AppleLimits.imageBytes)
        #expect(attachment.input.width == 4000)
        let probe = try ImageProbe.probe(out.appendingPathComponent(attachment.file))
        #expect(probe.width == 1290 && probe.height == 968)
        #expect(probe.loader == "jpegload")
        #expect(probe.interpretation == "srgb")
        #expect(!probe.hasEXIF && !probe.hasXMP && !probe.hasIPTC)
        let data = try Data(contentsOf: out.appendingPathComponent(attachment.file))
        #expect(data.count == attachment.bytes)
    }

    @Test("EXIF orientation is applied to the pixels and GPS is stripped")
    func appliesOrientationAndStripsGPS() async throws {
        // Stored landscape 600x400, left half black and right half white; orientation 6
        // means "rotate 90° clockwise to view", so the upright image is 400x600 with the
        // black half on top.
        try TestTools.vips("black", file("black.v").path, "300", "400")
        try TestTools.vips("linear", file("black.v").path, file("white.v").path, "1", "255", "--uchar")
        try TestTools.vips("join", file("black.v").path, file("white.v").path, file("bw.v").path, "horizontal")
        try TestTools.vips("copy", file("bw.v").path, file("plain.jpg").path)
        let exif = TestTools.jpegWithEXIF(try Data(contentsOf: file("plain.jpg")), orientation: 6, gps: true)
        let source = file("oriented.jpg")
        try exif.write(to: source)
        let before = try ImageProbe.probe(source)
        #expect(before.hasGPS, "the fixture must carry GPS for the test to mean anything")

        let (manifest, out) = try await run([source])
        let attachment = try #require(manifest.attachments.first?.attachment)
        #expect(attachment.width == 400 && attachment.height == 600)
        #expect(attachment.operations.contains { $0.contains("orientation 6") })
        let output = out.appendingPathComponent(attachment.file)
        let probe = try ImageProbe.probe(output)
        #expect(!probe.hasEXIF && !probe.hasGPS)
        #expect(probe.orientation == 1)
        // Top half dark, bottom half light.
        try TestTools.vips("crop", output.path, file("top.v").path, "0", "0", "400", "300")
        try TestTools.vips("crop", output.path, file("bottom.v").path, "0", "300", "400", "300")
        let top =
            Double(
                String(decoding: try TestTools.run("vips", ["avg", file("top.v").path]).stdout, as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        let bottom =
            Double(
                String(decoding: try TestTools.run("vips", ["avg", file("bottom.v").path]).stdout, as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(top < 30 && bottom > 225, "top \(top), bottom \(bottom)")
    }

    @Test("real transparency gives a PNG; an opaque alpha channel gives a JPEG")
    func alphaDecidesFormat() async throws {
        try TestTools.vips("black", file("rgb.v").path, "200", "100", "--bands", "3")
        try TestTools.vips("black", file("clear.v").path, "100", "100")
        try TestTools.vips("linear", file("clear.v").path, file("solid.v").path, "1", "255", "--uchar")
        try TestTools.vips("join", file("clear.v").path, file("solid.v").path, file("alpha.v").path, "horizontal")
        try TestTools.vips("bandjoin", "\(file("rgb.v").path) \(file("alpha.v").path)", file("transparent.png").path)
        try TestTools.vips("linear", file("alpha.v").path, file("opaque-alpha.v").path, "0", "255", "--uchar")
        try TestTools.vips("bandjoin", "\(file("rgb.v").path) \(file("opaque-alpha.v").path)", file("opaque.png").path)

        let (manifest, out) = try await run([file("transparent.png"), file("opaque.png")])
        let transparent = try #require(manifest.attachments[0].attachment)
        let opaque = try #require(manifest.attachments[1].attachment)
        #expect(transparent.uti == "public.png" && transparent.file.hasSuffix(".png"))
        #expect(try ImageProbe.probe(out.appendingPathComponent(transparent.file)).bands == 4)
        #expect(opaque.uti == "public.jpeg" && opaque.file.hasSuffix(".jpg"))
        #expect(opaque.operations.contains { $0.contains("opaque alpha") })
    }

    @Test("an animated GIF stays animated: every frame resized, delays and loop kept")
    func animatedGIF() async throws {
        // 1290x726, 3 frames: 11.2 MB decoded, inside the 12 MB memory budget.
        let source = try makeAnimatedGIF(width: 1600, height: 900, frames: 3)
        let (manifest, out) = try await run([source])
        let attachment = try #require(manifest.attachments.first?.attachment)
        #expect(attachment.uti == "com.compuserve.gif")
        #expect(attachment.frames == 3)
        #expect(attachment.width == 1290)
        let probe = try ImageProbe.probe(out.appendingPathComponent(attachment.file), allPages: true)
        #expect(probe.pages == 3)
        #expect(probe.pageHeight == attachment.height)
        #expect(probe.fields["delay"]?.contains("80") == true, "delays: \(probe.fields["delay"] ?? "none")")
        #expect(probe.fields["loop"] == "0")
    }

    @Test("an animated GIF whose frames would not fit the extension's memory is shrunk until they do")
    func animationOverMemory() async throws {
        // 1290x726, 12 frames would be 45 MB decoded.
        let source = try makeAnimatedGIF(width: 1600, height: 900, frames: 12)
        let (manifest, out) = try await run([source])
        let attachment = try #require(manifest.attachments.first?.attachment)
        #expect(attachment.uti == "com.compuserve.gif")
        #expect(attachment.frames == 12, "every frame kept")
        let decoded = try #require(attachment.width.flatMap { w in attachment.height.map { w * $0 * 4 * 12 } })
        #expect(decoded <= 12_000_000 && decoded > 10_000_000, "shrunk to fit, not far below: \(decoded)")
        #expect(attachment.operations.contains { $0.contains("to fit 12000000 bytes of decoded frames") })
        let probe = try ImageProbe.probe(out.appendingPathComponent(attachment.file), allPages: true)
        #expect(probe.pages == 12 && probe.width == attachment.width && probe.pageHeight == attachment.height)

        // 4 MB: shrinking alone would go below a third of the width. By default the animation
        // becomes a movie; with --gif-as-video never it keeps every other frame instead.
        let (asMovie, _) = try await run([source]) { $0.gifMaxMemory = 4_000_000 }
        let movie = try #require(asMovie.attachments.first?.attachment)
        #expect(movie.uti == "public.mpeg-4" && movie.file.hasSuffix(".mp4"))
        let (thinned, _) = try await run([source]) {
            $0.gifMaxMemory = 4_000_000
            $0.gifAsVideo = .never
        }
        let fewer = try #require(thinned.attachments.first?.attachment)
        #expect(fewer.uti == "com.compuserve.gif" && fewer.frames == 6)
        let fewerDecoded = (fewer.width ?? .max) * (fewer.height ?? .max) * 4 * 6
        #expect(fewerDecoded <= 4_000_000, "\(fewerDecoded)")
        #expect(fewer.operations.contains { $0.contains("kept every 2nd frame (6 of 12)") })
    }

    @Test("with --gif-as-video never, an animation over budget is reduced, then sent as its first frame")
    func animationOverBudget() async throws {
        let source = try makeAnimatedGIF(width: 800, height: 600, frames: 8, noisy: true)
        let (reduced, _) = try await run([source]) {
            $0.imageMaxBytes = 400_000
            $0.gifAsVideo = .never
        }
        let small = try #require(reduced.attachments.first?.attachment)
        #expect(small.bytes <= 400_000)
        #expect(small.operations.contains { $0.contains("reduced width") || $0.contains("frame") })

        let (still, _) = try await run([source]) {
            $0.imageMaxBytes = 10_000
            $0.gifAsVideo = .never
        }
        let fallback = try #require(still.attachments.first?.attachment)
        #expect(fallback.frames == 1)
        #expect(fallback.uti != "com.compuserve.gif")
        #expect(fallback.bytes <= 10_000)
        #expect(fallback.warnings.contains { $0.message.contains("first frame") })
    }

    @Test("an input over the byte limit that can be brought under it is")
    func fitsUnderLimit() async throws {
        try TestTools.vips("gaussnoise", file("noise.v").path, "1290", "1000", "--mean", "128", "--sigma", "60")
        try TestTools.vips("copy", file("noise.v").path, file("noisy.jpg").path + "[Q=100]")
        let (manifest, _) = try await run([file("noisy.jpg")]) { $0.imageMaxBytes = 150_000 }
        let attachment = try #require(manifest.attachments.first?.attachment)
        #expect(attachment.bytes <= 150_000)
        #expect(attachment.operations.contains { $0.contains("quality") })
        #expect(attachment.operations.contains { $0.contains("reduced width") || !$0.contains("quality 82") })
    }

    /// An opaque still streams from the decoder into its first encoding; when that misses the
    /// limit, the next quality must come from a fresh decode of the same pixels, not from the
    /// stream the first attempt consumed.
    @Test("a photo whose first quality misses the limit gets the next one, from the same pixels")
    func secondQualityAfterStreamedFirst() async throws {
        try TestTools.vips("gaussnoise", file("noise.v").path, "2600", "1900", "--mean", "128", "--sigma", "50")
        try TestTools.vips("copy", file("noise.v").path, file("noisy.jpg").path + "[Q=95]")
        let (atQuality72, _) = try await run([file("noisy.jpg")]) { $0.quality = 72 }
        let (atQuality82, _) = try await run([file("noisy.jpg")]) { $0.quality = 82 }
        let reference = try #require(atQuality72.attachments.first?.attachment)
        let first = try #require(atQuality82.attachments.first?.attachment)
        try #require(first.bytes > reference.bytes)

        // A limit that quality 82 misses and quality 72 meets: the second attempt's output must
        // be exactly what a run asking for quality 72 makes.
        let (manifest, _) = try await run([file("noisy.jpg")]) { $0.imageMaxBytes = reference.bytes }
        let fitted = try #require(manifest.attachments.first?.attachment)
        #expect(fitted.operations.contains("encoded jpeg quality 72"))
        #expect(fitted.width == 1290 && fitted.height == reference.height)
        #expect(fitted.sha256 == reference.sha256)
    }

    @Test("no output within the limit fails with cannot_fit")
    func cannotFit() throws {
        try TestTools.vips("gaussnoise", file("noise.v").path, "600", "400", "--mean", "128", "--sigma", "60")
        try TestTools.vips("copy", file("noise.v").path, file("noisy.jpg").path)
        var settings = ProcessingSettings()
        // Below what the CLI allows, to reach the end of the ladder.
        settings.imageMaxBytes = 50
        let error = #expect(throws: PushPrepError.self) {
            _ = try ImagePipeline.process(
                ImageInput(type: .jpeg, payload: .encoded(ImageSource(path: file("noisy.jpg").path))),
                settings: settings)
        }
        #expect(error?.code == .cannotFit)
    }

    @Test("a decompression bomb is refused from its header, quickly")
    func decompressionBomb() async throws {
        let bomb = file("bomb.png")
        try TestTools.vips("black", bomb.path, "20000", "20000")
        let size = try FileManager.default.attributesOfItem(atPath: bomb.path)[.size] as? Int ?? 0
        #expect(size < 2_000_000, "the bomb should be small on disk, is \(size)")
        let (manifest, _) = try await run([bomb])
        #expect(manifest.attachments.first?.failure?.error.code == .tooManyPixels)

        // "Quickly" is measured in CPU time of the real binary, which a loaded machine does not
        // inflate the way it inflates wall time: decoding 400 megapixels costs about 2 s of CPU,
        // reading a header milliseconds. Most of a run is the debug binary's start-up (loading
        // libvips and FFmpeg), which a slow or cold machine makes longer: the bound is that of
        // an 8x8 image, run first (which also warms the caches), plus half a second.
        let binary = try #require(TestTools.pushprepBinary(), "needs the built pushprep binary")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "needs GNU time (make deps)")
        func cpuSeconds(_ input: URL, expecting status: Int32) throws -> Double {
            let result = try TestTools.run(
                "/usr/bin/time",
                ["-f", "cpu=%U %S", binary.path, "process", input.path, "--out", file("cpu-out").path])
            #expect(result.status == status, "\(input.lastPathComponent): exit \(result.status)")
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            let line = stderr.split(separator: "\n").last { $0.hasPrefix("cpu=") }
            let parts = try #require(line?.dropFirst(4).split(separator: " ").compactMap { Double($0) })
            try #require(parts.count == 2, "\(stderr)")
            return parts[0] + parts[1]
        }
        let tiny = file("tiny.png")
        try TestTools.vips("black", tiny.path, "8", "8")
        let baseline = try cpuSeconds(tiny, expecting: 0)
        let refusal = try cpuSeconds(bomb, expecting: 1)
        #expect(refusal < baseline + 0.5, "the refusal took \(refusal) s of CPU, an 8x8 image \(baseline) s")
    }

    @Test("truncated and empty files fail with corrupt_input")
    func truncatedAndEmpty() async throws {
        try TestTools.vips("gaussnoise", file("noise.v").path, "400", "300")
        try TestTools.vips("copy", file("noise.v").path, file("whole.jpg").path)
        try TestTools.vips("copy", file("noise.v").path, file("whole.png").path)
        var inputs: [URL] = []
        for name in ["whole.jpg", "whole.png"] {
            let data = try Data(contentsOf: file(name))
            let cut = file("truncated-" + name)
            try data.prefix(data.count / 2).write(to: cut)
            inputs.append(cut)
        }
        try Data().write(to: file("empty.jpg"))
        inputs.append(file("empty.jpg"))
        let (manifest, out) = try await run(inputs)
        for entry in manifest.attachments {
            #expect(
                entry.failure?.error.code == .corruptInput, "\(entry.source): \(String(describing: entry.failure))")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(leftovers.isEmpty, "failed inputs must leave nothing behind: \(leftovers)")
    }

    @Test(
        "concurrent failures keep their own codes: libvips' shared error buffer never decides one",
        .enabled(if: TestTools.ffmpegCanEncode("ljpeg"), "needs ffmpeg with the ljpeg encoder"))
    func concurrentFailureCodes() async throws {
        try TestTools.ffmpeg(
            "-y", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240", "-frames:v", "1", "-c:v", "ljpeg",
            "-pix_fmt", "bgr24", file("lossless.jpg").path)
        try TestTools.vips("gaussnoise", file("noise.v").path, "400", "300")
        try TestTools.vips("copy", file("noise.v").path, file("whole.png").path)
        let png = try Data(contentsOf: file("whole.png"))
        var inputs: [URL] = []
        for index in 0..<12 {
            let lossless = file("lossless-\(index).jpg")
            try FileManager.default.copyItem(at: file("lossless.jpg"), to: lossless)
            let cut = file("truncated-\(index).png")
            try png.prefix(png.count / 2).write(to: cut)
            inputs += [lossless, cut]
        }
        let (manifest, _) = try await run(inputs) { $0.jobs = 4 }
        for entry in manifest.attachments {
            let expected: PushPrepError.Code = entry.source.hasSuffix(".png") ? .corruptInput : .unsupportedType
            #expect(entry.failure?.error.code == expected, "\(entry.source): \(String(describing: entry.failure))")
        }
        let lossless = try #require(manifest.attachments.first { $0.source.hasSuffix(".jpg") }?.failure)
        #expect(lossless.error.message.contains("lossless JPEG"))
    }

    @Test("ids are deterministic: same bytes and settings, same id; any change, another id")
    func deterministicIDs() async throws {
        try TestTools.vips("gaussnoise", file("noise.v").path, "300", "200")
        try TestTools.vips("copy", file("noise.v").path, file("a.jpg").path)
        try FileManager.default.copyItem(at: file("a.jpg"), to: file("copy-of-a.jpg"))
        var changed = try Data(contentsOf: file("a.jpg"))
        changed.append(0)  // one more byte after EOI still decodes
        try changed.write(to: file("changed.jpg"))

        let (first, _) = try await run([file("a.jpg"), file("copy-of-a.jpg"), file("changed.jpg")])
        let ids = first.attachments.map { $0.attachment?.id ?? "" }
        #expect(ids[0] == ids[1])
        #expect(ids[0] != ids[2])
        for id in ids {
            #expect(id.hasPrefix("img-") && id.count <= 64)
            #expect(id.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" })
        }
        let (again, _) = try await run([file("a.jpg")])
        #expect(again.attachments[0].attachment?.id == ids[0])
        let (otherQuality, _) = try await run([file("a.jpg")]) { $0.quality = 70 }
        #expect(otherQuality.attachments[0].attachment?.id != ids[0])
        let (otherWidth, _) = try await run([file("a.jpg")]) { $0.width = 1179 }
        #expect(otherWidth.attachments[0].attachment?.id != ids[0])
    }

    @Test("the extension is not trusted: a JPEG named .png is processed as JPEG, with a warning")
    func wrongExtension() async throws {
        try TestTools.vips("gaussnoise", file("noise.v").path, "300", "200")
        try TestTools.vips("copy", file("noise.v").path, file("real.jpg").path)
        try FileManager.default.moveItem(at: file("real.jpg"), to: file("liar.png"))
        let (manifest, _) = try await run([file("liar.png")])
        let attachment = try #require(manifest.attachments.first?.attachment)
        #expect(attachment.input.type == "jpeg")
        #expect(attachment.warnings.count == 1)
        #expect(attachment.warnings.first?.message.contains(".png") == true)
    }

    @Test("unsupported, blocked and missing inputs fail with their documented codes")
    func unsupportedInputs() async throws {
        try Data("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"/>".utf8).write(to: file("x.svg"))
        try Data("%PDF-1.4\n".utf8).write(to: file("x.pdf"))
        try Data("hello".utf8).write(to: file("x.txt"))
        let (manifest, _) = try await run([file("x.svg"), file("x.pdf"), file("x.txt"), file("missing.jpg")])
        let codes = manifest.attachments.map { $0.failure?.error.code }
        #expect(codes == [.unsupportedType, .unsupportedType, .unsupportedType, .notFound])
    }

    @Test("an identical output already present is reused, and the entry says so")
    func reusesIdenticalOutput() async throws {
        try TestTools.vips("gaussnoise", file("noise.v").path, "300", "200")
        try TestTools.vips("copy", file("noise.v").path, file("a.jpg").path)
        let out = directory.appendingPathComponent("shared-out")
        let processor = Processor(settings: ProcessingSettings(), outputDirectory: out.path, logger: .quiet)
        let item = InputItem(source: file("a.jpg").path, path: file("a.jpg").path)
        let first = try await processor.run([item])
        let second = try await processor.run([item])
        #expect(first.attachments[0].attachment?.operations.last?.hasPrefix("wrote") == true)
        #expect(second.attachments[0].attachment?.operations.last?.hasPrefix("reused") == true)
        #expect(first.attachments[0].attachment?.sha256 == second.attachments[0].attachment?.sha256)
    }

    @Test("BMP input (decoded by PushPrep) becomes a JPEG")
    func bmpInput() async throws {
        try #require(TestTools.programPath("ffmpeg") != nil, "needs ffmpeg to write a BMP")
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=1600x900", "-frames:v", "1", "-pix_fmt", "bgr24", file("x.bmp").path)
        let (manifest, out) = try await run([file("x.bmp")])
        let attachment = try #require(manifest.attachments.first?.attachment)
        #expect(attachment.input.type == "bmp")
        #expect(attachment.width == 1290 && attachment.height == 726)
        #expect(try ImageProbe.probe(out.appendingPathComponent(attachment.file)).loader == "jpegload")
    }

    /// An animated GIF made by the `ffmpeg` program: 12.5 fps is a delay of 80 ms per frame,
    /// and ffmpeg's GIF muxer loops forever by default.
    private func makeAnimatedGIF(width: Int, height: Int, frames: Int, noisy: Bool = false) throws -> URL {
        try #require(TestTools.programPath("ffmpeg") != nil, "needs ffmpeg to write an animated GIF")
        let gif = file("animated-\(width)x\(height)-\(frames)\(noisy ? "-noisy" : "").gif")
        var arguments = ["-f", "lavfi", "-i", "testsrc=size=\(width)x\(height):rate=12.5", "-frames:v", "\(frames)"]
        if noisy { arguments += ["-vf", "noise=alls=90:allf=t+u"] }
        try TestTools.runChecked("ffmpeg", ["-y", "-v", "error", "-nostdin"] + arguments + [gif.path])
        return gif
    }
}

/// Checks every manifest a test produces against the JSON Schema in the repository.
enum ManifestAssertions {
    static func validate(_ manifest: Manifest) throws {
        let violations = try ManifestSchema.violations(of: manifest.jsonData())
        #expect(violations.isEmpty, "manifest violates the schema: \(violations)")
    }
}
