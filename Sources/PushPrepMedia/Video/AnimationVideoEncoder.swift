internal import CFFmpeg
internal import CFFmpegShims
import Foundation
package import PushPrepCore

/// An animated image (GIF, WebP) as a silent MP4 movie attachment, for animations that cannot
/// fit as an image: H.264 like every transcoded preview (``VideoEncoder``), at most
/// `videoWidth` wide and 30 fps, each frame shown for its own delay, transparency flattened
/// onto white, no longer than `videoSeconds` (from the first frame; `videoStart` is for
/// movies).
package enum AnimationVideoEncoder {
    /// Delays at or below this many milliseconds are shown for 100 ms, as browsers do (many
    /// GIFs say 0 or 10 ms and mean "default speed").
    static let minimumDelay = 10
    static let defaultDelay = 100

    /// A silent MP4 from an animation's frames (RGBA or RGB 8-bit, top-down rows, all the same
    /// size), each shown for its delay in ms. Writes `outputPath` (a temporary name the caller
    /// renames); removes it on failure.
    package static func encode(
        frames: [[UInt8]], width: Int, height: Int, bands: Int, delays: [Int], settings: ProcessingSettings,
        outputPath: String, deadline: MediaDeadline
    ) throws(PushPrepError) -> ProcessedVideo {
        do {
            return try run(
                frames: frames, width: width, height: height, bands: bands, delays: delays, settings: settings,
                outputPath: outputPath, deadline: deadline)
        } catch {
            try? FileManager.default.removeItem(atPath: outputPath)
            throw error
        }
    }

    private static func run(
        frames: [[UInt8]], width: Int, height: Int, bands: Int, delays: [Int], settings: ProcessingSettings,
        outputPath: String, deadline: MediaDeadline
    ) throws(PushPrepError) -> ProcessedVideo {
        FFmpegRuntime.start()
        guard !frames.isEmpty, width > 0, height > 0, bands == 3 || bands == 4 else {
            throw PushPrepError(
                .corruptInput, "no animation frames to encode (\(frames.count) frames, \(width)x\(height)x\(bands))")
        }
        guard width * height <= settings.maxPixels else {
            throw PushPrepError(
                .tooManyPixels, "\(width)x\(height) frames, more than the \(settings.maxPixels) pixels allowed")
        }
        guard frames.allSatisfy({ $0.count == width * height * bands }) else {
            throw PushPrepError(
                .corruptInput, "animation frames of unequal or wrong sizes for \(width)x\(height)x\(bands)")
        }

        // The timeline, in seconds: frame i starts at starts[i]; cut at videoSeconds.
        let shown = frames.indices.map { i in
            let delay = i < delays.count ? delays[i] : defaultDelay
            return Double(delay <= minimumDelay ? defaultDelay : delay) / 1000
        }
        var starts: [Double] = []
        var total = 0.0
        for delay in shown {
            guard total < settings.videoSeconds - 0.001 else { break }
            starts.append(total)
            total += delay
        }
        let duration = min(total, settings.videoSeconds)
        let used = starts.count

        let size = VideoScaler.outputSize(
            width: width, height: height, sampleAspect: (1, 1), rotation: 0, maxDisplayWidth: settings.videoWidth)
        let frameRate = AVRational(num: Int32(VideoTranscodeStep.maxFrameRate), den: 1)
        let averageRate = Double(used) / max(duration, 0.001)
        var operations = ["transcode", "encoded \(used) animation frames as H.264"]
        if used < frames.count { operations.append("trimmed 0.0-\(secondsText(duration)) s") }
        if size.width != width || size.height != height {
            operations.append("scaled \(width)x\(height) to \(size.width)x\(size.height)")
        }
        let opaque = bands == 3 || frames.allSatisfy { frame in isOpaque(frame) }
        if !opaque { operations.append("flattened transparency onto white") }
        operations.append("pixel format \(bands == 4 ? "rgba" : "rgb24") to yuv420p")

        let posterTimes = PosterStep.candidateTimes(duration: duration)
        let maxRate = VideoEncoder.maxRate(width: size.width, height: size.height, frameRate: min(30, averageRate))
        var dropped = 0
        let ladder = VideoFitLadder(
            limit: settings.videoMaxBytes, duration: duration, hasAudio: false, maxRate: maxRate)
        var fitted = try VideoPipeline.encodeToFit(
            ladder, operations: &operations, outputPath: outputPath, deadline: deadline
        ) { (rate) throws(PushPrepError) -> (Int, Double, Int, PosterStep.Picker, [ProcessingWarning]) in
            let encoder = try VideoEncoder(
                width: size.width, height: size.height, timeBase: av_inv_q(frameRate),
                frameRate: AVRational(num: Int32(min(30, averageRate) * 1000), den: 1000), rate: rate,
                colour: (AVCOL_PRI_BT709, AVCOL_TRC_IEC61966_2_1, AVCOL_SPC_BT709), deadline: deadline)
            let writer = try PreviewMovieWriter(
                path: outputPath, encoder: encoder, rotationFrom: nil, audio: nil, posterTimes: posterTimes,
                deadline: deadline)
            let scaler = try VideoScaler(width: size.width, height: size.height, format: AV_PIX_FMT_YUV420P)
            let source = try MediaFrame()
            source.pointer.pointee.width = Int32(width)
            source.pointer.pointee.height = Int32(height)
            source.pointer.pointee.format = (bands == 4 && opaque ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24).rawValue
            try avCall("cannot allocate a frame", deadline: deadline, default: .ioError) {
                av_frame_get_buffer(source.pointer, 0)
            }
            dropped = 0
            for index in 0..<used {
                try deadline.check("encoding the animation")
                try avCall("cannot allocate a frame", deadline: deadline, default: .ioError) {
                    av_frame_make_writable(source.pointer)
                }
                fill(source.pointer, from: frames[index], width: width, height: height, bands: bands, flatten: !opaque)
                let end = index + 1 < used ? starts[index + 1] : duration
                let scaled = try scaler.scale(source.pointer)
                if !(try writer.addVideo(scaled, time: starts[index], duration: end - starts[index])) { dropped += 1 }
            }
            let result = try writer.finish()
            return (result.frames, result.duration, try VideoPipeline.fileSize(outputPath), result.poster, [])
        }
        if dropped > 0 {
            operations.insert(
                "frame rate \(String(format: "%.0f", averageRate)) to at most 30 (\(dropped) frames dropped)",
                at: operations.count - 1)
        }
        let poster = try fitted.poster.best.map { (best) throws(PushPrepError) in
            try PosterStep.encode(best.frame, rotation: 0, time: best.time, quality: settings.quality)
        }
        fitted.poster = PosterStep.Picker(times: [])
        return ProcessedVideo(
            width: size.width, height: size.height, duration: fitted.duration, frames: fitted.frames,
            bytes: fitted.bytes,
            input: nil, poster: poster.map { ($0.jpeg, $0.width, $0.height) }, thumbnailTime: poster?.time ?? 0,
            operations: operations, warnings: [], plan: nil)
    }

    private static func isOpaque(_ frame: [UInt8]) -> Bool {
        frame.withUnsafeBufferPointer { pixels in
            var index = 3
            while index < pixels.count {
                if pixels[index] != 255 { return false }
                index += 4
            }
            return true
        }
    }

    /// Copies one frame's rows into `frame` (whose rows may be padded), flattening RGBA onto
    /// white into RGB when `flatten`.
    private static func fill(
        _ frame: UnsafeMutablePointer<AVFrame>, from pixels: [UInt8], width: Int, height: Int, bands: Int, flatten: Bool
    ) {
        guard let data = frame.pointee.data.0 else { return }
        let stride = Int(frame.pointee.linesize.0)
        pixels.withUnsafeBufferPointer { source in
            let input = source.baseAddress!
            for y in 0..<height {
                let row = input + y * width * bands
                let target = data + y * stride
                if !flatten {
                    target.update(from: row, count: width * bands)
                    continue
                }
                for x in 0..<width {
                    let p = row + x * 4
                    let alpha = UInt32(p[3])
                    let white = (255 - alpha) * 255
                    target[x * 3] = UInt8((UInt32(p[0]) * alpha + white + 127) / 255)
                    target[x * 3 + 1] = UInt8((UInt32(p[1]) * alpha + white + 127) / 255)
                    target[x * 3 + 2] = UInt8((UInt32(p[2]) * alpha + white + 127) / 255)
                }
            }
        }
    }
}
