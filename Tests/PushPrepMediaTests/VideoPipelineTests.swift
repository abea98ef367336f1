import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepMedia

/// Video → preview MP4: every output is checked with the `ffprobe` program (codec, profile,
/// pixel format, even size, `moov` first, duration, size, rotation). Fixtures are made with the
/// `ffmpeg` program from its test sources.
@Suite(
    .enabled(
        if: TestTools.programPath("ffmpeg") != nil && TestTools.programPath("ffprobe") != nil,
        "needs ffmpeg and ffprobe"))
final class VideoPipelineTests {
    let directory: URL

    init() throws { directory = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func process(
        _ input: String, _ configure: (inout ProcessingSettings) -> Void = { _ in }, timeout: Double = 120
    )
        throws -> (ProcessedVideo, MovieProbe)
    {
        var settings = ProcessingSettings()
        configure(&settings)
        let output = input + ".out.mp4"
        let video = try VideoPipeline.process(
            path: input, settings: settings, outputPath: output, deadline: MediaDeadline(seconds: timeout))
        let probe = try MovieProbe.probe(output)
        #expect(video.bytes == probe.bytes)
        #expect(abs(video.duration - probe.duration) <= 0.5, "reported \(video.duration), ffprobe \(probe.duration)")
        if let poster = video.poster {
            #expect(poster.jpeg.starts(with: [0xFF, 0xD8, 0xFF]))
            #expect(
                poster.width == video.width && poster.height == video.height, "poster \(poster.width)x\(poster.height)")
            #expect(video.thumbnailTime >= 0 && video.thumbnailTime <= video.duration)
        } else {
            Issue.record("no poster")
        }
        return (video, probe)
    }

    private func expectFailure(
        _ input: String, _ codes: [PushPrepError.Code], deadline: Double = 60,
        _ configure: (inout ProcessingSettings) -> Void = { _ in }, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var settings = ProcessingSettings()
        configure(&settings)
        let output = input + ".out.mp4"
        let error = #expect(throws: PushPrepError.self, sourceLocation: sourceLocation) {
            _ = try VideoPipeline.process(
                path: input, settings: settings, outputPath: output, deadline: MediaDeadline(seconds: deadline))
        }
        #expect(codes.contains(error?.code ?? .ioError), "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: output), "partial output left", sourceLocation: sourceLocation)
    }

    /// A clip of `seconds` from testsrc2 (with a sine track unless `audio` is nil).
    private func clip(
        _ name: String, size: String = "320x240", rate: Int = 30, seconds: Double = 3,
        audio: [String]? = ["-c:a", "aac"],
        _ codec: String...
    ) throws -> String {
        var args = ["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(rate)"]
        if audio != nil { args += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"] }
        args += ["-t", "\(seconds)"] + codec + (audio ?? []) + [path(name)]
        try TestTools.runChecked("ffmpeg", ["-y", "-v", "error", "-nostdin"] + args)
        return path(name)
    }

    // MARK: - Copy path

    @Test("an MP4 that already plays is copied, not re-encoded")
    func alreadyFine() throws {
        let input = try clip(
            "fine.mp4", size: "640x360", seconds: 4, "-c:v", "libx264", "-profile:v", "main", "-pix_fmt", "yuv420p")
        let (video, probe) = try process(input)
        #expect(video.operations.first == "remux", "\(video.operations)")
        probe.expectPlayable(duration: 4)
        #expect(probe.width == 640 && probe.height == 360 && video.width == 640)
        #expect(probe.audio != nil)
        #expect(video.frames == 120 && probe.frames == 120)
        #expect(video.input?.video?.codec == "h264")
    }

    @Test("the poster costs no second pass: one open, one video decoder, each frame decoded once")
    func posterFromTheSamePass() throws {
        // A keyframe every second, so the first candidate (a third of the way in: 2 s) is one.
        let input = try clip(
            "once.mp4", size: "640x360", seconds: 6, "-c:v", "libx264", "-profile:v", "main", "-pix_fmt", "yuv420p",
            "-g", "30")

        // Copy path: the poster's keyframe is decoded from the packets being copied; the
        // preview is not opened again (its probing alone would decode frames).
        let copyWork = MediaWork()
        let (copied, _) = try MediaInstrumentation.$observer.withValue(copyWork) { try process(input) }
        #expect(copied.operations.first == "remux", "\(copied.operations)")
        #expect(copyWork.inputsOpened == 1, "inputs opened: \(copyWork.inputsOpened)")
        #expect(copyWork.videoDecodersOpened == 1, "video decoders: \(copyWork.videoDecodersOpened)")
        #expect(copyWork.videoFramesDecoded == 1, "frames decoded: \(copyWork.videoFramesDecoded)")
        #expect(abs(copied.thumbnailTime - 2) < 0.01, "thumbnail time \(copied.thumbnailTime)")

        // Transcode: the poster is a frame the transcode decoded and scaled anyway.
        let work = MediaWork()
        let (scaled, _) = try MediaInstrumentation.$observer.withValue(work) {
            try process(input) { $0.videoWidth = 320 }
        }
        #expect(scaled.operations.first == "transcode", "\(scaled.operations)")
        #expect(scaled.poster?.width == 320 && scaled.poster?.height == 180)
        #expect(work.inputsOpened == 1, "inputs opened: \(work.inputsOpened)")
        #expect(work.videoDecodersOpened == 1, "video decoders: \(work.videoDecodersOpened)")
        #expect(work.videoFramesDecoded == 180, "frames decoded: \(work.videoFramesDecoded)")

        // One keyframe only: the candidate's frame is decoded from it, at most
        // maxFramesPerCandidate frames on (the 8th frame, 7/30 s, as when the poster re-read the file).
        let sparse = try clip(
            "once-sparse.mp4", size: "640x360", seconds: 6, "-c:v", "libx264", "-profile:v", "main", "-pix_fmt",
            "yuv420p", "-g", "1000")
        let sparseWork = MediaWork()
        let (one, _) = try MediaInstrumentation.$observer.withValue(sparseWork) { try process(sparse) }
        #expect(one.operations.first == "remux", "\(one.operations)")
        #expect(sparseWork.inputsOpened == 1 && sparseWork.videoDecodersOpened == 1)
        #expect(sparseWork.videoFramesDecoded == PosterStep.maxFramesPerCandidate, "\(sparseWork.videoFramesDecoded)")
        #expect(abs(one.thumbnailTime - 7.0 / 30) < 0.01, "thumbnail time \(one.thumbnailTime)")
    }

    @Test("a rotated phone video keeps its display matrix on both paths, and the poster is upright")
    func rotated() throws {
        // Left half white, right half black, stored landscape. An iPhone portrait video turns
        // it 90° clockwise for display (matrix [0 1; -1 0], ffprobe "rotation=-90": FFmpeg
        // 5.1 writes it for `rotate=-90`): upright, the top half is white.
        let stored = path("stored.mp4")
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "color=c=white:size=640x720:rate=30", "-f", "lavfi", "-i",
            "color=c=black:size=640x720:rate=30", "-f", "lavfi", "-i", "sine=frequency=440", "-filter_complex",
            "[0][1]hstack,format=yuv420p[v]", "-map", "[v]", "-map", "2", "-t", "3", "-c:v", "libx264", "-c:a", "aac",
            stored)
        let input = path("phone.mp4")
        try TestTools.ffmpeg("-i", stored, "-c", "copy", "-metadata:s:v", "rotate=-90", input)
        let sourceRotation = try MovieProbe.probe(input).rotation
        #expect(sourceRotation == -90)
        // FFmpeg's own autorotation says which way is up.
        try expectTop(white: true, gray: try firstFrameGray(input), width: 720, height: 1280)

        // 1280x720 stored is 720 wide as shown: the copy path.
        let (copied, copiedProbe) = try process(input)
        #expect(copied.operations.first == "remux", "\(copied.operations)")
        #expect(copied.operations.contains("kept rotation 90°"), "\(copied.operations)")
        #expect(copied.input?.video?.rotation == 90)
        #expect(copied.width == 720 && copied.height == 1280)
        copiedProbe.expectPlayable(duration: 3)
        #expect(copiedProbe.rotation == sourceRotation)
        try expectTop(white: true, jpeg: copied.poster?.jpeg ?? [], width: 720, height: 1280)

        // Narrower: transcoded, scaled, rotation still a display matrix.
        let (scaled, scaledProbe) = try process(input) { $0.videoWidth = 360 }
        #expect(scaled.operations.first == "transcode")
        #expect(scaled.operations.contains("kept rotation 90°"), "\(scaled.operations)")
        #expect(scaled.operations.contains("scaled 720x1280 to 360x640"), "\(scaled.operations)")
        #expect(scaled.width == 360 && scaled.height == 640)
        scaledProbe.expectPlayable(duration: 3)
        #expect(scaledProbe.width == 640 && scaledProbe.height == 360)
        #expect(scaledProbe.rotation == sourceRotation)
        try expectTop(white: true, jpeg: scaled.poster?.jpeg ?? [], width: 360, height: 640)
        try expectTop(white: true, gray: try firstFrameGray(input + ".out.mp4"), width: 360, height: 640)

        // The other way round: `rotate=90` in FFmpeg 5.1 is 90° counter-clockwise (ffprobe
        // "rotation=90"), which MediaProbe calls 270° clockwise; the poster agrees with FFmpeg.
        let other = path("other.mp4")
        try TestTools.ffmpeg("-i", stored, "-c", "copy", "-metadata:s:v", "rotate=90", other)
        try expectTop(white: false, gray: try firstFrameGray(other), width: 720, height: 1280)
        let (turned, turnedProbe) = try process(other)
        #expect(turned.operations.contains("kept rotation 270°"), "\(turned.operations)")
        #expect(turnedProbe.rotation == 90)
        try expectTop(white: false, jpeg: turned.poster?.jpeg ?? [], width: 720, height: 1280)

        // Upside down: stored with white on top, shown with black on top.
        let storedUpright = path("stored-upright.mp4")
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "color=c=white:size=720x640:rate=30", "-f", "lavfi", "-i",
            "color=c=black:size=720x640:rate=30", "-filter_complex", "[0][1]vstack,format=yuv420p[v]", "-map", "[v]",
            "-t", "2", "-c:v", "libx264", storedUpright)
        let upsideDown = path("upside-down.mp4")
        try TestTools.ffmpeg("-i", storedUpright, "-c", "copy", "-metadata:s:v", "rotate=180", upsideDown)
        try expectTop(white: false, gray: try firstFrameGray(upsideDown), width: 720, height: 1280)
        let (flipped, _) = try process(upsideDown)
        #expect(flipped.operations.contains("kept rotation 180°"), "\(flipped.operations)")
        #expect(flipped.poster?.width == 720 && flipped.poster?.height == 1280)
        try expectTop(white: false, jpeg: flipped.poster?.jpeg ?? [], width: 720, height: 1280)
    }

    /// The first frame as FFmpeg shows it (autorotated), 8-bit gray.
    private func firstFrameGray(_ file: String) throws -> [UInt8] {
        [UInt8](
            try TestTools.runChecked(
                "ffmpeg", ["-v", "error", "-i", file, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "-"]))
    }

    private func expectTop(
        white: Bool, jpeg: [UInt8], width: Int, height: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let file = path("poster-\(UUID().uuidString).jpg")
        try Data(jpeg).write(to: URL(fileURLWithPath: file))
        try expectTop(
            white: white, gray: try firstFrameGray(file), width: width, height: height, sourceLocation: sourceLocation)
    }

    private func expectTop(
        white: Bool, gray: [UInt8], width: Int, height: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try #require(
            gray.count == width * height, "\(gray.count) bytes for \(width)x\(height)", sourceLocation: sourceLocation)
        func mean(_ rows: Range<Int>) -> Double {
            Double(rows.reduce(0) { sum, y in sum + gray[y * width..<(y + 1) * width].reduce(0) { $0 + Int($1) } })
                / Double(rows.count * width)
        }
        let (bright, dark) =
            white
            ? (mean(0..<height / 3), mean(height * 2 / 3..<height))
            : (mean(height * 2 / 3..<height), mean(0..<height / 3))
        #expect(bright > 200 && dark < 50, "bright \(bright), dark \(dark)", sourceLocation: sourceLocation)
    }

    @Test("HEVC in MP4 tagged hev1 is copied and re-tagged hvc1")
    func hevcRetag() throws {
        guard TestTools.ffmpegCanEncode("libx265") else { return }
        let input = try clip(
            "hev1.mp4", seconds: 2, "-c:v", "libx265", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-tag:v", "hev1",
            "-x265-params", "log-level=error")
        let (video, probe) = try process(input)
        #expect(
            video.operations.first == "remux" && video.operations.contains("re-tagged hev1 as hvc1"),
            "\(video.operations)")
        probe.expectPlayable(duration: 2, allowHEVC: true)
        #expect(probe.video?["codec_name"] as? String == "hevc")
    }

    @Test("trimming with --video-start, on the copy path and the transcode path")
    func trimming() throws {
        let fine = try clip("fine-long.mp4", size: "640x360", seconds: 12, "-c:v", "libx264", "-g", "30")
        let (copied, copiedProbe) = try process(fine) {
            $0.videoStart = 4.5
            $0.videoSeconds = 3
        }
        #expect(copied.operations.first == "remux", "\(copied.operations)")
        #expect(copied.operations.contains { $0.hasPrefix("trimmed 4.0-") }, "\(copied.operations)")
        copiedProbe.expectPlayable(duration: 3)

        let wide = try clip("wide-long.mp4", size: "1280x720", seconds: 12, "-c:v", "libx264", "-preset", "ultrafast")
        let (cut, cutProbe) = try process(wide) {
            $0.videoStart = 4.5
            $0.videoSeconds = 3
        }
        #expect(cut.operations.first == "transcode")
        #expect(cut.operations.contains("trimmed 4.5-7.5 s"), "\(cut.operations)")
        cutProbe.expectPlayable(duration: 3)
        #expect(cut.frames == 90)

        // Shorter than asked: the whole clip.
        let (whole, wholeProbe) = try process(wide) { $0.videoSeconds = 60 }
        wholeProbe.expectPlayable(duration: 12)
        #expect(!whole.operations.contains { $0.hasPrefix("trimmed") }, "\(whole.operations)")
    }

    // MARK: - Transcode path

    @Test("a >50 MB 1080p clip becomes a 720-wide, 15-second preview under the limit")
    func large1080p() throws {
        let input = try clip(
            "big.mp4", size: "1920x1080", seconds: 14, "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0")
        let inputBytes = try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int ?? 0
        #expect(inputBytes > 50_000_000, "fixture is only \(inputBytes) bytes")
        let (video, probe) = try process(input) { $0.videoSeconds = 10 }
        #expect(video.operations.first == "transcode")
        #expect(video.operations.contains("scaled 1920x1080 to 720x406"), "\(video.operations)")
        #expect(video.operations.contains("trimmed 0.0-10.0 s"), "\(video.operations)")
        probe.expectPlayable(duration: 10)
        #expect(probe.width == 720 && probe.height == 406)
        #expect((probe.video?["level"] as? Int ?? 99) <= 40)
        #expect(probe.audio != nil)
        #expect(video.frames == 300)
    }

    @Test("VP9/Opus WebM is transcoded to H.264/AAC")
    func webm() throws {
        guard TestTools.ffmpegCanEncode("libvpx-vp9"), TestTools.ffmpegCanEncode("libopus") else { return }
        let input = try clip(
            "clip.webm", seconds: 2, audio: ["-c:a", "libopus"], "-c:v", "libvpx-vp9", "-deadline", "realtime",
            "-cpu-used", "8")
        let (video, probe) = try process(input)
        #expect(video.operations.first == "transcode")
        #expect(
            video.operations.contains { $0.hasPrefix("video vp9") && $0.contains("audio opus to aac") },
            "\(video.operations)")
        #expect(video.input?.container.contains("webm") == true)
        probe.expectPlayable(duration: 2)
        #expect(probe.audio != nil)
    }

    @Test("HEVC in Matroska is transcoded")
    func hevcMKV() throws {
        guard TestTools.ffmpegCanEncode("libx265") else { return }
        let input = try clip(
            "clip.mkv", seconds: 2, "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error")
        let (video, probe) = try process(input)
        #expect(video.operations.first == "transcode")
        probe.expectPlayable(duration: 2)
    }

    @Test("10-bit H.264 becomes 8-bit yuv420p")
    func tenBit() throws {
        let input = try clip("ten.mp4", seconds: 2, "-c:v", "libx264", "-pix_fmt", "yuv420p10le")
        let (video, probe) = try process(input)
        #expect(video.operations.first == "transcode")
        #expect(video.operations.contains("pixel format yuv420p10le to yuv420p"), "\(video.operations)")
        probe.expectPlayable(duration: 2)
    }

    @Test("4:4:4 at 60 fps becomes yuv420p at 30 fps")
    func yuv444At60() throws {
        let input = try clip("444.mp4", rate: 60, seconds: 2, "-c:v", "libx264", "-pix_fmt", "yuv444p")
        let (video, probe) = try process(input)
        #expect(video.operations.contains("pixel format yuv444p to yuv420p"), "\(video.operations)")
        #expect(video.operations.contains("frame rate 60 to 30"), "\(video.operations)")
        probe.expectPlayable(duration: 2)
        #expect(abs(probe.frameRate - 30) < 0.1)
        #expect(video.frames == 60)
    }

    @Test("MPEG-4 part 2 in AVI is transcoded")
    func avi() throws {
        let input = try clip("clip.avi", seconds: 2, audio: ["-c:a", "pcm_s16le"], "-c:v", "mpeg4")
        let (video, probe) = try process(input)
        #expect(video.operations.first == "transcode")
        #expect(video.input?.video?.codec == "mpeg4")
        probe.expectPlayable(duration: 2)
        #expect(probe.audio != nil)
    }

    @Test("a video-only MP4 gives a video-only preview")
    func videoOnly() throws {
        let input = try clip(
            "silent.mp4", size: "1280x720", seconds: 2, audio: nil, "-c:v", "libx264", "-preset", "ultrafast")
        let (video, probe) = try process(input)
        #expect(video.operations.first == "transcode")
        #expect(probe.audio == nil && probe.streams.count == 1)
        probe.expectPlayable(duration: 2)
        #expect(video.width == 720 && video.height == 406 && probe.height == 406)
    }

    @Test("a small --video-max-bytes forces a re-encode at a computed bitrate, else cannot_fit")
    func fitting() throws {
        let input = path("noisy.mp4")
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30,noise=alls=80:allf=t", "-f", "lavfi", "-i",
            "sine=frequency=440", "-t", "4", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "10", "-c:a", "aac",
            input)
        let (video, probe) = try process(input) { $0.videoMaxBytes = 300_000 }
        #expect(video.operations.first == "transcode", "\(video.operations)")
        #expect(
            video.operations.contains { $0.hasPrefix("re-encoded at") && $0.hasSuffix("kbit/s to fit") },
            "\(video.operations)")
        probe.expectPlayable(duration: 4, maxBytes: 300_000)

        expectFailure(input, [.cannotFit]) { $0.videoMaxBytes = 30_000 }
    }

    // MARK: - Bad input

    @Test("truncated MP4s fail with corrupt_input, leaving no output")
    func truncated() throws {
        let faststart = try clip("faststart.mp4", seconds: 6, "-c:v", "libx264", "-movflags", "+faststart")
        let plain = try clip("plain.mp4", seconds: 6, "-c:v", "libx264")
        for (source, name) in [(faststart, "cut-faststart.mp4"), (plain, "cut-plain.mp4")] {
            let data = try Data(contentsOf: URL(fileURLWithPath: source))
            try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: path(name)))
            expectFailure(path(name), [.corruptInput])
            // The copy path is no way around it.
            expectFailure(path(name), [.corruptInput]) { $0.videoWidth = 3840 }
        }
    }

    @Test("no video stream, too many pixels and a deadline fail with their codes")
    func badInputs() throws {
        let audioOnly = path("audio.m4a")
        try TestTools.ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", audioOnly)
        expectFailure(audioOnly, [.unsupportedType])

        let clip = try clip(
            "small.mp4", size: "1280x720", seconds: 8, audio: nil, "-c:v", "libx264", "-preset", "ultrafast")
        expectFailure(clip, [.tooManyPixels]) { $0.maxPixels = 10_000 }
        expectFailure(clip, [.timeout], deadline: 0.3)
    }
}

/// Animated images as silent movies.
@Suite(.enabled(if: TestTools.programPath("ffprobe") != nil, "needs ffprobe"))
final class AnimationVideoEncoderTests {
    let directory: URL

    init() throws { directory = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(directory) }

    /// A moving gradient with a bouncing half-transparent square.
    private func frames(_ count: Int, width: Int, height: Int, bands: Int) -> [[UInt8]] {
        (0..<count).map { index in
            var pixels = [UInt8](repeating: 0, count: width * height * bands)
            for y in 0..<height {
                for x in 0..<width {
                    let p = (y * width + x) * bands
                    pixels[p] = UInt8((x + index * 7) % 256)
                    pixels[p + 1] = UInt8((y * 2) % 256)
                    pixels[p + 2] = UInt8((index * 20) % 256)
                    if bands == 4 {
                        let inside = abs(x - (index * 9) % width) < 30 && abs(y - height / 2) < 30
                        pixels[p + 3] = inside ? 128 : 255
                    }
                }
            }
            return pixels
        }
    }

    @Test("RGBA frames with their delays become a playable silent MP4")
    func rgba() throws {
        let output = directory.appendingPathComponent("anim.mp4").path
        let video = try AnimationVideoEncoder.encode(
            frames: frames(24, width: 301, height: 200, bands: 4), width: 301, height: 200, bands: 4,
            delays: Array(repeating: 80, count: 24), settings: ProcessingSettings(), outputPath: output,
            deadline: MediaDeadline(seconds: 60))
        let probe = try MovieProbe.probe(output)
        probe.expectPlayable(duration: 24 * 0.08)
        #expect(probe.audio == nil)
        #expect(probe.width == 302 || probe.width == 300)
        #expect(video.frames == 24 && probe.frames == 24)
        #expect(video.operations.first == "transcode")
        #expect(video.operations.contains("flattened transparency onto white"), "\(video.operations)")
        #expect(video.input == nil && video.bytes == probe.bytes)
        #expect(video.poster?.width == video.width && video.poster?.jpeg.starts(with: [0xFF, 0xD8]) == true)
        #expect(video.thumbnailTime > 0 && video.thumbnailTime < video.duration)
    }

    @Test("50 fps RGB frames are cut to 30 fps, scaled and trimmed to --video-seconds; 0 ms delays mean 100 ms")
    func fastAndLong() throws {
        let output = directory.appendingPathComponent("fast.mp4").path
        var settings = ProcessingSettings()
        settings.videoWidth = 200
        settings.videoSeconds = 2
        let video = try AnimationVideoEncoder.encode(
            frames: frames(150, width: 320, height: 240, bands: 3), width: 320, height: 240, bands: 3,
            delays: Array(repeating: 20, count: 150), settings: settings, outputPath: output,
            deadline: MediaDeadline(seconds: 60))
        let probe = try MovieProbe.probe(output)
        probe.expectPlayable(duration: 2)
        #expect(probe.width == 200 && probe.height == 150)
        #expect(video.frames <= 61 && video.frames >= 59, "\(video.frames) frames")
        #expect(video.operations.contains("trimmed 0.0-2.0 s"), "\(video.operations)")
        #expect(video.operations.contains { $0.hasPrefix("frame rate 50 to at most 30") }, "\(video.operations)")

        let slow = try AnimationVideoEncoder.encode(
            frames: frames(5, width: 64, height: 48, bands: 3), width: 64, height: 48, bands: 3,
            delays: [0, 0, 10, 0, 0], settings: ProcessingSettings(), outputPath: output,
            deadline: MediaDeadline(seconds: 60))
        try MovieProbe.probe(output).expectPlayable(duration: 0.5)
        #expect(abs(slow.duration - 0.5) < 0.05)

        let error = #expect(throws: PushPrepError.self) {
            _ = try AnimationVideoEncoder.encode(
                frames: [[0, 0, 0]], width: 2, height: 2, bands: 3, delays: [100], settings: ProcessingSettings(),
                outputPath: output, deadline: MediaDeadline(seconds: 60))
        }
        #expect(error?.code == .corruptInput)
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
