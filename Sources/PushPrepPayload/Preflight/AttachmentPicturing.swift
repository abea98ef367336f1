public import PushPrepCore

/// The small pictures of a downloaded attachment that a page previewing the notification draws
/// (`preflight --fetch --report`): `data:` URLs of JPEGs, as the batch report inlines them.
public struct AttachmentPicture: Sendable, Equatable {
    /// The picture's size in pixels as shown (upright): the thumbnail's crop needs its proportions.
    public var width: Int
    public var height: Int
    /// The expanded view's copy, a `data:image/jpeg` URL.
    public var expanded: String
    /// The banner's smaller copy (same proportions), a `data:image/jpeg` URL.
    public var banner: String
    /// The JPEG bytes of both copies: what counts against a page's budget.
    public var bytes: Int
    /// The frames of the pictured file (1 for a still). After `--fix` the file may be the
    /// processed output rather than the download (a still or a poster in place of an animation
    /// or a movie), so the preview reads the frames, and the kind (an image), from here.
    public var frames: Int

    public init(width: Int, height: Int, expanded: String, banner: String, bytes: Int, frames: Int = 1) {
        self.width = width
        self.height = height
        self.expanded = expanded
        self.banner = banner
        self.bytes = bytes
        self.frames = frames
    }
}

/// Makes an ``AttachmentPicture`` of a downloaded image. Pre-flight receives one for a report
/// instead of reaching into the image pipeline (as it does ``ImageInspecting``); PushPrep's
/// `PreflightPictures` makes them with libvips, the way the batch report's thumbnails are made.
public protocol AttachmentPicturing: Sendable {
    /// The pictures of the image at `path` (its frame `frame` when animated, clamped to the
    /// frames there are), or nil when it cannot be read. Called while the download still exists;
    /// it must read the file from disk, not hold it whole.
    func picture(ofImageAt path: String, type: MediaType, frame: Int) async -> AttachmentPicture?
}
