internal import CFFmpeg
internal import CFFmpegShims
import PushPrepCore

/// Decoded audio frames in, AAC-LC packets out (stereo, 44.1 or 48 kHz, 128 kbit/s by default), through libswresample and an AVAudioFifo (the AAC encoder wants exactly frame_size samples per frame).
///
/// Used for audio previews (``AudioPipeline``) and for the sound track of transcoded movies.
///
/// - Timestamps: the input frames' own timestamps are ignored; samples are counted from 0 at
///   the first sample fed, so gaps in the input are closed up. Packets carry the encoder's
///   usual priming: the first packet's pts is `-primingSamples` (1024), and the MP4 muxer
///   writes an edit list so that the first sample fed plays at time 0.
/// - Trimming: set ``maximumSamples`` to drop everything after that many output samples (the
///   cut is sample-exact, inside a frame); ``isFull`` then tells the caller to stop reading.
/// - Format changes mid-stream (chained Ogg, a sample rate change) rebuild the resampler
///   after draining the old one.
///
/// Confined to one job; owns the encoder, the resampler, the FIFO and two frames, freed in
/// `deinit`.
package final class AudioTranscoder {
    /// The opened AAC encoder, for MediaOutput.addStream(encoder:) (set the output stream's time_base from it).
    let encoder: UnsafeMutablePointer<AVCodecContext>
    /// Output sample rate (44,100 or 48,000 Hz).
    let sampleRate: Int32
    /// Output channels (1 or 2).
    let channels: Int32
    /// Samples the encoder puts before the first sample fed (the first packet's pts is minus this).
    var primingSamples: Int64 { Int64(encoder.pointee.initial_padding) }
    /// When set, samples after this many (at ``sampleRate``) are dropped.
    var maximumSamples: Int64?
    /// Samples queued for encoding so far (after resampling and the ``maximumSamples`` cut).
    private(set) var samplesQueued: Int64 = 0
    /// Seconds of audio queued so far.
    var duration: Double { Double(samplesQueued) / Double(sampleRate) }
    /// Whether ``maximumSamples`` has been reached: more input would be dropped.
    var isFull: Bool { maximumSamples.map { samplesQueued >= $0 } ?? false }

    private let deadline: MediaDeadline
    private let fifo: OpaquePointer
    /// Resampled samples, before they go into the FIFO.
    private let converted: UnsafeMutablePointer<AVFrame>
    /// One encoder frame, read from the FIFO.
    private let encoderFrame: UnsafeMutablePointer<AVFrame>
    private var resampler: OpaquePointer?
    /// The input format the resampler was made for.
    private var inputLayout = AVChannelLayout()
    private var inputFormat: Int32 = -1
    private var inputRate: Int32 = 0
    private var samplesEncoded: Int64 = 0
    private var flushed = false

    /// An encoder with two channels (a mono source is sent to both).
    convenience init(decoder: MediaDecoder, bitRate: Int = 128_000, deadline: MediaDeadline) throws(PushPrepError) {
        try self.init(decoder: decoder, bitRate: bitRate, channels: 2, deadline: deadline)
    }

    /// An encoder with `channels` (1 or 2) channels: more are downmixed, fewer upmixed.
    init(decoder: MediaDecoder, bitRate: Int = 128_000, channels: Int, deadline: MediaDeadline) throws(PushPrepError) {
        FFmpegRuntime.start()
        self.deadline = deadline
        self.channels = Int32(min(max(channels, 1), 2))
        var rate = decoder.context.pointee.sample_rate
        if rate <= 0 { rate = decoder.stream.pointee.codecpar.pointee.sample_rate }
        sampleRate = Self.outputSampleRate(for: Int(rate))

        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw PushPrepError(.ioError, "this FFmpeg has no AAC encoder")
        }
        guard let encoder = avcodec_alloc_context3(codec) else {
            throw PushPrepError(.ioError, "cannot allocate the AAC encoder")
        }
        self.encoder = encoder
        guard let fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, self.channels, 4096) else {
            var context: UnsafeMutablePointer<AVCodecContext>? = encoder
            avcodec_free_context(&context)
            throw PushPrepError(.ioError, "cannot allocate the audio FIFO")
        }
        self.fifo = fifo
        guard let converted = av_frame_alloc(), let encoderFrame = av_frame_alloc() else {
            var context: UnsafeMutablePointer<AVCodecContext>? = encoder
            avcodec_free_context(&context)
            av_audio_fifo_free(fifo)
            throw PushPrepError(.ioError, "cannot allocate an audio frame")
        }
        self.converted = converted
        self.encoderFrame = encoderFrame

        encoder.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        encoder.pointee.sample_rate = sampleRate
        av_channel_layout_default(&encoder.pointee.ch_layout, self.channels)
        encoder.pointee.bit_rate = Int64(bitRate)
        encoder.pointee.profile = FF_PROFILE_AAC_LOW
        encoder.pointee.time_base = AVRational(num: 1, den: sampleRate)
        // MP4 keeps the AudioSpecificConfig in the sample description, not in each packet.
        encoder.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        try avCall("cannot open the AAC encoder", deadline: deadline, default: .ioError) {
            avcodec_open2(encoder, codec, nil)
        }
        // The native encoder takes 1024 samples a frame; guard against a variable-size one.
        if encoder.pointee.frame_size <= 0 { encoder.pointee.frame_size = 1024 }
    }

    deinit {
        swr_free(&resampler)
        av_channel_layout_uninit(&inputLayout)
        av_audio_fifo_free(fifo)
        var frame: UnsafeMutablePointer<AVFrame>? = converted
        av_frame_free(&frame)
        frame = encoderFrame
        av_frame_free(&frame)
        var context: UnsafeMutablePointer<AVCodecContext>? = encoder
        avcodec_free_context(&context)
    }

    /// 44.1 kHz for the 11,025 Hz family (22,050, 88,200, ...), else 48 kHz.
    static func outputSampleRate(for inputRate: Int) -> Int32 {
        inputRate > 0 && inputRate % 11_025 == 0 ? 44_100 : 48_000
    }

    /// Feeds one decoded frame (nil = flush at the end); calls `emit` for every encoded packet, whose pts/dts are in the encoder's time base (1/sample_rate) and start at 0 for the first sample fed.
    ///
    /// The packet passed to `emit` is unreferenced afterwards; `emit` may take its reference
    /// (as `av_interleaved_write_frame` does). After the flush, further calls do nothing.
    func push(
        _ frame: UnsafeMutablePointer<AVFrame>?, emit: (UnsafeMutablePointer<AVPacket>) throws(PushPrepError) -> Void
    ) throws(PushPrepError) {
        guard !flushed else { return }
        try deadline.check("transcoding the audio")
        if let frame {
            guard frame.pointee.nb_samples > 0, !isFull else { return }
            try configureResampler(for: frame)
            try convert(frame)
            try encodeQueued(final: false, emit: emit)
        } else {
            flushed = true
            if resampler != nil { try convert(nil) }
            try encodeQueued(final: true, emit: emit)
            try avCall("cannot flush the AAC encoder", deadline: deadline, default: .ioError) {
                avcodec_send_frame(encoder, nil)
            }
            try receivePackets(emit: emit)
        }
    }

    /// (Re)creates the resampler when the input's format, rate or layout differs from the
    /// one it was made for, draining the old one first.
    private func configureResampler(for frame: UnsafeMutablePointer<AVFrame>) throws(PushPrepError) {
        var layout = AVChannelLayout()
        defer { av_channel_layout_uninit(&layout) }
        if frame.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || frame.pointee.ch_layout.nb_channels <= 0 {
            // Containers without a layout (raw PCM in some WAVs): assume the usual one.
            let count = max(frame.pointee.ch_layout.nb_channels, 1)
            av_channel_layout_default(&layout, count)
        } else {
            try avCall("cannot read the channel layout", deadline: deadline) {
                av_channel_layout_copy(&layout, &frame.pointee.ch_layout)
            }
        }
        guard frame.pointee.sample_rate > 0 else {
            throw PushPrepError(.corruptInput, "an audio frame without a sample rate")
        }
        if resampler != nil && frame.pointee.format == inputFormat && frame.pointee.sample_rate == inputRate
            && av_channel_layout_compare(&layout, &inputLayout) == 0
        {
            return
        }
        if resampler != nil {
            try convert(nil)
            swr_free(&resampler)
        }
        av_channel_layout_uninit(&inputLayout)
        try avCall("cannot read the channel layout", deadline: deadline) {
            av_channel_layout_copy(&inputLayout, &layout)
        }
        inputFormat = frame.pointee.format
        inputRate = frame.pointee.sample_rate
        try avCall("cannot set up the resampler", deadline: deadline) {
            swr_alloc_set_opts2(
                &resampler, &encoder.pointee.ch_layout, AV_SAMPLE_FMT_FLTP, sampleRate, &inputLayout,
                AVSampleFormat(rawValue: inputFormat), inputRate, 0, nil)
        }
        try avCall("cannot set up the resampler", deadline: deadline) { swr_init(resampler) }
    }

    /// Resamples `frame` (nil: drains the resampler) into the FIFO, up to ``maximumSamples``.
    private func convert(_ frame: UnsafeMutablePointer<AVFrame>?) throws(PushPrepError) {
        let inputCount = frame?.pointee.nb_samples ?? 0
        let capacity = swr_get_out_samples(resampler, inputCount)
        guard capacity > 0 else { return }
        try ensureCapacity(converted, samples: capacity)
        let count = try avCall("cannot resample the audio", deadline: deadline) {
            let output = converted.pointee.extended_data
            if let frame {
                let input = UnsafeMutableRawPointer(frame.pointee.extended_data)?
                    .assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
                return swr_convert(resampler, output, capacity, input, inputCount)
            }
            return swr_convert(resampler, output, capacity, nil, 0)
        }
        var keep = Int64(count)
        if let maximumSamples { keep = max(0, min(keep, maximumSamples - samplesQueued)) }
        guard keep > 0 else { return }
        let written = UnsafeMutableRawPointer(converted.pointee.extended_data).map {
            av_audio_fifo_write(fifo, $0.assumingMemoryBound(to: UnsafeMutableRawPointer?.self), Int32(keep))
        }
        guard let written, written == Int32(keep) else {
            throw avError(written ?? cffmpegshims_error_enomem(), "cannot queue audio samples", deadline: deadline)
        }
        samplesQueued += keep
    }

    /// Gives `frame` writable FLTP buffers for at least `samples` samples in the output layout.
    private func ensureCapacity(_ frame: UnsafeMutablePointer<AVFrame>, samples: Int32) throws(PushPrepError) {
        if frame.pointee.nb_samples >= samples && frame.pointee.extended_data != nil
            && av_frame_is_writable(frame) != 0
        {
            return
        }
        av_frame_unref(frame)
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = sampleRate
        frame.pointee.nb_samples = samples
        try avCall("cannot allocate audio samples", deadline: deadline, default: .ioError) {
            av_channel_layout_copy(&frame.pointee.ch_layout, &encoder.pointee.ch_layout)
        }
        try avCall("cannot allocate audio samples", deadline: deadline, default: .ioError) {
            av_frame_get_buffer(frame, 0)
        }
    }

    /// Encodes whole frames from the FIFO; with `final`, also the last, shorter one.
    private func encodeQueued(
        final: Bool, emit: (UnsafeMutablePointer<AVPacket>) throws(PushPrepError) -> Void
    ) throws(PushPrepError) {
        let frameSize = encoder.pointee.frame_size
        while av_audio_fifo_size(fifo) >= frameSize || (final && av_audio_fifo_size(fifo) > 0) {
            let count = min(frameSize, av_audio_fifo_size(fifo))
            try ensureCapacity(encoderFrame, samples: frameSize)
            // The encoder may keep a reference to the last frame's buffers: never write into them.
            try avCall("cannot allocate audio samples", deadline: deadline, default: .ioError) {
                av_frame_make_writable(encoderFrame)
            }
            let read = UnsafeMutableRawPointer(encoderFrame.pointee.extended_data).map {
                av_audio_fifo_read(fifo, $0.assumingMemoryBound(to: UnsafeMutableRawPointer?.self), count)
            }
            guard read == count else {
                throw PushPrepError(.ioError, "cannot read queued audio samples")
            }
            encoderFrame.pointee.nb_samples = count
            encoderFrame.pointee.pts = samplesEncoded
            samplesEncoded += Int64(count)
            try avCall("cannot encode the audio", deadline: deadline, default: .ioError) {
                avcodec_send_frame(encoder, encoderFrame)
            }
            // The frame keeps its full-size buffer for the next round.
            encoderFrame.pointee.nb_samples = frameSize
            try receivePackets(emit: emit)
        }
    }

    private func receivePackets(emit: (UnsafeMutablePointer<AVPacket>) throws(PushPrepError) -> Void)
        throws(PushPrepError)
    {
        guard let packet = av_packet_alloc() else { throw PushPrepError(.ioError, "cannot allocate a packet") }
        defer {
            var owned: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&owned)
        }
        while true {
            let status = avcodec_receive_packet(encoder, packet)
            if status == cffmpegshims_error_eagain() || status == cffmpegshims_error_eof() { return }
            if status < 0 { throw avError(status, "cannot encode the audio", deadline: deadline, default: .ioError) }
            defer { av_packet_unref(packet) }
            packet.pointee.time_base = encoder.pointee.time_base
            try emit(packet)
        }
    }
}
