internal import CVips
package import PushPrepCore

/// One image to process: where its bytes are and what they are.
package struct ImageInput {
    /// How libvips gets at the pixels.
    package enum Payload {
        /// An encoded image libvips decodes itself (every allow-listed loader), read through
        /// one source for the header and every decode.
        case encoded(ImageSource)
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

/// One input's encoded bytes as libvips reads them: a single `VipsSource`, made once per input
/// and used for the header and then for every decode of the fit ladder, one after another.
///
/// It reads the descriptor that was hashed (libvips duplicates it; the file is not opened
/// again), so what is decoded is what the id was made from, whatever the path names by then.
/// The duplicate shares its file offset with the original, which is why an input has exactly
/// one source and its reads never overlap: each input's steps run on one thread, in order.
package final class ImageSource {
    let source: VipsSourceRef

    /// Reads the open file `descriptor`, which must stay open until this returns.
    package init(descriptor: Int32) throws(PushPrepError) {
        source = try VipsSourceRef(duplicating: descriptor)
    }

    /// Opens the regular file at `path` once, for readers that have not opened it yet
    /// (`inspect`, pre-flight's image inspector).
    package convenience init(path: String) throws(PushPrepError) {
        let opened = try InputFile.openRegular(path: path)
        try self.init(descriptor: opened.file.fd)
        withExtendedLifetime(opened.file) {}
    }

    var pointer: UnsafeMutablePointer<VipsSource> { source.pointer }
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
