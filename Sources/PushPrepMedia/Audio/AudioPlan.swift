package import PushPrepCore

/// What the audio pipeline does with one sound, decided from its headers and the settings
/// before a packet is read: copy an MP3's frames or transcode to AAC-LC, how long the preview
/// may be, and the bit rates tried to fit the byte budget (or that none can).
///
/// ``AudioPipeline`` makes it with ``init(probe:type:settings:)`` and then runs it; `inspect`
/// makes it with the same initialiser and prints it. Left to the run is what depends on
/// results: an MP3 copy that is damaged or over the limit falls back to the transcode planned
/// here, and the ladder's later bit rates follow from the size of the attempt before.
package struct AudioPlan: Equatable {
    /// The AAC-LC transcode: the bit rates it tries, or why no bit rate PushPrep encodes can fit.
    package enum Transcode: Equatable {
        case ladder(AudioFitLadder)
        /// The header's duration needs far less than the lowest bit rate: `cannot_fit` with
        /// this message, without encoding.
        case refused(String)
    }

    /// Whether the frames are copied first (an MP3 file, not MP3 inside another container).
    package let copiesMP3: Bool
    /// `--audio-seconds`: the preview's length at most.
    package let seconds: Double
    /// `--audio-max-bytes`: the copy's and the transcode's budget.
    package let limit: Int
    /// The source's length according to its header, when it says.
    package let sourceDuration: Double?
    /// The source's main audio stream: codec name, sample rate and channels.
    package let sourceCodec: String
    let sourceSampleRate: Int
    let sourceChannels: Int
    package let transcode: Transcode
    /// `--max-pixels`, for the demuxer's probing decoders.
    let maxPixels: Int
    /// The peak memory of the run (``MemoryEstimate``): small, whatever the sound.
    package let memory = MemoryEstimate.audio

    /// Whether the header says the source is longer than the preview.
    package var isTrimmed: Bool { sourceDuration.map { $0 > seconds + 0.05 } ?? false }

    /// The plan for the sound `probe` describes, detected as `type`. Refuses a file without an
    /// audio stream, as `process` does.
    package init(probe: MediaProbe, type: MediaType, settings: ProcessingSettings) throws(PushPrepError) {
        guard let audio = probe.audio else {
            throw PushPrepError(.unsupportedType, "no audio stream")
        }
        copiesMP3 = type == .mp3 && AudioRemuxStep.applies(to: probe)
        seconds = settings.audioSeconds
        sourceDuration = probe.duration
        sourceCodec = audio.codec
        sourceSampleRate = audio.sampleRate
        sourceChannels = audio.channels
        maxPixels = settings.maxPixels

        limit = settings.audioMaxBytes
        let channels = audio.channels > 0 ? min(audio.channels, 2) : 2
        var bitRate = AudioPipeline.defaultBitRate * channels / 2
        // The duration the header declares (capped at the preview length) picks the starting
        // bit rate, so that a long preview under a small limit usually takes one attempt, and
        // refuses at once what would need far less than the floor. Measured sizes decide the rest.
        let expected = min(seconds, probe.duration.flatMap { $0 > 0 ? $0 : nil } ?? seconds)
        if probe.duration != nil {
            let fitting = AudioPipeline.fittingBitRate(duration: expected, limit: limit)
            guard fitting >= AudioPipeline.minimumBitRate * 4 / 5 else {
                transcode = .refused(
                    "no AAC preview of \(AudioPipeline.seconds(expected)) s fits in \(limit) bytes: it would need "
                        + "about \(max(fitting, 0) / 1000) kbit/s, and \(AudioPipeline.minimumBitRate / 1000) kbit/s "
                        + "is the lowest bit rate PushPrep encodes")
                return
            }
            bitRate = min(bitRate, max(AudioPipeline.minimumBitRate, fitting / 1000 * 1000))
        }
        transcode = .ladder(
            AudioFitLadder(expectedSeconds: expected, fullChannels: channels, firstBitRate: bitRate))
    }
}

/// The AAC encodes tried to fit a sound in the plan's byte budget: ``firstBitRate`` first, then up to
/// ``maximumAttempts`` in all at lower bit rates, each worked out from the size of the attempt
/// before, none below ``minimumBitRate`` (then `cannot_fit`); mono below ``monoBelow``. The
/// rungs after the first depend on what the encoder made, so the plan holds the rule and
/// ``AudioPipeline`` walks it.
package struct AudioFitLadder: Equatable {
    /// The preview's length the header leads to expect (at most `--audio-seconds`).
    let expectedSeconds: Double
    /// Channels of the preview at the full bit rate: 1 for a mono source, else 2.
    let fullChannels: Int
    /// The bit rate of the first attempt.
    package let firstBitRate: Int
    let minimumBitRate = AudioPipeline.minimumBitRate
    let monoBelow = AudioPipeline.monoBelow
    let maximumAttempts = AudioPipeline.maximumAttempts

    /// The channels of an attempt at `bitRate`.
    package func channels(at bitRate: Int) -> Int { bitRate < monoBelow ? 1 : fullChannels }
}
