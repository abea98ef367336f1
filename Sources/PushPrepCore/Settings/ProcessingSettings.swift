import Foundation

/// The effective settings of a run. Everything here that changes the output also changes
/// the attachment ids (see ``AttachmentID``).
public struct ProcessingSettings: Sendable, Codable, Equatable {
    /// Target width of images in pixels; images are never upscaled.
    public var width: Int = 1290
    /// JPEG quality to start from (1...100).
    public var quality: Int = 82
    /// The largest image output in bytes; never more than Apple's limit.
    public var imageMaxBytes: Int = AppleLimits.imageBytes
    /// Images with more pixels than this (all frames counted) are refused before decoding.
    public var maxPixels: Int = 100_000_000
    /// Inputs larger than this many bytes are refused before reading them.
    public var maxInputBytes: Int = 200_000_000
    /// How many inputs are processed at once.
    public var jobs: Int = ProcessingSettings.defaultJobs
    /// Prefix for the `url` of each output, or nil.
    public var baseURL: String?
    /// Where video previews start, in seconds.
    public var videoStart: Double = 0
    /// Length of video previews in seconds (the whole clip when shorter).
    public var videoSeconds: Double = 15
    /// Width of transcoded video in pixels; never upscaled.
    public var videoWidth: Int = 720
    /// The largest video output in bytes; never more than Apple's limit.
    public var videoMaxBytes: Int = AppleLimits.videoBytes
    /// Length of audio previews in seconds.
    public var audioSeconds: Double = 30
    /// The largest audio output in bytes; never more than Apple's limit.
    public var audioMaxBytes: Int = AppleLimits.audioBytes
    /// Deadline for processing one video or audio input, in seconds.
    public var timeout: Double = 120
    /// Whether animated images that cannot fit as an image become a silent MP4.
    public var gifAsVideo: GIFAsVideo = .auto
    /// The largest decoded size of an animated GIF output (width × height × 4 × frames): the
    /// service extension holds every frame decoded, and is killed above about 24 MB (12 MB on
    /// older iOS). Larger animations are shrunk, sent as a movie (`--gif-as-video auto`), thinned
    /// or sent as a still, exactly as for the byte limit.
    public var gifMaxMemory: Int = AppleLimits.olderExtensionMemoryBytes

    /// When an animated GIF or WebP becomes a movie attachment.
    public enum GIFAsVideo: String, Sendable, Codable, CaseIterable {
        /// Only when it cannot fit as an animated GIF.
        case auto
        /// Always.
        case always
        /// Never: reduce it, or fall back to its first frame.
        case never
    }

    /// The number of active cores.
    public static var defaultJobs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// The defaults.
    public init() {}

    private enum CodingKeys: String, CodingKey {
        case width, quality, imageMaxBytes, maxPixels, maxInputBytes, jobs, baseURL, videoStart, videoSeconds
        case videoWidth, videoMaxBytes, audioSeconds, audioMaxBytes, timeout, gifAsVideo, gifMaxMemory
    }

    /// Reads settings written by this or an earlier version: a key an earlier version did not
    /// write (a job queued before an upgrade) keeps its default.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func read<T: Decodable>(_ key: CodingKeys, _ value: inout T) throws {
            if let decoded = try c.decodeIfPresent(T.self, forKey: key) { value = decoded }
        }
        try read(.width, &width)
        try read(.quality, &quality)
        try read(.imageMaxBytes, &imageMaxBytes)
        try read(.maxPixels, &maxPixels)
        try read(.maxInputBytes, &maxInputBytes)
        try read(.jobs, &jobs)
        baseURL = try c.decodeIfPresent(String.self, forKey: .baseURL)
        try read(.videoStart, &videoStart)
        try read(.videoSeconds, &videoSeconds)
        try read(.videoWidth, &videoWidth)
        try read(.videoMaxBytes, &videoMaxBytes)
        try read(.audioSeconds, &audioSeconds)
        try read(.audioMaxBytes, &audioMaxBytes)
        try read(.timeout, &timeout)
        try read(.gifAsVideo, &gifAsVideo)
        try read(.gifMaxMemory, &gifMaxMemory)
    }

    /// Writes `baseURL` as an explicit null when unset, as the manifest format requires.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(width, forKey: .width)
        try c.encode(quality, forKey: .quality)
        try c.encode(imageMaxBytes, forKey: .imageMaxBytes)
        try c.encode(maxPixels, forKey: .maxPixels)
        try c.encode(maxInputBytes, forKey: .maxInputBytes)
        try c.encode(jobs, forKey: .jobs)
        try c.encode(baseURL, forKey: .baseURL)
        try c.encode(videoStart, forKey: .videoStart)
        try c.encode(videoSeconds, forKey: .videoSeconds)
        try c.encode(videoWidth, forKey: .videoWidth)
        try c.encode(videoMaxBytes, forKey: .videoMaxBytes)
        try c.encode(audioSeconds, forKey: .audioSeconds)
        try c.encode(audioMaxBytes, forKey: .audioMaxBytes)
        try c.encode(timeout, forKey: .timeout)
        try c.encode(gifAsVideo, forKey: .gifAsVideo)
        try c.encode(gifMaxMemory, forKey: .gifMaxMemory)
    }

    /// The latest `videoStart`: 24 hours, longer than any clip a preview is cut from.
    public static let maxVideoStart: Double = 86_400
    /// The highest `maxPixels`: 1 gigapixel, ten times the default (a 16384-pixel-wide
    /// output is the largest there is; imgproxy refuses 50 megapixels by default).
    public static let maxMaxPixels = 1_000_000_000
    /// The highest `maxInputBytes`: 10 GB, fifty times the default.
    public static let maxMaxInputBytes = 10_000_000_000

    /// Checks ranges (each number finite and bounded); the CLI reports a failure as a usage
    /// error, the worker fails a queued job whose settings fail it with `invalid_settings`.
    public func validate() throws(PushPrepError) {
        func require(_ condition: Bool, _ message: String) throws(PushPrepError) {
            if !condition { throw PushPrepError(.invalidSettings, message) }
        }
        try require((16...16384).contains(width), "--width must be between 16 and 16384, got \(width)")
        try require((1...100).contains(quality), "--quality must be between 1 and 100, got \(quality)")
        try require(
            (10_000...AppleLimits.imageBytes).contains(imageMaxBytes),
            "--image-max-bytes must be between 10000 and \(AppleLimits.imageBytes) (Apple's limit), got \(imageMaxBytes)"
        )
        // Every comparison is false for NaN, and each range has an upper bound: a non-finite or
        // huge number (a queued job's settings are JSON anyone could write) is refused here,
        // before it reaches a conversion to an integer time stamp that would trap.
        try require(
            videoStart >= 0 && videoStart <= Self.maxVideoStart,
            "--video-start must be in 0...\(Int(Self.maxVideoStart)) seconds, got \(videoStart)")
        try require(
            videoSeconds > 0 && videoSeconds <= 3600, "--video-seconds must be in (0, 3600], got \(videoSeconds)")
        try require((16...3840).contains(videoWidth), "--video-width must be between 16 and 3840, got \(videoWidth)")
        try require(
            (100_000...AppleLimits.videoBytes).contains(videoMaxBytes),
            "--video-max-bytes must be between 100000 and \(AppleLimits.videoBytes) (Apple's limit), got \(videoMaxBytes)"
        )
        try require(
            audioSeconds > 0 && audioSeconds <= 3600, "--audio-seconds must be in (0, 3600], got \(audioSeconds)")
        try require(
            (50_000...AppleLimits.audioBytes).contains(audioMaxBytes),
            "--audio-max-bytes must be between 50000 and \(AppleLimits.audioBytes) (Apple's limit), got \(audioMaxBytes)"
        )
        try require(
            (1_000_000...AppleLimits.extensionMemoryBytes).contains(gifMaxMemory),
            "--gif-max-memory must be between 1000000 and \(AppleLimits.extensionMemoryBytes) (the service extension's"
                + " budget), got \(gifMaxMemory)")
        try require(timeout > 0 && timeout <= 86_400, "--timeout must be in (0, 86400] seconds, got \(timeout)")
        try require(
            (1...Self.maxMaxPixels).contains(maxPixels),
            "--max-pixels must be between 1 and \(Self.maxMaxPixels), got \(maxPixels)")
        try require(
            (1...Self.maxMaxInputBytes).contains(maxInputBytes),
            "--max-input-bytes must be between 1 and \(Self.maxMaxInputBytes), got \(maxInputBytes)")
        try require((1...256).contains(jobs), "--jobs must be between 1 and 256, got \(jobs)")
        if let baseURL { try Self.validate(baseURL: baseURL) }
    }

    /// Checks a `--base-url` (also `payload`'s, which has no other settings): an http(s) URL
    /// with a host and no fragment (a file name joined after a fragment would never reach the
    /// server). A query is kept after each file name (see ``URLJoin``).
    public static func validate(baseURL: String) throws(PushPrepError) {
        guard baseURL.hasPrefix("https://") || baseURL.hasPrefix("http://") else {
            throw PushPrepError(.invalidSettings, "--base-url must start with https:// (or http://), got \(baseURL)")
        }
        guard let components = URLComponents(string: baseURL), let host = components.host, !host.isEmpty else {
            throw PushPrepError(.invalidSettings, "--base-url must be a URL with a host, got \(baseURL)")
        }
        guard components.fragment == nil else {
            throw PushPrepError(
                .invalidSettings,
                "--base-url must not have a fragment (#…): file names go after its path, got \(baseURL)")
        }
    }

    /// The settings that decide an image's output bytes, in a fixed textual form. `jobs` and
    /// `baseURL` are left out: they change neither the pixels nor the encoding.
    package var imageFingerprint: String {
        "pipeline=\(Self.pipelineVersion);kind=image;width=\(width);quality=\(quality);"
            + "imageMaxBytes=\(imageMaxBytes);maxPixels=\(maxPixels);maxInputBytes=\(maxInputBytes);"
            + "gifMaxMemory=\(gifMaxMemory)"
    }

    /// The settings that decide a video's output bytes (its audio track included).
    package var videoFingerprint: String {
        "pipeline=\(Self.pipelineVersion);kind=video;start=\(videoStart);seconds=\(videoSeconds);width=\(videoWidth);"
            + "videoMaxBytes=\(videoMaxBytes);maxPixels=\(maxPixels);maxInputBytes=\(maxInputBytes)"
    }

    /// The settings that decide an audio preview's bytes.
    package var audioFingerprint: String {
        "pipeline=\(Self.pipelineVersion);kind=audio;seconds=\(audioSeconds);audioMaxBytes=\(audioMaxBytes);"
            + "maxInputBytes=\(maxInputBytes)"
    }

    /// The settings that decide an animated image turned into a movie.
    package var animationVideoFingerprint: String {
        "\(imageFingerprint);asVideo=\(gifAsVideo.rawValue);videoWidth=\(videoWidth);videoMaxBytes=\(videoMaxBytes)"
    }

    /// Bumped whenever the processing changes in a way that changes outputs, so that ids of
    /// old outputs are not reused for new ones.
    /// 2: animated GIF outputs fit ``gifMaxMemory``.
    package static let pipelineVersion = 2
}
