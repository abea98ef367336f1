internal import CFFmpeg
internal import CFFmpegShims
internal import CVips
internal import CVipsShims
import Foundation
import PushPrepCore

/// The poster of a preview: a JPEG of a representative frame at the video's displayed size
/// (rotation applied to the pixels), with every metadata block stripped, and that frame's time
/// for the attachment's thumbnail time.
///
/// "Representative" is decided cheaply: a few candidate times spread over the clip (a third of
/// the way in first: openings are often black or a title), each scored by the spread of its
/// luma; the first candidate within 75 % of the best score wins, so a fade to black or a
/// flat frame is passed over.
enum PosterStep {
    /// A finished poster.
    struct Poster {
        let jpeg: [UInt8]
        let width: Int
        let height: Int
        /// Seconds into the output.
        let time: Double
    }

    /// Seconds into a clip of `duration` seconds at which candidates are taken, in order of
    /// preference.
    static func candidateTimes(duration: Double) -> [Double] {
        guard duration > 0 else { return [0] }
        return [duration / 3, duration / 2, duration * 2 / 3, duration / 6]
    }

    /// Keeps a reference to the frame at (or just after) each candidate time as frames go by.
    /// Confined to one job; owns its frame references, freed in `deinit`.
    final class Picker {
        private var pending: [(time: Double, rank: Int)]
        private var kept: [(frame: UnsafeMutablePointer<AVFrame>, time: Double, rank: Int, score: Double)] = []

        init(times: [Double]) {
            pending = times.enumerated().map { ($0.element, $0.offset) }.sorted { $0.time < $1.time }
        }

        deinit {
            for candidate in kept {
                var frame: UnsafeMutablePointer<AVFrame>? = candidate.frame
                av_frame_free(&frame)
            }
        }

        /// Offers a frame shown at `time` seconds; it is kept (by reference) when it is the
        /// first at or after the next candidate time.
        func consider(_ frame: UnsafeMutablePointer<AVFrame>, time: Double) throws(PushPrepError) {
            guard let next = pending.first, time >= next.time else {
                if kept.isEmpty, pending.count > 0 { try keepFallback(frame, time: time) }
                return
            }
            var ranks: [Int] = []
            while let first = pending.first, time >= first.time {
                ranks.append(first.rank)
                pending.removeFirst()
            }
            kept.removeAll { candidate in
                // The first frame is only a fallback for clips shorter than the first candidate time.
                guard candidate.rank == Int.max else { return false }
                var frame: UnsafeMutablePointer<AVFrame>? = candidate.frame
                av_frame_free(&frame)
                return true
            }
            try take(frame, time: time, rank: ranks.min() ?? 0)
        }

        private func keepFallback(_ frame: UnsafeMutablePointer<AVFrame>, time: Double) throws(PushPrepError) {
            try take(frame, time: time, rank: Int.max)
        }

        /// Keeps a reference to `frame` as the candidate of preference `rank` (lower is better).
        func take(_ frame: UnsafeMutablePointer<AVFrame>, time: Double, rank: Int) throws(PushPrepError) {
            guard let copy = av_frame_clone(frame) else { throw PushPrepError(.ioError, "cannot keep a frame") }
            kept.append((copy, time, rank, PosterStep.score(copy)))
        }

        /// The highest score of the frames kept so far (0 when none).
        var bestScore: Double { kept.map(\.score).max() ?? 0 }

        /// The chosen frame and its time, or nil when no frame went by.
        var best: (frame: UnsafeMutablePointer<AVFrame>, time: Double)? {
            guard let top = kept.map(\.score).max() else { return nil }
            let chosen = kept.sorted { $0.rank < $1.rank }.first { $0.score >= top * 0.75 } ?? kept[0]
            return (chosen.frame, chosen.time)
        }
    }

    /// The standard deviation of the luma (or first plane), sampled on a grid.
    static func score(_ frame: UnsafeMutablePointer<AVFrame>) -> Double {
        let f = frame.pointee
        guard let plane = f.data.0, f.width > 0, f.height > 0 else { return 0 }
        let step = max(1, Int(min(f.width, f.height)) / 64)
        var sum = 0.0
        var squares = 0.0
        var count = 0.0
        let stride = Int(f.linesize.0)
        let bytesPerSample =
            (av_pix_fmt_desc_get(AVPixelFormat(rawValue: f.format))?.pointee.comp.0.step).map(Int.init) ?? 1
        for y in Swift.stride(from: 0, to: Int(f.height), by: step) {
            let row = plane + y * stride
            for x in Swift.stride(from: 0, to: Int(f.width), by: step) {
                let value = Double(row[x * max(1, bytesPerSample)])
                sum += value
                squares += value * value
                count += 1
            }
        }
        guard count > 0 else { return 0 }
        let mean = sum / count
        return max(0, squares / count - mean * mean).squareRoot()
    }

    /// Encodes `frame` as a JPEG, turned `rotation` degrees clockwise.
    static func encode(_ frame: UnsafeMutablePointer<AVFrame>, rotation: Int, time: Double, quality: Int)
        throws(PushPrepError) -> Poster
    {
        let width = Int(frame.pointee.width)
        let height = Int(frame.pointee.height)
        let scaler = try VideoScaler(width: width, height: height, format: AV_PIX_FMT_RGB24)
        let rgb = try scaler.scale(frame)
        guard let source = rgb.pointee.data.0 else { throw PushPrepError(.ioError, "cannot convert the poster") }
        let stride = Int(rgb.pointee.linesize.0)
        // libvips wants rows without libav's padding; it copies them (the frame is reused).
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in 0..<height {
                (buffer.baseAddress! + y * width * 3).update(from: source + y * stride, count: width * 3)
            }
        }
        try VipsRuntime.start()
        let pointer = pixels.withUnsafeBytes { bytes in
            vips_image_new_from_memory_copy(
                bytes.baseAddress, bytes.count, Int32(width), Int32(height), 3, VIPS_FORMAT_UCHAR)
        }
        guard let pointer else { throw vipsError(.ioError, "cannot wrap the poster pixels") }
        let upright = VipsImageRef(owning: pointer)
        let angle: VipsAngle =
            switch rotation {
            case 90: VIPS_ANGLE_D90
            case 180: VIPS_ANGLE_D180
            case 270: VIPS_ANGLE_D270
            default: VIPS_ANGLE_D0
            }
        let image =
            angle == VIPS_ANGLE_D0
            ? upright
            : try VipsImageRef.make(.ioError, "cannot turn the poster") { cvipsshims_rot(upright.pointer, $0, angle) }
        let outWidth = Int(vips_image_get_width(image.pointer))
        let outHeight = Int(vips_image_get_height(image.pointer))
        let jpeg = try ImageEncodeStep.encode(image, .init(format: .jpeg, quality: quality))
        return Poster(jpeg: jpeg, width: outWidth, height: outHeight, time: time)
    }

    /// The poster of an MP4 PushPrep has just written (the copy path, where no frame was
    /// decoded): each candidate is the first keyframe at or after its time (or, near the end,
    /// the frame after the keyframe before it, decoding at most ``maxFramesPerCandidate``
    /// frames forward), so this stays cheap.
    static func fromFile(
        path: String, duration: Double, rotation: Int, quality: Int, maxPixels: Int, deadline: MediaDeadline
    ) throws(PushPrepError) -> Poster? {
        let input = try MediaInput(path: path, maxPixels: maxPixels, deadline: deadline)
        guard let stream = input.bestStream(AVMEDIA_TYPE_VIDEO) else { return nil }
        let decoder = try MediaDecoder(stream: stream, maxPixels: maxPixels, deadline: deadline)
        let timeBase = stream.pointee.time_base
        let origin =
            stream.pointee.start_time == cffmpegshims_nopts_value()
            ? 0 : Double(stream.pointee.start_time) * av_q2d(timeBase)
        let times = Array(candidateTimes(duration: duration).prefix(2))
        let picker = Picker(times: [])
        let packet = try MediaPacket()
        let frame = try MediaFrame()
        for (rank, time) in times.enumerated() {
            // The first candidate is enough when it is not flat (the copy path must stay cheap).
            if picker.bestScore >= goodScore { break }
            try deadline.check("making the poster")
            avcodec_flush_buffers(decoder.context)
            let target = try MediaTime.ticks(origin + time, in: timeBase)
            // The keyframe at or after the time decodes at once; else the one before it.
            if avformat_seek_file(input.context, stream.pointee.index, target, target, Int64.max, 0) < 0 {
                guard avformat_seek_file(input.context, stream.pointee.index, Int64.min, target, target, 0) >= 0
                else { continue }
            }
            var decoded = 0
            var sentEnd = false
            while decoded < maxFramesPerCandidate {
                let status = avcodec_receive_frame(decoder.context, frame.pointer)
                if status >= 0 {
                    defer { av_frame_unref(frame.pointer) }
                    decoded += 1
                    let ts = frame.pointer.pointee.best_effort_timestamp
                    let seconds = ts == cffmpegshims_nopts_value() ? time : Double(ts) * av_q2d(timeBase) - origin
                    if seconds >= time - 0.001 || decoded == maxFramesPerCandidate {
                        try picker.take(frame.pointer, time: max(0, seconds), rank: rank)
                        break
                    }
                    continue
                }
                guard status == cffmpegshims_error_eagain(), !sentEnd else { break }
                if try input.read(into: packet.pointer) {
                    defer { av_packet_unref(packet.pointer) }
                    if packet.pointer.pointee.stream_index == stream.pointee.index {
                        _ = avcodec_send_packet(decoder.context, packet.pointer)
                    }
                } else {
                    sentEnd = true
                    _ = avcodec_send_packet(decoder.context, nil)
                }
            }
        }
        guard let best = picker.best else { return nil }
        return try encode(best.frame, rotation: rotation, time: best.time, quality: quality)
    }

    /// Frames decoded forward from the keyframe before a candidate time, at most.
    static let maxFramesPerCandidate = 8
    /// A luma standard deviation above which a frame is clearly not black or flat.
    static let goodScore = 24.0
}
