import Foundation
import PushPrepCore
import PushPrepMedia
import PushPrepPayload
import PushPrepRemote

/// Movies and sounds: what the headers say (through libav, no frame decoded) and the path
/// `process` would take: the pipelines' own plans (``VideoPlan``, ``AudioPlan``), put into words.
extension Inspector {
    /// Seconds allowed to open and probe a file: headers only, so far less than a job's timeout.
    static let mediaProbeSeconds = 30.0

    static func inspectMedia(
        _ item: InputItem, type: MediaType, settings: ProcessingSettings, into report: inout InspectReport,
        plan: inout Plan?
    ) throws(PushPrepError) {
        let deadline = MediaDeadline(seconds: min(settings.timeout, mediaProbeSeconds))
        let input: MediaInput
        if type.kind == .video {
            // As the video pipeline opens it: a cut MP4 is corrupt_input there, and so here.
            input = try VideoPipeline.open(item.path, maxPixels: settings.maxPixels, deadline: deadline)
        } else {
            input = try MediaInput(path: item.path, maxPixels: settings.maxPixels, deadline: deadline)
        }
        let probe = MediaProbe(input)
        report.duration = probe.duration
        report.streams = streamDescriptions(probe)
        switch type.kind {
        case .video:
            if let video = probe.video {
                report.width = video.displayWidth
                report.height = video.displayHeight
            }
            let videoPlan = try VideoPlan(input: input, probe: probe, settings: settings)
            plan = .video(videoPlan)
            report.memoryEstimate = videoPlan.memory.bytes
            report.memoryBasis = videoPlan.memory.basis
            report.plan += lines(videoPlan)
        default:
            let audioPlan = try AudioPlan(probe: probe, type: type, settings: settings)
            plan = .audio(audioPlan)
            report.memoryEstimate = audioPlan.memory.bytes
            report.memoryBasis = audioPlan.memory.basis
            report.plan += try lines(audioPlan)
        }
    }

    /// One line per main stream, e.g. "video h264 (High) 1920x1080, 30 fps".
    private static func streamDescriptions(_ probe: MediaProbe) -> [String] {
        var lines: [String] = []
        if let video = probe.video {
            var line = "video \(video.codec)\(video.profile.map { " (\($0))" } ?? "")"
            line += " \(video.displayWidth)x\(video.displayHeight)"
            if let rate = video.frameRate { line += ", \(secondsText(rate)) fps" }
            if video.pixelFormat != "yuv420p" { line += ", \(video.pixelFormat)" }
            if video.rotation != 0 { line += ", rotated \(video.rotation)°" }
            lines.append(line)
        }
        if let audio = probe.audio {
            var line = "audio \(audio.codec)\(audio.profile.map { " (\($0))" } ?? "")"
            line += " \(audio.sampleRate) Hz, \(AudioStreamInfo.channelsText(audio.channels))"
            if let rate = audio.bitRate { line += ", \(rate / 1000) kbit/s" }
            lines.append(line)
        }
        return lines
    }

    /// The video plan in words.
    static func lines(_ plan: VideoPlan) -> [String] {
        var lines: [String] = []
        let window = plan.window
        if let ignored = plan.ignoredStart {
            let length = window.sourceDuration.map { " of the \(secondsText($0)) s video" } ?? ""
            lines.append("start at 0: --video-start \(secondsText(ignored)) s is past the end\(length)")
        }
        if window.isTrimmed {
            let from = window.start > 0 ? " from \(secondsText(window.start)) s" : ""
            let of = window.sourceDuration.map { " of \(secondsText($0)) s" } ?? ""
            lines.append("keep \(secondsText(window.seconds)) s\(from)\(of)")
        }
        if let obstacle = plan.obstacle {
            let transcode = plan.transcode
            let target = transcode.hasAudio ? "H.264 (High) and AAC-LC" : "H.264 (High)"
            lines.append("transcode to \(target) in MP4: \(obstacle)")
            if transcode.displayWidth != plan.sourceWidth || transcode.displayHeight != plan.sourceHeight {
                lines.append(
                    "scale \(plan.sourceWidth)x\(plan.sourceHeight) to \(transcode.displayWidth)x\(transcode.displayHeight)"
                )
            }
        } else {
            lines.append("copy the streams into an MP4 without re-encoding (transcode if the copy does not fit)")
        }
        lines.append(
            "keep the movie under \(plan.ladder.limit) bytes, lowering the bit rate if needed; "
                + "a JPEG poster frame for the thumbnail")
        return lines
    }

    /// The audio plan in words; throws the `cannot_fit` that `process` fails with at once when
    /// the plan is to transcode and no bit rate can fit.
    static func lines(_ plan: AudioPlan) throws(PushPrepError) -> [String] {
        var lines: [String] = []
        let ladder: AudioFitLadder?
        switch plan.transcode {
        case .ladder(let planned): ladder = planned
        case .refused(let message):
            guard plan.copiesMP3 else { throw PushPrepError(.cannotFit, message) }
            ladder = nil
        }
        if plan.isTrimmed, let duration = plan.sourceDuration {
            lines.append("keep \(secondsText(plan.seconds)) s of \(secondsText(duration)) s")
        }
        if plan.copiesMP3 {
            let otherwise = ladder == nil ? "fail with cannot_fit" : "transcode"
            lines.append("copy the mp3 frames without re-encoding (\(otherwise) if damaged or too large)")
        } else if let ladder {
            let channels = ladder.channels(at: ladder.firstBitRate) == 1 ? "mono" : "stereo"
            lines.append("transcode \(plan.sourceCodec) to AAC-LC \(channels) in .m4a")
        }
        lines.append("keep the sound under \(plan.limit) bytes, lowering the bit rate if needed")
        return lines
    }
}
