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
    @ExplicitNull public var width: Int?
    /// Height in pixels (after orientation), when known.
    @ExplicitNull public var height: Int?
    /// Duration in seconds, when known.
    @ExplicitNull public var duration: Double?
    /// The video codec's name (e.g. "h264"), for movies.
    public var videoCodec: String?
    /// The audio codec's name (e.g. "aac"), for movies and sounds.
    public var audioCodec: String?
    /// For a remote source: the final URL, after redirects. Written only for remote sources.
    public var url: String?
    /// For a remote source: the final HTTP status (304 when a cached output was revalidated).
    public var status: Int?

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
