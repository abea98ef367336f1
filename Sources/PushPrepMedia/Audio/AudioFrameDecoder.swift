internal import CFFmpeg
internal import CFFmpegShims
import PushPrepCore

/// Decodes an audio stream's packets into frames, skipping damaged packets (counted) instead
/// of failing on the first one: a few bad packets in a long file are normal and the decoder
/// resynchronises. ``checkDamage()`` decides afterwards whether there was too much.
final class AudioFrameDecoder {
    let decoder: MediaDecoder
    /// Packets the decoder refused.
    private(set) var damaged = 0
    /// Packets sent.
    private(set) var sent = 0
    /// Samples decoded (at the input's rate).
    private(set) var samples: Int64 = 0

    private let frame: MediaFrame
    private let deadline: MediaDeadline

    init(stream: UnsafeMutablePointer<AVStream>, maxPixels: Int, deadline: MediaDeadline) throws(PushPrepError) {
        decoder = try MediaDecoder(stream: stream, maxPixels: maxPixels, deadline: deadline)
        frame = try MediaFrame()
        self.deadline = deadline
    }

    /// Decodes `packet` (nil: drains the decoder) and calls `body` with each frame; returns
    /// false as soon as `body` does.
    func decode(
        _ packet: UnsafeMutablePointer<AVPacket>?, _ body: (UnsafeMutablePointer<AVFrame>) throws(PushPrepError) -> Bool
    ) throws(PushPrepError) -> Bool {
        if packet != nil { sent += 1 }
        let status = avcodec_send_packet(decoder.context, packet)
        if status < 0 && status != cffmpegshims_error_eof() {
            try failIfFatal(status)
            damaged += 1
            return true
        }
        while true {
            let status = avcodec_receive_frame(decoder.context, frame.pointer)
            if status == cffmpegshims_error_eagain() || status == cffmpegshims_error_eof() { return true }
            if status < 0 {
                try failIfFatal(status)
                damaged += 1
                return true
            }
            defer { av_frame_unref(frame.pointer) }
            samples += Int64(frame.pointer.pointee.nb_samples)
            guard try body(frame.pointer) else { return false }
        }
    }

    /// Throws `corrupt_input` when nothing decoded, or when more than a tenth of the packets
    /// (and more than 3) were damaged: the result would be mostly glitches.
    func checkDamage() throws(PushPrepError) {
        guard samples > 0 else {
            throw PushPrepError(.corruptInput, "no audio could be decoded (\(damaged) of \(sent) packets damaged)")
        }
        if damaged > 3 && damaged * 10 > sent {
            throw PushPrepError(.corruptInput, "\(damaged) of \(sent) audio packets are damaged")
        }
    }

    /// Running out of time or memory is never "a damaged packet".
    private func failIfFatal(_ status: Int32) throws(PushPrepError) {
        if deadline.fired || status == cffmpegshims_error_enomem() || status == cffmpegshims_error_exit() {
            throw avError(status, "cannot decode the \(decoder.codecName) audio", deadline: deadline)
        }
        try deadline.check("decoding the audio")
    }
}
