internal import CFFmpeg
internal import CFFmpegShims
import Foundation
import PushPrepCore

/// One encoding attempt: decodes the input's main audio stream from the start, cuts it at
/// `seconds` (sample-exact), encodes AAC-LC at `bitRate` with `channels` channels and writes
/// an `.m4a` with `moov` first.
///
/// The attempt stops early once the encoded audio alone is over `limit` bytes: the file
/// cannot fit any more, and an hour of audio need not be encoded to learn that.
enum AudioTranscodeStep {
    struct Result {
        /// Seconds of audio written (when stopped early, so far).
        let duration: Double
        /// Output file size (when stopped early, the encoded bytes so far: more than the limit).
        let bytes: Int
        /// False when the attempt stopped early because the output went over the limit.
        let complete: Bool
        /// Whether the input went on past `seconds`.
        let trimmed: Bool
        /// The input stream's first decoded format.
        let inputSampleRate: Int
        let inputChannels: Int
        /// What was written.
        let sampleRate: Int
        let channels: Int
        let bitRate: Int
        /// Problems that did not stop the attempt (truncation, damaged packets).
        let warnings: [ProcessingWarning]
    }

    static func run(
        path: String, seconds: Double, bitRate: Int, channels: Int, limit: Int, maxPixels: Int, outputPath: String,
        deadline: MediaDeadline
    ) throws(PushPrepError) -> Result {
        let input = try MediaInput(path: path, maxPixels: maxPixels, deadline: deadline)
        guard let stream = input.bestStream(AVMEDIA_TYPE_AUDIO) else {
            throw PushPrepError(.unsupportedType, "no audio stream")
        }
        let decoding = try AudioFrameDecoder(stream: stream, maxPixels: maxPixels, deadline: deadline)
        let transcoder = try AudioTranscoder(
            decoder: decoding.decoder, bitRate: bitRate, channels: channels, deadline: deadline)
        transcoder.maximumSamples = try MediaTime.integer(seconds * Double(transcoder.sampleRate), "\(seconds) s")

        let output = try MediaOutput(path: outputPath, format: "ipod", deadline: deadline)
        let outputStream = try output.addStream(encoder: transcoder.encoder)
        try output.writeHeader(faststart: true)
        // The muxer may have changed the stream's time base while writing the header.
        let outputTimeBase = outputStream.pointee.time_base
        var encodedBytes = 0
        let emit: (UnsafeMutablePointer<AVPacket>) throws(PushPrepError) -> Void = { packet throws(PushPrepError) in
            av_packet_rescale_ts(packet, transcoder.encoder.pointee.time_base, outputTimeBase)
            packet.pointee.stream_index = outputStream.pointee.index
            encodedBytes += Int(packet.pointee.size)
            try output.write(packet)
        }

        var inputRate = 0
        var inputChannels = 0
        let onFrame: (UnsafeMutablePointer<AVFrame>) throws(PushPrepError) -> Bool = { frame throws(PushPrepError) in
            if inputRate == 0 {
                inputRate = Int(frame.pointee.sample_rate)
                inputChannels = Int(frame.pointee.ch_layout.nb_channels)
            }
            try transcoder.push(frame, emit: emit)
            return !transcoder.isFull && encodedBytes <= limit
        }
        var reader = try AudioPacketReader(input: input, stream: stream)
        var reachedEnd = true
        try reader.forEach { packet throws(PushPrepError) in
            let more = try decoding.decode(packet, onFrame)
            if !more { reachedEnd = false }
            return more
        }
        if reachedEnd { _ = try decoding.decode(nil, onFrame) }
        try decoding.checkDamage()
        if encodedBytes > limit {
            // The muxer finishes the abandoned file when it is released; the pipeline removes it.
            return Result(
                duration: transcoder.duration, bytes: encodedBytes, complete: false, trimmed: false,
                inputSampleRate: inputRate, inputChannels: inputChannels, sampleRate: Int(transcoder.sampleRate),
                channels: Int(transcoder.channels), bitRate: bitRate, warnings: [])
        }
        try transcoder.push(nil, emit: emit)
        try output.finish()

        var warnings: [ProcessingWarning] = []
        let duration = transcoder.duration
        if let damage = reader.damage {
            warnings.append(
                ProcessingWarning.damagedInput(after: AudioPipeline.seconds(duration), damage: "\(damage)"))
        } else if let declared = input.duration, duration + 0.5 < min(declared, seconds) {
            warnings.append(
                ProcessingWarning.inputShorterThanDeclared(
                    ends: AudioPipeline.seconds(duration), declared: AudioPipeline.seconds(declared)
                ))
        }
        if decoding.damaged > 0 {
            warnings.append(
                ProcessingWarning.damagedAudioPacketsSkipped(skipped: decoding.damaged, sent: decoding.sent))
        }
        // Decoding stops at the frame that crosses the cut: more decoded than kept means cut.
        let decodedSeconds = inputRate > 0 ? Double(decoding.samples) / Double(inputRate) : 0
        let trimmed = transcoder.isFull && (decodedSeconds > seconds + 0.001 || (input.duration ?? 0) > seconds + 0.05)
        return Result(
            duration: duration,
            bytes: try AudioPipeline.fileSize(outputPath),
            complete: true,
            trimmed: trimmed,
            inputSampleRate: inputRate,
            inputChannels: inputChannels,
            sampleRate: Int(transcoder.sampleRate),
            channels: Int(transcoder.channels),
            bitRate: bitRate,
            warnings: warnings
        )
    }
}
