public import Foundation

/// The record of one run: what was produced from each input, ready for a push payload.
/// Written as `manifest.json`; its JSON Schema is `schema/manifest.schema.json`.
public struct Manifest: Sendable, Codable, Equatable {
    /// The manifest format version: 2 since attachments carry ``Attachment/renditions``; a
    /// version 1 manifest (none) still reads.
    public var version: Int = Manifest.currentVersion
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

    /// The version this PushPrep writes.
    public static let currentVersion = 2
    /// The versions this PushPrep reads.
    public static let readableVersions = 1...2

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
        for key in Renditions.Key.allCases {
            guard let name = renditions[key]?.file else { continue }
            let renditionURL = try link(name)
            renditions[key]?.url = renditionURL
            renditions[key]?.urlExpires = renditionURL == nil ? nil : expiry
        }
    }

    /// The platforms' renditions of this attachment (Android, web), keyed by name; empty for
    /// `--platforms ios`, for a sound, and in manifests of version 1.
    public var renditions: Renditions = Renditions()

    /// Every file this attachment put in the out directory besides ``file``, with its MIME type:
    /// the poster, then the renditions. What every store publishes, and what pruning removes.
    public var companionFiles: [(file: String, mime: String)] {
        var files: [(file: String, mime: String)] = []
        if let poster { files.append((poster.file, MediaType.jpeg.mime)) }
        for (_, rendition) in renditions.all { files.append((rendition.file, rendition.mime)) }
        return files
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
        case options, input, operations, warnings, poster, renditions
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        status = try c.decode(String.self, forKey: .status)
        source = try c.decode(String.self, forKey: .source)
        kind = try c.decode(MediaKind.self, forKey: .kind)
        file = try c.decode(String.self, forKey: .file)
        url = try c.decodeIfPresent(String.self, forKey: .url)
        urlExpires = try c.decodeIfPresent(String.self, forKey: .urlExpires)
        uti = try c.decode(String.self, forKey: .uti)
        mime = try c.decode(String.self, forKey: .mime)
        bytes = try c.decode(Int.self, forKey: .bytes)
        sha256 = try c.decode(String.self, forKey: .sha256)
        width = try c.decodeIfPresent(Int.self, forKey: .width)
        height = try c.decodeIfPresent(Int.self, forKey: .height)
        duration = try c.decodeIfPresent(Double.self, forKey: .duration)
        frames = try c.decodeIfPresent(Int.self, forKey: .frames)
        options = try c.decode(AttachmentOptions.self, forKey: .options)
        input = try c.decode(InputInfo.self, forKey: .input)
        operations = try c.decode([String].self, forKey: .operations)
        warnings = try c.decode([String].self, forKey: .warnings)
        poster = try c.decodeIfPresent(Poster.self, forKey: .poster)
        // A version 1 manifest has none.
        renditions = try c.decodeIfPresent(Renditions.self, forKey: .renditions) ?? Renditions()
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
        // Absent when there are none, so that `--platforms ios` writes entries as version 1 did.
        if !renditions.isEmpty { try c.encode(renditions, forKey: .renditions) }
    }
}

/// An attachment's renditions for the other platforms, each a file of its own in the out
/// directory, published beside the attachment.
public struct Renditions: Sendable, Codable, Equatable {
    /// Android's big picture (FCM `image`): 2:1, at most 1 MiB, JPEG or PNG.
    public var android: Rendition?
    /// The web push `image`: 2:1, at most 1 MB.
    public var web: Rendition?
    /// The web push `icon`: 192×192.
    public var webIcon: Rendition?

    /// None.
    public init(android: Rendition? = nil, web: Rendition? = nil, webIcon: Rendition? = nil) {
        self.android = android
        self.web = web
        self.webIcon = webIcon
    }

    /// The renditions' names in the manifest.
    public enum Key: String, Sendable, CaseIterable, CodingKey {
        case android, web, webIcon

        /// The platform whose push carries this rendition.
        public var platform: Platform {
            switch self {
            case .android: .android
            case .web, .webIcon: .web
            }
        }

        /// The prefix of its id: `and-`, `web-`, `wic-`.
        public var idPrefix: String {
            switch self {
            case .android: "and"
            case .web: "web"
            case .webIcon: "wic"
            }
        }
    }

    /// The rendition under `key`.
    public subscript(key: Key) -> Rendition? {
        get {
            switch key {
            case .android: android
            case .web: web
            case .webIcon: webIcon
            }
        }
        set {
            switch key {
            case .android: android = newValue
            case .web: web = newValue
            case .webIcon: webIcon = newValue
            }
        }
    }

    /// Those present, in the order of ``Key/allCases``.
    public var all: [(key: Key, rendition: Rendition)] {
        Key.allCases.compactMap { key in self[key].map { (key, $0) } }
    }

    /// Whether there are none.
    public var isEmpty: Bool { all.isEmpty }

    /// Whether `platform` has any rendition here.
    public func has(_ platform: Platform) -> Bool { all.contains { $0.key.platform == platform } }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        android = try c.decodeIfPresent(Rendition.self, forKey: .android)
        web = try c.decodeIfPresent(Rendition.self, forKey: .web)
        webIcon = try c.decodeIfPresent(Rendition.self, forKey: .webIcon)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        for (key, rendition) in all { try c.encode(rendition, forKey: key) }
    }
}

/// One platform's rendition of an attachment: a still picture made from the same source.
public struct Rendition: Sendable, Codable, Equatable {
    /// Deterministic id (`and-…`, `web-…`, `wic-…`): the source's bytes and the settings that
    /// shaped it.
    public var id: String
    /// The file's name in the out directory: `<id>.<ext>`.
    public var file: String
    /// Where the device downloads it, as the attachment's `url`; nil without one.
    public var url: String?
    /// When `url` stops working, as the attachment's `urlExpires`.
    public var urlExpires: String?
    /// `image/jpeg` or `image/png`.
    public var mime: String
    /// The file's size in bytes.
    public var bytes: Int
    /// Lowercase hex SHA-256 of the file.
    public var sha256: String
    public var width: Int
    public var height: Int
    /// The rectangle of the source (upright, in source pixels; a movie's displayed frame) that
    /// the rendition shows.
    public var crop: CropRectangle

    /// Every field.
    public init(
        id: String, file: String, url: String? = nil, urlExpires: String? = nil, mime: String, bytes: Int,
        sha256: String, width: Int, height: Int, crop: CropRectangle
    ) {
        self.id = id
        self.file = file
        self.url = url
        self.urlExpires = urlExpires
        self.mime = mime
        self.bytes = bytes
        self.sha256 = sha256
        self.width = width
        self.height = height
        self.crop = crop
    }

    private enum CodingKeys: String, CodingKey {
        case id, file, url, urlExpires, mime, bytes, sha256, width, height, crop
    }

    /// Writes `url` and `urlExpires` as explicit nulls, as the attachment's own.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(file, forKey: .file)
        try c.encode(url, forKey: .url)
        try c.encode(urlExpires, forKey: .urlExpires)
        try c.encode(mime, forKey: .mime)
        try c.encode(bytes, forKey: .bytes)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(crop, forKey: .crop)
    }
}

/// A rectangle of a source picture, in its pixels, from the top left.
public struct CropRectangle: Sendable, Codable, Equatable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The same rectangle in pixels `factor` times as large (a poster's crop in its movie's),
    /// kept inside a `bounds` picture.
    package func scaled(by factor: Double, within bounds: (width: Int, height: Int)) -> CropRectangle {
        guard factor != 1 else { return self }
        func scale(_ value: Int) -> Int { Int((Double(value) * factor).rounded()) }
        let x = min(max(0, bounds.width - 1), scale(x))
        let y = min(max(0, bounds.height - 1), scale(y))
        return CropRectangle(
            x: x, y: y, width: max(1, min(bounds.width - x, scale(width))),
            height: max(1, min(bounds.height - y, scale(height))))
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
