internal import CFFmpeg
internal import CFFmpegShims
import Foundation
import PushPrepCore

/// The fast path: copy the streams of an MP4/MOV that iOS already plays into a new MP4,
/// without decoding, from the keyframe at or before the start, keeping the display matrix and
/// writing `moov` first.
package enum RemuxStep {
    /// H.264 profiles at most High (constrained baseline, baseline, main, high).
    static let h264Profiles: Set<Int32> = [
        FF_PROFILE_H264_CONSTRAINED_BASELINE, FF_PROFILE_H264_BASELINE, FF_PROFILE_H264_MAIN, FF_PROFILE_H264_HIGH,
    ]
    /// Level 4.2, as libav reports it (level × 10).
    static let maxH264Level: Int32 = 42
    /// HEVC Main (8-bit 4:2:0) at most level 5.1, as libav reports it (level × 30).
    static let maxHEVCLevel: Int32 = 153
    /// iOS plays at most 60 frames per second in a notification.
    static let maxFrameRate = 60.5

    /// Why the source cannot be copied as it is, or nil when it can (the size still has to fit).
    package static func obstacle(_ probe: MediaProbe, input: MediaInput, maxDisplayWidth: Int) -> String? {
        guard probe.isMP4Family else { return "the container is \(probe.container), not MP4/MOV" }
        guard let video = probe.video else { return "no video stream" }
        let stream = input.context.pointee.streams[video.index]!
        let parameters = stream.pointee.codecpar.pointee
        switch video.codecID {
        case AV_CODEC_ID_H264:
            guard h264Profiles.contains(video.profileID) else {
                return "H.264 profile \(video.profile ?? "\(video.profileID)") is above High"
            }
            guard video.level > 0 && video.level <= maxH264Level else {
                return "H.264 level \(video.level) is above 4.2"
            }
        case AV_CODEC_ID_HEVC:
            guard video.profileID == FF_PROFILE_HEVC_MAIN else {
                return "HEVC profile \(video.profile ?? "\(video.profileID)") is not Main"
            }
            guard video.level > 0 && video.level <= maxHEVCLevel else {
                return "HEVC level \(video.level) is above 5.1"
            }
        default:
            return "the video codec is \(video.codec)"
        }
        // Parameter sets only in the stream (avc3/hev1 without a configuration record) cannot
        // be described in the MP4 sample entry iOS reads.
        guard parameters.extradata_size > 0 else { return "no codec configuration record" }
        guard video.bitDepth == 8 && video.is420 else { return "pixel format \(video.pixelFormat) is not 8-bit 4:2:0" }
        guard video.squarePixels else { return "the pixels are not square" }
        guard let rate = video.frameRate, rate <= maxFrameRate else {
            return "the frame rate is \(video.frameRate.map { secondsText($0) } ?? "unknown"), above 60"
        }
        guard video.displayWidth <= maxDisplayWidth else {
            return "\(video.displayWidth) px wide, more than \(maxDisplayWidth)"
        }
        if let audio = probe.audio, !audio.isAACLC {
            return "the audio is \(audio.codec)\(audio.profile.map { " \($0)" } ?? ""), not AAC-LC"
        }
        return nil
    }

    /// What was copied.
    struct Output {
        let frames: Int
        let duration: Double
        /// Seconds of the source at which the copy starts (the keyframe).
        let start: Double
        let operations: [String]
        let warnings: [ProcessingWarning]
        /// The poster's candidate frames, decoded from the packets the copy read.
        let poster: PosterStep.Picker
    }

    /// Copies `seconds` seconds from the keyframe at or before `start` (seconds from the
    /// beginning of the media; the source's own start time is `origin`). `expectedEnd` is
    /// where the source's video ends according to its headers, to notice a truncated file.
    /// The poster's frame is decoded from the copied packets (``PosterStep/PacketPicker``).
    static func run(
        input: MediaInput, probe: MediaProbe, start: Double, seconds: Double, origin: Double, expectedEnd: Double?,
        maxPixels: Int, outputPath: String, deadline: MediaDeadline
    ) throws(PushPrepError) -> Output {
        guard let video = probe.video, let videoIn = input.context.pointee.streams[video.index] else {
            throw PushPrepError(.unsupportedType, "no video stream")
        }
        let audioIn = probe.audio.flatMap { input.context.pointee.streams[$0.index] }
        let output = try MediaOutput(path: outputPath, format: "mp4", deadline: deadline)
        let videoOut = try output.addStream(copying: videoIn)
        var operations: [String] = []
        if video.codecID == AV_CODEC_ID_HEVC {
            videoOut.pointee.codecpar.pointee.codec_tag = cffmpegshims_mktag(
                CChar(UInt8(ascii: "h")), CChar(UInt8(ascii: "v")), CChar(UInt8(ascii: "c")), CChar(UInt8(ascii: "1")))
            if video.tag != "hvc1" { operations.append("re-tagged \(video.tag) as hvc1") }
        }
        try avCall("cannot keep the rotation", deadline: deadline, default: .ioError) {
            cffmpegshims_copy_display_matrix(videoIn, videoOut)
        }
        if video.rotation != 0 { operations.append("kept rotation \(video.rotation)°") }
        let audioOut = try audioIn.map { (stream) throws(PushPrepError) in try output.addStream(copying: stream) }
        try output.writeHeader(faststart: true)

        if start > 0 { try input.seek(to: origin + start) }
        let videoBase = videoIn.pointee.time_base
        let nopts = cffmpegshims_nopts_value()
        let packet = try MediaPacket()
        var keyPTS: Int64? = nil
        var poster: PosterStep.PacketPicker? = nil
        var videoEnd: Int64 = 0
        var audioOffset: Int64 = 0
        var audioEnd: Int64 = 0
        var videoDone = false
        var audioDone = audioIn == nil
        var frames = 0
        var lastVideoEnd: Int64 = 0
        var lastVideoSeen = 0.0
        var reachedEnd = false
        while !(videoDone && audioDone) {
            guard try input.read(into: packet.pointer, during: "copying the video") else {
                reachedEnd = true
                break
            }
            defer { av_packet_unref(packet.pointer) }
            let p = packet.pointer
            if p.pointee.stream_index == videoIn.pointee.index, !videoDone {
                let isKey = p.pointee.flags & AV_PKT_FLAG_KEY != 0
                let pts = p.pointee.pts != nopts ? p.pointee.pts : p.pointee.dts
                guard pts != nopts else { continue }
                lastVideoSeen = Double(pts) * av_q2d(videoBase) - origin
                if keyPTS == nil {
                    // Whatever precedes the first keyframe cannot be decoded on its own.
                    guard isKey else { continue }
                    keyPTS = pts
                    videoEnd = try MediaTime.sum(pts, MediaTime.ticks(seconds, in: videoBase))
                    let keyTime = Double(pts) * av_q2d(videoBase) - origin
                    poster = try PosterStep.PacketPicker(
                        stream: videoIn, offset: pts,
                        duration: max(0, min(seconds, expectedEnd.map { $0 - keyTime } ?? seconds)),
                        maxPixels: maxPixels, deadline: deadline)
                    if let audioIn {
                        audioOffset = av_rescale_q(pts, videoBase, audioIn.pointee.time_base)
                        audioEnd = try MediaTime.sum(
                            audioOffset, MediaTime.ticks(seconds, in: audioIn.pointee.time_base))
                    }
                }
                // Every packet decoded before the end is kept (a B-frame before the end needs
                // the P-frame after it); a keyframe at the end is a clean cut.
                let dts = p.pointee.dts != nopts ? p.pointee.dts : pts
                if dts >= videoEnd || (isKey && pts >= videoEnd) {
                    videoDone = true
                    continue
                }
                try poster?.offer(p, pts: pts, isKey: isKey)
                let offset = keyPTS!
                p.pointee.pts = try MediaTime.difference(pts, offset)
                if p.pointee.dts != nopts { p.pointee.dts = try MediaTime.difference(p.pointee.dts, offset) }
                lastVideoEnd = try max(lastVideoEnd, MediaTime.sum(p.pointee.pts, max(p.pointee.duration, 0)))
                p.pointee.stream_index = videoOut.pointee.index
                p.pointee.pos = -1
                av_packet_rescale_ts(p, videoBase, videoOut.pointee.time_base)
                try output.write(p)
                frames += 1
            } else if let audioIn, let audioOut, p.pointee.stream_index == audioIn.pointee.index, !audioDone {
                guard keyPTS != nil, p.pointee.pts != nopts else { continue }
                if p.pointee.pts < audioOffset { continue }
                if p.pointee.pts >= audioEnd {
                    audioDone = true
                    continue
                }
                p.pointee.pts = try MediaTime.difference(p.pointee.pts, audioOffset)
                if p.pointee.dts != nopts { p.pointee.dts = try MediaTime.difference(p.pointee.dts, audioOffset) }
                p.pointee.stream_index = audioOut.pointee.index
                p.pointee.pos = -1
                av_packet_rescale_ts(p, audioIn.pointee.time_base, audioOut.pointee.time_base)
                try output.write(p)
            } else if videoDone, keyPTS != nil,
                let base = input.context.pointee.streams[Int(p.pointee.stream_index)]?.pointee.time_base,
                p.pointee.pts != nopts,
                Double(p.pointee.pts) * av_q2d(base) - origin > start + seconds + 2
            {
                // The audio ended before the video's end (or is badly interleaved): stop.
                break
            }
        }
        guard let keyPTS, let poster, frames > 0 else {
            throw PushPrepError(.corruptInput, "no video frames to copy after \(secondsText(start)) s")
        }
        try output.finish()
        let keyTime = Double(keyPTS) * av_q2d(videoBase) - origin
        let duration = Double(lastVideoEnd) * av_q2d(videoBase)
        if reachedEnd, !videoDone, let expectedEnd, lastVideoSeen < min(expectedEnd, keyTime + seconds) - 1 {
            throw PushPrepError(
                .corruptInput,
                "the video stops at \(secondsText(lastVideoSeen)) s but its header says \(secondsText(expectedEnd)) s: the file is truncated"
            )
        }
        var warnings: [ProcessingWarning] = []
        if start - keyTime > 1 {
            warnings.append(
                ProcessingWarning.startMovedToKeyframe(
                    keyframe: secondsText(keyTime), early: secondsText(start - keyTime)
                ))
        }
        if keyTime > 0.001 || (expectedEnd.map { $0 > keyTime + duration + 0.5 } ?? false) {
            operations.insert("trimmed \(secondsText(keyTime))-\(secondsText(keyTime + duration)) s", at: 0)
        }
        return Output(
            frames: frames, duration: duration, start: keyTime, operations: operations, warnings: warnings,
            poster: try poster.finish())
    }
}

/// Seconds with one decimal, as operations and warnings show them.
package func secondsText(_ seconds: Double) -> String {
    String(format: "%.1f", seconds)
}
