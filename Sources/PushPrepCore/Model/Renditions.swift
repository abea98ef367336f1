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
    @ExplicitNull public var url: String?
    /// When `url` stops working, as the attachment's `urlExpires`.
    @ExplicitNull public var urlExpires: String?
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

extension KeyedDecodingContainer {
    /// An attachment's renditions: none when the key is absent (a version 1 manifest).
    public func decode(_ type: Renditions.Type, forKey key: Key) throws -> Renditions {
        try decodeIfPresent(Renditions.self, forKey: key) ?? Renditions()
    }
}

extension KeyedEncodingContainer {
    /// An attachment's renditions, left out when there are none, so that `--platforms ios`
    /// writes entries as version 1 did.
    public mutating func encode(_ value: Renditions, forKey key: Key) throws {
        if !value.isEmpty { try encodeIfPresent(Optional(value), forKey: key) }
    }
}
