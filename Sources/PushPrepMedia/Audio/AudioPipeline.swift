internal import CFFmpeg
import Foundation
package import PushPrepCore

/// An audio preview written to `outputPath` (a temporary name the caller renames when this returns).
package struct ProcessedAudio {
    /// `.m4a` (AAC-LC) or `.mp3` (frames copied from an MP3 input).
    package let format: MediaType
    /// Seconds of audio in the output.
    package let duration: Double
    /// The output's size.
    let bytes: Int
    /// The input's facts, for the manifest.
    package let input: MediaProbe
    /// `remux` or `transcode` first, then what changed.
    package let operations: [String]
    package let warnings: [ProcessingWarning]
    /// The plan the pipeline ran (the one `inspect` prints).
    package let plan: AudioPlan
}

/// The audio pipeline: probe → ``AudioPlan`` → (MP3 copy) → AAC-LC transcode, repeated at lower
/// bit rates until the output fits `audioMaxBytes`.
///
/// - An MP3 file is copied frame by frame (whole frames up to `audioSeconds`, tags dropped)
///   when every frame decodes and the copy fits the limit; otherwise it is transcoded.
/// - Everything else is decoded from the start, cut sample-exactly at `audioSeconds`,
///   resampled to 44.1 or 48 kHz, mixed to stereo (mono stays mono), and encoded AAC-LC in an
///   `.m4a` with `moov` first, at 128 kbit/s stereo (64 kbit/s mono), or at the bit rate the
///   duration allows under the limit (mono below 64 kbit/s) down to 32 kbit/s; below that,
///   `cannot_fit`.
/// - Truncated input: what decodes before the cut is kept, with a warning; nothing decodable
///   is `corrupt_input`, as is more than a tenth of the packets damaged.
/// - The duration the header declares is trusted for one decision: a preview that would need
///   less than 80 % of the floor bit rate is `cannot_fit` at once, without encoding. Attempts
///   stop as soon as the encoded bytes pass the limit.
/// - No audio stream: `unsupported_type`. The deadline is checked between packets (`timeout`).
/// - On any failure the output file is removed.
///
/// Runs synchronously on a thread that may block.
package enum AudioPipeline {
    /// Bit rate of a stereo preview when the limit allows it (mono: half).
    static let defaultBitRate = 128_000
    /// No preview is encoded below this bit rate.
    static let minimumBitRate = 32_000
    /// Below this bit rate the preview is mono.
    static let monoBelow = 64_000
    /// Attempts at lower bit rates before giving up.
    static let maximumAttempts = 5

    /// `admit` is given the plan's memory estimate before anything is decoded, and may wait (a
    /// memory budget).
    package static func process(
        path: String, type: MediaType, settings: ProcessingSettings, outputPath: String, deadline: MediaDeadline,
        admit: (MemoryEstimate) throws(PushPrepError) -> Void = { _ in }
    ) throws(PushPrepError) -> ProcessedAudio {
        do {
            return try run(
                path: path, type: type, settings: settings, outputPath: outputPath, deadline: deadline, admit: admit)
        } catch {
            removeOutput(outputPath)
            throw error
        }
    }

    private static func run(
        path: String, type: MediaType, settings: ProcessingSettings, outputPath: String, deadline: MediaDeadline,
        admit: (MemoryEstimate) throws(PushPrepError) -> Void
    ) throws(PushPrepError) -> ProcessedAudio {
        let probe = try MediaProbe(MediaInput(path: path, maxPixels: settings.maxPixels, deadline: deadline))
        let plan = try AudioPlan(probe: probe, type: type, settings: settings)
        try admit(plan.memory)
        try deadline.check("probing the audio")
        return try run(plan, path: path, probe: probe, outputPath: outputPath, deadline: deadline)
    }

    /// Carries out `plan` for the sound at `path` (described by `probe`): the MP3 copy first
    /// when the plan says so, then, unless it was clean and within the limit, the transcode's
    /// ladder.
    private static func run(
        _ plan: AudioPlan, path: String, probe: MediaProbe, outputPath: String, deadline: MediaDeadline
    ) throws(PushPrepError) -> ProcessedAudio {
        let seconds = plan.seconds
        let limit = plan.limit
        var operations: [String] = []
        var warnings: [ProcessingWarning] = []

        if plan.copiesMP3 {
            let copy = try AudioRemuxStep.run(
                path: path, seconds: seconds, maxPixels: plan.maxPixels, outputPath: outputPath, deadline: deadline)
            if copy.clean && copy.bytes <= limit {
                operations.append("remux")
                operations.append(
                    "copied mp3 frames (\(plan.sourceSampleRate) Hz, \(AudioStreamInfo.channelsText(plan.sourceChannels)))"
                )
                if copy.trimmed { operations.append("trimmed to \(Self.seconds(copy.duration)) s (whole mp3 frames)") }
                operations.append("stripped metadata")
                return ProcessedAudio(
                    format: .mp3, duration: copy.duration, bytes: copy.bytes, input: probe, operations: operations,
                    warnings: warnings, plan: plan)
            }
            removeOutput(outputPath)
            operations.append(
                copy.clean
                    ? "the copied mp3 was \(copy.bytes) bytes, over \(limit): transcoded instead"
                    : "the mp3 has damaged or missing frames: transcoded instead of copied")
        }

        let ladder: AudioFitLadder
        switch plan.transcode {
        case .ladder(let planned): ladder = planned
        case .refused(let message): throw PushPrepError(.cannotFit, message)
        }
        let expected = ladder.expectedSeconds
        var bitRate = ladder.firstBitRate
        var attempt = 0
        while true {
            attempt += 1
            try deadline.check("encoding the audio")
            let channels = ladder.channels(at: bitRate)
            removeOutput(outputPath)
            let result = try AudioTranscodeStep.run(
                path: path, seconds: seconds, bitRate: bitRate, channels: channels, limit: limit,
                maxPixels: plan.maxPixels, outputPath: outputPath, deadline: deadline)
            if result.complete && result.bytes <= limit {
                operations.insert("transcode", at: 0)
                operations += describe(result, codec: plan.sourceCodec, seconds: seconds, limit: limit)
                warnings += result.warnings
                return ProcessedAudio(
                    format: .m4a, duration: result.duration, bytes: result.bytes, input: probe,
                    operations: operations, warnings: warnings, plan: plan)
            }
            let tooBig = PushPrepError(
                .cannotFit,
                "no AAC preview fits in \(limit) bytes: \(result.complete ? "" : "already ")\(result.bytes) bytes "
                    + "after \(Self.seconds(result.duration)) s at \(bitRate / 1000) kbit/s, and "
                    + "\(ladder.minimumBitRate / 1000) kbit/s is the lowest bit rate PushPrep encodes")
            // Over the limit part-way at the floor: more audio only adds bytes.
            guard bitRate > ladder.minimumBitRate, attempt < ladder.maximumAttempts else { throw tooBig }
            // Scale by the overshoot, projected over the whole preview when the attempt stopped
            // early, and by what that duration allows.
            let duration = result.complete ? result.duration : max(result.duration, expected)
            let projected =
                result.complete ? Double(result.bytes) : Double(result.bytes) / max(result.duration, 0.1) * duration
            let scaled = Int(Double(bitRate) * Double(limit) / projected * 0.95)
            let fitting = fittingBitRate(duration: duration, limit: limit)
            // One last try at the floor, unless the measured duration says it is hopeless.
            if result.complete && fitting < ladder.minimumBitRate * 4 / 5 { throw tooBig }
            bitRate = max(ladder.minimumBitRate, min(scaled, fitting, bitRate - 1000) / 1000 * 1000)
        }
    }

    /// The bit rate whose output for `duration` seconds should fit `limit` bytes, leaving room
    /// for the container (about 4 KB of headers and 250 bytes a second of sample tables) and
    /// 5 % for the encoder's rate control. May be zero or negative when nothing fits.
    static func fittingBitRate(duration: Double, limit: Int) -> Int {
        guard duration > 0 else { return defaultBitRate }
        let budget = Double(limit) * 0.95 - 4096 - 250 * duration
        return Int(budget * 8 / duration)
    }

    private static func describe(
        _ result: AudioTranscodeStep.Result, codec: String, seconds: Double, limit: Int
    ) -> [String] {
        var operations: [String] = []
        operations.append(
            "decoded \(codec) \(result.inputSampleRate) Hz, \(AudioStreamInfo.channelsText(result.inputChannels))")
        if result.trimmed { operations.append("trimmed to \(Self.seconds(seconds)) s") }
        if result.inputSampleRate != result.sampleRate {
            operations.append("resampled \(result.inputSampleRate) Hz to \(result.sampleRate) Hz")
        }
        if result.inputChannels > result.channels {
            operations.append("downmixed \(result.inputChannels) to \(result.channels) channels")
        } else if result.inputChannels < result.channels {
            operations.append("upmixed \(result.inputChannels) to \(result.channels) channels")
        }
        let full = defaultBitRate * min(max(result.inputChannels, 1), 2) / 2
        if result.bitRate < full {
            operations.append("reduced the bit rate to \(result.bitRate / 1000) kbit/s to fit \(limit) bytes")
        }
        operations.append(
            "encoded aac-lc \(result.bitRate / 1000) kbit/s \(AudioStreamInfo.channelsText(result.channels)) \(result.sampleRate) Hz"
        )
        operations.append("wrote m4a with moov first")
        operations.append("stripped metadata")
        return operations
    }

    /// Seconds for messages: "30", "12.5", "2.09".
    static func seconds(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// The size of a written file.
    static func fileSize(_ path: String) throws(PushPrepError) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw PushPrepError.system("cannot read the size of \(path)")
        }
        return Int(info.st_size)
    }

    private static func removeOutput(_ path: String) {
        unlink(path)
    }
}
