public import PushPrepCore

/// What pre-flight learns of a downloaded image from its bytes: its size as shown and how many
/// frames it has (an animated GIF's memory in the service extension depends on both).
public struct ImageFrames: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var frames: Int

    public init(width: Int, height: Int, frames: Int) {
        self.width = width
        self.height = height
        self.frames = frames
    }
}

/// Reads an image's ``ImageFrames``. Pre-flight receives one (``PreflightSession``'s `images`)
/// instead of reaching into the image pipeline; PushPrep's `LibvipsImageInspector` reads with libvips.
public protocol ImageInspecting: Sendable {
    /// The image's frames, or nil when it cannot be read.
    func frames(ofImageAt path: String, type: MediaType) async -> ImageFrames?
}
