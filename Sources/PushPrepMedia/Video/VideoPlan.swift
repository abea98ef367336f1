internal import CFFmpeg
internal import CFFmpegShims
import Foundation
package import PushPrepCore

/// What the video pipeline does with one movie, decided from its headers and the settings
/// before a packet is read: copy the streams or transcode them (and why), the part of the
/// source kept, the output size and frame rate, and the encodes tried to fit the byte budget.
///
/// ``VideoPipeline`` makes it with ``init(input:probe:settings:)`` and then runs it; `inspect`
/// makes it with the same initialiser and prints it, so what `inspect` says is what `process`
/// does. Only what depends on results is left to the run: a copy that fails or is over the
/// budget falls back to the transcode planned here, and the ladder's later bitrates follow
/// from the size of the attempt before.
package struct VideoPlan: Equatable {
    /// The part of the source kept, in seconds from the beginning of the media.
    package struct Window: Equatable {
        /// Where the preview starts: `--video-start`, or 0 when that is past the end.
        package let start: Double
        /// How long it lasts: `--video-seconds`, or less when the source ends sooner.
        package let seconds: Double
        /// The source's own start time, from which its timestamps count.
        let origin: Double
        /// The source's length according to its headers (the video stream's, else the
        /// container's), to notice a truncated file; nil when they do not say.
        package let sourceDuration: Double?

        /// Whether the preview leaves part of the source out.
        package var isTrimmed: Bool { start > 0 || (sourceDuration.map { $0 > start + seconds + 0.05 } ?? false) }
    }

    /// A frame rate as a fraction, as libav keeps it (exact, and comparable).
    package struct FrameRate: Equatable {
        let num: Int32
        let den: Int32

        var rational: AVRational { AVRational(num: num, den: den) }
        package var perSecond: Double { av_q2d(rational) }
    }

    /// The H.264 encode: the plan when the streams cannot be copied, and the fallback of a copy
    /// that fails or is over the budget.
    package struct Transcode: Equatable {
        /// Stored (coded) output size: square pixels, both sides even, within H.264 level 4.0.
        package let width: Int
        package let height: Int
        /// The output's size as displayed (the rotation is kept as a display matrix).
        package let displayWidth: Int
        package let displayHeight: Int
        package let frameRate: FrameRate
        /// Whether the source has an audio track, re-encoded as AAC-LC.
        package let hasAudio: Bool
        /// Seconds into the output at which poster candidates are taken.
        let posterTimes: [Double]
        /// What the transcode changes, in the operations' words, known before it runs.
        package let operations: [String]
    }

    /// Why the streams cannot be copied as they are; nil when they are copied first.
    package let obstacle: String?
    package let window: Window
    /// The source's size as displayed, and its rotation (kept in the output).
    package let sourceWidth: Int
    package let sourceHeight: Int
    let rotation: Int
    package let transcode: Transcode
    /// The encodes tried until the transcode fits `--video-max-bytes`.
    package let ladder: VideoFitLadder
    /// `--quality` of the poster JPEG.
    let posterQuality: Int
    /// `--max-pixels`, for the decoders.
    let maxPixels: Int
    /// `--video-start` when it is past the end of the source, which then starts at 0.
    package let ignoredStart: Double?
    /// The peak memory of the run, from the stream's header (``MemoryEstimate``).
    package let memory: MemoryEstimate

    /// What the settings asked that the source does not allow, for the output's warnings.
    package var warnings: [ProcessingWarning] {
        guard let ignoredStart else { return [] }
        return [
            ProcessingWarning.videoStartPastEnd(
                start: secondsText(ignoredStart), duration: window.sourceDuration.map(secondsText)
            )
        ]
    }

    /// Whether the streams are copied first.
    package var copiesStreams: Bool { obstacle == nil }

    /// The plan for the movie `input` (described by `probe`). Refuses what `process` refuses
    /// before reading a packet: no video stream, a frame without a size or over `--max-pixels`.
    package init(input: MediaInput, probe: MediaProbe, settings: ProcessingSettings) throws(PushPrepError) {
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
        var start = settings.videoStart
        var ignored: Double? = nil
        if let mediaDuration, start > 0, start >= mediaDuration - 0.1 {
            ignored = start
            start = 0
        }
        let seconds = mediaDuration.map { min(settings.videoSeconds, $0 - start) } ?? settings.videoSeconds
        let window = Window(start: start, seconds: seconds, origin: origin, sourceDuration: mediaDuration)

        // The transcode's output.
        let aspect = stream.pointee.codecpar.pointee.sample_aspect_ratio
        let size = VideoScaler.outputSize(
            width: video.width, height: video.height, sampleAspect: (Int(aspect.num), Int(aspect.den)),
            rotation: video.rotation, maxDisplayWidth: settings.videoWidth)
        let sourceRate =
            stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        let frameRate = VideoTranscodeStep.frameRate(source: sourceRate)
        let turned = video.rotation % 180 != 0
        let shown = turned ? (size.height, size.width) : (size.width, size.height)
        var operations: [String] = []
        if window.isTrimmed {
            operations.append("trimmed \(secondsText(start))-\(secondsText(start + seconds)) s")
        }
        if shown.0 != video.displayWidth || shown.1 != video.displayHeight {
            operations.append("scaled \(video.displayWidth)x\(video.displayHeight) to \(shown.0)x\(shown.1)")
        }
        if !video.squarePixels {
            operations.append("made pixels square (sample aspect ratio \(aspect.num):\(aspect.den))")
        }
        if video.rotation != 0 { operations.append("kept rotation \(video.rotation)°") }
        if video.pixelFormat != "yuv420p" { operations.append("pixel format \(video.pixelFormat) to yuv420p") }
        if let rate = video.frameRate, rate > av_q2d(frameRate) + 0.01 {
            operations.append("frame rate \(Self.rateText(rate)) to \(Self.rateText(av_q2d(frameRate)))")
        }
        operations.append(
            "video \(video.codec)\(video.profile.map { " (\($0))" } ?? "") to h264 (High)"
                + (probe.audio.map { ", audio \($0.codec) to aac (LC) \(VideoPipeline.audioBitRate / 1000) kbit/s" }
                    ?? ""))

        obstacle = RemuxStep.obstacle(probe, input: input, maxDisplayWidth: settings.videoWidth)
        self.window = window
        sourceWidth = video.displayWidth
        sourceHeight = video.displayHeight
        rotation = video.rotation
        transcode = Transcode(
            width: size.width, height: size.height, displayWidth: shown.0, displayHeight: shown.1,
            frameRate: FrameRate(num: frameRate.num, den: frameRate.den), hasAudio: probe.audio != nil,
            posterTimes: PosterStep.candidateTimes(duration: seconds), operations: operations)
        ladder = VideoFitLadder(
            limit: settings.videoMaxBytes, duration: seconds, hasAudio: probe.audio != nil,
            maxRate: VideoEncoder.maxRate(width: size.width, height: size.height, frameRate: av_q2d(frameRate)))
        posterQuality = settings.quality
        maxPixels = settings.maxPixels
        ignoredStart = ignored
        memory = MemoryEstimate.video(video)
    }

    /// A frame rate for operations: "30", "29.97".
    private static func rateText(_ rate: Double) -> String {
        abs(rate - rate.rounded()) < 0.01 ? "\(Int(rate.rounded()))" : String(format: "%.2f", rate)
    }
}

/// The encodes tried to fit a preview in its byte budget: constant quality (CRF
/// ``VideoEncoder/crf``) under a bitrate cap first, then up to ``retries`` average bitrates,
/// each worked out from the budget and the size of the attempt before, none below
/// ``minimumBitRate`` (then `cannot_fit`). The rungs after the first depend on what the
/// encoder made, so the plan holds the rule and ``VideoPipeline/encodeToFit`` walks it.
package struct VideoFitLadder: Equatable {
    /// `--video-max-bytes`.
    package let limit: Int
    /// Seconds of the preview, which the bitrates are spread over.
    let duration: Double
    /// Bits per second set aside for the AAC track, none for a silent movie.
    let audioReserve: Int
    /// The first attempt.
    package let first: VideoEncoder.RateControl
    /// Re-encodes at a lower bitrate, at most.
    let retries: Int
    /// The smallest bitrate worth trying.
    let minimumBitRate: Int

    init(limit: Int, duration: Double, hasAudio: Bool, maxRate: Int) {
        self.limit = limit
        self.duration = duration
        audioReserve = hasAudio ? VideoPipeline.audioBitRate + 8_000 : 0
        first = .quality(crf: VideoEncoder.crf, maxRate: maxRate)
        retries = VideoPipeline.maxFitAttempts
        minimumBitRate = VideoPipeline.minimumBitRate
    }
}
