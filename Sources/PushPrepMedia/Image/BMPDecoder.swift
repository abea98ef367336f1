package import PushPrepCore

/// Pixels decoded from a BMP: top-down rows, `bands` interleaved 8-bit channels (3 = RGB, 4 = RGBA).
package struct DecodedBitmap: Sendable {
    package let width: Int
    package let height: Int
    package let bands: Int
    package let pixels: [UInt8]
}

/// A strict, pure-Swift BMP decoder.
///
/// It exists because libvips only loads BMP through ImageMagick, which we block. Every value in
/// the file is treated as hostile: offsets and sizes are checked against the real byte count
/// before use, and dimensions are capped at 65535 per side *before* any arithmetic, so every
/// product below (stride × height, width × height × 4) fits comfortably in a 64-bit `Int`.
///
/// Supported: BITMAPCOREHEADER (12), BITMAPINFOHEADER (40) and its V2/V3/V4/V5 extensions
/// (52, 56, 108, 124); 1/4/8-bit palette, 16-bit (555 or bit fields), 24-bit, 32-bit (BGRX or
/// bit fields); BI_RLE8 and BI_RLE4; bottom-up and top-down rows.
///
/// Errors: `.unsupportedType` for embedded JPEG/PNG, CMYK, OS/2 2.x headers, unknown compression
/// or bit depth; `.tooManyPixels` when a side exceeds ``maxDimension`` (from both `header` and
/// `decode`, so callers see one code for "too big" whatever the limit) or the pixel count
/// exceeds `maxPixels`; `.corruptInput` for everything else that does not add up. Palette
/// indexes past the stored palette are not an error: they are clamped to entry 0.
/// The file-size field of the file header is ignored (writers often get it wrong); the real
/// byte count is what every check uses.
package enum BMPDecoder {
    /// Largest width or height accepted. Far beyond any push attachment, and small enough that
    /// no size computation can overflow.
    static let maxDimension = 65535

    /// Reads only the headers: dimensions and whether there is alpha. Cheap; used to enforce pixel limits before decoding.
    package static func header(_ bytes: [UInt8]) throws(PushPrepError) -> (width: Int, height: Int, hasAlpha: Bool) {
        let layout = try Layout(bytes)
        return (layout.width, layout.height, layout.hasAlpha)
    }

    /// Full decode. Refuses with .tooManyPixels when width*height > maxPixels (checked before allocating).
    package static func decode(_ bytes: [UInt8], maxPixels: Int) throws(PushPrepError) -> DecodedBitmap {
        let layout = try Layout(bytes)
        // Both sides are ≤ 65535, so the product cannot overflow.
        let pixelCount = layout.width * layout.height
        guard pixelCount <= maxPixels else {
            throw PushPrepError(
                .tooManyPixels, "BMP is \(layout.width)x\(layout.height), more than \(maxPixels) pixels")
        }
        let bands = layout.hasAlpha ? 4 : 3
        let isRLE = layout.compression == .rle8 || layout.compression == .rle4
        if !isRLE {
            // Check the body is complete before allocating the output for it.
            let needed = layout.stride * layout.height
            guard bytes.count - layout.dataOffset >= needed else {
                throw corrupt("BMP pixel data is truncated (\(bytes.count - layout.dataOffset) of \(needed) bytes)")
            }
        }
        // Pixels an RLE stream skips (delta, early end of line/bitmap) stay 0, i.e. black.
        var out = [UInt8](repeating: 0, count: pixelCount * bands)
        let palette = layout.palette(bytes)
        if isRLE {
            try decodeRLE(bytes, layout, palette, into: &out)
        } else {
            decodeRows(bytes, layout, palette, bands: bands, into: &out)
        }
        return DecodedBitmap(width: layout.width, height: layout.height, bands: bands, pixels: out)
    }

    // MARK: - Uncompressed rows

    private static func decodeRows(
        _ bytes: [UInt8], _ l: Layout, _ palette: [UInt8], bands: Int, into out: inout [UInt8]
    ) {
        let channels = l.masks.map(Channel.init(mask:))
        for row in 0..<l.height {
            let src = l.dataOffset + row * l.stride
            // Files store rows bottom-up unless the height was negative.
            var o = (l.topDown ? row : l.height - 1 - row) * l.width * bands
            for x in 0..<l.width {
                let p = src + x * l.bitCount / 8  // byte of this pixel (for 1 and 4 bits: its first)
                if !channels.isEmpty {  // 16 or 32 bits described by channel masks
                    var value = UInt32(bytes[p]) | UInt32(bytes[p + 1]) << 8
                    if l.bitCount == 32 { value |= UInt32(bytes[p + 2]) << 16 | UInt32(bytes[p + 3]) << 24 }
                    for band in 0..<bands { out[o + band] = channels[band].scaled(value) }
                } else if l.bitCount >= 24 {
                    // BGR(X); in BI_RGB 32-bit the fourth byte is unused, not alpha.
                    out[o] = bytes[p + 2]
                    out[o + 1] = bytes[p + 1]
                    out[o + 2] = bytes[p]
                } else {
                    let index: Int
                    switch l.bitCount {
                    case 1: index = Int(bytes[p] >> (7 - UInt8(x & 7))) & 1
                    case 4: index = Int(bytes[p] >> (x & 1 == 0 ? 4 : 0)) & 0xF
                    default: index = Int(bytes[p])
                    }
                    out[o] = palette[index * 3]
                    out[o + 1] = palette[index * 3 + 1]
                    out[o + 2] = palette[index * 3 + 2]
                }
                o += bands
            }
        }
    }

    /// One colour channel of a bit-field pixel: where its bits are and how to widen them to 8 bits.
    private struct Channel {
        let mask: UInt32
        let shift: UInt32
        let maxValue: UInt64

        init(mask: UInt32) {
            self.mask = mask
            shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
            maxValue = UInt64(mask >> shift)
        }

        /// Rescales to 0...255 with rounding, so a 5-bit 31 becomes 255, not 248.
        func scaled(_ pixel: UInt32) -> UInt8 {
            guard maxValue > 0 else { return 0 }
            let v = UInt64((pixel & mask) >> shift)
            return UInt8((v * 255 + maxValue / 2) / maxValue)
        }
    }

    // MARK: - RLE

    /// Decodes BI_RLE8 / BI_RLE4. RLE bitmaps are always bottom-up; `y` counts rows from the bottom.
    /// Any run, absolute block or delta that would leave the image is corrupt rather than clipped,
    /// since no honest encoder produces one.
    private static func decodeRLE(
        _ bytes: [UInt8], _ l: Layout, _ palette: [UInt8], into out: inout [UInt8]
    ) throws(PushPrepError) {
        let isRLE4 = l.compression == .rle4
        var x = 0, y = 0, i = l.dataOffset
        while i + 1 < bytes.count {
            let count = Int(bytes[i]), value = bytes[i + 1]
            i += 2
            if count > 0 {
                // Encoded run: `count` pixels of one index (RLE4 alternates the two nibbles).
                guard y < l.height, count <= l.width - x else {
                    throw corrupt("BMP RLE run goes past the image bounds")
                }
                let rowStart = (l.height - 1 - y) * l.width
                for k in 0..<count {
                    let index = isRLE4 ? Int(k & 1 == 0 ? value >> 4 : value & 0xF) : Int(value)
                    put(index, at: rowStart + x + k, palette, &out)
                }
                x += count
                continue
            }
            switch value {
            case 0:  // end of line
                x = 0
                y += 1
                guard y <= l.height else { throw corrupt("BMP RLE end-of-line goes past the last row") }
            case 1:  // end of bitmap
                return
            case 2:  // delta: move right and up
                guard i + 1 < bytes.count else { throw corrupt("BMP RLE data is truncated") }
                x += Int(bytes[i])
                y += Int(bytes[i + 1])
                i += 2
                guard x <= l.width, y <= l.height else { throw corrupt("BMP RLE delta goes past the image bounds") }
            default:  // absolute mode: `value` literal indexes, padded to a 16-bit boundary
                let n = Int(value)
                let dataBytes = isRLE4 ? (n + 1) / 2 : n
                guard i + dataBytes <= bytes.count else { throw corrupt("BMP RLE data is truncated") }
                guard y < l.height, n <= l.width - x else { throw corrupt("BMP RLE run goes past the image bounds") }
                let rowStart = (l.height - 1 - y) * l.width
                for k in 0..<n {
                    let index =
                        isRLE4 ? Int(k & 1 == 0 ? bytes[i + k / 2] >> 4 : bytes[i + k / 2] & 0xF) : Int(bytes[i + k])
                    put(index, at: rowStart + x + k, palette, &out)
                }
                x += n
                i += (dataBytes + 1) & ~1
            }
        }
        // Some encoders stop after the last row without an end-of-bitmap marker; anything
        // shorter than that lost data.
        guard y >= l.height else { throw corrupt("BMP RLE data ends before the end-of-bitmap marker") }
    }

    private static func put(_ index: Int, at pixel: Int, _ palette: [UInt8], _ out: inout [UInt8]) {
        out[pixel * 3] = palette[index * 3]
        out[pixel * 3 + 1] = palette[index * 3 + 1]
        out[pixel * 3 + 2] = palette[index * 3 + 2]
    }

    // MARK: - Headers

    /// BMP compression codes (the `biCompression` field).
    private enum Compression: UInt32 {
        case rgb = 0, rle8 = 1, rle4 = 2, bitfields = 3, jpeg = 4, png = 5, alphaBitfields = 6
        case cmyk = 11, cmykRLE8 = 12, cmykRLE4 = 13
    }

    /// Everything the headers say, validated against the file's real size.
    private struct Layout {
        var width = 0, height = 0, topDown = false
        var bitCount = 0
        var compression = Compression.rgb
        /// Red, green, blue (and alpha when `hasAlpha`) masks; empty for palette, 24-bit and BGRX.
        var masks: [UInt32] = []
        var hasAlpha = false
        var paletteStart = 0, paletteEntrySize = 4, paletteCount = 0
        var dataOffset = 0
        /// Bytes per stored row, padded to 4 bytes.
        var stride: Int { (width * bitCount + 31) / 32 * 4 }

        init(_ b: [UInt8]) throws(PushPrepError) {
            guard b.count >= 2, b[0] == 0x42, b[1] == 0x4D else { throw corrupt("not a BMP file (no 'BM' signature)") }
            guard b.count >= 18 else { throw corrupt("BMP file header is truncated") }
            let headerSize = Int(le32(b, 14))
            switch headerSize {
            case 12, 40, 52, 56, 108, 124: break
            case 16...64: throw PushPrepError(.unsupportedType, "OS/2 2.x BMP headers are not supported")
            default: throw corrupt("BMP header size \(headerSize) is not a known BMP header")
            }
            guard b.count >= 14 + headerSize else { throw corrupt("BMP info header is truncated") }
            dataOffset = Int(le32(b, 10))
            paletteStart = 14 + headerSize

            let planes: Int
            var colorsUsed = 0
            if headerSize == 12 {
                // OS/2 1.x / Windows 2.x core header: unsigned 16-bit sizes, BGR palette, no compression.
                width = le16(b, 18)
                height = le16(b, 20)
                planes = le16(b, 22)
                bitCount = le16(b, 24)
                paletteEntrySize = 3
            } else {
                width = Int(Int32(bitPattern: le32(b, 18)))
                let rawHeight = Int(Int32(bitPattern: le32(b, 22)))  // Int, so -Int32.min cannot overflow
                topDown = rawHeight < 0
                height = abs(rawHeight)
                planes = le16(b, 26)
                bitCount = le16(b, 28)
                let rawCompression = le32(b, 30)
                colorsUsed = Int(le32(b, 46))
                guard let c = Compression(rawValue: rawCompression) else {
                    throw PushPrepError(.unsupportedType, "BMP compression \(rawCompression) is not supported")
                }
                compression = c
            }
            switch compression {
            case .jpeg: throw PushPrepError(.unsupportedType, "BMP with an embedded JPEG (BI_JPEG) is not supported")
            case .png: throw PushPrepError(.unsupportedType, "BMP with an embedded PNG (BI_PNG) is not supported")
            case .cmyk, .cmykRLE8, .cmykRLE4: throw PushPrepError(.unsupportedType, "CMYK BMP is not supported")
            default: break
            }
            guard [1, 4, 8, 16, 24, 32].contains(bitCount) else {
                throw PushPrepError(.unsupportedType, "BMP bit depth \(bitCount) is not supported")
            }
            let validDepth: Bool
            switch compression {
            case .rle8: validDepth = bitCount == 8
            case .rle4: validDepth = bitCount == 4
            case .bitfields, .alphaBitfields: validDepth = bitCount == 16 || bitCount == 32
            default: validDepth = true
            }
            guard validDepth else {
                throw corrupt("BMP compression \(compression) cannot have \(bitCount) bits per pixel")
            }
            guard planes == 1 else { throw corrupt("BMP has \(planes) planes; must be 1") }
            guard width > 0 else { throw corrupt("BMP width \(width) is not positive") }
            guard height > 0 else { throw corrupt("BMP height is zero") }
            // Too big is reported as too many pixels (not corrupt), consistently from header() and decode().
            guard width <= maxDimension, height <= maxDimension else {
                throw PushPrepError(.tooManyPixels, "BMP is \(width)x\(height); sides over \(maxDimension) are refused")
            }
            if topDown && (compression == .rle8 || compression == .rle4) {
                throw corrupt("top-down BMP cannot be RLE-compressed")
            }

            if compression == .bitfields || compression == .alphaBitfields {
                // V3+ headers carry all four masks; V2 only RGB; a plain info header is followed by
                // three masks (four for BI_ALPHABITFIELDS).
                let maskCount = headerSize >= 56 || (headerSize == 40 && compression == .alphaBitfields) ? 4 : 3
                if headerSize == 40 {
                    // Masks follow a plain info header, before the palette.
                    guard b.count >= 54 + maskCount * 4 else { throw corrupt("BMP bit-field masks are truncated") }
                    paletteStart += maskCount * 4
                }
                masks = (0..<maskCount).map { le32(b, 54 + $0 * 4) }
                if maskCount == 3 { masks.append(0) }
                try validateMasks()
                hasAlpha = masks[3] != 0
                if !hasAlpha { masks.removeLast() }
            } else if bitCount == 16 {
                masks = [0x7C00, 0x03E0, 0x001F]  // BI_RGB 16-bit is X1R5G5B5
            }

            guard dataOffset >= paletteStart else { throw corrupt("BMP pixel data offset points inside the headers") }
            guard dataOffset < b.count else { throw corrupt("BMP pixel data offset \(dataOffset) is outside the file") }
            if bitCount <= 8 {
                let maxColors = 1 << bitCount
                let declared = colorsUsed == 0 || colorsUsed > maxColors ? maxColors : colorsUsed
                // Some writers declare more colours than they store; use those that fit before the pixels.
                paletteCount = min(declared, (dataOffset - paletteStart) / paletteEntrySize)
            }
        }

        /// Each mask must fit the pixel, be one contiguous run of bits, and not overlap another.
        private func validateMasks() throws(PushPrepError) {
            var seen: UInt32 = 0
            for mask in masks {
                let run = mask >> UInt32(mask == 0 ? 0 : mask.trailingZeroBitCount)
                guard run & (run &+ 1) == 0, mask & seen == 0, bitCount == 32 || mask <= 0xFFFF else {
                    throw corrupt("BMP bit-field masks are invalid")
                }
                seen |= mask
            }
        }

        /// A 256-entry RGB table. Indexes past the stored palette are clamped to entry 0, as
        /// other decoders do, rather than refusing the file; with no palette at all they are black.
        func palette(_ b: [UInt8]) -> [UInt8] {
            guard bitCount <= 8 else { return [] }
            var table = [UInt8](repeating: 0, count: 256 * 3)
            for i in 0..<paletteCount {
                let p = paletteStart + i * paletteEntrySize  // stored as B, G, R(, reserved)
                table[i * 3] = b[p + 2]
                table[i * 3 + 1] = b[p + 1]
                table[i * 3 + 2] = b[p]
            }
            if paletteCount > 0 {
                for i in paletteCount..<256 { table[i * 3..<i * 3 + 3] = table[0..<3] }
            }
            return table
        }
    }

    private static func corrupt(_ message: String) -> PushPrepError { PushPrepError(.corruptInput, message) }
}

/// Little-endian reads; callers have already checked `i + 2` / `i + 4` against the count.
private func le16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
private func le32(_ b: [UInt8], _ i: Int) -> UInt32 {
    UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
}
