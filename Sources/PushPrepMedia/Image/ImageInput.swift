internal import CVips
package import PushPrepCore

/// One image to process: where its bytes are and what they are.
package struct ImageInput {
    /// How libvips gets at the pixels.
    package enum Payload {
        /// A file libvips decodes itself (every allow-listed loader).
        case file(String)
        /// A BMP's whole content, decoded by PushPrep (libvips has no BMP loader of its own).
        case bitmap(Bitmap)
    }

    /// The detected type.
    package let type: MediaType
    /// The bytes.
    package let payload: Payload

    /// Every field.
    package init(
        type: MediaType, payload: Payload
    ) {
        self.type = type
        self.payload = payload
    }
}

/// A BMP's bytes and, once decoded, its pixels: decoded once, on the first width the fit ladder
/// tries, and resized from the same pixels for every other width.
package final class Bitmap {
    let bytes: [UInt8]
    private var decoded: VipsImageRef?

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The pixels as a libvips image, decoded on the first call (within `maxPixels`).
    func image(maxPixels: Int) throws(PushPrepError) -> VipsImageRef {
        if let decoded { return decoded }
        let bitmap = try BMPDecoder.decode(bytes, maxPixels: maxPixels)
        let raw = bitmap.pixels.withUnsafeBytes { buffer in
            vips_image_new_from_memory_copy(
                buffer.baseAddress, buffer.count, Int32(bitmap.width), Int32(bitmap.height), Int32(bitmap.bands),
                VIPS_FORMAT_UCHAR)
        }
        guard let raw else { throw PushPrepError(.corruptInput, "cannot wrap BMP pixels: \(takeVipsError())") }
        let image = VipsImageRef(owning: raw)
        decoded = image
        return image
    }
}
