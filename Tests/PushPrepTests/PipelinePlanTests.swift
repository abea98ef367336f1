import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrep
@testable import PushPrepMedia

/// The plan `inspect` prints is the plan `process` runs: for each input, the plan inspect made
/// (``Inspector/inspectPlanning(_:settings:)``) equals the one the pipeline recorded in its
/// result, the inspect lines say it, and the output shows it was carried out. Fixtures are made
/// with the `ffmpeg` and `vips` programs.
@Suite("Pipeline plans")
final class PipelinePlanTests {
    let directory: URL

    init() throws { directory = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// What `inspect` reports for `path`, and the plan it put into words.
    private func inspected(_ path: String, _ settings: ProcessingSettings) throws -> (InspectReport, Inspector.Plan) {
        let (report, plan) = Inspector.inspectPlanning(InputItem(source: path, path: path), settings: settings)
        return (report, try #require(plan, "inspect made no plan: \(report)"))
    }

    private func processVideo(_ path: String, _ settings: ProcessingSettings) throws -> ProcessedVideo {
        try VideoPipeline.process(
            path: path, settings: settings, outputPath: path + ".out.mp4", deadline: MediaDeadline(seconds: 120))
    }

    private func processAudio(_ path: String, _ type: MediaType, _ settings: ProcessingSettings) throws
        -> ProcessedAudio
    {
        try AudioPipeline.process(
            path: path, type: type, settings: settings, outputPath: path + ".out", deadline: MediaDeadline(seconds: 60))
    }

    private func ffmpeg(_ arguments: String...) throws {
        try TestTools.runChecked("ffmpeg", ["-y", "-v", "error", "-nostdin"] + arguments)
    }

    /// A testsrc2 clip of `seconds` at `size`, with a sine track when `audio`, encoded with `codec`.
    private func clip(_ name: String, size: String, seconds: Double, audio: Bool, _ codec: String...) throws
        -> String
    {
        var arguments = ["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30"]
        if audio { arguments += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"] }
        arguments += ["-t", "\(seconds)"] + codec + (audio ? ["-c:a", "aac"] : ["-an"]) + [path(name)]
        try TestTools.runChecked("ffmpeg", ["-y", "-v", "error", "-nostdin"] + arguments)
        return path(name)
    }

    private static let keepMovie =
        "keep the movie under 50000000 bytes, lowering the bit rate if needed; a JPEG poster frame for the thumbnail"

    // MARK: - Movies

    @Test(
        "an HEVC Main 10 movie: inspect plans the transcode and why, process transcodes with that plan",
        .enabled(if: TestTools.ffmpegCanEncode("libx265") && TestTools.ffmpegCanMux("mp4"), "needs ffmpeg with libx265")
    )
    func hevcMain10IsTranscoded() throws {
        let input = try clip(
            "main10.mp4", size: "320x240", seconds: 2, audio: false, "-c:v", "libx265", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p10le", "-tag:v", "hvc1", "-x265-params", "log-level=error")
        let (report, plan) = try inspected(input, ProcessingSettings())
        guard case .video(let planned) = plan else { throw PlanMismatch("not a video plan: \(plan)") }
        #expect(planned.obstacle == "HEVC profile Main 10 is not Main", "\(String(describing: planned.obstacle))")
        #expect(planned.transcode.operations.contains("pixel format yuv420p10le to yuv420p"))
        #expect(report.plan == ["transcode to H.264 (High) in MP4: HEVC profile Main 10 is not Main", Self.keepMovie])

        let video = try processVideo(input, ProcessingSettings())
        #expect(video.plan == planned)
        #expect(video.operations == ["transcode"] + planned.transcode.operations, "\(video.operations)")
        #expect(video.width == planned.transcode.displayWidth && video.height == planned.transcode.displayHeight)
    }

    @Test(
        "a movie iOS plays: inspect plans the copy, process copies with that plan",
        .enabled(if: TestTools.ffmpegCanEncode("libx264") && TestTools.ffmpegCanMux("mov"), "needs ffmpeg with libx264")
    )
    func playableMovieIsCopied() throws {
        let input = try clip(
            "small.mov", size: "320x240", seconds: 2, audio: true, "-c:v", "libx264", "-preset", "ultrafast",
            "-profile:v", "main", "-pix_fmt", "yuv420p")
        let (report, plan) = try inspected(input, ProcessingSettings())
        guard case .video(let planned) = plan else { throw PlanMismatch("not a video plan: \(plan)") }
        #expect(planned.copiesStreams && !planned.window.isTrimmed && planned.warnings.isEmpty)
        #expect(
            report.plan == [
                "copy the streams into an MP4 without re-encoding (transcode if the copy does not fit)",
                Self.keepMovie,
            ])

        let video = try processVideo(input, ProcessingSettings())
        #expect(video.plan == planned)
        #expect(video.operations.first == "remux", "\(video.operations)")
        #expect(video.width == planned.sourceWidth && video.height == planned.sourceHeight)
    }

    @Test(
        "a copy over the budget falls back to the transcode the plan holds, as inspect says it would",
        .enabled(if: TestTools.ffmpegCanEncode("libx264") && TestTools.ffmpegCanMux("mp4"), "needs ffmpeg with libx264")
    )
    func copyOverBudgetIsTranscoded() throws {
        // Nearly lossless: the copy is several times the size of the preview's constant-quality encode.
        let input = try clip(
            "heavy.mp4", size: "640x360", seconds: 3, audio: false, "-c:v", "libx264", "-preset", "ultrafast",
            "-profile:v", "high", "-crf", "1", "-pix_fmt", "yuv420p")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int)
        var settings = ProcessingSettings()
        settings.videoMaxBytes = size / 3
        let (report, plan) = try inspected(input, settings)
        guard case .video(let planned) = plan else { throw PlanMismatch("not a video plan: \(plan)") }
        #expect(planned.copiesStreams)
        #expect(planned.ladder.limit == size / 3)
        let transcode = planned.transcode
        let maxRate = VideoEncoder.maxRate(
            width: transcode.width, height: transcode.height, frameRate: transcode.frameRate.perSecond)
        #expect(planned.ladder.first == .quality(crf: VideoEncoder.crf, maxRate: maxRate))
        #expect(report.plan.last?.hasPrefix("keep the movie under \(size / 3) bytes") == true, "\(report.plan)")

        let video = try processVideo(input, settings)
        #expect(video.plan == planned)
        #expect(video.operations.first == "transcode", "\(video.operations)")
        #expect(
            video.warnings.contains { $0.message.hasPrefix("copying the streams as they are gives") },
            "\(video.warnings)")
        #expect(video.bytes <= size / 3)
        #expect(video.width == planned.transcode.displayWidth && video.height == planned.transcode.displayHeight)
    }

    @Test(
        "a wide movie cut by --video-start/--video-seconds: inspect plans the window and the size process makes",
        .enabled(if: TestTools.ffmpegCanEncode("libx264") && TestTools.ffmpegCanMux("mp4"), "needs ffmpeg with libx264")
    )
    func wideMovieIsTrimmedAndScaled() throws {
        let input = try clip(
            "wide.mp4", size: "1280x720", seconds: 5, audio: true, "-c:v", "libx264", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p")
        var settings = ProcessingSettings()
        settings.videoStart = 1
        settings.videoSeconds = 2
        let (report, plan) = try inspected(input, settings)
        guard case .video(let planned) = plan else { throw PlanMismatch("not a video plan: \(plan)") }
        #expect(planned.window.start == 1 && planned.window.seconds == 2 && planned.window.isTrimmed)
        #expect(
            report.plan == [
                "keep 2.0 s from 1.0 s of 5.0 s",
                "transcode to H.264 (High) and AAC-LC in MP4: 1280 px wide, more than 720",
                "scale 1280x720 to 720x406",
                Self.keepMovie,
            ])

        let video = try processVideo(input, settings)
        #expect(video.plan == planned)
        #expect(video.operations.contains("trimmed 1.0-3.0 s"), "\(video.operations)")
        #expect(video.operations.contains("scaled 1280x720 to 720x406"), "\(video.operations)")
        #expect(video.width == 720 && video.height == 406)
        #expect(abs(video.duration - 2) < 0.2, "\(video.duration)")
    }

    @Test(
        "a start past the end: inspect says the preview starts at 0, process warns and does so",
        .enabled(if: TestTools.ffmpegCanEncode("libx264") && TestTools.ffmpegCanMux("mp4"), "needs ffmpeg with libx264")
    )
    func startPastTheEnd() throws {
        let input = try clip(
            "short.mp4", size: "320x240", seconds: 2, audio: false, "-c:v", "libx264", "-preset", "ultrafast",
            "-profile:v", "main", "-pix_fmt", "yuv420p")
        var settings = ProcessingSettings()
        settings.videoStart = 30
        let (report, plan) = try inspected(input, settings)
        guard case .video(let planned) = plan else { throw PlanMismatch("not a video plan: \(plan)") }
        #expect(planned.ignoredStart == 30 && planned.window.start == 0 && !planned.window.isTrimmed)
        #expect(report.plan.first == "start at 0: --video-start 30.0 s is past the end of the 2.0 s video")

        let video = try processVideo(input, settings)
        #expect(video.plan == planned)
        #expect(
            video.warnings.map(\.message).contains(
                "--video-start 30.0 s is past the end of the 2.0 s video; started at 0"))
        #expect(abs(video.duration - 2) < 0.2, "\(video.duration)")
    }

    @Test(
        "an MP4 cut before its moov: inspect reports the corrupt_input process fails with, not unsupported_type",
        .enabled(if: TestTools.ffmpegCanEncode("libx264") && TestTools.ffmpegCanMux("mp4"), "needs ffmpeg with libx264")
    )
    func cutMP4IsCorrupt() throws {
        // The moov box is written last: the first 20 KB hold the ftyp box and part of the frames.
        let whole = try clip(
            "whole.mp4", size: "320x240", seconds: 3, audio: false, "-c:v", "libx264", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p")
        let input = path("cut.mp4")
        try Data(try Data(contentsOf: URL(fileURLWithPath: whole)).prefix(20_000)).write(
            to: URL(fileURLWithPath: input))
        let report = Inspector.inspect(InputItem(source: input, path: input), settings: ProcessingSettings())
        let error = #expect(throws: PushPrepError.self) { try self.processVideo(input, ProcessingSettings()) }
        #expect(error?.code == .corruptInput, "\(String(describing: error))")
        #expect(report.error?.code == error?.code && report.error?.message == error?.message, "\(report)")
        #expect(report.plan == ["fail with corrupt_input"])
    }

    // MARK: - Sounds

    @Test(
        "an MP3 is copied and FLAC transcoded with the plans inspect prints",
        .enabled(
            if: TestTools.ffmpegCanEncode("libmp3lame") && TestTools.ffmpegCanEncode("flac"),
            "needs ffmpeg with libmp3lame and flac"))
    func soundsAreCopiedOrTranscoded() throws {
        let mp3 = path("long.mp3")
        try ffmpeg("-f", "lavfi", "-i", "sine=duration=40", "-ac", "2", "-c:a", "libmp3lame", mp3)
        let (mp3Report, mp3Plan) = try inspected(mp3, ProcessingSettings())
        guard case .audio(let copying) = mp3Plan else { throw PlanMismatch("not an audio plan: \(mp3Plan)") }
        #expect(copying.copiesMP3 && copying.isTrimmed)
        #expect(
            mp3Report.plan == [
                "keep 30.0 s of 40.0 s", "copy the mp3 frames without re-encoding (transcode if damaged or too large)",
                "keep the sound under 5000000 bytes, lowering the bit rate if needed",
            ])
        let copied = try processAudio(mp3, .mp3, ProcessingSettings())
        #expect(copied.plan == copying)
        #expect(copied.operations.first == "remux" && copied.format == .mp3, "\(copied.operations)")

        let flac = path("short.flac")
        try ffmpeg("-f", "lavfi", "-i", "sine=duration=3", "-c:a", "flac", flac)
        let (flacReport, flacPlan) = try inspected(flac, ProcessingSettings())
        guard case .audio(let transcoding) = flacPlan else { throw PlanMismatch("not an audio plan: \(flacPlan)") }
        guard case .ladder(let ladder) = transcoding.transcode else {
            throw PlanMismatch("no ladder: \(transcoding.transcode)")
        }
        #expect(!transcoding.copiesMP3 && ladder.firstBitRate == 64_000 && ladder.channels(at: 64_000) == 1)
        #expect(flacReport.plan.first == "transcode flac to AAC-LC mono in .m4a", "\(flacReport.plan)")
        let transcoded = try processAudio(flac, .flac, ProcessingSettings())
        #expect(transcoded.plan == transcoding)
        #expect(transcoded.operations.first == "transcode" && transcoded.format == .m4a)
        #expect(transcoded.operations.contains("encoded aac-lc 64 kbit/s mono 44100 Hz"), "\(transcoded.operations)")
    }

    @Test(
        "a small budget: the ladder starts mono at the bit rate the duration allows, in inspect and in process",
        .enabled(if: TestTools.ffmpegCanEncode("flac"), "needs ffmpeg with flac"))
    func smallBudgetStartsMono() throws {
        let input = path("stereo.flac")
        try ffmpeg("-f", "lavfi", "-i", "sine=duration=8", "-ac", "2", "-c:a", "flac", input)
        var settings = ProcessingSettings()
        settings.audioMaxBytes = 60_000
        let (report, plan) = try inspected(input, settings)
        guard case .audio(let planned) = plan, case .ladder(let ladder) = planned.transcode else {
            throw PlanMismatch("not an audio ladder: \(plan)")
        }
        #expect(ladder.fullChannels == 2)
        #expect(ladder.firstBitRate < ladder.monoBelow && ladder.channels(at: ladder.firstBitRate) == 1)
        // Before plans, inspect said "stereo" here, while process encoded mono.
        #expect(report.plan.first == "transcode flac to AAC-LC mono in .m4a", "\(report.plan)")

        let sound = try processAudio(input, .flac, settings)
        #expect(sound.plan == planned)
        #expect(
            sound.operations.contains("encoded aac-lc \(ladder.firstBitRate / 1000) kbit/s mono 44100 Hz"),
            "\(sound.operations)")
    }

    @Test(
        "a budget no bit rate fits: inspect reports the cannot_fit process fails with, before any encode",
        .enabled(if: TestTools.programAvailable("ffmpeg"), "needs ffmpeg"))
    func hopelessBudgetIsRefused() throws {
        let input = path("long.wav")
        try ffmpeg("-f", "lavfi", "-i", "sine=duration=25", "-ac", "2", input)
        var settings = ProcessingSettings()
        settings.audioMaxBytes = 60_000
        let (report, plan) = try inspected(input, settings)
        guard case .audio(let planned) = plan, case .refused(let message) = planned.transcode else {
            throw PlanMismatch("not a refused transcode: \(plan)")
        }
        #expect(report.error?.code == .cannotFit && report.error?.message == message)
        #expect(report.plan == ["fail with cannot_fit"])

        let error = #expect(throws: PushPrepError.self) { try self.processAudio(input, .wav, settings) }
        #expect(error?.code == .cannotFit && error?.message == message, "\(String(describing: error))")
    }

    // MARK: - Images

    /// Runs the image pipeline on `path` (of `type`) as `process` does.
    private func processImage(_ path: String, _ type: MediaType, _ settings: ProcessingSettings) throws
        -> ImagePipeline.Outcome
    {
        try ImagePipeline.run(ImageInput(type: type, payload: .encoded(ImageSource(path: path))), settings: settings)
    }

    @Test(
        "a large JPEG: inspect plans the resize, process makes that width with the plan",
        .enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func largeJPEGIsResized() throws {
        let input = path("photo.jpg")
        try TestTools.vips("black", input + "[strip]", "4000", "3000", "--bands", "3")
        let (report, plan) = try inspected(input, ProcessingSettings())
        guard case .image(let planned) = plan else { throw PlanMismatch("not an image plan: \(plan)") }
        #expect(planned.width == 1290 && planned.resizes && planned.output == .still(alpha: false))
        #expect(planned.jpegLadder.map(\.quality) == [82, 72, 62, 52, 42, 40])
        #expect(report.plan == ["resize 4000x3000 to 1290x968", "encode as jpeg quality 82, at most 10000000 bytes"])

        guard case .image(let image) = try processImage(input, .jpeg, ProcessingSettings()) else {
            throw PlanMismatch("the JPEG did not stay an image")
        }
        #expect(image.plan == planned)
        #expect(image.width == planned.width && image.height == 968 && image.format == .jpeg)
        #expect(image.operations.contains("encoded jpeg quality 82"), "\(image.operations)")
    }

    @Test(
        "a transparent PNG: inspect plans PNG-if-transparent, process writes a PNG with the plan",
        .enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func transparentPNGStaysPNG() throws {
        let input = path("clear.png")
        try TestTools.vips("black", input, "300", "200", "--bands", "4")
        let (report, plan) = try inspected(input, ProcessingSettings())
        guard case .image(let planned) = plan else { throw PlanMismatch("not an image plan: \(plan)") }
        #expect(planned.output == .still(alpha: true) && !planned.resizes)
        #expect(report.plan == ["encode as png if the alpha channel is really used, else jpeg, at most 10000000 bytes"])

        guard case .image(let image) = try processImage(input, .png, ProcessingSettings()) else {
            throw PlanMismatch("the PNG did not stay an image")
        }
        #expect(image.plan == planned)
        #expect(image.format == .png && image.width == 300, "\(image.operations)")
    }

    @Test(
        "an animated GIF: a GIF or a movie at once, as --gif-as-video says, in inspect and in process",
        .enabled(
            if: TestTools.programAvailable("vips") && TestTools.ffmpegCanMux("gif"), "needs vips and ffmpeg with gif"))
    func animationFollowsGifAsVideo() throws {
        let input = path("anim.gif")
        try ffmpeg("-f", "lavfi", "-i", "testsrc=size=120x90:rate=10:duration=1", input)

        var always = ProcessingSettings()
        always.gifAsVideo = .always
        let (movieReport, moviePlan) = try inspected(input, always)
        guard case .image(let movie) = moviePlan else { throw PlanMismatch("not an image plan: \(moviePlan)") }
        #expect(movie.output == .movie(reason: "--gif-as-video always"))
        // Before plans, inspect said a GIF would be tried first.
        #expect(movieReport.plan == ["encode as a silent mp4 movie (--gif-as-video always)"])
        guard case .animationNeedsVideo(_, let reason) = try processImage(input, .gif, always) else {
            throw PlanMismatch("the animation was not handed to the movie encoder")
        }
        #expect(reason == "--gif-as-video always")

        var never = ProcessingSettings()
        never.gifAsVideo = .never
        let (gifReport, gifPlan) = try inspected(input, never)
        guard case .image(let gif) = gifPlan else { throw PlanMismatch("not an image plan: \(gifPlan)") }
        #expect(gif.output == .animation(fallback: .fewerFramesThenStill))
        #expect(
            gifReport.plan == [
                "encode as gif, at most 10000000 bytes and 12000000 bytes of decoded frames (smaller if need be; "
                    + "else fewer frames, or its first frame as a still)"
            ])
        guard case .image(let image) = try processImage(input, .gif, never) else {
            throw PlanMismatch("the GIF did not stay an image")
        }
        #expect(image.plan == gif)
        #expect(image.format == .gif && image.frames == 10, "\(image.operations)")
    }
}

/// A test's input took another path than the one it was made for.
private struct PlanMismatch: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
