package import PushPrepCore

/// A video preview made ready for a notification (written to the path the caller gave).
package struct ProcessedVideo {
    /// Size as displayed (rotation applied).
    package let width: Int
    package let height: Int
    /// Seconds.
    package let duration: Double
    /// Video frames in the file.
    package let frames: Int
    /// Bytes of the file.
    let bytes: Int
    /// What the input is, from its headers; nil for an animation turned into a movie.
    package let input: MediaProbe?
    /// A JPEG of a representative frame at the displayed size.
    package let poster: (jpeg: [UInt8], width: Int, height: Int)?
    /// Seconds into the output of a representative frame (the poster's).
    package let thumbnailTime: Double
    /// "remux" or "transcode" first, then what changed.
    package let operations: [String]
    package let warnings: [ProcessingWarning]
    /// The plan the pipeline ran (the one `inspect` prints); nil for an animation turned into a
    /// movie, which has no headers to plan from.
    package let plan: VideoPlan?
}
