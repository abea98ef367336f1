internal import CFFmpeg
internal import CFFmpegShims
import PushPrepCore

/// Converts decoded frames of any size and pixel format to one output size and format with
/// libswscale (bicubic, as FFmpeg's `scale` filter): `yuv420p` for the encoder, `rgb24` for the
/// poster. A frame that already has the output size and format is passed through untouched.
///
/// Frames may change size or format mid-stream (VP9 and H.264 allow it): the context is
/// rebuilt for them, the output size stays. Confined to one job; owns the libswscale context
/// and the output frame, freed in `deinit`.
package final class VideoScaler {
    let width: Int
    let height: Int
    let format: AVPixelFormat
    private var context: OpaquePointer?
    private let output: UnsafeMutablePointer<AVFrame>
    private var source: (width: Int32, height: Int32, format: Int32, fullRange: Bool)?

    /// libswscale's slice threads (0: its automatic count).
    private let threads: Int

    /// `threads`: 0 to scale each frame in slices on libswscale's automatic number of threads
    /// (CPUs + 1, the calling thread among them), as the `ffmpeg` program's `scale` filter
    /// does; 1 to scale on the calling thread only (a single poster frame is not worth threads).
    init(width: Int, height: Int, format: AVPixelFormat, threads: Int = 1) throws(PushPrepError) {
        guard let output = av_frame_alloc() else { throw PushPrepError(.ioError, "cannot allocate a frame") }
        self.width = width
        self.height = height
        self.format = format
        self.threads = max(0, threads)
        self.output = output
    }

    deinit {
        sws_freeContext(context)
        var frame: UnsafeMutablePointer<AVFrame>? = output
        av_frame_free(&frame)
    }

    /// The frame in the output size and format. The result belongs to the scaler (or is
    /// `frame` itself) and stays valid until the next call; the encoder takes its own
    /// reference, so the buffer is replaced rather than overwritten while it is referenced.
    func scale(_ frame: UnsafeMutablePointer<AVFrame>) throws(PushPrepError) -> UnsafeMutablePointer<AVFrame> {
        let f = frame.pointee
        if Int(f.width) == width && Int(f.height) == height && f.format == format.rawValue
            && f.color_range != AVCOL_RANGE_JPEG
        {
            return frame
        }
        let fullRange = f.color_range == AVCOL_RANGE_JPEG
        if source == nil || source! != (f.width, f.height, f.format, fullRange) {
            try configure(width: f.width, height: f.height, format: f.format, fullRange: fullRange)
        }
        if output.pointee.buf.0 == nil {
            output.pointee.width = Int32(width)
            output.pointee.height = Int32(height)
            output.pointee.format = format.rawValue
            try avCall("cannot allocate a frame", deadline: nil, default: .ioError) { av_frame_get_buffer(output, 0) }
        } else {
            try avCall("cannot allocate a frame", deadline: nil, default: .ioError) { av_frame_make_writable(output) }
        }
        try avCall("cannot scale a frame", deadline: nil) { sws_scale_frame(context, output, frame) }
        output.pointee.pts = f.pts
        output.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        return output
    }

    private func configure(
        width sourceWidth: Int32, height sourceHeight: Int32, format sourceFormat: Int32, fullRange: Bool
    )
        throws(PushPrepError)
    {
        guard sourceWidth > 0, sourceHeight > 0, sourceFormat >= 0 else {
            throw PushPrepError(.corruptInput, "a frame without a size or pixel format")
        }
        sws_freeContext(context)
        context = nil
        source = nil
        // Built from options rather than sws_getContext, which cannot ask for slice threads.
        guard let fresh = sws_alloc_context() else { throw PushPrepError(.ioError, "cannot allocate a scaler") }
        let options = UnsafeMutableRawPointer(fresh)
        let set =
            av_opt_set_int(options, "srcw", Int64(sourceWidth), 0) >= 0
            && av_opt_set_int(options, "srch", Int64(sourceHeight), 0) >= 0
            && av_opt_set_pixel_fmt(options, "src_format", AVPixelFormat(rawValue: sourceFormat), 0) >= 0
            && av_opt_set_int(options, "dstw", Int64(width), 0) >= 0
            && av_opt_set_int(options, "dsth", Int64(height), 0) >= 0
            && av_opt_set_pixel_fmt(options, "dst_format", format, 0) >= 0
            && av_opt_set_int(options, "sws_flags", Int64(SWS_BICUBIC), 0) >= 0
            && av_opt_set_int(options, "threads", Int64(threads), 0) >= 0
        guard set, sws_init_context(fresh, nil, nil) >= 0 else {
            sws_freeContext(fresh)
            let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: sourceFormat)).map { String(cString: $0) } ?? "?"
            throw PushPrepError(.unsupportedType, "cannot convert \(name) \(sourceWidth)x\(sourceHeight) frames")
        }
        context = fresh
        // RGB sources (animation frames) become BT.709 limited-range YUV, the encoder's tags;
        // full-range ("JPEG") YUV is squeezed into the limited range the encoder writes.
        let isRGB =
            (av_pix_fmt_desc_get(AVPixelFormat(rawValue: sourceFormat))?.pointee.flags ?? 0)
            & UInt64(AV_PIX_FMT_FLAG_RGB) != 0
        if isRGB || fullRange {
            let coefficients = sws_getCoefficients(isRGB ? SWS_CS_ITU709 : SWS_CS_DEFAULT)
            let outputCoefficients = sws_getCoefficients(isRGB ? SWS_CS_ITU709 : SWS_CS_DEFAULT)
            sws_setColorspaceDetails(
                context, coefficients, isRGB || fullRange ? 1 : 0, outputCoefficients,
                format == AV_PIX_FMT_RGB24 ? 1 : 0, 0, 1 << 16, 1 << 16)
        }
        source = (sourceWidth, sourceHeight, sourceFormat, fullRange)
    }

    // MARK: - Geometry

    /// The stored (coded) size of the output: `maxDisplayWidth` wide as displayed (after
    /// `rotation`), never upscaled, pixels made square, both sides even, and at most
    /// `maxMacroblocks` 16x16 blocks (H.264 level 4.0 allows 8,192 per frame).
    package static func outputSize(
        width: Int, height: Int, sampleAspect: (num: Int, den: Int), rotation: Int, maxDisplayWidth: Int,
        maxMacroblocks: Int = VideoEncoder.maxMacroblocks
    ) -> (width: Int, height: Int) {
        var squareWidth = Double(width)
        if sampleAspect.num > 0 && sampleAspect.den > 0 && sampleAspect.num != sampleAspect.den {
            squareWidth = Double(width) * Double(sampleAspect.num) / Double(sampleAspect.den)
        }
        let squareHeight = Double(height)
        let displayWidth = rotation % 180 == 0 ? squareWidth : squareHeight
        var factor = min(1, Double(maxDisplayWidth) / displayWidth)
        let blocks = (squareWidth * factor / 16).rounded(.up) * (squareHeight * factor / 16).rounded(.up)
        if blocks > Double(maxMacroblocks) {
            factor *= (Double(maxMacroblocks) / blocks).squareRoot() * 0.99
        }
        func even(_ value: Double) -> Int { max(2, Int((value / 2).rounded()) * 2) }
        return (even(squareWidth * factor), even(squareHeight * factor))
    }
}
