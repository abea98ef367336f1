public import Foundation

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
    @ExplicitNull public var url: String?
    /// When `url` stops working (a presigned URL's expiry), as ISO 8601 UTC; nil for a URL that
    /// does not expire. Kept as text so that it is written exactly as it was read.
    @ExplicitNull public var urlExpires: String?
    /// The output's UTI, also the type hint.
    public var uti: String
    /// The output's MIME type.
    public var mime: String
    /// The output's size in bytes.
    public var bytes: Int
    /// Lowercase hex SHA-256 of the output.
    public var sha256: String
    /// Output width in pixels (as displayed); nil for audio.
    @ExplicitNull public var width: Int?
    /// Output height in pixels (as displayed); nil for audio.
    @ExplicitNull public var height: Int?
    /// Duration in seconds (video and audio), else nil.
    @ExplicitNull public var duration: Double?
    /// Number of frames (1 for still images); nil for audio.
    @ExplicitNull public var frames: Int?
    /// The `UNNotificationAttachmentOptions…` for the phone; the type hint always.
    public var options: AttachmentOptions
    /// What the input was.
    public var input: InputInfo
    /// What was done, in order.
    public var operations: [String]
    /// Things the sender should know (mismatched extension, fallbacks taken), each with its kind.
    public var warnings: [AttachmentWarning]
    /// A still image of a movie, next to it in the out directory.
    public var poster: Poster?

    /// Every field.
    public init(
        id: String, status: String = "ok", source: String, kind: MediaKind, file: String, url: String? = nil,
        urlExpires: String? = nil, uti: String, mime: String, bytes: Int, sha256: String, width: Int? = nil,
        height: Int? = nil,
        duration: Double? = nil, frames: Int? = nil, options: AttachmentOptions, input: InputInfo, operations: [String],
        warnings: [AttachmentWarning], poster: Poster? = nil
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
    /// `--platforms ios`, for a sound, and in manifests of version 1 (read as empty when absent,
    /// and not written when empty, so that `--platforms ios` writes entries as version 1 did:
    /// see ``Renditions``' coding).
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
        @ExplicitNull public var url: String?
        /// When `url` stops working, as the movie's `urlExpires`.
        @ExplicitNull public var urlExpires: String?
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
    }
}
