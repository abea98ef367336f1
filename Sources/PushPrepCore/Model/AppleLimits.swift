/// Apple's rules for `UNNotificationAttachment`, as PushPrep enforces them. "MB" is taken as
/// 10^6 bytes, the stricter reading.
public enum AppleLimits {
    /// Largest image attachment, in bytes.
    public static let imageBytes = 10_000_000
    /// Largest movie attachment, in bytes.
    public static let videoBytes = 50_000_000
    /// Largest audio attachment, in bytes.
    public static let audioBytes = 5_000_000

    /// The service extension's memory budget, in bytes: above about 24 MB it is killed.
    public static let extensionMemoryBytes = 24_000_000
    /// The service extension's memory budget on older iOS, in bytes.
    public static let olderExtensionMemoryBytes = 12_000_000

    /// The bytes an animated image takes decoded, as image code in an extension holds it: every
    /// frame, four bytes a pixel. The numbers come from a file's header (or a caller's
    /// ``ImageInspecting``): a negative one counts as 0 and a product past `Int.max` is `Int.max`,
    /// never a trap.
    public static func decodedBytes(width: Int, height: Int, frames: Int) -> Int {
        [width, height, 4, frames].reduce(1) { product, factor in
            let (result, overflow) = product.multipliedReportingOverflow(by: max(0, factor))
            return overflow ? .max : result
        }
    }

    /// The byte limit for a kind of attachment.
    public static func maxBytes(for kind: MediaKind) -> Int {
        switch kind {
        case .image: imageBytes
        case .video: videoBytes
        case .audio: audioBytes
        }
    }
}

/// The `UNNotificationAttachmentOptions…` keys, spelled as the phone expects them.
public enum AttachmentOptionKey {
    /// The UTI of the file (a string).
    public static let typeHint = "UNNotificationAttachmentOptionsTypeHintKey"
    /// Whether the thumbnail is hidden (a bool).
    public static let thumbnailHidden = "UNNotificationAttachmentOptionsThumbnailHiddenKey"
    /// The normalised clipping rectangle of the thumbnail (X, Y, Width, Height in 0...1).
    public static let thumbnailClippingRect = "UNNotificationAttachmentOptionsThumbnailClippingRectKey"
    /// Seconds into a movie, or a frame number of an animated image.
    public static let thumbnailTime = "UNNotificationAttachmentOptionsThumbnailTimeKey"
}
