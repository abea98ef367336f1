internal import CFFmpeg
internal import CFFmpegShims
import Foundation
import PushPrepCore

/// The transcode path: decode → scale to `yuv420p` (libswscale) → at most 30 fps (frames
/// dropped by timestamp) → H.264 (libx264) → MP4, with the audio decoded and re-encoded as
/// AAC-LC 128 kbit/s stereo. The rotation is kept as a display matrix (copied from the
/// source), so the pixels are scaled but never turned.
enum VideoTranscodeStep {
    /// Frames per second at most.
    static let maxFrameRate = 30.0

    /// One attempt at the transcode a ``VideoPlan`` describes: its window and size, at one rung
    /// of the plan's ladder.
    struct Plan {
        /// Seconds from the beginning of the media (the source's own start time is `origin`).
        let start: Double
        let seconds: Double
        let origin: Double
        /// Where the source's video ends according to its headers (to notice truncation).
        let expectedEnd: Double?
        /// Stored output size.
        let width: Int
        let height: Int
        let frameRate: AVRational
        let rate: VideoEncoder.RateControl
        let maxPixels: Int
        /// Seconds into the output at which poster candidates are taken.
        let posterTimes: [Double]
    }

    struct Output {
        let frames: Int
        let duration: Double
        let hasAudio: Bool
        let warnings: [ProcessingWarning]
        let poster: PosterStep.Picker
    }

    /// The output frame rate: the source's, divided by the smallest whole number that brings it
    /// to 30 or below (60 → 30, 50 → 25, 59.94 → 29.97); 30 when the source does not say.
    static func frameRate(source: AVRational) -> AVRational {
        guard source.num > 0, source.den > 0 else { return AVRational(num: 30, den: 1) }
        let rate = av_q2d(source)
        guard rate >= 1, rate <= 1000 else { return AVRational(num: 30, den: 1) }
        let divisor = Int32((rate / (maxFrameRate + 0.01)).rounded(.up))
        var num: Int32 = 0
        var den: Int32 = 0
        av_reduce(&num, &den, Int64(source.num), Int64(source.den) * Int64(max(1, divisor)), 1 << 20)
        return AVRational(num: num, den: den)
    }

    /// Transcodes `path`; `opened` is the same file already opened and not yet read (it
    /// saves probing it twice: `avformat_find_stream_info` decodes frames).
    static func run(path: String, opened: MediaInput? = nil, plan: Plan, outputPath: String, deadline: MediaDeadline)
        throws(PushPrepError) -> Output
    {
        let input: MediaInput
        if let opened {
            input = opened
        } else {
            input = try MediaInput(path: path, maxPixels: plan.maxPixels, deadline: deadline)
        }
        guard let videoIn = input.bestStream(AVMEDIA_TYPE_VIDEO) else {
            throw PushPrepError(.unsupportedType, "no video stream")
        }
        let videoDecoder = try MediaDecoder(stream: videoIn, maxPixels: plan.maxPixels, deadline: deadline)
        var warnings: [ProcessingWarning] = []
        var audioDecoder: MediaDecoder? = nil
        var transcoder: AudioTranscoder? = nil
        if let audioIn = input.bestStream(AVMEDIA_TYPE_AUDIO) {
            do {
                let decoder = try MediaDecoder(stream: audioIn, maxPixels: plan.maxPixels, deadline: deadline)
                let audio = try AudioTranscoder(decoder: decoder, bitRate: 128_000, deadline: deadline)
                audio.maximumSamples = try MediaTime.integer(
                    plan.seconds * Double(audio.sampleRate), "\(plan.seconds) s")
                audioDecoder = decoder
                transcoder = audio
            } catch {
                if error.stopsProcessing { throw error }
                warnings.append(ProcessingWarning.audioDropped(reason: error.message))
            }
        }
        let parameters = videoIn.pointee.codecpar.pointee
        let colour =
            parameters.color_primaries == AVCOL_PRI_UNSPECIFIED && parameters.color_space == AVCOL_SPC_UNSPECIFIED
            ? nil : (parameters.color_primaries, parameters.color_trc, parameters.color_space)
        let encoder = try VideoEncoder(
            width: plan.width, height: plan.height, timeBase: av_inv_q(plan.frameRate), frameRate: plan.frameRate,
            rate: plan.rate, colour: colour, deadline: deadline)
        let writer = try PreviewMovieWriter(
            path: outputPath, encoder: encoder, rotationFrom: videoIn, audio: transcoder,
            posterTimes: plan.posterTimes, deadline: deadline)
        let scaler = try VideoScaler(width: plan.width, height: plan.height, format: AV_PIX_FMT_YUV420P, threads: 0)

        if plan.start > 0 {
            // A file without an index may not seek: then decode from the beginning and drop.
            do { try input.seek(to: plan.origin + plan.start) } catch {
                if error.stopsProcessing { throw error }
            }
        }
        let end = plan.start + plan.seconds
        let videoBase = videoIn.pointee.time_base
        let audioIndex = audioDecoder?.stream.pointee.index ?? -1
        let nopts = cffmpegshims_nopts_value()
        let sourceRate = av_q2d(
            videoIn.pointee.avg_frame_rate.num > 0 ? videoIn.pointee.avg_frame_rate : plan.frameRate)
        let frameStep = 1 / (sourceRate > 0 && sourceRate.isFinite ? sourceRate : 30)
        var videoDone = false
        var audioDone = transcoder == nil
        var lastVideoTime: Double? = nil
        var damaged = 0
        var reachedEnd = false
        let work = MediaInstrumentation.observer

        func onVideo(_ frame: UnsafeMutablePointer<AVFrame>) throws(PushPrepError) {
            let ts = frame.pointee.best_effort_timestamp
            let time =
                ts == nopts
                ? (lastVideoTime.map { $0 + frameStep } ?? plan.start) : Double(ts) * av_q2d(videoBase) - plan.origin
            guard time >= plan.start - 0.002 else { return }
            guard time < end - 0.002 else {
                videoDone = true
                return
            }
            lastVideoTime = time
            let scaled = try scaler.scale(frame)
            try writer.addVideo(scaled, time: max(0, time - plan.start))
        }
        func onAudio(_ frame: UnsafeMutablePointer<AVFrame>) throws(PushPrepError) {
            guard let decoder = audioDecoder else { return }
            let ts = frame.pointee.best_effort_timestamp
            if ts != nopts {
                let time = Double(ts) * av_q2d(decoder.stream.pointee.time_base) - plan.origin
                let length = Double(frame.pointee.nb_samples) / Double(max(1, frame.pointee.sample_rate))
                if time + length <= plan.start { return }
                if time >= end {
                    audioDone = true
                    return
                }
            }
            try writer.addAudio(frame)
            if writer.audioIsFull { audioDone = true }
        }
        /// Sends a packet (nil: end of stream) and hands over every decoded frame. Damaged
        /// packets are skipped, as players do; a video that yields no frame at all fails below.
        func decode(
            _ decoder: MediaDecoder, _ packet: UnsafeMutablePointer<AVPacket>?, _ frame: MediaFrame,
            _ handle: (UnsafeMutablePointer<AVFrame>) throws(PushPrepError) -> Void
        ) throws(PushPrepError) {
            var status = avcodec_send_packet(decoder.context, packet)
            if status == cffmpegshims_error_invaliddata() {
                damaged += 1
                return
            }
            if status < 0 && status != cffmpegshims_error_eof() { throw decodeError(status, decoder) }
            while true {
                status = avcodec_receive_frame(decoder.context, frame.pointer)
                if status == cffmpegshims_error_eagain() || status == cffmpegshims_error_eof() { return }
                if status == cffmpegshims_error_invaliddata() {
                    damaged += 1
                    continue
                }
                if status < 0 { throw decodeError(status, decoder) }
                defer { av_frame_unref(frame.pointer) }
                if decoder === videoDecoder { work?.decodedVideoFrame() }
                try handle(frame.pointer)
            }
        }
        func decodeError(_ status: Int32, _ decoder: MediaDecoder) -> PushPrepError {
            let pixels = Int(decoder.context.pointee.width) * Int(decoder.context.pointee.height)
            if decoder.context.pointee.codec_type == AVMEDIA_TYPE_VIDEO, pixels > plan.maxPixels {
                return PushPrepError(
                    .tooManyPixels,
                    "\(decoder.context.pointee.width)x\(decoder.context.pointee.height) frames, more than the \(plan.maxPixels) pixels allowed"
                )
            }
            return avError(status, "cannot decode the \(decoder.codecName) stream", deadline: deadline)
        }

        let packet = try MediaPacket()
        let videoFrame = try MediaFrame()
        let audioFrame = try MediaFrame()
        while !(videoDone && audioDone) {
            guard try input.read(into: packet.pointer, during: "transcoding the video") else {
                reachedEnd = true
                break
            }
            defer { av_packet_unref(packet.pointer) }
            let index = packet.pointer.pointee.stream_index
            if index == videoIn.pointee.index {
                if !videoDone { try decode(videoDecoder, packet.pointer, videoFrame, onVideo) }
            } else if index == audioIndex, let audioDecoder {
                if !audioDone { try decode(audioDecoder, packet.pointer, audioFrame, onAudio) }
            }
            if videoDone, !audioDone, let stream = input.context.pointee.streams[Int(index)],
                packet.pointer.pointee.pts != nopts,
                Double(packet.pointer.pointee.pts) * av_q2d(stream.pointee.time_base) - plan.origin > end + 2
            {
                break  // the audio ends before the video's end
            }
        }
        if !videoDone { try decode(videoDecoder, nil, videoFrame, onVideo) }
        if !audioDone, let audioDecoder { try decode(audioDecoder, nil, audioFrame, onAudio) }
        guard let lastVideoTime else {
            throw PushPrepError(
                .corruptInput,
                plan.start > 0
                    ? "no video frame could be decoded after \(secondsText(plan.start)) s"
                    : "no video frame could be decoded")
        }
        if reachedEnd, !videoDone, let expectedEnd = plan.expectedEnd,
            lastVideoTime < min(expectedEnd, end) - max(1, 2 * frameStep)
        {
            throw PushPrepError(
                .corruptInput,
                "the video stops at \(secondsText(lastVideoTime)) s but its header says \(secondsText(expectedEnd)) s: the file is truncated"
            )
        }
        if damaged > 0 { warnings.append(ProcessingWarning.damagedPacketsSkipped(skipped: damaged)) }
        let result = try writer.finish()
        return Output(
            frames: result.frames, duration: result.duration, hasAudio: transcoder != nil, warnings: warnings,
            poster: result.poster)
    }
}
