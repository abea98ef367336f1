package import CFFmpeg
internal import CFFmpegShims
import Foundation
package import PushPrepCore

/// One media file opened for demuxing, safely: PushPrep opens the file itself (exactly that
/// file, once) and hands libav a custom I/O context on the descriptor, with no protocol
/// allowed, a demuxer whitelist, a codec whitelist, at most ``maxStreams`` streams, bounded
/// probing and the per-input deadline as interrupt callback.
///
/// Confined to one job (not `Sendable`); frees the format context, the I/O context and the
/// descriptor in `deinit`.
package final class MediaInput {
    /// Demuxers that may run. Never hls, dash, concat, image2 or any playlist format, even
    /// when a file is named `.mp4`.
    static let formatWhitelist = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,mpegts,mp3,aac,wav,aiff,ogg,flac,caf"

    /// Decoders that may run (by libav decoder name, as the whitelist compares them).
    static let decoderWhitelist = [
        "h264", "hevc", "vp8", "vp9", "libvpx", "libvpx-vp9", "av1", "libdav1d", "mpeg4", "mpeg2video",
        "mpeg1video", "mjpeg", "prores", "theora", "msmpeg4", "msmpeg4v2", "msmpeg4v3", "h263", "wmv1", "wmv2",
        "aac", "aac_fixed", "mp3", "mp3float", "mp2", "mp2float", "opus", "libopus", "vorbis", "libvorbis", "flac",
        "alac", "ac3", "ac3_fixed", "eac3", "pcm_s16le", "pcm_s16be", "pcm_s24le", "pcm_s24be", "pcm_s32le",
        "pcm_s32be", "pcm_f32le", "pcm_f32be", "pcm_f64le", "pcm_f64be", "pcm_u8", "pcm_s8", "pcm_mulaw",
        "pcm_alaw", "adpcm_ima_wav", "adpcm_ms", "adpcm_ima_qt", "gsm_ms",
    ]

    /// At most this many streams; more is refused as hostile.
    package static let maxStreams: Int32 = 16
    /// Bytes read to find the format and the streams.
    static let probeSize: Int64 = 10_000_000
    /// Microseconds of media analysed to find stream parameters.
    static let analyzeDuration: Int64 = 10_000_000

    let context: UnsafeMutablePointer<AVFormatContext>
    let deadline: MediaDeadline
    private var io: UnsafeMutablePointer<AVIOContext>?
    private let fd: Int32

    /// Opens and probes `path`. Probing decodes a few frames of each stream: no decoder may
    /// allocate a frame of more than `maxPixels` pixels (or use more than one thread) while it
    /// does, so a file declaring a huge frame costs no more than a small one to refuse.
    package init(path: String, maxPixels: Int, deadline: MediaDeadline) throws(PushPrepError) {
        FFmpegRuntime.start()
        self.deadline = deadline
        let fd = Self.open(path)
        guard fd >= 0 else {
            throw PushPrepError.system("cannot open \(path)", missing: .notFound)
        }
        guard let io = cffmpegshims_avio_from_fd(fd) else {
            close(fd)
            throw PushPrepError(.ioError, "cannot allocate the I/O context")
        }
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        let status = cffmpegshims_open_input(
            &context, io, Self.formatWhitelist, Self.decoderWhitelist.joined(separator: ","), Self.maxStreams,
            Self.probeSize, Self.analyzeDuration, deadline.pointer)
        guard status >= 0, let context else {
            var io: UnsafeMutablePointer<AVIOContext>? = io
            cffmpegshims_avio_free(&io)
            close(fd)
            throw Self.openError(status, deadline: deadline)
        }
        self.context = context
        self.io = io
        self.fd = fd
        // What the container declares (an MP4 sample entry, a Matroska track) is refused before
        // any decoder runs; a lying header still meets max_pixels in the probing decoders.
        for stream in streams where Self.isMovingPicture(stream) {
            let parameters = stream.pointee.codecpar.pointee
            let (pixels, overflow) = Int(parameters.width).multipliedReportingOverflow(by: Int(parameters.height))
            if overflow || pixels > maxPixels {
                throw PushPrepError(
                    .tooManyPixels,
                    "\(parameters.width)x\(parameters.height) video, more than the \(maxPixels) pixels allowed")
            }
        }
        try avCall("cannot read the stream parameters", deadline: deadline) {
            cffmpegshims_find_stream_info(context, Int64(maxPixels))
        }
        guard context.pointee.nb_streams <= UInt32(Self.maxStreams) else {
            throw PushPrepError(.unsupportedType, "\(context.pointee.nb_streams) streams, more than \(Self.maxStreams)")
        }
        MediaInstrumentation.observer?.openedInput()
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&context)
        cffmpegshims_avio_free(&io)
        close(fd)
    }

    /// Opens `path` for reading, or -1 (errno set). A confined decoder process may not open a
    /// file outside its staging directory, not even through `/proc/self/fd/N` (Landlock checks the
    /// file the link leads to): when such an open is refused, the descriptor N it names, which
    /// the decoder holds (its parent passed it), is duplicated and rewound instead. The copy
    /// shares its offset with N; nothing else reads N while a decoder decodes from it.
    private static func open(_ path: String) -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        let prefix = "/proc/self/fd/"
        guard fd < 0, errno == EACCES, path.hasPrefix(prefix), let held = Int32(path.dropFirst(prefix.count)) else {
            return fd
        }
        let copy = fcntl(held, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            errno = EACCES
            return -1
        }
        lseek(copy, 0, SEEK_SET)
        return copy
    }

    private static func openError(_ status: Int32, deadline: MediaDeadline) -> PushPrepError {
        if deadline.fired { return avError(status, "cannot open the media", deadline: deadline) }
        if status == cffmpegshims_error_invaliddata() || status == -Int32(EINVAL) || status == -Int32(ENOSYS) {
            // A demuxer outside the whitelist, or a nested open refused, ends here too.
            return PushPrepError(
                .unsupportedType, "not a media container PushPrep opens (\(avErrorText(status)))")
        }
        return avError(status, "cannot open the media", deadline: deadline)
    }

    /// A video stream that is not an attached picture (cover art).
    private static func isMovingPicture(_ stream: UnsafeMutablePointer<AVStream>) -> Bool {
        stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
            && (stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC) == 0
    }

    /// The streams.
    var streams: [UnsafeMutablePointer<AVStream>] {
        (0..<Int(context.pointee.nb_streams)).compactMap { context.pointee.streams[$0] }
    }

    /// The demuxer's name, e.g. "mov,mp4,m4a,3gp,3g2,mj2".
    var formatName: String {
        context.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
    }

    /// The duration in seconds, when the container says.
    var duration: Double? {
        let value = context.pointee.duration
        guard value != cffmpegshims_nopts_value(), value > 0 else { return nil }
        return Double(value) / Double(cffmpegshims_time_base())
    }

    /// The best stream of a type (`AVMEDIA_TYPE_VIDEO`, `AVMEDIA_TYPE_AUDIO`), ignoring
    /// attached pictures (cover art), or nil.
    package func bestStream(_ type: AVMediaType) -> UnsafeMutablePointer<AVStream>? {
        let index = av_find_best_stream(context, type, -1, -1, nil, 0)
        guard index >= 0, let stream = context.pointee.streams[Int(index)] else { return nil }
        if type == AVMEDIA_TYPE_VIDEO && (stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC) != 0 {
            return nil
        }
        return stream
    }

    /// Reads the next packet into `packet` once this input's deadline allows it (`step` names
    /// the work for a deadline that has passed, as ``MediaDeadline/check(_:)`` does); false at
    /// the end of the input. Every read is a deadline point, so no read loop can forget one.
    func read(into packet: UnsafeMutablePointer<AVPacket>, during step: String) throws(PushPrepError) -> Bool {
        try deadline.check(step)
        let status = av_read_frame(context, packet)
        if status == cffmpegshims_error_eof() { return false }
        if status < 0 { throw avError(status, "cannot read the media", deadline: deadline) }
        return true
    }

    /// Seeks to the keyframe at or before `seconds` (in AV_TIME_BASE units across streams).
    func seek(to seconds: Double) throws(PushPrepError) {
        guard seconds > 0 else { return }
        let target = try MediaTime.microseconds(seconds)
        try avCall("cannot seek to \(seconds) s", deadline: deadline) {
            avformat_seek_file(context, -1, Int64.min, target, target, 0)
        }
    }
}

/// A decoder for one input stream, limited by the codec whitelist and a pixel cap.
package final class MediaDecoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    let stream: UnsafeMutablePointer<AVStream>

    /// `threads`: 0 for libav's automatic count (frame threads for video), 1 for a decoder that
    /// decodes a frame or two (threads would only add their start-up and delay).
    init(stream: UnsafeMutablePointer<AVStream>, maxPixels: Int, threads: Int32 = 0, deadline: MediaDeadline)
        throws(PushPrepError)
    {
        self.stream = stream
        let parameters = stream.pointee.codecpar!
        let codecName = String(cString: avcodec_get_name(parameters.pointee.codec_id))
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw PushPrepError(.unsupportedType, "no decoder for \(codecName)")
        }
        let decoderName = String(cString: codec.pointee.name)
        guard MediaInput.decoderWhitelist.contains(decoderName) else {
            throw PushPrepError(.unsupportedType, "the \(codecName) codec is not supported")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw PushPrepError(.ioError, "cannot allocate a decoder")
        }
        self.context = context
        try avCall("cannot set up the \(codecName) decoder", deadline: deadline) {
            avcodec_parameters_to_context(context, parameters)
        }
        context.pointee.max_pixels = Int64(maxPixels)
        context.pointee.codec_whitelist = av_strdup(MediaInput.decoderWhitelist.joined(separator: ","))
        context.pointee.pkt_timebase = stream.pointee.time_base
        context.pointee.thread_count = max(0, threads)
        try avCall("cannot open the \(codecName) decoder", deadline: deadline) {
            avcodec_open2(context, codec, nil)
        }
        if context.pointee.codec_type == AVMEDIA_TYPE_VIDEO { MediaInstrumentation.observer?.openedVideoDecoder() }
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
    }

    /// The codec's name, e.g. "h264".
    var codecName: String { String(cString: avcodec_get_name(context.pointee.codec_id)) }
}

/// An owned libav object (``MediaPacket``, ``MediaFrame``): allocated with the value, freed
/// with it by libav's own function.
package final class MediaOwned<Pointee> {
    let pointer: UnsafeMutablePointer<Pointee>
    /// libav's free function for the object (`av_packet_free`, `av_frame_free`).
    private let free: (UnsafeMutablePointer<UnsafeMutablePointer<Pointee>?>) -> Void

    /// An object from `allocate`, or `io_error` "cannot allocate `what`" when libav has no memory.
    fileprivate init(
        _ what: String, allocate: () -> UnsafeMutablePointer<Pointee>?,
        free: @escaping (UnsafeMutablePointer<UnsafeMutablePointer<Pointee>?>) -> Void
    ) throws(PushPrepError) {
        guard let pointer = allocate() else { throw PushPrepError(.ioError, "cannot allocate \(what)") }
        self.pointer = pointer
        self.free = free
    }

    deinit {
        var pointer: UnsafeMutablePointer<Pointee>? = pointer
        free(&pointer)
    }
}

/// An owned `AVPacket`.
package typealias MediaPacket = MediaOwned<AVPacket>

/// An owned `AVFrame`.
package typealias MediaFrame = MediaOwned<AVFrame>

extension MediaOwned where Pointee == AVPacket {
    /// An empty packet.
    convenience init() throws(PushPrepError) {
        try self.init("a packet", allocate: { av_packet_alloc() }, free: { av_packet_free($0) })
    }
}

extension MediaOwned where Pointee == AVFrame {
    /// An empty frame.
    convenience init() throws(PushPrepError) {
        try self.init("a frame", allocate: { av_frame_alloc() }, free: { av_frame_free($0) })
    }
}
