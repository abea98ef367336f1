internal import CVips
internal import CVipsShims
package import PushPrepCore

/// The formats an image attachment is written in.
package enum ImageOutputFormat: String {
    case jpeg, png, gif

    package var mediaType: MediaType {
        switch self {
        case .jpeg: .jpeg
        case .png: .png
        case .gif: .gif
        }
    }
}

/// Step 4 of the image pipeline: encode, with every metadata block stripped (EXIF, GPS, XMP,
/// IPTC, comments, ICC: the pixels are already sRGB).
package enum ImageEncodeStep {
    /// One encoding attempt.
    package struct Attempt: Equatable {
        let format: ImageOutputFormat
        /// JPEG quality, or the palette quality of a quantised PNG; nil for lossless PNG/GIF.
        package let quality: Int?
        /// Quantise a PNG to a palette (smaller, lossy).
        var palette = false
    }

    static func encode(_ image: VipsImageRef, _ attempt: Attempt) throws(PushPrepError) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer? = nil
        var length = 0
        let what = "cannot encode \(attempt.format.rawValue)"
        // A lazily decoded image decodes during the save, so a failure here may be the input's.
        switch attempt.format {
        case .jpeg:
            try vipsCall(.corruptInput, what) {
                cvipsshims_jpegsave_buffer(image.pointer, &buffer, &length, Int32(attempt.quality ?? 82), 1)
            }
        case .png:
            try vipsCall(.corruptInput, what) {
                cvipsshims_pngsave_buffer(
                    image.pointer, &buffer, &length, 6, attempt.palette ? 1 : 0, Int32(attempt.quality ?? 100), 8, 1)
            }
        case .gif:
            try vipsCall(.corruptInput, what) {
                cvipsshims_gifsave_buffer(image.pointer, &buffer, &length, 8, 7, 0, 1)
            }
        }
        return takeVipsBuffer(buffer, length)
    }

    /// The attempts to try at one size, best first: quality steps down by 10 to a floor of 40
    /// (or the requested quality, if lower).
    static func ladder(for format: ImageOutputFormat, quality: Int) -> [Attempt] {
        switch format {
        case .jpeg:
            return qualitySteps(from: quality).map { Attempt(format: .jpeg, quality: $0) }
        case .png:
            return [Attempt(format: .png, quality: nil)]
                + qualitySteps(from: quality).map { Attempt(format: .png, quality: $0, palette: true) }
        case .gif:
            return [Attempt(format: .gif, quality: nil)]
        }
    }

    private static func qualitySteps(from quality: Int) -> [Int] {
        let floor = min(quality, 40)
        var steps = Array(stride(from: quality, through: floor, by: -10))
        if steps.last != floor { steps.append(floor) }
        return steps
    }
}
