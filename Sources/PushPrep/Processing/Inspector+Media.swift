internal import CFFmpeg
internal import CFFmpegShims
import Foundation
import PushPrepCore
import PushPrepMedia
import PushPrepPayload
import PushPrepRemote

/// Movies and sounds: what the headers say (through libav, no frame decoded) and the path
/// `process` would take, decided by the same rules as the pipelines.
extension Inspector {
    /// Seconds allowed to open and probe a file: headers only, so far less than a job's timeout.
    static let mediaProbeSeconds = 30.0

    static func inspectMedia(
        _ item: InputItem, type: MediaType, settings: ProcessingSettings, into report: inout InspectReport
    ) throws(PushPrepError) {
        let deadline = MediaDeadline(seconds: min(settings.timeout, mediaProbeSeconds))
        let input = try MediaInput(path: item.path, maxPixels: settings.maxPixels, deadline: deadline)
        let probe = MediaProbe(input)
        report.duration = probe.duration
        report.streams = streamDescriptions(probe)
        switch type.kind {
        case .video: try planVideo(probe, input: input, settings: settings, into: &report)
        default: try planAudio(probe, type: type, settings: settings, into: &report)
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

    private static func planVideo(
        _ probe: MediaProbe, input: MediaInput, settings: ProcessingSettings, into report: inout InspectReport
    ) throws(PushPrepError) {
        guard let video = probe.video, let stream = input.bestStream(AVMEDIA_TYPE_VIDEO) else {
            throw PushPrepError(
                .unsupportedType, "no video stream (\(probe.audio == nil ? "no streams" : "audio only"))")
        }
        report.width = video.displayWidth
        report.height = video.displayHeight
        try video.checkFrameSize(maxPixels: settings.maxPixels)
        if let duration = probe.duration, duration > settings.videoStart + settings.videoSeconds + 0.05 {
            let from = settings.videoStart > 0 ? " from \(secondsText(settings.videoStart)) s" : ""
            report.plan.append(
                "keep \(secondsText(settings.videoSeconds)) s\(from) of \(secondsText(duration)) s")
        }
        if let obstacle = RemuxStep.obstacle(probe, input: input, maxDisplayWidth: settings.videoWidth) {
            let aspect = stream.pointee.codecpar.pointee.sample_aspect_ratio
            let size = VideoScaler.outputSize(
                width: video.width, height: video.height, sampleAspect: (Int(aspect.num), Int(aspect.den)),
                rotation: video.rotation, maxDisplayWidth: settings.videoWidth)
            let shown = video.rotation % 180 == 0 ? (size.width, size.height) : (size.height, size.width)
            let target = probe.audio == nil ? "H.264 (High)" : "H.264 (High) and AAC-LC"
            report.plan.append("transcode to \(target) in MP4: \(obstacle)")
            if shown.0 != video.displayWidth || shown.1 != video.displayHeight {
                report.plan.append(
                    "scale \(video.displayWidth)x\(video.displayHeight) to \(shown.0)x\(shown.1)")
            }
        } else {
            report.plan.append("copy the streams into an MP4 without re-encoding (transcode if the copy does not fit)")
        }
        report.plan.append(
            "keep the movie under \(settings.videoMaxBytes) bytes, lowering the bit rate if needed; "
                + "a JPEG poster frame for the thumbnail")
    }

    private static func planAudio(
        _ probe: MediaProbe, type: MediaType, settings: ProcessingSettings, into report: inout InspectReport
    ) throws(PushPrepError) {
        guard let audio = probe.audio else { throw PushPrepError(.unsupportedType, "no audio stream") }
        if let duration = probe.duration, duration > settings.audioSeconds + 0.05 {
            report.plan.append(
                "keep \(secondsText(settings.audioSeconds)) s of \(secondsText(duration)) s")
        }
        if type == .mp3 && AudioRemuxStep.applies(to: probe) {
            report.plan.append("copy the mp3 frames without re-encoding (transcode if damaged or too large)")
        } else {
            let channels = audio.channels == 1 ? "mono" : "stereo"
            report.plan.append("transcode \(audio.codec) to AAC-LC \(channels) in .m4a")
        }
        report.plan.append("keep the sound under \(settings.audioMaxBytes) bytes, lowering the bit rate if needed")
    }
}
