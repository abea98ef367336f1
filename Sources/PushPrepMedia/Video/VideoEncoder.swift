internal import CFFmpeg
internal import CFFmpegShims
import PushPrepCore

/// The H.264 encoder of previews: libx264, High profile, level 4.0, 8-bit `yuv420p`, square
/// pixels, preset ``preset``, and either constant quality (CRF ``crf``) under a bitrate cap
/// (VBV `maxrate`/`bufsize`) or, to fit a byte budget, an average bitrate.
///
/// Confined to one job; owns the codec context, freed in `deinit`.
package final class VideoEncoder {
    /// x264's speed/size trade-off. `scripts/bench.sh` passes the same to the `ffmpeg` program.
    static let preset = "veryfast"
    /// Constant rate factor of the first attempt (x264's default, visually transparent enough
    /// for a notification).
    static let crf = 23.0
    /// H.264 level 4.0: at most 8,192 macroblocks per frame and 245,760 per second (so 30 fps
    /// at the largest frame), 25 Mbit/s for High profile.
    static let level: Int32 = 40
    static let maxMacroblocks = 8_192
    static let maxMacroblocksPerSecond = 245_760
    static let maxLevelBitRate = 25_000_000

    /// How the bits are spent.
    package enum RateControl: Equatable {
        /// Constant quality, with VBV capping the bitrate.
        case quality(crf: Double, maxRate: Int)
        /// An average bitrate, with VBV keeping peaks near it: used when the quality encode is
        /// over the byte budget.
        case bitRate(Int)
    }

    /// The bitrate cap of a quality encode: 0.1 bit per pixel per frame (about 2.8 Mbit/s for
    /// 720x1280 at 30 fps), at least 1 Mbit/s, within the level's limit.
    static func maxRate(width: Int, height: Int, frameRate: Double) -> Int {
        let bits = Double(width * height) * min(max(frameRate, 1), 30) * 0.1
        return min(maxLevelBitRate, max(1_000_000, Int((bits / 1000).rounded()) * 1000))
    }

    let context: UnsafeMutablePointer<AVCodecContext>
    private let deadline: MediaDeadline

    /// Opens the encoder for frames of `width`x`height` whose pts count in `timeBase` units,
    /// at about `frameRate` frames per second. `colour` copies the source's colour tags
    /// (primaries, transfer, matrix) into the stream, so players convert as the source meant.
    init(
        width: Int, height: Int, timeBase: AVRational, frameRate: AVRational, rate: RateControl,
        colour: (primaries: AVColorPrimaries, transfer: AVColorTransferCharacteristic, matrix: AVColorSpace)?,
        deadline: MediaDeadline
    ) throws(PushPrepError) {
        FFmpegRuntime.start()
        self.deadline = deadline
        guard let codec = avcodec_find_encoder_by_name("libx264") else {
            throw PushPrepError(.ioError, "this FFmpeg has no libx264 encoder")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw PushPrepError(.ioError, "cannot allocate the H.264 encoder")
        }
        self.context = context
        context.pointee.width = Int32(width)
        context.pointee.height = Int32(height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        context.pointee.time_base = timeBase
        context.pointee.framerate = frameRate
        context.pointee.level = Self.level
        context.pointee.color_range = AVCOL_RANGE_MPEG
        if let colour {
            context.pointee.color_primaries = colour.primaries
            context.pointee.color_trc = colour.transfer
            context.pointee.colorspace = colour.matrix
        }
        // MP4 keeps SPS/PPS in the sample description (avcC), not in the stream.
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        context.pointee.thread_count = 0
        switch rate {
        case .quality(let crf, let maxRate):
            av_opt_set_double(context.pointee.priv_data, "crf", crf, 0)
            context.pointee.rc_max_rate = Int64(maxRate)
            context.pointee.rc_buffer_size = Int32(clamping: maxRate * 2)
        case .bitRate(let bitRate):
            context.pointee.bit_rate = Int64(bitRate)
            context.pointee.rc_max_rate = Int64(bitRate)
            context.pointee.rc_buffer_size = Int32(clamping: bitRate * 2)
        }
        av_opt_set(context.pointee.priv_data, "preset", Self.preset, 0)
        av_opt_set(context.pointee.priv_data, "profile", "high", 0)
        try avCall("cannot open the H.264 encoder", deadline: deadline, default: .ioError) {
            avcodec_open2(context, codec, nil)
        }
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
    }

    /// Encodes one frame (nil flushes at the end) and passes every packet the encoder has
    /// ready to `emit`, pts/dts in the encoder's time base. `emit` may take the packet's
    /// reference.
    func push(
        _ frame: UnsafeMutablePointer<AVFrame>?, emit: (UnsafeMutablePointer<AVPacket>) throws(PushPrepError) -> Void
    ) throws(PushPrepError) {
        try avCall("cannot encode a frame", deadline: deadline, default: .ioError) {
            avcodec_send_frame(context, frame)
        }
        let packet = try MediaPacket()
        while true {
            let status = avcodec_receive_packet(context, packet.pointer)
            if status == cffmpegshims_error_eagain() || status == cffmpegshims_error_eof() { return }
            if status < 0 { throw avError(status, "cannot encode a frame", deadline: deadline, default: .ioError) }
            defer { av_packet_unref(packet.pointer) }
            try emit(packet.pointer)
        }
    }
}
