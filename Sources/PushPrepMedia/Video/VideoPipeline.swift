internal import CFFmpeg
internal import CFFmpegShims
import Foundation
package import PushPrepCore

/// Video → preview MP4 for a notification: the source's streams copied as they are when iOS
/// already plays them (``RemuxStep``), else a transcode (``VideoTranscodeStep``); re-encoded at
/// a lower bitrate until the file fits the byte limit; plus a poster (``PosterStep``).
///
/// Runs synchronously on the calling thread, which must be one that may block. Never leaves a
/// partial file at `outputPath` when it fails.
package enum VideoPipeline {
    /// Smallest video bitrate worth trying before giving up with `cannot_fit`.
    static let minimumBitRate = 64_000
    /// Bitrate of the AAC track of transcoded movies.
    static let audioBitRate = 128_000
    /// Re-encodes at a lower bitrate, at most.
    static let maxFitAttempts = 4

    /// Writes the preview MP4 to `outputPath` (a temporary name the caller renames when this
    /// returns).
    package static func process(path: String, settings: ProcessingSettings, outputPath: String, deadline: MediaDeadline)
        throws(PushPrepError) -> ProcessedVideo
    {
        do {
            return try run(path: path, settings: settings, outputPath: outputPath, deadline: deadline)
        } catch {
            try? FileManager.default.removeItem(atPath: outputPath)
            throw error
        }
    }

    private static func run(path: String, settings: ProcessingSettings, outputPath: String, deadline: MediaDeadline)
        throws(PushPrepError) -> ProcessedVideo
    {
        try deadline.check("opening the video")
        let input = try open(path, maxPixels: settings.maxPixels, deadline: deadline)
        let probe = MediaProbe(input)
        guard let video = probe.video, let stream = input.bestStream(AVMEDIA_TYPE_VIDEO) else {
            throw PushPrepError(
                .unsupportedType, "no video stream (\(probe.audio == nil ? "no streams" : "audio only"))")
        }
        try video.checkFrameSize(maxPixels: settings.maxPixels)

        // Timing, in seconds from the beginning of the media.
        let origin =
            input.context.pointee.start_time == cffmpegshims_nopts_value()
            ? 0 : Double(input.context.pointee.start_time) / Double(cffmpegshims_time_base())
        let streamDuration =
            stream.pointee.duration > 0 ? Double(stream.pointee.duration) * av_q2d(stream.pointee.time_base) : nil
        let mediaDuration = streamDuration ?? probe.duration
        var warnings: [String] = []
        var start = settings.videoStart
        if let mediaDuration, start > 0, start >= mediaDuration - 0.1 {
            warnings.append(
                "--video-start \(secondsText(start)) s is past the end of the \(secondsText(mediaDuration)) s video; started at 0"
            )
            start = 0
        }
        let asked = mediaDuration.map { min(settings.videoSeconds, $0 - start) } ?? settings.videoSeconds
        let expectedEnd = mediaDuration
        let limit = settings.videoMaxBytes

        // Fast path.
        var unread: MediaInput? = input
        if RemuxStep.obstacle(probe, input: input, maxDisplayWidth: settings.videoWidth) == nil {
            unread = nil
            do {
                let copied = try RemuxStep.run(
                    input: input, probe: probe, start: start, seconds: asked, origin: origin, expectedEnd: expectedEnd,
                    outputPath: outputPath, deadline: deadline)
                let bytes = try fileSize(outputPath)
                if bytes <= limit {
                    let poster = try PosterStep.fromFile(
                        path: outputPath, duration: copied.duration, rotation: video.rotation,
                        quality: settings.quality, maxPixels: settings.maxPixels, deadline: deadline)
                    return ProcessedVideo(
                        width: video.displayWidth, height: video.displayHeight, duration: copied.duration,
                        frames: copied.frames, bytes: bytes, input: probe,
                        poster: poster.map { ($0.jpeg, $0.width, $0.height) }, thumbnailTime: poster?.time ?? 0,
                        operations: ["remux"] + copied.operations, warnings: warnings + copied.warnings)
                }
                warnings.append(
                    "copying the streams as they are gives \(bytes) bytes, more than \(limit): transcoded instead")
            } catch {
                // A damaged or hostile file fails the same way when transcoded; anything else
                // (a seek the demuxer refuses, a stream the muxer cannot copy) is worth a transcode.
                if error.stopsProcessing || [.corruptInput, .tooManyPixels].contains(error.code) { throw error }
                warnings.append("could not copy the streams (\(error.message)): transcoded instead")
            }
            try? FileManager.default.removeItem(atPath: outputPath)
        }

        // Transcode.
        let size = VideoScaler.outputSize(
            width: video.width, height: video.height,
            sampleAspect: (
                Int(stream.pointee.codecpar.pointee.sample_aspect_ratio.num),
                Int(stream.pointee.codecpar.pointee.sample_aspect_ratio.den)
            ),
            rotation: video.rotation, maxDisplayWidth: settings.videoWidth)
        let sourceRate =
            stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        let frameRate = VideoTranscodeStep.frameRate(source: sourceRate)
        var operations = ["transcode"]
        if start > 0 || (mediaDuration.map { $0 > start + asked + 0.05 } ?? false) {
            operations.append("trimmed \(secondsText(start))-\(secondsText(start + asked)) s")
        }
        let turned = video.rotation % 180 != 0
        let outDisplay = turned ? (size.height, size.width) : (size.width, size.height)
        if outDisplay.0 != video.displayWidth || outDisplay.1 != video.displayHeight {
            operations.append(
                "scaled \(video.displayWidth)x\(video.displayHeight) to \(outDisplay.0)x\(outDisplay.1)")
        }
        if !video.squarePixels {
            let aspect = stream.pointee.codecpar.pointee.sample_aspect_ratio
            operations.append("made pixels square (sample aspect ratio \(aspect.num):\(aspect.den))")
        }
        if video.rotation != 0 { operations.append("kept rotation \(video.rotation)°") }
        if video.pixelFormat != "yuv420p" { operations.append("pixel format \(video.pixelFormat) to yuv420p") }
        if let rate = video.frameRate, rate > av_q2d(frameRate) + 0.01 {
            operations.append("frame rate \(rateText(rate)) to \(rateText(av_q2d(frameRate)))")
        }
        operations.append(
            "video \(video.codec)\(video.profile.map { " (\($0))" } ?? "") to h264 (High)"
                + (probe.audio.map { ", audio \($0.codec) to aac (LC) \(audioBitRate / 1000) kbit/s" } ?? ""))

        let posterTimes = PosterStep.candidateTimes(duration: asked)
        let maxRate = VideoEncoder.maxRate(width: size.width, height: size.height, frameRate: av_q2d(frameRate))
        var fitted = try encodeToFit(
            limit: limit, duration: asked, hasAudio: probe.audio != nil, maxRate: maxRate, operations: &operations,
            outputPath: outputPath, deadline: deadline
        ) { (rate) throws(PushPrepError) -> (Int, Double, Int, PosterStep.Picker, [String]) in
            let plan = VideoTranscodeStep.Plan(
                start: start, seconds: asked, origin: origin, expectedEnd: expectedEnd, width: size.width,
                height: size.height, frameRate: frameRate, rate: rate, maxPixels: settings.maxPixels,
                posterTimes: posterTimes)
            let opened = unread
            unread = nil
            let out = try VideoTranscodeStep.run(
                path: path, opened: opened, plan: plan, outputPath: outputPath, deadline: deadline)
            return (out.frames, out.duration, try fileSize(outputPath), out.poster, out.warnings)
        }
        warnings += fitted.warnings
        let poster = try fitted.poster.best.map { (best) throws(PushPrepError) in
            try PosterStep.encode(best.frame, rotation: video.rotation, time: best.time, quality: settings.quality)
        }
        fitted.poster = PosterStep.Picker(times: [])
        return ProcessedVideo(
            width: outDisplay.0, height: outDisplay.1, duration: fitted.duration, frames: fitted.frames,
            bytes: fitted.bytes, input: probe, poster: poster.map { ($0.jpeg, $0.width, $0.height) },
            thumbnailTime: poster?.time ?? 0, operations: operations, warnings: warnings)
    }

    /// The result of one encode that fits.
    struct Fitted {
        let frames: Int
        let duration: Double
        let bytes: Int
        var poster: PosterStep.Picker
        let warnings: [String]
    }

    /// Encodes at constant quality, then, while the file is over `limit`, again at a bitrate
    /// computed from the duration (and corrected by how far the last attempt missed), until it
    /// fits or the bitrate is too low to be worth it (`cannot_fit`).
    static func encodeToFit(
        limit: Int, duration: Double, hasAudio: Bool, maxRate: Int, operations: inout [String], outputPath: String,
        deadline: MediaDeadline,
        encode: (VideoEncoder.RateControl) throws(PushPrepError) -> (Int, Double, Int, PosterStep.Picker, [String])
    ) throws(PushPrepError) -> Fitted {
        var rate = VideoEncoder.RateControl.quality(crf: VideoEncoder.crf, maxRate: maxRate)
        var lastBytes = 0
        for _ in 0...maxFitAttempts {
            try deadline.check("encoding the video")
            let (frames, seconds, bytes, poster, warnings) = try encode(rate)
            if bytes <= limit {
                if case .bitRate(let bitRate) = rate {
                    operations.append("re-encoded at \(bitRate / 1000) kbit/s to fit")
                }
                return Fitted(frames: frames, duration: seconds, bytes: bytes, poster: poster, warnings: warnings)
            }
            lastBytes = bytes
            // The budget, less about 2 % for the container, less the audio track.
            let length = max(seconds, duration, 0.1)
            var target = Int(Double(limit) * 8 * 0.98 / length) - (hasAudio ? audioBitRate + 8_000 : 0)
            if case .bitRate(let previous) = rate {
                target = min(target, Int(Double(previous) * Double(limit) / Double(bytes) * 0.95))
            }
            target = min(target, VideoEncoder.maxLevelBitRate)
            guard target >= minimumBitRate else { break }
            rate = .bitRate(target / 1000 * 1000)
        }
        try? FileManager.default.removeItem(atPath: outputPath)
        throw PushPrepError(
            .cannotFit,
            "the preview is still \(lastBytes) bytes at the lowest bitrate tried, more than \(limit) (--video-max-bytes)"
        )
    }

    /// Opens the input. A file that starts like an MP4 (an `ftyp` box) but does not open is
    /// damaged (a truncated download without its `moov`), not of another type.
    private static func open(_ path: String, maxPixels: Int, deadline: MediaDeadline) throws(PushPrepError)
        -> MediaInput
    {
        do {
            return try MediaInput(path: path, maxPixels: maxPixels, deadline: deadline)
        } catch {
            guard error.code == .unsupportedType, let handle = FileHandle(forReadingAtPath: path) else { throw error }
            defer { try? handle.close() }
            let head = [UInt8]((try? handle.read(upToCount: 12)) ?? Data())
            if head.count >= 8, Array(head[4..<8]) == Array("ftyp".utf8) {
                throw PushPrepError(.corruptInput, "a damaged MP4/MOV: \(error.message)")
            }
            throw error
        }
    }

    static func fileSize(_ path: String) throws(PushPrepError) -> Int {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            return (attributes[.size] as? NSNumber)?.intValue ?? 0
        } catch {
            throw PushPrepError(.ioError, "cannot read the size of \(path): \(error.localizedDescription)")
        }
    }

    private static func rateText(_ rate: Double) -> String {
        abs(rate - rate.rounded()) < 0.01 ? "\(Int(rate.rounded()))" : String(format: "%.2f", rate)
    }
}
