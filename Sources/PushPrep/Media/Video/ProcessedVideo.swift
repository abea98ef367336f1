/// A video preview made ready for a notification (written to the path the caller gave).
struct ProcessedVideo {
    /// Size as displayed (rotation applied).
    let width: Int
    let height: Int
    /// Seconds.
    let duration: Double
    /// Video frames in the file.
    let frames: Int
    /// Bytes of the file.
    let bytes: Int
    /// What the input is, from its headers; nil for an animation turned into a movie.
    let input: MediaProbe?
    /// A JPEG of a representative frame at the displayed size.
    let poster: (jpeg: [UInt8], width: Int, height: Int)?
    /// Seconds into the output of a representative frame (the poster's).
    let thumbnailTime: Double
    /// "remux" or "transcode" first, then what changed.
    let operations: [String]
    let warnings: [String]
    /// The plan the pipeline ran (the one `inspect` prints); nil for an animation turned into a
    /// movie, which has no headers to plan from.
    let plan: VideoPlan?
}
