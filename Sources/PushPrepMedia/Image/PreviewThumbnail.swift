internal import CVips
internal import CVipsShims
package import PushPrepCore

/// A small JPEG of an image file for a page that shows it (the batch report inlines it as a
/// `data:` URL): shrunk on load to fit a square, one page of an animation, 8-bit sRGB with any
/// transparency laid on white, every metadata block stripped.
package enum PreviewThumbnail {
    /// The JPEG and its size in pixels.
    package struct Output: Sendable {
        package let jpeg: [UInt8]
        package let width: Int
        package let height: Int
    }

    /// Fits the image at `path` (an output of PushPrep's: JPEG, PNG or GIF, or a movie's poster)
    /// into `width` × `height`, never enlarging, taking page `page` of an animation (clamped to
    /// the pages there are by the caller), at JPEG quality `quality`.
    package static func jpeg(
        ofImageAt path: String, width: Int, height: Int, page: Int = 0, quality: Int = 70
    ) throws(PushPrepError) -> Output {
        try VipsRuntime.start()
        let source = try ImageSource(path: path)
        // Only multi-page loaders (GIF) take `page`; the others refuse an option they lack.
        let options = page > 0 ? "page=\(page)" : ""
        var image = try VipsImageRef.make(.corruptInput, "cannot decode \(path) for its thumbnail") {
            cvipsshims_thumbnail_source(
                source.pointer, $0, Int32(clamping: width), Int32(clamping: height), options, 0)
        }
        if image.interpretation != VIPS_INTERPRETATION_sRGB {
            image = try image.colourspace(VIPS_INTERPRETATION_sRGB, "cannot convert the thumbnail to sRGB")
        }
        if image.format != VIPS_FORMAT_UCHAR {
            image = try image.cast(VIPS_FORMAT_UCHAR, "cannot convert the thumbnail to 8 bits")
        }
        if image.hasAlpha {
            let transparent = image
            image = try VipsImageRef.make(.corruptInput, "cannot flatten the thumbnail") {
                cvipsshims_flatten_white(transparent.pointer, $0)
            }
        }
        let jpeg = try ImageEncodeStep.encode(image, ImageEncodeStep.Attempt(format: .jpeg, quality: quality))
        return Output(jpeg: jpeg, width: image.width, height: image.height)
    }
}
