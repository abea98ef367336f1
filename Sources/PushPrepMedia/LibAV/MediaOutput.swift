internal import CFFmpeg
internal import CFFmpegShims
import Foundation
import PushPrepCore

/// An MP4/M4A file being written, with `moov` first ("faststart") so the phone can start
/// playing before the whole file is there. Written to the path given, which the caller makes a
/// temporary name and renames when complete.
package final class MediaOutput {
    let context: UnsafeMutablePointer<AVFormatContext>
    let deadline: MediaDeadline
    private var headerWritten = false
    private var finished = false

    /// `format` is "mp4" for movies or "ipod" for `.m4a` audio.
    init(path: String, format: String, deadline: MediaDeadline) throws(PushPrepError) {
        FFmpegRuntime.start()
        self.deadline = deadline
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        try avCall("cannot create the \(format) muxer", deadline: deadline, default: .ioError) {
            avformat_alloc_output_context2(&context, nil, format, path)
        }
        guard let context else { throw PushPrepError(.ioError, "cannot create the \(format) muxer") }
        self.context = context
        context.pointee.interrupt_callback = cffmpegshims_interrupt_callback(deadline.pointer)
        context.pointee.protocol_whitelist = av_strdup("file")
        try avCall("cannot open \(path) for writing", deadline: deadline, default: .ioError) {
            cffmpegshims_open_output(context, path)
        }
    }

    deinit {
        if headerWritten && !finished { av_write_trailer(context) }
        avio_closep(&context.pointee.pb)
        avformat_free_context(context)
    }

    /// Adds a stream described by an opened encoder.
    func addStream(encoder: UnsafeMutablePointer<AVCodecContext>) throws(PushPrepError) -> UnsafeMutablePointer<
        AVStream
    > {
        guard let stream = avformat_new_stream(context, nil) else {
            throw PushPrepError(.ioError, "cannot add an output stream")
        }
        try avCall("cannot describe the output stream", deadline: deadline, default: .ioError) {
            avcodec_parameters_from_context(stream.pointee.codecpar, encoder)
        }
        stream.pointee.time_base = encoder.pointee.time_base
        return stream
    }

    /// Adds a stream that copies `input`'s packets as they are (remux).
    func addStream(copying input: UnsafeMutablePointer<AVStream>) throws(PushPrepError) -> UnsafeMutablePointer<
        AVStream
    > {
        guard let stream = avformat_new_stream(context, nil) else {
            throw PushPrepError(.ioError, "cannot add an output stream")
        }
        try avCall("cannot copy the stream parameters", deadline: deadline, default: .ioError) {
            avcodec_parameters_copy(stream.pointee.codecpar, input.pointee.codecpar)
        }
        // The input container's tag may mean nothing in MP4; let the muxer choose (hvc1 is set
        // explicitly by the caller for HEVC).
        stream.pointee.codecpar.pointee.codec_tag = 0
        stream.pointee.time_base = input.pointee.time_base
        return stream
    }

    /// Writes the header; `faststart` moves `moov` before `mdat` when the file is finished.
    func writeHeader(faststart: Bool = true) throws(PushPrepError) {
        var options: OpaquePointer? = nil
        if faststart { av_dict_set(&options, "movflags", "+faststart", 0) }
        defer { av_dict_free(&options) }
        try avCall("cannot write the header", deadline: deadline, default: .ioError) {
            avformat_write_header(context, &options)
        }
        headerWritten = true
    }

    /// Writes one packet (timestamps already in the output stream's time base), interleaved.
    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws(PushPrepError) {
        try avCall("cannot write a packet", deadline: deadline, default: .ioError) {
            av_interleaved_write_frame(context, packet)
        }
    }

    /// Writes the trailer (and, with faststart, rewrites the file with `moov` first).
    func finish() throws(PushPrepError) {
        finished = true
        try avCall("cannot finish the file", deadline: deadline, default: .ioError) {
            av_write_trailer(context)
        }
        avio_closep(&context.pointee.pb)
    }
}
