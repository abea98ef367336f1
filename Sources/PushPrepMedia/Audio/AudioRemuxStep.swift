internal import CFFmpeg
internal import CFFmpegShims
import Foundation
import PushPrepCore

/// The MP3 fast path: copies an MP3 file's frames into a new MP3 file without re-encoding,
/// whole frames up to `seconds`, with no tags at all (no ID3v2, no ID3v1, no cover art: the
/// input's tags may hold anything). Only the Xing/Info header the MP3 muxer writes remains,
/// which players need for the duration of a VBR file.
///
/// Every copied frame is also decoded, so that a damaged file is not passed on as it is: the
/// pipeline then transcodes it (and reports the damage) instead.
package enum AudioRemuxStep {
    struct Result {
        let duration: Double
        let bytes: Int
        /// Whether frames after `seconds` were left out.
        let trimmed: Bool
        /// Whether all frames decoded cleanly and the input did not end early.
        let clean: Bool
    }

    /// Whether the input is an MP3 file (not MP3 inside another container).
    package static func applies(to probe: MediaProbe) -> Bool {
        probe.container == "mp3" && probe.audio?.codecID == AV_CODEC_ID_MP3
    }

    static func run(path: String, seconds: Double, maxPixels: Int, outputPath: String, deadline: MediaDeadline)
        throws(PushPrepError) -> Result
    {
        let input = try MediaInput(path: path, maxPixels: maxPixels, deadline: deadline)
        guard let stream = input.bestStream(AVMEDIA_TYPE_AUDIO) else {
            throw PushPrepError(.unsupportedType, "no audio stream")
        }
        let checker = try AudioFrameDecoder(stream: stream, maxPixels: maxPixels, deadline: deadline)
        let output = try MediaOutput(path: outputPath, format: "mp3", deadline: deadline)
        let outputStream = try output.addStream(copying: stream)
        // Options of the MP3 muxer itself (its private context), set before the header.
        try avCall("cannot configure the mp3 muxer", deadline: deadline, default: .ioError) {
            av_opt_set_int(output.context.pointee.priv_data, "id3v2_version", 0, 0)
        }
        try avCall("cannot configure the mp3 muxer", deadline: deadline, default: .ioError) {
            av_opt_set_int(output.context.pointee.priv_data, "write_id3v1", 0, 0)
        }
        try output.writeHeader(faststart: false)

        let inputTimeBase = stream.pointee.time_base
        let outputTimeBase = outputStream.pointee.time_base
        let nopts = cffmpegshims_nopts_value()
        let limit = try MediaTime.ticks(seconds, in: inputTimeBase)
        var origin: Int64?
        var next: Int64 = 0  // where the next frame starts, relative to the first
        var trimmed = false
        var reader = try AudioPacketReader(input: input, stream: stream)
        try reader.forEach { packet throws(PushPrepError) in
            let pts = packet.pointee.pts
            let start = try pts == nopts ? next : MediaTime.difference(pts, origin ?? pts)
            if origin == nil { origin = pts == nopts ? 0 : pts }
            let end = try MediaTime.sum(start, max(packet.pointee.duration, 0))
            guard end <= limit else {
                trimmed = true
                return false
            }
            next = end
            _ = try checker.decode(packet) { _ in true }
            packet.pointee.pts = start
            packet.pointee.dts = start
            packet.pointee.pos = -1
            av_packet_rescale_ts(packet, inputTimeBase, outputTimeBase)
            packet.pointee.stream_index = outputStream.pointee.index
            try output.write(packet)
            return true
        }
        _ = try checker.decode(nil) { _ in true }
        try output.finish()

        var clean = reader.damage == nil && checker.damaged == 0 && checker.samples > 0
        if !trimmed, let declared = input.duration, clean {
            // Without a Xing header the declared duration is an estimate from the bit rate.
            let expected = min(declared, seconds)
            clean = Double(next) * av_q2d(inputTimeBase) + 0.5 + 0.05 * expected >= expected
        }
        return Result(
            duration: Double(next) * av_q2d(inputTimeBase),
            bytes: try AudioPipeline.fileSize(outputPath),
            trimmed: trimmed,
            clean: clean
        )
    }
}
