public import Foundation

/// The record of one run: what was produced from each input, ready for a push payload.
/// Written as `manifest.json`; its JSON Schema is `schema/manifest.schema.json`.
public struct Manifest: Sendable, Codable, Equatable {
    /// The manifest format version.
    public var version: Int = 1
    /// The program that wrote it.
    public var generator: Generator
    /// The effective settings of the run.
    public var settings: ProcessingSettings
    /// One entry per input, in input order.
    public var attachments: [ManifestEntry]

    /// Name and version of the writer.
    public struct Generator: Sendable, Codable, Equatable {
        public var name: String
        public var version: String
    }

    /// Creates a manifest written by this version of PushPrep.
    public init(settings: ProcessingSettings, attachments: [ManifestEntry]) {
        self.generator = Generator(name: "pushprep", version: PushPrepVersion.current)
        self.settings = settings
        self.attachments = attachments
    }

    /// The manifest as pretty-printed JSON with sorted keys (stable diffs, stable hashes).
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }
}

/// The version of PushPrep.
public enum PushPrepVersion {
    /// Semantic version of this build.
    public static let current = "0.1.0"
}

/// One input's outcome: a ready attachment or a failure.
public enum ManifestEntry: Sendable, Codable, Equatable {
    case ok(Attachment)
    case failed(Failure)

    /// The source as given.
    public var source: String {
        switch self {
        case .ok(let attachment): attachment.source
        case .failed(let failure): failure.source
        }
    }

    /// The attachment, when the input succeeded.
    public var attachment: Attachment? {
        if case .ok(let attachment) = self { return attachment }
        return nil
    }

    /// The failure, when the input failed.
    public var failure: Failure? {
        if case .failed(let failure) = self { return failure }
        return nil
    }

    private enum StatusKey: String, CodingKey { case status }

    public init(from decoder: any Decoder) throws {
        let status = try decoder.container(keyedBy: StatusKey.self).decode(String.self, forKey: .status)
        switch status {
        case "ok": self = .ok(try Attachment(from: decoder))
        case "failed": self = .failed(try Failure(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .status,
                in: try decoder.container(keyedBy: StatusKey.self),
                debugDescription: "status must be ok or failed, got \(status)"
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .ok(let attachment): try attachment.encode(to: encoder)
        case .failed(let failure): try failure.encode(to: encoder)
        }
    }
}

/// A processed attachment: the file in the out directory and everything the payload needs.
public struct Attachment: Sendable, Codable, Equatable {
    /// Deterministic id, `img-…`, `vid-…` or `aud-…`.
    public var id: String
    /// Always "ok".
    public var status: String = "ok"
    /// The source as given.
    public var source: String
    /// Image, video or audio.
    public var kind: MediaKind
    /// The output's name inside the out directory: `<id>.<ext>`.
    public var file: String
    /// Where the phone downloads the output: `--base-url` + `file` (a directory store),
    /// `--base-url` + the object's key, a presigned URL or the bucket's URL (an `s3://` store),
    /// or nil.
    public var url: String?
    /// When `url` stops working (a presigned URL's expiry), as ISO 8601 UTC; nil for a URL that
    /// does not expire. Kept as text so that it is written exactly as it was read.
    public var urlExpires: String?
    /// The output's UTI, also the type hint.
    public var uti: String
    /// The output's MIME type.
    public var mime: String
    /// The output's size in bytes.
    public var bytes: Int
    /// Lowercase hex SHA-256 of the output.
    public var sha256: String
    /// Output width in pixels (as displayed); nil for audio.
    public var width: Int?
    /// Output height in pixels (as displayed); nil for audio.
    public var height: Int?
    /// Duration in seconds (video and audio), else nil.
    public var duration: Double?
    /// Number of frames (1 for still images); nil for audio.
    public var frames: Int?
    /// The `UNNotificationAttachmentOptions…` for the phone; the type hint always.
    public var options: AttachmentOptions
    /// What the input was.
    public var input: InputInfo
    /// What was done, in order.
    public var operations: [String]
    /// Things the sender should know (mismatched extension, fallbacks taken).
    public var warnings: [String]
    /// A still image of a movie, next to it in the out directory.
    public var poster: Poster?

    /// Every field.
    public init(
        id: String, status: String = "ok", source: String, kind: MediaKind, file: String, url: String? = nil,
        urlExpires: String? = nil, uti: String, mime: String, bytes: Int, sha256: String, width: Int? = nil,
        height: Int? = nil,
        duration: Double? = nil, frames: Int? = nil, options: AttachmentOptions, input: InputInfo, operations: [String],
        warnings: [String], poster: Poster? = nil
    ) {
        self.id = id
        self.status = status
        self.source = source
        self.kind = kind
        self.file = file
        self.url = url
        self.urlExpires = urlExpires
        self.uti = uti
        self.mime = mime
        self.bytes = bytes
        self.sha256 = sha256
        self.width = width
        self.height = height
        self.duration = duration
        self.frames = frames
        self.options = options
        self.input = input
        self.operations = operations
        self.warnings = warnings
        self.poster = poster
    }

    /// The poster's URL: the one the manifest carries, else (a manifest written before posters
    /// had their own) the movie's URL with the poster's name; nil without a poster or a URL.
    public var posterURL: String? {
        guard let poster else { return nil }
        if let own = poster.url { return own }
        guard let url else { return nil }
        return URLJoin.sibling(of: url, named: poster.file)
    }

    /// Gives the output and its poster their URLs under `baseURL` (`--base-url`), or none.
    public mutating func setURLs(baseURL: String?) {
        setURLs(expires: nil) { name in baseURL.map { URLJoin.join($0, name) } }
    }

    /// Gives the output and its poster the URLs `link` makes from their file names (an object
    /// store's: a key under a base URL, a presigned URL, the bucket's URL), and records when
    /// they stop working (`expires`, nil for URLs that do not expire), so that the movie and its
    /// poster are never given URLs of two kinds.
    public mutating func setURLs<LinkError: Error>(
        expires: Date?, _ link: (_ file: String) throws(LinkError) -> String?
    ) throws(LinkError) {
        let expiry = expires.map { $0.formatted(.iso8601) }
        url = try link(file)
        urlExpires = url == nil ? nil : expiry
        if let name = poster?.file {
            let posterURL = try link(name)
            poster?.url = posterURL
            poster?.urlExpires = posterURL == nil ? nil : expiry
        }
    }

    /// A movie's poster frame.
    public struct Poster: Sendable, Codable, Equatable {
        /// The JPEG's name inside the out directory.
        public var file: String
        /// Where the phone downloads it (as the movie's `url`), or nil.
        public var url: String?
        /// When `url` stops working, as the movie's `urlExpires`.
        public var urlExpires: String?
        public var width: Int
        public var height: Int

        /// Every field.
        public init(
            file: String, url: String? = nil, urlExpires: String? = nil, width: Int, height: Int
        ) {
            self.file = file
            self.url = url
            self.urlExpires = urlExpires
            self.width = width
            self.height = height
        }

        private enum CodingKeys: String, CodingKey {
            case file, url, urlExpires, width, height
        }

        /// Writes `url` and `urlExpires` as explicit nulls, as the attachment's own.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(file, forKey: .file)
            try c.encode(url, forKey: .url)
            try c.encode(urlExpires, forKey: .urlExpires)
            try c.encode(width, forKey: .width)
            try c.encode(height, forKey: .height)
        }
    }

    /// Writes `duration`, `url` and `urlExpires` as explicit nulls, which the manifest format
    /// requires.
    private enum CodingKeys: String, CodingKey {
        case id, status, source, kind, file, url, urlExpires, uti, mime, bytes, sha256, width, height, duration, frames
        case options, input, operations, warnings, poster
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(status, forKey: .status)
        try c.encode(source, forKey: .source)
        try c.encode(kind, forKey: .kind)
        try c.encode(file, forKey: .file)
        try c.encode(url, forKey: .url)
        try c.encode(urlExpires, forKey: .urlExpires)
        try c.encode(uti, forKey: .uti)
        try c.encode(mime, forKey: .mime)
        try c.encode(bytes, forKey: .bytes)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(duration, forKey: .duration)
        try c.encode(frames, forKey: .frames)
        try c.encode(options, forKey: .options)
        try c.encode(input, forKey: .input)
        try c.encode(operations, forKey: .operations)
        try c.encode(warnings, forKey: .warnings)
        try c.encodeIfPresent(poster, forKey: .poster)
    }
}

/// The attachment options as the phone expects them in `UNNotificationAttachment`'s options.
public struct AttachmentOptions: Sendable, Codable, Equatable {
    /// `UNNotificationAttachmentOptionsTypeHintKey`: the UTI.
    public var typeHint: String
    /// `UNNotificationAttachmentOptionsThumbnailTimeKey`: seconds (movie) or frame (animation).
    public var thumbnailTime: Double?
    /// `UNNotificationAttachmentOptionsThumbnailHiddenKey`.
    public var thumbnailHidden: Bool?

    /// Options with a type hint only.
    public init(typeHint: String, thumbnailTime: Double? = nil, thumbnailHidden: Bool? = nil) {
        self.typeHint = typeHint
        self.thumbnailTime = thumbnailTime
        self.thumbnailHidden = thumbnailHidden
    }

    private enum CodingKeys: String, CodingKey {
        case typeHint = "UNNotificationAttachmentOptionsTypeHintKey"
        case thumbnailTime = "UNNotificationAttachmentOptionsThumbnailTimeKey"
        case thumbnailHidden = "UNNotificationAttachmentOptionsThumbnailHiddenKey"
    }
}

/// What the input was, before processing.
public struct InputInfo: Sendable, Codable, Equatable {
    /// The detected type (`jpeg`, `png`, …).
    public var type: String
    /// Size in bytes.
    public var bytes: Int
    /// Width in pixels (after orientation), when known.
    public var width: Int?
    /// Height in pixels (after orientation), when known.
    public var height: Int?
    /// Duration in seconds, when known.
    public var duration: Double?
    /// The video codec's name (e.g. "h264"), for movies.
    public var videoCodec: String?
    /// The audio codec's name (e.g. "aac"), for movies and sounds.
    public var audioCodec: String?
    /// For a remote source: the final URL, after redirects. Written only for remote sources.
    public var url: String?
    /// For a remote source: the final HTTP status (304 when a cached output was revalidated).
    public var status: Int?

    private enum CodingKeys: String, CodingKey {
        case type, bytes, width, height, duration, url, status, videoCodec, audioCodec
    }

    /// Creates the description of an input.
    public init(
        type: String, bytes: Int, width: Int?, height: Int?, duration: Double?, url: String? = nil, status: Int? = nil
    ) {
        self.type = type
        self.bytes = bytes
        self.width = width
        self.height = height
        self.duration = duration
        self.url = url
        self.status = status
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(bytes, forKey: .bytes)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(duration, forKey: .duration)
        try c.encodeIfPresent(videoCodec, forKey: .videoCodec)
        try c.encodeIfPresent(audioCodec, forKey: .audioCodec)
        try c.encodeIfPresent(url, forKey: .url)
        try c.encodeIfPresent(status, forKey: .status)
    }
}

/// A failed input.
public struct Failure: Sendable, Codable, Equatable {
    /// Always "failed".
    public var status: String = "failed"
    /// The source as given.
    public var source: String
    /// Why it failed.
    public var error: ErrorInfo

    /// Code and message of a failure.
    public struct ErrorInfo: Sendable, Codable, Equatable {
        /// The stable code (written as its raw value, `corrupt_input`).
        public var code: PushPrepError.Code
        /// The message.
        public var message: String
        /// Whether the same input would fail the same way again (``PushPrepError/isPermanent``):
        /// what a queue worker reads to fail the job at once rather than retry it. Not written
        /// to manifests; an entry read back from one has its code's permanence.
        public var isPermanent: Bool

        /// The code and message of `error`.
        public init(_ error: PushPrepError) {
            code = error.code
            message = error.message
            isPermanent = error.isPermanent
        }

        private enum CodingKeys: String, CodingKey {
            case code, message
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            code = try container.decode(PushPrepError.Code.self, forKey: .code)
            message = try container.decode(String.self, forKey: .message)
            isPermanent = code.isPermanent
        }
    }

    /// A failure from an error.
    public init(source: String, error: PushPrepError) {
        self.source = source
        self.error = ErrorInfo(error)
    }
}
