import Foundation

/// The effective settings of a run. Everything here that changes the output also changes
/// the attachment ids (see ``AttachmentID``).
///
/// Each setting is declared once, in ``Declared``: its JSON key, CLI option, help, default and
/// the values it accepts. The JSON coding, ``validate()`` and the CLI's options follow from that
/// table, so the CLI, the library and queued jobs cannot drift apart; the fingerprints at the
/// end name the settings that enter each kind of output's id.
public struct ProcessingSettings: Sendable, Codable, Equatable {
    /// Target width of images in pixels; images are never upscaled.
    public var width: Int = Declared.width.defaultValue
    /// JPEG quality to start from (1...100).
    public var quality: Int = Declared.quality.defaultValue
    /// The largest image output in bytes; never more than Apple's limit.
    public var imageMaxBytes: Int = Declared.imageMaxBytes.defaultValue
    /// Images with more pixels than this (all frames counted) are refused before decoding.
    public var maxPixels: Int = Declared.maxPixels.defaultValue
    /// Inputs larger than this many bytes are refused before reading them.
    public var maxInputBytes: Int = Declared.maxInputBytes.defaultValue
    /// How many inputs are processed at once.
    public var jobs: Int = Declared.jobs.defaultValue
    /// Prefix for the `url` of each output, or nil.
    public var baseURL: String? = Declared.baseURL.defaultValue
    /// Where video previews start, in seconds.
    public var videoStart: Double = Declared.videoStart.defaultValue
    /// Length of video previews in seconds (the whole clip when shorter).
    public var videoSeconds: Double = Declared.videoSeconds.defaultValue
    /// Width of transcoded video in pixels; never upscaled.
    public var videoWidth: Int = Declared.videoWidth.defaultValue
    /// The largest video output in bytes; never more than Apple's limit.
    public var videoMaxBytes: Int = Declared.videoMaxBytes.defaultValue
    /// Length of audio previews in seconds.
    public var audioSeconds: Double = Declared.audioSeconds.defaultValue
    /// The largest audio output in bytes; never more than Apple's limit.
    public var audioMaxBytes: Int = Declared.audioMaxBytes.defaultValue
    /// Deadline for processing one video or audio input, in seconds.
    public var timeout: Double = Declared.timeout.defaultValue
    /// Whether animated images that cannot fit as an image become a silent MP4.
    public var gifAsVideo: GIFAsVideo = Declared.gifAsVideo.defaultValue
    /// The largest decoded size of an animated GIF output (width × height × 4 × frames): the
    /// service extension holds every frame decoded, and is killed above about 24 MB (12 MB on
    /// older iOS). Larger animations are shrunk, sent as a movie (`--gif-as-video auto`), thinned
    /// or sent as a still, exactly as for the byte limit.
    public var gifMaxMemory: Int = Declared.gifMaxMemory.defaultValue
    /// The platforms each attachment is prepared for: iOS is the attachment itself, Android and
    /// web get renditions beside it (``Attachment/renditions``).
    public var platforms: PlatformSet = Declared.platforms.defaultValue
    /// Width of the Android rendition (2:1, so its height is half); never upscaled.
    public var androidWidth: Int = Declared.androidWidth.defaultValue
    /// The largest Android rendition in bytes; never more than FCM's 1 MiB.
    public var androidMaxBytes: Int = Declared.androidMaxBytes.defaultValue
    /// Width of the web push image (2:1); never upscaled.
    public var webWidth: Int = Declared.webWidth.defaultValue
    /// Where the 2:1 crops of the Android and web renditions fall.
    public var crop: CropStrategy = Declared.crop.defaultValue
    /// A focal point that the crops are centred on, whatever ``crop`` says; nil for none.
    public var focus: FocalPoint? = Declared.focus.defaultValue

    /// When an animated GIF or WebP becomes a movie attachment.
    public enum GIFAsVideo: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
        /// Only when it cannot fit as an animated GIF.
        case auto
        /// Always.
        case always
        /// Never: reduce it, or fall back to its first frame.
        case never

        /// The raw value, as the CLI, the JSON and the fingerprints spell it.
        public var description: String { rawValue }
    }

    /// The number of active cores.
    public static var defaultJobs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// The defaults.
    public init() {}

    /// The latest `videoStart`: 24 hours, longer than any clip a preview is cut from.
    public static let maxVideoStart: Double = 86_400
    /// The highest `maxPixels`: 1 gigapixel, ten times the default (a 16384-pixel-wide
    /// output is the largest there is; imgproxy refuses 50 megapixels by default).
    public static let maxMaxPixels = 1_000_000_000
    /// The highest `maxInputBytes`: 10 GB, fifty times the default.
    public static let maxMaxInputBytes = 10_000_000_000

    /// Every setting, declared once. ``validate()`` checks them, and ``init(from:)`` reads
    /// them, in this order: the first failure is the one reported.
    ///
    /// Every number is bounded and every comparison is false for NaN: a non-finite or huge
    /// number (a queued job's settings are JSON anyone could write) is refused before it
    /// reaches a conversion to an integer time stamp that would trap.
    public enum Declared {
        public static let width = Setting(
            \.width, key: "width", option: "width", default: 1290,
            help: "Target image width in pixels; never upscaled.", accepts: .between(16...16384))
        public static let quality = Setting(
            \.quality, key: "quality", option: "quality", default: 82,
            help: "JPEG quality to start from.", accepts: .between(1...100))
        public static let imageMaxBytes = Setting(
            \.imageMaxBytes, key: "imageMaxBytes", option: "image-max-bytes", default: AppleLimits.imageBytes,
            help: "Largest image output in bytes.",
            accepts: .between(10_000...AppleLimits.imageBytes, "Apple's limit"))
        public static let videoStart = Setting(
            \.videoStart, key: "videoStart", option: "video-start", default: 0,
            help: "Where video previews start, in seconds.", accepts: .within(0...maxVideoStart, "seconds"))
        public static let videoSeconds = Setting(
            \.videoSeconds, key: "videoSeconds", option: "video-seconds", default: 15,
            help: "Length of video previews in seconds (whole clip if shorter).", accepts: .positive(atMost: 3600))
        public static let videoWidth = Setting(
            \.videoWidth, key: "videoWidth", option: "video-width", default: 720,
            help: "Width of transcoded video in pixels; never upscaled.", accepts: .between(16...3840))
        public static let videoMaxBytes = Setting(
            \.videoMaxBytes, key: "videoMaxBytes", option: "video-max-bytes", default: AppleLimits.videoBytes,
            help: "Largest video output in bytes.",
            accepts: .between(100_000...AppleLimits.videoBytes, "Apple's limit"))
        public static let audioSeconds = Setting(
            \.audioSeconds, key: "audioSeconds", option: "audio-seconds", default: 30,
            help: "Length of audio previews in seconds.", accepts: .positive(atMost: 3600))
        public static let audioMaxBytes = Setting(
            \.audioMaxBytes, key: "audioMaxBytes", option: "audio-max-bytes", default: AppleLimits.audioBytes,
            help: "Largest audio output in bytes.",
            accepts: .between(50_000...AppleLimits.audioBytes, "Apple's limit"))
        public static let gifAsVideo = Setting(
            \.gifAsVideo, key: "gifAsVideo", option: "gif-as-video", default: GIFAsVideo.auto,
            help: "When an animated GIF/WebP becomes an MP4: auto (when it cannot fit as an image), always, never.")
        public static let gifMaxMemory = Setting(
            \.gifMaxMemory, key: "gifMaxMemory", option: "gif-max-memory",
            default: AppleLimits.olderExtensionMemoryBytes,
            help: "Largest decoded size of an animated GIF output in bytes, width x height x 4 x frames.",
            accepts: .between(1_000_000...AppleLimits.extensionMemoryBytes, "the service extension's budget"))
        public static let timeout = Setting(
            \.timeout, key: "timeout", option: "timeout", default: 120,
            help: "Deadline for processing one video or audio input, in seconds.",
            accepts: .positive(atMost: 86_400, "seconds"))
        public static let maxPixels = Setting(
            \.maxPixels, key: "maxPixels", option: "max-pixels", default: 100_000_000,
            help: "Refuse images with more pixels than this, all frames counted.",
            accepts: .between(1...maxMaxPixels))
        public static let maxInputBytes = Setting(
            \.maxInputBytes, key: "maxInputBytes", option: "max-input-bytes", default: 200_000_000,
            help: "Refuse inputs larger than this many bytes.", accepts: .between(1...maxMaxInputBytes))
        public static let jobs = Setting(
            \.jobs, key: "jobs", option: "jobs", default: defaultJobs,
            help: "How many inputs to process at once (default: the number of cores).", accepts: .between(1...256))
        public static let platforms = Setting(
            \.platforms, key: "platforms", option: "platforms", default: PlatformSet.default,
            help: "The platforms to prepare for, among ios, android and web, separated by commas;"
                + " ios is the attachment itself, android and web get renditions beside it.",
            accepts: .values("a list of ios, android and web that includes ios") { $0.contains(.ios) })
        public static let androidWidth = Setting(
            \.androidWidth, key: "androidWidth", option: "android-width", default: 1024,
            help: "Width of the Android rendition in pixels (2:1, FCM's big picture); never upscaled.",
            accepts: .between(AndroidRules.minWidth...AndroidRules.maxWidth))
        public static let androidMaxBytes = Setting(
            \.androidMaxBytes, key: "androidMaxBytes", option: "android-max-bytes", default: AndroidRules.maxBytes,
            help: "Largest Android rendition in bytes.",
            accepts: .between(50_000...AndroidRules.maxBytes, "FCM's download cap"))
        public static let webWidth = Setting(
            \.webWidth, key: "webWidth", option: "web-width", default: WebRules.imageWidth,
            help: "Width of the web push image in pixels (2:1); never upscaled.",
            accepts: .between(WebRules.iconSize...2048))
        public static let crop = Setting(
            \.crop, key: "crop", option: "crop", default: CropStrategy.attention,
            help: "Where the Android and web 2:1 crops fall: attention (libvips' saliency), centre,"
                + " or fit (no crop: the whole picture at its own ratio).")
        public static let focus = Setting<FocalPoint?>(
            \.focus, key: "focus", option: "focus", default: nil,
            help:
                "A focal point x,y (each 0...1 from the top left) that the crops are centred on, whatever --crop says.")
        public static let baseURL = Setting<String?>(
            \.baseURL, key: "baseURL", option: "base-url", default: nil,
            help: "URL prefix of the out directory; each entry's url is this + its file.",
            accepts: Accepted(text: "an http(s) URL with a host and no fragment") { (url, _) throws(PushPrepError) in
                if let url { try ProcessingSettings.validate(baseURL: url) }
            })

        /// Every setting above, in order: what the coding, the validation and the tests go through.
        package static let all: [any AnySetting] = [
            width, quality, imageMaxBytes, videoStart, videoSeconds, videoWidth, videoMaxBytes, audioSeconds,
            audioMaxBytes, gifAsVideo, gifMaxMemory, timeout, maxPixels, maxInputBytes, jobs, baseURL, platforms,
            androidWidth, androidMaxBytes, webWidth, crop, focus,
        ]
    }

    /// Reads settings written by this or an earlier version: a key an earlier version did not
    /// write (a job queued before an upgrade), or a null, keeps its default.
    public init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        for setting in Declared.all { try setting.decode(from: container, into: &self) }
    }

    /// Writes every setting, `baseURL` as an explicit null when unset, as the manifest format
    /// requires.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        for setting in Declared.all { try setting.encode(self, into: &container) }
    }

    /// Checks every setting against what it accepts (see ``Declared``); the CLI reports a
    /// failure as a usage error, the worker fails a queued job whose settings fail it with
    /// `invalid_settings`. Processing takes ``Validated`` settings, so this runs once where
    /// settings come in (a run, a job), not for each input.
    public func validate() throws(PushPrepError) {
        for setting in Declared.all { try setting.validate(self) }
    }

    /// These settings, once ``validate()`` has passed them.
    public func validated() throws(PushPrepError) -> Validated {
        try validate()
        return Validated(self)
    }

    /// Settings that passed ``validate()``: what processing an input takes, so that a run or a
    /// job checks its settings once and every input after that relies on them.
    public struct Validated: Sendable, Equatable {
        /// The settings.
        public let settings: ProcessingSettings

        fileprivate init(_ settings: ProcessingSettings) { self.settings = settings }
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

    // MARK: - Fingerprints

    /// The settings that decide an image's output bytes. Attachment ids hash the fingerprint
    /// text, so each list keeps the order and the labels the ids were first made with; a
    /// setting that changes no output (`jobs`, `baseURL`, `timeout`) is in none.
    static let imageFields = [
        Declared.width.field(), Declared.quality.field(), Declared.imageMaxBytes.field(),
        Declared.maxPixels.field(), Declared.maxInputBytes.field(), Declared.gifMaxMemory.field(),
    ]

    /// The settings that decide a video's output bytes (its audio track included).
    static let videoFields = [
        Declared.videoStart.field("start"), Declared.videoSeconds.field("seconds"), Declared.videoWidth.field("width"),
        Declared.videoMaxBytes.field(), Declared.maxPixels.field(), Declared.maxInputBytes.field(),
    ]

    /// The settings that decide an audio preview's bytes.
    static let audioFields = [
        Declared.audioSeconds.field("seconds"), Declared.audioMaxBytes.field(), Declared.maxInputBytes.field(),
    ]

    /// The settings that decide an animated image turned into a movie: the image's, then the
    /// movie's.
    static let animationVideoFields =
        imageFields + [
            Declared.gifAsVideo.field("asVideo"), Declared.videoWidth.field(), Declared.videoMaxBytes.field(),
        ]

    /// The settings that decide an Android rendition, after its source's own fingerprint (a
    /// movie's poster depends on where the preview starts).
    static let androidFields = [
        Declared.androidWidth.field("width"), Declared.androidMaxBytes.field("maxBytes"),
        Declared.quality.field(), Declared.crop.field(), focusField,
    ]

    /// The settings that decide a web rendition (the image and the icon), after its source's own.
    static let webFields = [
        Declared.webWidth.field("width"), Declared.quality.field(), Declared.crop.field(), focusField,
    ]

    /// `focus=x,y`, or `focus=none`.
    static let focusField = FingerprintField(label: "focus") { $0.focus?.description ?? "none" }

    /// The fingerprint of the rendition `key` of an output whose fingerprint is `source`.
    package func renditionFingerprint(_ key: Renditions.Key, source: String) -> String {
        let fields = key.platform == .web ? Self.webFields : Self.androidFields
        return source + ";" + fingerprint(kind: "rendition-\(key.rawValue)", fields)
    }

    /// `pipeline=…;kind=…;label=value;…`: the settings that decide an output, in a fixed textual
    /// form.
    private func fingerprint(kind: String, _ fields: [FingerprintField]) -> String {
        (["pipeline=\(Self.pipelineVersion)", "kind=\(kind)"] + fields.map { "\($0.label)=\($0.text(self))" })
            .joined(separator: ";")
    }

    /// An image's fingerprint.
    package var imageFingerprint: String { fingerprint(kind: "image", Self.imageFields) }

    /// A video's fingerprint.
    package var videoFingerprint: String { fingerprint(kind: "video", Self.videoFields) }

    /// An audio preview's fingerprint.
    package var audioFingerprint: String { fingerprint(kind: "audio", Self.audioFields) }

    /// The fingerprint of an animated image turned into a movie: the image's, extended.
    package var animationVideoFingerprint: String { fingerprint(kind: "image", Self.animationVideoFields) }

    /// Bumped whenever the processing changes in a way that changes outputs, so that ids of
    /// old outputs are not reused for new ones.
    /// 2: animated GIF outputs fit ``gifMaxMemory``.
    package static let pipelineVersion = 2
}
