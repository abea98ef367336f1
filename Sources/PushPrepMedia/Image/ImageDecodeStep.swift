internal import CVips
internal import CVipsShims
import PushPrepCore

/// Step 2 of the image pipeline: decode with shrink-on-load straight to the target width
/// (never upscaling), apply the EXIF orientation to the pixels, and convert to 8-bit sRGB, with
/// the embedded ICC profile when it is a wide-gamut RGB one.
enum ImageDecodeStep {
    /// Decoded pixels at the target size, with the operations that produced them.
    struct Output {
        let image: VipsImageRef
        let operations: [String]
    }

    /// libvips' largest coordinate: passed as the height bound so that only the width decides.
    private static let unboundedHeight: Int32 = 10_000_000

    /// Above this many bytes of decoded pixels the image stays lazy (decoded again per encode
    /// attempt) instead of being held in memory, which keeps a worker's memory bounded.
    static let inMemoryLimit = 96 << 20

    /// How often the decoded pixels will be read, which decides whether they are held.
    enum Reads {
        /// Once, by one encoding: the pixels stay lazy and are decoded as the encoder consumes
        /// them. libvips then decodes and compresses on two threads at once (its write-behind
        /// sink), as vipsthumbnail and a bare vips_thumbnail + jpegsave loop do, and the whole
        /// image is never held.
        case once
        /// Several times (an animation's frames, the attempts of a ladder): decoded once, here,
        /// into memory (within ``inMemoryLimit``), so every read after is a copy, not a decode.
        case several
    }

    /// Decodes `input` to `targetWidth`. An image with an alpha channel is held in memory
    /// whatever `reads` says: ``AlphaStep`` reads its alpha before the encoder reads it all.
    /// `firstFrameOnly` decodes an animation's first frame alone (a rendition's still), not
    /// every frame.
    static func run(
        _ input: ImageInput, header: ImageHeader, width targetWidth: Int, maxPixels: Int, reads: Reads = .several,
        firstFrameOnly: Bool = false
    ) throws(PushPrepError) -> Output {
        let allFrames = header.isAnimated && !firstFrameOnly
        var operations: [String] = []
        var image: VipsImageRef
        switch input.payload {
        case .encoded(let source):
            // libvips 8.14 only honours fail_on for source thumbnails through the option string.
            let options = allFrames ? "n=-1,fail_on=error" : "fail_on=error"
            image = try VipsImageRef.make(.corruptInput, "cannot decode the \(input.type.rawValue) image") {
                cvipsshims_thumbnail_source(source.pointer, $0, Int32(targetWidth), unboundedHeight, options, 0)
            }
        case .bitmap(let bitmap):
            let decoded = try bitmap.image(maxPixels: maxPixels)
            image = try VipsImageRef.make(.corruptInput, "cannot resize the BMP image") {
                cvipsshims_thumbnail_image(decoded.pointer, $0, Int32(targetWidth), unboundedHeight)
            }
        }
        if header.orientation != 1 {
            operations.append("auto-rotated (EXIF orientation \(header.orientation))")
        }
        let outWidth = image.width
        let outHeight = allFrames ? (image.int(VIPS_META_PAGE_HEIGHT) ?? image.height) : image.height
        if outWidth != header.uprightWidth {
            operations.append("resized \(header.uprightWidth)x\(header.uprightHeight) to \(outWidth)x\(outHeight)")
        }

        if let profile = image.colourProfile, needsProfileConversion(image, profile) {
            // Wide-gamut RGB (Display P3 from iPhones, Adobe RGB, ProPhoto): the numbers mean
            // other colours than sRGB's, and the profile is stripped at encoding, so convert now,
            // on the shrunk pixels. sRGB and untagged images skip this (the common, free case).
            let name = profile.description.map { "\"\($0.prefix(64))\"" } ?? "embedded"
            var converted: UnsafeMutablePointer<VipsImage>? = nil
            if cvipsshims_icc_to_srgb(image.pointer, &converted) == 0, let converted {
                image = VipsImageRef(owning: converted)
                operations.append("converted \(name) profile to srgb")
            } else {
                // A profile lcms cannot use: libvips ignores it elsewhere too; the pixels are
                // still an image, so keep them as they are rather than fail the input.
                if let converted { g_object_unref(UnsafeMutableRawPointer(converted)) }
                operations.append("ignored the unusable \(name) profile (\(takeVipsError()))")
            }
        }

        let interpretation = image.interpretation
        if interpretation != VIPS_INTERPRETATION_sRGB || image.format != VIPS_FORMAT_UCHAR {
            let name = interpretationName(interpretation)
            image = try image.colourspace(VIPS_INTERPRETATION_sRGB, "cannot convert \(name) to sRGB")
            if image.format != VIPS_FORMAT_UCHAR {
                image = try image.cast(VIPS_FORMAT_UCHAR, "cannot convert to 8 bits per channel")
            }
            operations.append("converted \(name) to srgb")
        }

        let pixelBytes = image.width.multipliedReportingOverflow(by: image.height).partialValue * image.bands
        if (reads == .several || image.hasAlpha) && pixelBytes <= inMemoryLimit {
            // Decode once, here: every decoding error surfaces now as corrupt_input, and the
            // encode attempts that follow work from memory.
            guard let memory = vips_image_copy_memory(image.pointer) else {
                throw PushPrepError(.corruptInput, "cannot decode the \(input.type.rawValue) image: \(takeVipsError())")
            }
            image = VipsImageRef(owning: memory)
        }
        return Output(image: image, operations: operations)
    }

    /// Whether `image` carries an RGB profile other than sRGB that applies to its pixels.
    /// Grey and CMYK profiles are left out: CMYK is converted with its profile by the thumbnail
    /// already, and grey goes to sRGB through the sRGB curve (its profile is not applied).
    private static func needsProfileConversion(_ image: VipsImageRef, _ profile: ColourProfile) -> Bool {
        guard profile.isRGB, !profile.isSRGB, image.bands >= 3 else { return false }
        let interpretation = image.interpretation
        return interpretation == VIPS_INTERPRETATION_sRGB || interpretation == VIPS_INTERPRETATION_RGB16
    }

    static func interpretationName(_ interpretation: VipsInterpretation) -> String {
        guard let name = vips_enum_nick(vips_interpretation_get_type(), Int32(interpretation.rawValue)) else {
            return "unknown colourspace"
        }
        return String(cString: name).lowercased()
    }
}
