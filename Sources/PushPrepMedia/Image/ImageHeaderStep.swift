internal import CVips
internal import CVipsShims
package import PushPrepCore

/// What an image's header says, read without decoding any pixels.
package struct ImageHeader {
    /// Stored width of one frame.
    let width: Int
    /// Stored height of one frame.
    let height: Int
    /// Number of frames (pages) in the file.
    package let frames: Int
    /// EXIF orientation (1...8; 1 when absent).
    package let orientation: Int
    /// Whether the image has an alpha channel.
    package let hasAlpha: Bool
    /// Whether PushPrep treats it as an animation (an animated GIF or WebP).
    package let isAnimated: Bool
    /// What the decoders' memory depends on (``MemoryEstimate``): the detected type, the bands
    /// and bytes per sample the loader gives, whether the file is progressive or interlaced
    /// (the decoder then holds the whole image), and a JPEG's chroma subsampling.
    package var layout = Layout()

    /// The facts of ``layout``.
    package struct Layout: Equatable, Sendable {
        package var type: MediaType = .jpeg
        package var bands = 3
        package var sampleBytes = 1
        /// A progressive JPEG or an interlaced (Adam7) PNG.
        package var interlaced = false
        /// "4:2:0", "4:4:4"…, for JPEGs that say.
        package var chromaSubsampling: String? = nil

        package init() {}
    }

    /// Width as the image is meant to be seen (orientations 5...8 swap the axes).
    package var uprightWidth: Int { (5...8).contains(orientation) ? height : width }
    /// Height as the image is meant to be seen.
    package var uprightHeight: Int { (5...8).contains(orientation) ? width : height }
    /// Frames that will be decoded: all of an animation, only the first of anything else.
    var decodedFrames: Int { isAnimated ? frames : 1 }
}

/// Step 1 of the image pipeline: read the header and refuse images over the pixel limit
/// before any pixel is decoded, so a decompression bomb costs a few kilobytes of reading.
package enum ImageHeaderStep {
    package static func run(_ input: ImageInput, maxPixels: Int) throws(PushPrepError) -> ImageHeader {
        let header: ImageHeader
        switch input.payload {
        case .bitmap(let bitmap):
            let bmp = try BMPDecoder.header(bitmap.bytes)
            var layout = ImageHeader.Layout()
            layout.type = input.type
            layout.bands = bmp.hasAlpha ? 4 : 3
            header = ImageHeader(
                width: bmp.width, height: bmp.height, frames: 1, orientation: 1, hasAlpha: bmp.hasAlpha,
                isAnimated: false, layout: layout)
        case .encoded(let source):
            let image = try ImageHeaderReader.open(source, type: input.type)
            let frames = max(1, image.int("n-pages") ?? 1)
            let orientation = image.int(VIPS_META_ORIENTATION).flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
            header = ImageHeader(
                width: image.width,
                height: image.height,
                frames: frames,
                orientation: orientation,
                hasAlpha: image.hasAlpha,
                isAnimated: frames > 1 && (input.type == .gif || input.type == .webp),
                layout: layout(image, type: input.type)
            )
        }
        try checkPixels(header, maxPixels: maxPixels)
        return header
    }

    private static func layout(_ image: VipsImageRef, type: MediaType) -> ImageHeader.Layout {
        var layout = ImageHeader.Layout()
        layout.type = type
        layout.bands = image.bands
        layout.sampleBytes = Int(vips_format_sizeof(image.format))
        layout.interlaced = (image.int("interlaced") ?? 0) != 0
        layout.chromaSubsampling = image.string("jpeg-chroma-subsample")
        return layout
    }

    package static func checkPixels(_ header: ImageHeader, maxPixels: Int) throws(PushPrepError) {
        let (area, overflow1) = header.width.multipliedReportingOverflow(by: header.height)
        let (pixels, overflow2) = area.multipliedReportingOverflow(by: header.decodedFrames)
        if overflow1 || overflow2 || pixels > maxPixels {
            let frames = header.decodedFrames > 1 ? " x \(header.decodedFrames) frames" : ""
            throw PushPrepError(
                .tooManyPixels,
                "image is \(header.width)x\(header.height)\(frames) pixels, over the limit of \(maxPixels) pixels (--max-pixels)"
            )
        }
    }
}

/// Reads an image's header only, from its source.
package enum ImageHeaderReader {
    package static func open(_ source: ImageSource, type: MediaType? = nil) throws(PushPrepError) -> VipsImageRef {
        guard let raw = cvipsshims_header_from_source(source.pointer, "fail_on=error") else {
            throw vipsError(.corruptInput, "cannot read the \(type?.rawValue ?? "image") header")
        }
        return VipsImageRef(owning: raw)
    }
}
