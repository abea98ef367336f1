import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrep

private let hasVips = TestTools.programAvailable("vips")

/// Inspects `file` with default settings, reporting it under its path.
private func inspect(_ file: URL) -> InspectReport {
    Inspector.inspect(InputItem(source: file.path, path: file.path), settings: ProcessingSettings())
}

/// A black JPEG of the given size, made by vips, with no metadata.
private func blackJPEG(_ file: URL, width: Int, height: Int) throws {
    try TestTools.vips("black", file.path + "[strip]", "\(width)", "\(height)", "--bands", "3")
}

@Suite("Inspector")
struct InspectorTests {
    @Test(.enabled(if: hasVips, "needs the vips command-line tool"))
    func largeJPEGMeetsAppleRulesAndIsResized() throws {
        try TestTools.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("photo.jpg")
            try blackJPEG(file, width: 4000, height: 3000)
            let report = inspect(file)
            #expect(report.source == file.path)
            #expect(report.type == "jpeg")
            #expect(report.kind == .image)
            #expect(report.width == 4000)
            #expect(report.height == 3000)
            #expect(report.frames == 1)
            #expect(report.orientation == nil)
            #expect(report.hasAlpha == false)
            let bytes = try #require(report.bytes)
            #expect(bytes == (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int))
            #expect(bytes < AppleLimits.imageBytes)
            #expect(report.meetsAppleRules)
            #expect(report.problems == [])
            #expect(report.error == nil)
            // 3000 * 1290 / 4000 = 967.5, rounded to 968.
            #expect(report.plan.contains("resize 4000x3000 to 1290x968"), "plan: \(report.plan)")
            #expect(report.plan.last?.hasPrefix("encode as jpeg") == true, "plan: \(report.plan)")
        }
    }

    @Test(.enabled(if: hasVips, "needs the vips command-line tool"))
    func smallJPEGIsNotResized() throws {
        try TestTools.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("small.jpeg")
            try blackJPEG(file, width: 640, height: 480)
            let report = inspect(file)
            #expect(report.width == 640 && report.height == 480)
            #expect(report.meetsAppleRules)
            #expect(!report.plan.contains { $0.hasPrefix("resize") }, "plan: \(report.plan)")
            #expect(report.metadata == [], "stripped with [strip]")
        }
    }

    @Test(.enabled(if: TestTools.vipsHasOperation("webpsave"), "needs vips with WebP saving"))
    func webpDoesNotMeetAppleRules() throws {
        try TestTools.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("banner.webp")
            try TestTools.vips("black", file.path, "200", "100", "--bands", "3")
            let report = inspect(file)
            #expect(report.type == "webp")
            #expect(report.kind == .image)
            #expect(report.width == 200 && report.height == 100)
            #expect(!report.meetsAppleRules)
            #expect(report.problems.count == 1, "problems: \(report.problems)")
            #expect(report.problems.contains { $0.contains("webp") && $0.contains("not a type iOS accepts") })
            #expect(report.error == nil)
            #expect(report.plan.last?.hasPrefix("encode as jpeg") == true, "plan: \(report.plan)")
        }
    }

    @Test(.enabled(if: hasVips, "needs the vips command-line tool"))
    func exifOrientationSwapsWidthAndHeight() throws {
        try TestTools.withTemporaryDirectory { dir in
            let plain = dir.appendingPathComponent("plain.jpg")
            try blackJPEG(plain, width: 400, height: 300)
            let file = dir.appendingPathComponent("rotated.jpg")
            try TestTools.jpegWithEXIF(Data(contentsOf: plain), orientation: 6, gps: false).write(to: file)
            let report = inspect(file)
            #expect(report.type == "jpeg")
            #expect(report.orientation == 6)
            #expect(report.width == 300)
            #expect(report.height == 400)
            #expect(report.meetsAppleRules)
            #expect(report.metadata.contains("exif"))
            #expect(!report.metadata.contains("gps"))
            #expect(report.plan.first == "apply EXIF orientation 6 to the pixels", "plan: \(report.plan)")
        }
    }

    @Test(.enabled(if: hasVips, "needs the vips command-line tool"))
    func exifOrientationOneIsNotReported() throws {
        try TestTools.withTemporaryDirectory { dir in
            let plain = dir.appendingPathComponent("plain.jpg")
            try blackJPEG(plain, width: 400, height: 300)
            let file = dir.appendingPathComponent("upright.jpg")
            try TestTools.jpegWithEXIF(Data(contentsOf: plain), orientation: 1, gps: false).write(to: file)
            let report = inspect(file)
            #expect(report.orientation == nil)
            #expect(report.width == 400 && report.height == 300)
            #expect(!report.plan.contains { $0.hasPrefix("apply EXIF orientation") }, "plan: \(report.plan)")
        }
    }

    @Test(.enabled(if: hasVips, "needs the vips command-line tool"))
    func gpsMetadataIsReportedAndPlannedForStripping() throws {
        try TestTools.withTemporaryDirectory { dir in
            let plain = dir.appendingPathComponent("plain.jpg")
            try blackJPEG(plain, width: 64, height: 48)
            let file = dir.appendingPathComponent("located.jpg")
            try TestTools.jpegWithEXIF(Data(contentsOf: plain), orientation: 8, gps: true).write(to: file)
            let report = inspect(file)
            #expect(report.orientation == 8)
            #expect(report.width == 48 && report.height == 64)
            #expect(report.metadata.contains("exif"))
            #expect(report.metadata.contains("gps"), "metadata: \(report.metadata)")
            #expect(
                report.plan.contains { $0.hasPrefix("strip metadata") && $0.contains("gps") }, "plan: \(report.plan)")
        }
    }

    @Test(.enabled(if: hasVips, "needs the vips command-line tool"))
    func jpegNamedPNGHasAnExtensionProblem() throws {
        try TestTools.withTemporaryDirectory { dir in
            let jpeg = dir.appendingPathComponent("real.jpg")
            try blackJPEG(jpeg, width: 64, height: 48)
            let file = dir.appendingPathComponent("fake.png")
            try FileManager.default.copyItem(at: jpeg, to: file)
            let report = inspect(file)
            #expect(report.type == "jpeg")
            #expect(!report.meetsAppleRules)
            #expect(report.problems.count == 1, "problems: \(report.problems)")
            #expect(report.problems.first?.contains(".png") == true)
            #expect(report.problems.first?.contains("jpeg") == true)
            #expect(report.error == nil)
        }
    }

    @Test(.enabled(if: hasVips, "needs the vips command-line tool"))
    func noExtensionIsAProblem() throws {
        try TestTools.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("upload")
            try blackJPEG(dir.appendingPathComponent("x.jpg"), width: 64, height: 48)
            try FileManager.default.moveItem(at: dir.appendingPathComponent("x.jpg"), to: file)
            let report = inspect(file)
            #expect(report.type == "jpeg")
            #expect(!report.meetsAppleRules)
            #expect(report.problems.contains { $0.contains("no file extension") }, "problems: \(report.problems)")
        }
    }

    /// 20000x20000 is 400 million pixels, over the default limit of 100 million. The 1-bit PNG
    /// is about 50 KB; the report must come from the header, with the size read but nothing
    /// decoded (decoding would need 400 MB).
    @Test(.enabled(if: hasVips, "needs the vips command-line tool"))
    func hugePNGIsRefusedFromItsHeader() throws {
        try TestTools.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("bomb.png")
            try TestTools.vips("black", file.path + "[bitdepth=1]", "20000", "20000")
            let report = inspect(file)
            #expect(report.type == "png")
            #expect(report.width == 20000)
            #expect(report.height == 20000)
            #expect(report.error?.code == .tooManyPixels)
            #expect(report.error?.message.contains("100000000") == true, "message: \(report.error?.message ?? "")")
            #expect(report.plan == ["fail with too_many_pixels"])
            // The file itself is within Apple's rules; only processing it is refused.
            #expect(report.meetsAppleRules)
        }
    }

    @Test func emptyFileIsCorrupt() throws {
        try TestTools.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("empty.jpg")
            try Data().write(to: file)
            let report = inspect(file)
            #expect(report.bytes == 0)
            #expect(report.type == nil)
            #expect(report.error?.code == .corruptInput)
            #expect(!report.meetsAppleRules)
        }
    }

    @Test func missingFileIsNotFound() throws {
        try TestTools.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("does-not-exist.jpg")
            let report = inspect(file)
            #expect(report.source == file.path)
            #expect(report.error?.code == .notFound)
            #expect(report.bytes == nil)
            #expect(report.type == nil)
        }
    }

    @Test func unrecognisedBytesAreUnsupported() throws {
        try TestTools.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("notes.txt")
            try Data("just some text\n".utf8).write(to: file)
            let report = inspect(file)
            #expect(report.type == nil)
            #expect(report.error?.code == .unsupportedType)
        }
    }

    // MARK: Movies and sounds

    /// Inspects `file`, then processes it, and returns both.
    private func inspectThenProcess(_ file: URL, in dir: URL) async throws -> (InspectReport, PushPrepCore.Attachment) {
        let report = inspect(file)
        let processor = Processor(
            settings: ProcessingSettings(), outputDirectory: dir.appendingPathComponent("out").path, logger: .quiet)
        let manifest = try await processor.run([InputItem(source: file.path, path: file.path)])
        let attachment = try #require(manifest.attachments.first?.attachment, "process fails: \(manifest.attachments)")
        return (report, attachment)
    }

    @Test(
        "a wide, long movie: inspect predicts the trim, the transcode and the size process gives",
        .enabled(if: TestTools.ffmpegCanEncode("libx264") && TestTools.ffmpegCanMux("mp4"), "needs ffmpeg with libx264")
    )
    func wideMovieIsTrimmedAndScaled() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let file = dir.appendingPathComponent("clip.mp4")
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=30:duration=17", "-f", "lavfi", "-i", "sine=duration=17",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", file.path)
        let (report, movie) = try await inspectThenProcess(file, in: dir)
        #expect(report.type == "mp4" && report.kind == .video)
        #expect(report.meetsAppleRules, "an MP4 named .mp4 is fine for Apple: problems \(report.problems)")
        #expect(report.error == nil, "\(String(describing: report.error))")
        #expect(report.width == 1280 && report.height == 720)
        #expect(abs((report.duration ?? 0) - 17) < 0.1)
        let streams = try #require(report.streams)
        #expect(streams.count == 2 && streams[0].hasPrefix("video h264") && streams[1].hasPrefix("audio aac"))
        #expect(report.plan.first == "keep 15.0 s of 17.0 s", "plan: \(report.plan)")
        #expect(report.plan.contains("transcode to H.264 (High) and AAC-LC in MP4: 1280 px wide, more than 720"))
        #expect(movie.operations.first == "transcode")
        let scale = "scale 1280x720 to \(movie.width ?? 0)x\(movie.height ?? 0)"
        #expect(
            report.plan.contains(scale), "process made \(movie.width ?? 0)x\(movie.height ?? 0); plan: \(report.plan)")
    }

    @Test(
        "a movie iOS already plays is copied, as process does; one without video is refused, as process does",
        .enabled(if: TestTools.ffmpegCanEncode("libx264") && TestTools.ffmpegCanMux("mp4"), "needs ffmpeg with libx264")
    )
    func playableMovieIsCopied() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let file = dir.appendingPathComponent("small.mov")
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=2", "-f", "lavfi", "-i", "sine=duration=2",
            "-c:v", "libx264", "-preset", "ultrafast", "-profile:v", "main", "-pix_fmt", "yuv420p", "-c:a", "aac",
            file.path)
        let (report, movie) = try await inspectThenProcess(file, in: dir)
        #expect(report.type == "mov" && report.width == 320 && report.height == 240 && report.error == nil)
        #expect(
            report.plan.first?.hasPrefix("copy the streams into an MP4 without re-encoding") == true,
            "plan: \(report.plan)")
        #expect(!report.plan.contains { $0.hasPrefix("keep 15") || $0.hasPrefix("scale") }, "plan: \(report.plan)")
        #expect(movie.operations.first == "remux", "process: \(movie.operations)")

        let silent = dir.appendingPathComponent("voice.mp4")
        try TestTools.ffmpeg("-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", silent.path)
        let audioOnly = inspect(silent)
        #expect(audioOnly.error?.code == .unsupportedType)
        #expect(audioOnly.error?.message.contains("audio only") == true, "\(String(describing: audioOnly.error))")
        #expect(audioOnly.plan == ["fail with unsupported_type"])
    }

    @Test(
        "sounds: a long MP3 is cut and copied, FLAC is transcoded to AAC, as process does",
        .enabled(
            if: TestTools.ffmpegCanEncode("libmp3lame") && TestTools.ffmpegCanEncode("flac"),
            "needs ffmpeg with libmp3lame and flac"))
    func soundsArePlanned() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let mp3 = dir.appendingPathComponent("long.mp3")
        let flac = dir.appendingPathComponent("short.flac")
        try TestTools.ffmpeg("-f", "lavfi", "-i", "sine=duration=40", "-ac", "2", "-c:a", "libmp3lame", mp3.path)
        try TestTools.ffmpeg("-f", "lavfi", "-i", "sine=duration=3", "-c:a", "flac", flac.path)

        let (longReport, longSound) = try await inspectThenProcess(mp3, in: dir)
        #expect(longReport.type == "mp3" && longReport.kind == .audio && longReport.meetsAppleRules)
        #expect(longReport.width == nil && abs((longReport.duration ?? 0) - 40) < 0.2)
        #expect(
            longReport.streams?.count == 1 && longReport.streams?.first?.hasPrefix("audio mp3 44100 Hz, stereo") == true
        )
        #expect(longReport.plan.first == "keep 30.0 s of 40.0 s", "plan: \(longReport.plan)")
        #expect(longReport.plan.contains { $0.hasPrefix("copy the mp3 frames") })
        #expect(longSound.operations.first == "remux" && longSound.file.hasSuffix(".mp3"))

        let (shortReport, shortSound) = try await inspectThenProcess(flac, in: dir)
        #expect(!shortReport.meetsAppleRules)
        #expect(shortReport.problems.contains { $0.contains("flac is not a type iOS accepts") })
        #expect(shortReport.plan.first == "transcode flac to AAC-LC mono in .m4a", "plan: \(shortReport.plan)")
        #expect(shortSound.operations.first == "transcode" && shortSound.file.hasSuffix(".m4a"))
    }

    // MARK: The CLI

    @Test(.enabled(if: hasVips && TestTools.pushprepBinary() != nil, "needs vips and the built pushprep executable"))
    func jsonOutputDecodes() throws {
        let binary = try #require(TestTools.pushprepBinary())
        try TestTools.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("photo.jpg")
            try blackJPEG(file, width: 2000, height: 1000)
            let missing = dir.appendingPathComponent("missing.png")
            let result = try TestTools.run(binary.path, ["inspect", "--json", file.path, missing.path])
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            // An input that cannot be read is exit status 1, as with process (issue 28: it was 0);
            // the JSON still describes both inputs.
            #expect(result.status == 1, "stderr: \(stderr)")
            let alone = try TestTools.run(binary.path, ["inspect", file.path])
            #expect(alone.status == 0, "a readable input alone: \(String(decoding: alone.stderr, as: UTF8.self))")
            let text = try TestTools.run(binary.path, ["inspect", missing.path])
            #expect(text.status == 1)
            #expect(String(decoding: text.stdout, as: UTF8.self).contains("error: not_found"))
            let reports = try JSONDecoder().decode([InspectReport].self, from: result.stdout)
            try #require(reports.count == 2, "stderr: \(stderr)")
            #expect(reports[0].source == file.path)
            #expect(reports[0].type == "jpeg")
            #expect(reports[0].width == 2000 && reports[0].height == 1000)
            #expect(reports[0].meetsAppleRules)
            #expect(reports[0].plan.contains("resize 2000x1000 to 1290x645"), "plan: \(reports[0].plan)")
            #expect(reports[1].source == missing.path)
            #expect(reports[1].error?.code == .notFound)
            // The same report as the library gives.
            #expect(reports[0] == inspect(file))
        }
    }
}
