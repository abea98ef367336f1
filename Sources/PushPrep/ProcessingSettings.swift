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

    /// The number of active cores.
    public static var defaultJobs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// The defaults.
    public init() {}

    private enum CodingKeys: String, CodingKey {
        case width, quality, imageMaxBytes, maxPixels, maxInputBytes, jobs, baseURL
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        width = try c.decode(Int.self, forKey: .width)
        quality = try c.decode(Int.self, forKey: .quality)
        imageMaxBytes = try c.decode(Int.self, forKey: .imageMaxBytes)
        maxPixels = try c.decode(Int.self, forKey: .maxPixels)
        maxInputBytes = try c.decode(Int.self, forKey: .maxInputBytes)
        jobs = try c.decode(Int.self, forKey: .jobs)
        baseURL = try c.decodeIfPresent(String.self, forKey: .baseURL)
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
    }

    /// Checks ranges; the CLI reports a failure as a usage error.
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
        try require(maxPixels >= 1, "--max-pixels must be positive, got \(maxPixels)")
        try require(maxInputBytes >= 1, "--max-input-bytes must be positive, got \(maxInputBytes)")
        try require((1...256).contains(jobs), "--jobs must be between 1 and 256, got \(jobs)")
        if let baseURL {
            try require(
                baseURL.hasPrefix("https://") || baseURL.hasPrefix("http://"),
                "--base-url must start with https:// (or http://), got \(baseURL)"
            )
        }
    }

    /// The settings that decide an image's output bytes, in a fixed textual form. `jobs` and
    /// `baseURL` are left out: they change neither the pixels nor the encoding.
    var imageFingerprint: String {
        "pipeline=\(Self.pipelineVersion);kind=image;width=\(width);quality=\(quality);"
            + "imageMaxBytes=\(imageMaxBytes);maxPixels=\(maxPixels);maxInputBytes=\(maxInputBytes)"
    }

    /// Bumped whenever the processing changes in a way that changes outputs, so that ids of
    /// old outputs are not reused for new ones.
    static let pipelineVersion = 1
}
