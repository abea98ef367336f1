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

    /// The candidate times not reached yet, earliest first, each with its rank of preference
    /// (its place in the list given: lower is better). Shared by the frame picker of the
    /// transcode and the packet picker of the copy, which settle candidates as time goes by.
    struct Schedule {
        private var pending: [(time: Double, rank: Int)]

        init(times: [Double]) {
            pending = times.enumerated().map { ($0.element, $0.offset) }.sorted { $0.time < $1.time }
        }

        /// Whether no candidate is left.
        var isEmpty: Bool { pending.isEmpty }

        /// The candidates `time` has reached, not settled yet.
        func reached(by time: Double) -> [(time: Double, rank: Int)] {
            Array(pending.prefix { time >= $0.time })
        }

        /// Settles the candidates `time` has reached and returns their ranks (empty when none).
        mutating func settle(at time: Double) -> [Int] {
            let ranks = reached(by: time).map(\.rank)
            pending.removeFirst(ranks.count)
            return ranks
        }

        /// Settles every candidate left and returns them, best rank first.
        mutating func settleAll() -> [(time: Double, rank: Int)] {
            defer { pending = [] }
            return pending.sorted { $0.rank < $1.rank }
        }
    }

    /// Keeps a reference to the frame at (or just after) each candidate time as frames go by.
    /// Confined to one job; owns its frame references, freed in `deinit`.
    final class Picker {
        /// The rank of a frame kept only because no candidate was reached (a clip shorter than
        /// the candidate times): any candidate's frame replaces it.
        static let fallbackRank = Int.max

        private var schedule: Schedule
        private var kept: [(frame: UnsafeMutablePointer<AVFrame>, time: Double, rank: Int, score: Double)] = []

        init(times: [Double]) {
            schedule = Schedule(times: times)
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
            guard let rank = schedule.settle(at: time).min() else {
                if !schedule.isEmpty { try keepFallback(frame, time: time) }
                return
            }
            try take(frame, time: time, rank: rank)
        }

        /// Keeps `frame` as the fallback (``fallbackRank``) when no frame is kept yet.
        func keepFallback(_ frame: UnsafeMutablePointer<AVFrame>, time: Double) throws(PushPrepError) {
            if kept.isEmpty { try take(frame, time: time, rank: Self.fallbackRank) }
        }

        /// Keeps a reference to `frame` as the candidate of preference `rank` (lower is better);
        /// a candidate's frame drops the fallback.
        func take(_ frame: UnsafeMutablePointer<AVFrame>, time: Double, rank: Int) throws(PushPrepError) {
            if rank != Self.fallbackRank {
                kept.removeAll { candidate in
                    guard candidate.rank == Self.fallbackRank else { return false }
                    var frame: UnsafeMutablePointer<AVFrame>? = candidate.frame
                    av_frame_free(&frame)
                    return true
                }
            }
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

    /// The copy path's poster, made from the packets the copy reads anyway: no second open of
    /// the file (whose probing decodes frames), no seek, no frame decoded beyond the poster's.
    /// Each candidate (a third of the way in, then half) takes the first keyframe at or after
    /// its time, decoded alone; a candidate with no keyframe after it (near the end) takes the
    /// frame at its time, decoded from the keyframe before it, at most
    /// ``maxFramesPerCandidate`` frames on. The second candidate is decoded only when the first
    /// is flat, so the copy path stays cheap.
    ///
    /// Packets are offered before the copy rebases their timestamps. The packets since the
    /// last keyframe are kept by reference (at most ``maxPacketsPerGroup``) until a later
    /// keyframe settles the candidates, or ``finish()`` decodes them. Confined to one job; owns
    /// its decoder, packets and frames.
    final class PacketPicker {
        /// Packets after a keyframe that go on holding their reference, with room for the
        /// frames a decoder holds back to reorder B-frames.
        static let maxPacketsPerGroup = maxFramesPerCandidate + 8

        /// The packets of one group of pictures (a keyframe and those after it), by reference.
        private final class Group {
            private(set) var packets: [UnsafeMutablePointer<AVPacket>] = []

            deinit {
                for packet in packets {
                    var packet: UnsafeMutablePointer<AVPacket>? = packet
                    av_packet_free(&packet)
                }
            }

            func append(_ packet: UnsafeMutablePointer<AVPacket>) throws(PushPrepError) {
                guard packets.count < PacketPicker.maxPacketsPerGroup else { return }
                guard let reference = av_packet_clone(packet) else {
                    throw PushPrepError(.ioError, "cannot keep a packet")
                }
                packets.append(reference)
            }
        }

        private let decoder: MediaDecoder
        private let frame: MediaFrame
        /// The last frame decoded for a candidate, for a candidate past the end.
        private let last: MediaFrame
        private let timeBase: AVRational
        /// The pts of the copy's first keyframe: time 0 of the preview.
        private let offset: Int64
        private let deadline: MediaDeadline
        private let work = MediaInstrumentation.observer
        private let picker = Picker(times: [])
        /// Candidates not settled by a keyframe yet.
        private var schedule: Schedule
        /// For a pending candidate whose time has passed: the group it falls in.
        private var fallback: [Int: Group] = [:]
        private var group = Group()

        /// `stream`: the source's video stream; `offset`: the pts (in its time base) at which
        /// the preview starts; `duration`: the preview's expected length in seconds.
        init(
            stream: UnsafeMutablePointer<AVStream>, offset: Int64, duration: Double, maxPixels: Int,
            deadline: MediaDeadline
        ) throws(PushPrepError) {
            decoder = try MediaDecoder(stream: stream, maxPixels: maxPixels, threads: 1, deadline: deadline)
            frame = try MediaFrame()
            last = try MediaFrame()
            timeBase = stream.pointee.time_base
            self.offset = offset
            self.deadline = deadline
            schedule = Schedule(times: Array(candidateTimes(duration: duration).prefix(2)))
        }

        /// Offers the next video packet of the copy (decode order), whose pts is `pts`.
        func offer(_ packet: UnsafeMutablePointer<AVPacket>, pts: Int64, isKey: Bool) throws(PushPrepError) {
            if isKey { group = Group() }
            try group.append(packet)
            let time = Double(try MediaTime.difference(pts, offset)) * av_q2d(timeBase)
            guard isKey else {
                for candidate in schedule.reached(by: time) where fallback[candidate.rank] == nil {
                    fallback[candidate.rank] = group
                }
                return
            }
            let ranks = schedule.settle(at: time)
            for rank in ranks { fallback[rank] = nil }
            // An earlier candidate that is not flat is enough.
            guard picker.bestScore < goodScore, let rank = ranks.min() else { return }
            try decode([packet], at: time, rank: rank)
        }

        /// Settles the candidates no keyframe came after, and hands over the frames kept.
        /// A candidate past the end of the copy (its time planned from a length the header did
        /// not give) takes the last frame of the last group of pictures; a later candidate in
        /// the same group would decode the same frames again, and is passed over.
        func finish() throws(PushPrepError) -> Picker {
            var endedEarly: Set<ObjectIdentifier> = []
            for candidate in schedule.settleAll() {
                if picker.bestScore >= goodScore { break }
                let packets = fallback[candidate.rank] ?? group
                guard !endedEarly.contains(ObjectIdentifier(packets)) else { continue }
                if try !decode(packets.packets, at: candidate.time, rank: candidate.rank) {
                    endedEarly.insert(ObjectIdentifier(packets))
                }
            }
            fallback = [:]
            group = Group()
            return picker
        }

        /// Decodes `packets` (a keyframe first) from a clean decoder and keeps the first frame
        /// shown at or after `time`, or the ``maxFramesPerCandidate``th, and returns true. When
        /// the packets end first (the last group of pictures, shorter than that), keeps the last
        /// frame decoded as the fallback when no frame is kept yet
        /// (``Picker/keepFallback(_:time:)``) and returns false. Damaged
        /// packets are skipped, as before: a candidate without a frame is simply not kept.
        @discardableResult
        private func decode(_ packets: [UnsafeMutablePointer<AVPacket>], at time: Double, rank: Int)
            throws(PushPrepError) -> Bool
        {
            avcodec_flush_buffers(decoder.context)
            defer { av_frame_unref(last.pointer) }
            var decoded = 0
            var lastTime = 0.0
            let nopts = cffmpegshims_nopts_value()
            func receive() throws(PushPrepError) -> Bool {
                while avcodec_receive_frame(decoder.context, frame.pointer) >= 0 {
                    defer { av_frame_unref(frame.pointer) }
                    decoded += 1
                    work?.decodedVideoFrame()
                    let ts = frame.pointer.pointee.best_effort_timestamp
                    let seconds =
                        ts == nopts ? time : Double(try MediaTime.difference(ts, offset)) * av_q2d(timeBase)
                    if seconds >= time - 0.001 || decoded == maxFramesPerCandidate {
                        try picker.take(frame.pointer, time: max(0, seconds), rank: rank)
                        return true
                    }
                    av_frame_unref(last.pointer)
                    av_frame_move_ref(last.pointer, frame.pointer)
                    lastTime = seconds
                }
                return false
            }
            for packet in packets {
                try deadline.check("making the poster")
                _ = avcodec_send_packet(decoder.context, packet)
                if try receive() { return true }
            }
            _ = avcodec_send_packet(decoder.context, nil)
            if try receive() { return true }
            if decoded > 0 { try picker.keepFallback(last.pointer, time: max(0, lastTime)) }
            return false
        }
    }

    /// Frames decoded forward from the keyframe before a candidate time, at most.
    static let maxFramesPerCandidate = 8
    /// A luma standard deviation above which a frame is clearly not black or flat.
    static let goodScore = 24.0
}
