internal import CFFmpeg
import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepMedia

/// Audio previews: every supported input becomes AAC-LC in an `.m4a` with `moov` first (or a
/// tag-free copy of an MP3), trimmed, within the byte limit, checked with `ffprobe`.
@Suite(
    .enabled(
        if: TestTools.programPath("ffmpeg") != nil && TestTools.programPath("ffprobe") != nil,
        "needs the ffmpeg and ffprobe programs to make and check fixtures"))
final class AudioPipelineTests {
    let directory: URL

    init() throws { directory = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A sine tone made by `ffmpeg` into `name`, with extra output arguments.
    private func tone(_ name: String, seconds: Double, rate: Int = 44_100, _ arguments: String...) throws -> String {
        let output = path(name)
        try runFFmpeg(
            ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(rate):duration=\(seconds)"] + arguments + [output])
        return output
    }

    private func runFFmpeg(_ arguments: [String]) throws {
        try TestTools.runChecked("ffmpeg", ["-y", "-v", "error", "-nostdin"] + arguments)
    }

    private func settings(seconds: Double = 30, maxBytes: Int = AppleLimits.audioBytes) -> ProcessingSettings {
        var settings = ProcessingSettings()
        settings.audioSeconds = seconds
        settings.audioMaxBytes = maxBytes
        return settings
    }

    private func process(
        _ input: String, _ type: MediaType, seconds: Double = 30, maxBytes: Int = AppleLimits.audioBytes,
        timeout: Double = 60
    ) throws -> (ProcessedAudio, String) {
        let output = input + ".out"
        let result = try AudioPipeline.process(
            path: input, type: type, settings: settings(seconds: seconds, maxBytes: maxBytes), outputPath: output,
            deadline: MediaDeadline(seconds: timeout))
        return (result, output)
    }

    // MARK: - Checking outputs with libav's own probe

    struct Probed {
        let format: String
        let codec: String
        let profile: String?
        let sampleRate: Int
        let channels: Int
        let duration: Double
    }

    private func ffprobe(_ file: String) throws -> Probed {
        let data = try TestTools.runChecked(
            "ffprobe",
            [
                "-v", "error", "-show_entries",
                "stream=codec_name,codec_type,profile,sample_rate,channels:format=format_name,duration", "-of", "json",
                file,
            ])
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let streams = try #require(json["streams"] as? [[String: Any]])
        #expect(streams.count == 1, "one stream in \(file)")
        let stream = try #require(streams.first { $0["codec_type"] as? String == "audio" })
        let format = try #require(json["format"] as? [String: Any])
        return Probed(
            format: format["format_name"] as? String ?? "",
            codec: stream["codec_name"] as? String ?? "",
            profile: stream["profile"] as? String,
            sampleRate: Int(stream["sample_rate"] as? String ?? "") ?? 0,
            channels: stream["channels"] as? Int ?? 0,
            duration: Double(format["duration"] as? String ?? "") ?? 0
        )
    }

    /// The four-character types of the file's top-level boxes, in order.
    private func topLevelBoxes(_ file: String) throws -> [String] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        var boxes: [String] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            var size = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            boxes.append(String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self))
            if size == 1, offset + 16 <= bytes.count {
                size = bytes[(offset + 8)..<(offset + 16)].reduce(0) { $0 << 8 | Int($1) }
            } else if size == 0 {
                size = bytes.count - offset
            }
            guard size >= 8 else { break }
            offset += size
        }
        return boxes
    }

    /// Checks an `.m4a` preview: AAC-LC, the rate and channels expected, the duration asked
    /// (within 0.5 s), `moov` before `mdat`, within the limit; returns the probe.
    @discardableResult
    private func checkM4A(
        _ result: ProcessedAudio, _ output: String, seconds: Double, sampleRate: Int, channels: Int,
        limit: Int = AppleLimits.audioBytes
    ) throws -> Probed {
        #expect(result.format == .m4a)
        #expect(result.operations.first == "transcode", "\(result.operations)")
        let probed = try ffprobe(output)
        #expect(probed.format.contains("mp4"), "\(probed.format)")
        #expect(probed.codec == "aac" && probed.profile == "LC", "\(probed)")
        #expect(probed.sampleRate == sampleRate, "\(probed)")
        #expect(probed.channels == channels, "\(probed)")
        #expect(abs(probed.duration - seconds) < 0.5, "duration \(probed.duration), asked \(seconds)")
        #expect(abs(result.duration - seconds) < 0.5, "reported \(result.duration)")
        let boxes = try topLevelBoxes(output)
        let moov = try #require(boxes.firstIndex(of: "moov"), "\(boxes)")
        let mdat = try #require(boxes.firstIndex(of: "mdat"), "\(boxes)")
        #expect(moov < mdat, "\(boxes)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
        #expect(size == result.bytes && size <= limit, "\(size) bytes, limit \(limit)")
        return probed
    }

    // MARK: - Inputs

    @Test("a 5-minute WAV is trimmed to 30 s of AAC-LC")
    func longWAV() throws {
        let input = try tone("long.wav", seconds: 300, "-ac", "2")
        let (result, output) = try process(input, .wav)
        try checkM4A(result, output, seconds: 30, sampleRate: 44_100, channels: 2)
        #expect(result.operations.contains("trimmed to 30 s"), "\(result.operations)")
        #expect(result.operations.contains { $0.hasPrefix("encoded aac-lc 128 kbit/s stereo") })
        #expect(result.input.audio?.codec == "pcm_s16le")
        #expect(result.warnings.isEmpty, "\(result.warnings)")
    }

    @Test("FLAC, Vorbis, Opus in Ogg and WebM, ADTS AAC, M4A, a video-less MP4 and AIFF all become AAC-LC")
    func formats() throws {
        let cases: [(name: String, type: MediaType, arguments: [String], rate: Int)] = [
            ("tone.flac", .flac, ["-ac", "2", "-c:a", "flac"], 44_100),
            ("tone.ogg", .ogg, ["-ac", "2", "-c:a", "libvorbis"], 44_100),
            ("opus.ogg", .ogg, ["-ac", "2", "-c:a", "libopus", "-b:a", "64k"], 48_000),
            ("opus.webm", .webm, ["-ac", "2", "-c:a", "libopus", "-b:a", "64k"], 48_000),
            ("tone.aac", .aac, ["-ac", "2", "-c:a", "aac", "-f", "adts"], 44_100),
            ("tone.m4a", .m4a, ["-ac", "2", "-c:a", "aac"], 44_100),
            ("audio-only.mp4", .mp4, ["-ac", "2", "-c:a", "aac", "-f", "mp4"], 44_100),
            ("tone.aiff", .aiff, ["-ac", "2"], 44_100),
        ]
        for item in cases {
            let input = path(item.name)
            try runFFmpeg(
                ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(item.rate):duration=4"] + item.arguments
                    + [input])
            let (result, output) = try process(input, item.type)
            try checkM4A(result, output, seconds: 4, sampleRate: item.rate, channels: 2)
            #expect(!result.operations.contains { $0.hasPrefix("trimmed") }, "\(item.name): \(result.operations)")
            #expect(result.warnings.isEmpty, "\(item.name): \(result.warnings)")
        }
    }

    @Test("5.1 is downmixed to stereo and 96 kHz resampled to 48 kHz")
    func downmixAndResample() throws {
        let surround = try tone("surround.flac", seconds: 3, "-ac", "6", "-c:a", "flac")
        let (mixed, mixedOutput) = try process(surround, .flac)
        try checkM4A(mixed, mixedOutput, seconds: 3, sampleRate: 44_100, channels: 2)
        #expect(mixed.operations.contains("downmixed 6 to 2 channels"), "\(mixed.operations)")
        #expect(mixed.input.audio?.channels == 6)

        let high = try tone("high.wav", seconds: 3, rate: 96_000, "-ac", "2", "-c:a", "pcm_s24le")
        let (resampled, resampledOutput) = try process(high, .wav)
        try checkM4A(resampled, resampledOutput, seconds: 3, sampleRate: 48_000, channels: 2)
        #expect(resampled.operations.contains("resampled 96000 Hz to 48000 Hz"), "\(resampled.operations)")

        let mono = try tone("mono.wav", seconds: 2, rate: 22_050)
        let (kept, keptOutput) = try process(mono, .wav)
        try checkM4A(kept, keptOutput, seconds: 2, sampleRate: 44_100, channels: 1)
        #expect(kept.operations.contains { $0.hasPrefix("encoded aac-lc 64 kbit/s mono") }, "\(kept.operations)")
    }

    @Test("an MP3 within the rules is copied without its tags; a long one is trimmed by whole frames")
    func mp3Copy() throws {
        let input = try tone(
            "tagged.mp3", seconds: 10, "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", "-metadata",
            "title=SECRET-TITLE", "-metadata", "comment=GPS 48.85N", "-write_id3v1", "1")
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        #expect(original.prefix(3) == Data("ID3".utf8), "the fixture has an ID3v2 tag")
        let (result, output) = try process(input, .mp3)
        #expect(result.format == .mp3)
        #expect(result.operations.first == "remux", "\(result.operations)")
        #expect(!result.operations.contains { $0.hasPrefix("trimmed") })
        let probed = try ffprobe(output)
        #expect(probed.format == "mp3" && probed.codec == "mp3" && probed.channels == 2, "\(probed)")
        #expect(abs(probed.duration - 10) < 0.5, "\(probed.duration)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(bytes.count == result.bytes)
        #expect(bytes.prefix(3) != Data("ID3".utf8), "no ID3v2 tag")
        #expect(bytes.suffix(128).prefix(3) != Data("TAG".utf8), "no ID3v1 tag")
        #expect(bytes.range(of: Data("SECRET-TITLE".utf8)) == nil && bytes.range(of: Data("GPS 48".utf8)) == nil)

        let long = try tone("long.mp3", seconds: 60, "-ac", "2", "-c:a", "libmp3lame", "-b:a", "96k")
        let (trimmed, trimmedOutput) = try process(long, .mp3, seconds: 20)
        #expect(trimmed.format == .mp3 && trimmed.operations.first == "remux", "\(trimmed.operations)")
        #expect(trimmed.operations.contains { $0.hasPrefix("trimmed to") && $0.hasSuffix("(whole mp3 frames)") })
        #expect(trimmed.duration <= 20 && trimmed.duration > 19.9, "\(trimmed.duration)")
        let probedLong = try ffprobe(trimmedOutput)
        #expect(abs(probedLong.duration - 20) < 0.5, "\(probedLong.duration)")

        // Over the limit as a copy: transcoded to a smaller AAC instead.
        let (fallback, fallbackOutput) = try process(long, .mp3, seconds: 20, maxBytes: 200_000)
        try checkM4A(fallback, fallbackOutput, seconds: 20, sampleRate: 44_100, channels: 2, limit: 200_000)
        #expect(fallback.operations.contains { $0.contains("transcoded instead") }, "\(fallback.operations)")
    }

    @Test("a small byte limit lowers the bit rate; an impossible one is cannot_fit, with no output left")
    func byteLimit() throws {
        let input = try tone("limit.flac", seconds: 30, "-ac", "2", "-c:a", "flac")
        let (result, output) = try process(input, .flac, maxBytes: 250_000)
        try checkM4A(result, output, seconds: 30, sampleRate: 44_100, channels: 1, limit: 250_000)
        #expect(
            result.operations.contains { $0.hasPrefix("reduced the bit rate to") }, "\(result.operations)")

        // Below what settings validation allows: the pipeline itself must refuse.
        let error = #expect(throws: PushPrepError.self) {
            _ = try self.process(input, .flac, maxBytes: 20_000)
        }
        #expect(error?.code == .cannotFit, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: input + ".out"))

        // Close enough that the floor bit rate is tried: the attempt stops once over the limit.
        let close = #expect(throws: PushPrepError.self) {
            _ = try self.process(input, .flac, maxBytes: 115_000)
        }
        #expect(close?.code == .cannotFit && close?.message.contains("already") == true, "\(String(describing: close))")
        #expect(!FileManager.default.fileExists(atPath: input + ".out"))
    }

    @Test("a truncated file gives the part that decodes, with a warning; a cut header fails")
    func truncated() throws {
        let input = try tone("whole.flac", seconds: 20, "-ac", "2", "-c:a", "flac")
        let data = try Data(contentsOf: URL(fileURLWithPath: input))
        let half = path("half.flac")
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: half))
        let (result, output) = try process(half, .flac)
        let probed = try ffprobe(output)
        #expect(probed.codec == "aac" && probed.profile == "LC")
        #expect(result.duration > 5 && result.duration < 15, "\(result.duration)")
        #expect(abs(probed.duration - result.duration) < 0.5)
        #expect(!result.warnings.isEmpty, "a warning says the input ended early")

        let stub = path("stub.m4a")
        let m4a = try tone("whole.m4a", seconds: 5, "-c:a", "aac", "-movflags", "+faststart")
        try Data(try Data(contentsOf: URL(fileURLWithPath: m4a)).prefix(300)).write(to: URL(fileURLWithPath: stub))
        let error = #expect(throws: PushPrepError.self) { _ = try self.process(stub, .m4a) }
        #expect([.corruptInput, .unsupportedType].contains(error?.code), "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: stub + ".out"))
    }

    @Test("a file without an audio stream is unsupported_type")
    func noAudio() throws {
        let input = path("silent.mp4")
        try runFFmpeg([
            "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=1", "-c:v", "libx264", "-pix_fmt", "yuv420p",
            input,
        ])
        let error = #expect(throws: PushPrepError.self) { _ = try self.process(input, .mp4) }
        #expect(error?.code == .unsupportedType && error?.message == "no audio stream", "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: input + ".out"))
    }

    @Test("the deadline stops a long decode with timeout, leaving no output")
    func deadline() throws {
        let input = try tone("deadline.wav", seconds: 90, rate: 48_000, "-ac", "2")
        let error = #expect(throws: PushPrepError.self) {
            _ = try self.process(input, .wav, seconds: 600, timeout: 0.2)
        }
        #expect(error?.code == .timeout, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: input + ".out"))
    }

    // MARK: - The shared AAC component

    @Test("AudioTranscoder turns decoded frames into AAC packets with monotonic timestamps")
    func transcoderAlone() throws {
        let input = try tone("feed.flac", seconds: 3, rate: 32_000, "-ac", "2", "-c:a", "flac")
        let media = try MediaInput(
            path: input, maxPixels: ProcessingSettings().maxPixels, deadline: MediaDeadline(seconds: 30))
        let stream = try #require(media.bestStream(AVMEDIA_TYPE_AUDIO))
        let decoder = try MediaDecoder(stream: stream, maxPixels: 1, deadline: media.deadline)
        let transcoder = try AudioTranscoder(decoder: decoder, deadline: media.deadline)
        #expect(transcoder.encoder.pointee.codec_id == AV_CODEC_ID_AAC)
        #expect(transcoder.encoder.pointee.sample_rate == 48_000 && transcoder.channels == 2)
        #expect(transcoder.encoder.pointee.time_base.num == 1 && transcoder.encoder.pointee.time_base.den == 48_000)
        #expect(transcoder.encoder.pointee.extradata_size > 0, "AudioSpecificConfig for MP4")

        var packets: [(pts: Int64, dts: Int64, duration: Int64, size: Int32)] = []
        let collect: (UnsafeMutablePointer<AVPacket>) throws(PushPrepError) -> Void = { packet in
            packets.append((packet.pointee.pts, packet.pointee.dts, packet.pointee.duration, packet.pointee.size))
        }
        let packet = try MediaPacket()
        let frame = try MediaFrame()
        while try media.read(into: packet.pointer, during: "reading the tone") {
            defer { av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == stream.pointee.index else { continue }
            #expect(avcodec_send_packet(decoder.context, packet.pointer) >= 0)
            while avcodec_receive_frame(decoder.context, frame.pointer) >= 0 {
                try transcoder.push(frame.pointer, emit: collect)
                av_frame_unref(frame.pointer)
            }
        }
        // Drain the decoder: with frame threads it holds the last frames back.
        #expect(avcodec_send_packet(decoder.context, nil) >= 0)
        while avcodec_receive_frame(decoder.context, frame.pointer) >= 0 {
            try transcoder.push(frame.pointer, emit: collect)
            av_frame_unref(frame.pointer)
        }
        try transcoder.push(nil, emit: collect)
        try transcoder.push(nil, emit: collect)  // a second flush does nothing

        #expect(abs(transcoder.duration - 3) < 0.001, "\(transcoder.duration)")
        #expect(packets.count > 100)
        let first = try #require(packets.first)
        #expect(first.pts == -transcoder.primingSamples, "priming before the first sample fed at 0")
        for (previous, next) in zip(packets, packets.dropFirst()) {
            #expect(next.pts > previous.pts && next.dts > previous.dts)
            #expect(next.pts == previous.pts + previous.duration)
        }
        let last = try #require(packets.last)
        let end = last.pts + last.duration
        #expect(abs(end - 3 * 48_000) <= 1024, "the packets cover the 3 s fed (end \(end))")
        #expect(packets.allSatisfy { $0.size > 0 && $0.pts == $0.dts })
    }

    @Test("AudioTranscoder stops at maximumSamples, sample-exact")
    func transcoderLimit() throws {
        let input = try tone("cut.wav", seconds: 2, rate: 44_100, "-ac", "1")
        let media = try MediaInput(
            path: input, maxPixels: ProcessingSettings().maxPixels, deadline: MediaDeadline(seconds: 30))
        let stream = try #require(media.bestStream(AVMEDIA_TYPE_AUDIO))
        let decoder = try MediaDecoder(stream: stream, maxPixels: 1, deadline: media.deadline)
        let transcoder = try AudioTranscoder(decoder: decoder, bitRate: 64_000, channels: 1, deadline: media.deadline)
        transcoder.maximumSamples = 44_100 / 2
        var samples: Int64 = 0
        let packet = try MediaPacket()
        let frame = try MediaFrame()
        while try media.read(into: packet.pointer, during: "reading the tone"), !transcoder.isFull {
            defer { av_packet_unref(packet.pointer) }
            #expect(avcodec_send_packet(decoder.context, packet.pointer) >= 0)
            while avcodec_receive_frame(decoder.context, frame.pointer) >= 0 {
                try transcoder.push(frame.pointer) { packet in samples += packet.pointee.duration }
                av_frame_unref(frame.pointer)
            }
        }
        try transcoder.push(nil) { packet in samples += packet.pointee.duration }
        #expect(transcoder.samplesQueued == 22_050 && transcoder.isFull)
        #expect(transcoder.encoder.pointee.ch_layout.nb_channels == 1)
        #expect(samples >= 22_050 && samples <= 22_050 + 2048, "\(samples)")
    }
}
