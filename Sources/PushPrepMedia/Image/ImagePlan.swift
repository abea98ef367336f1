package import PushPrepCore

/// What the image pipeline does with one image, decided from its header and the settings
/// before a pixel is decoded: the orientation applied, the width of the first attempt, what is
/// made (a still, an animated GIF, or a movie at once) and the encoder's quality ladders.
///
/// ``ImagePipeline`` makes it with ``init(header:settings:)`` and then runs it; `inspect` makes
/// it with the same initialiser and prints it. Left to the run is what depends on results:
/// whether an alpha channel is really used (PNG or JPEG), and the smaller widths, fewer frames
/// or still frame tried when an attempt does not fit.
package struct ImagePlan: Equatable {
    /// What an animation becomes when no GIF of it fits, even smaller.
    package enum AnimationFallback: Equatable {
        /// A silent MP4 movie (`--gif-as-video auto`).
        case movie
        /// Every 2nd, then 4th frame, then the first frame as a still (`--gif-as-video never`).
        case fewerFramesThenStill
    }

    /// What is made.
    package enum Output: Equatable {
        /// A still image: JPEG, or PNG when the header has an alpha channel (`alpha`) and some
        /// pixel turns out not to be opaque.
        case still(alpha: Bool)
        /// An animated GIF, within `gifMaxMemory` bytes of decoded frames.
        case animation(fallback: AnimationFallback)
        /// A silent MP4 movie at once, for `reason`, without trying a GIF.
        case movie(reason: String)
    }

    /// EXIF orientation applied to the pixels (1: none).
    package let orientation: Int
    /// The source's size as it is meant to be seen (orientation applied).
    package let sourceWidth: Int
    package let sourceHeight: Int
    /// The width of the first attempt: `--width`, never upscaled.
    package let width: Int
    package let output: Output
    /// `--image-max-bytes`.
    package let limit: Int
    /// `--gif-max-memory`: bytes of decoded frames an animated GIF may need.
    package let gifMaxMemory: Int
    /// The attempts at one size for each format, best first (`--quality` down by steps).
    package let jpegLadder: [ImageEncodeStep.Attempt]
    let pngLadder: [ImageEncodeStep.Attempt]
    let gifLadder: [ImageEncodeStep.Attempt]
    /// A still is never shrunk below this width (then `cannot_fit`).
    let minimumWidth: Int
    /// `--max-pixels`, for the decoder.
    let maxPixels: Int
    /// The platforms' renditions to make beside the attachment (none for `--platforms ios`).
    package let renditions: [RenditionSpec]
    /// The peak memory of the run, from the header (``MemoryEstimate``).
    package private(set) var memory = MemoryEstimate(bytes: 0, basis: "")

    /// Whether the first attempt is smaller than the source.
    package var resizes: Bool { width < sourceWidth }

    /// The plan for the image whose header is `header`.
    package init(header: ImageHeader, settings: ProcessingSettings) {
        orientation = header.orientation
        sourceWidth = header.uprightWidth
        sourceHeight = header.uprightHeight
        width = min(settings.width, header.uprightWidth)
        if !header.isAnimated {
            output = .still(alpha: header.hasAlpha)
        } else if settings.gifAsVideo == .always {
            output = .movie(reason: "--gif-as-video always")
        } else {
            output = .animation(fallback: settings.gifAsVideo == .auto ? .movie : .fewerFramesThenStill)
        }
        limit = settings.imageMaxBytes
        gifMaxMemory = settings.gifMaxMemory
        jpegLadder = ImageEncodeStep.ladder(for: .jpeg, quality: settings.quality)
        pngLadder = ImageEncodeStep.ladder(for: .png, quality: settings.quality)
        gifLadder = ImageEncodeStep.ladder(for: .gif, quality: settings.quality)
        minimumWidth = ImagePipeline.minimumWidth
        maxPixels = settings.maxPixels
        renditions = RenditionSpec.specs(for: settings)
        memory = MemoryEstimate.image(header, plan: self, videoWidth: settings.videoWidth)
        let needed = RenditionStep.neededWidth(
            renditions, sourceWidth: header.uprightWidth, sourceHeight: header.uprightHeight)
        if !renditions.isEmpty && (header.isAnimated || needed > width) {
            // The renditions' own decode of the source (an animation's first frame, a picture
            // wider than the attachment's pixels): its estimate at the width they need adds to
            // the attachment's (pitm.avif, 4096x800: 37 MiB for ios, 66 MiB for ios,android).
            var alone = settings
            alone.platforms = PlatformSet([.ios])
            alone.width = max(1, needed)
            let height = (Double(header.uprightHeight) * Double(needed) / Double(max(1, header.uprightWidth))).rounded(
                .up)
            let second =
                header.isAnimated
                ? MemoryEstimate(bytes: MemoryEstimate.imageFixed + Double(needed) * height * 4, basis: "")
                : ImagePlan(header: header, settings: alone).memory
            memory = MemoryEstimate(
                bytes: Double(memory.bytes) + Double(second.bytes),
                basis: memory.basis + ", decoded again for the renditions")
        }
    }

    /// The attempts at one size in `format`.
    func ladder(for format: ImageOutputFormat) -> [ImageEncodeStep.Attempt] {
        switch format {
        case .jpeg: jpegLadder
        case .png: pngLadder
        case .gif: gifLadder
        }
    }
}
