internal import CVips

/// The two facts PushPrep needs from an embedded ICC profile, read from its bytes without a
/// colour-management library: which colour space it describes and its description.
///
/// Why not ask lcms: the question is only "is this RGB profile sRGB?", asked for every image,
/// and the answer must cost nothing on the common case (sRGB or no profile). Reading the
/// 128-byte header and one tag does that; a profile that cannot be read is treated as absent,
/// as libvips itself ignores a broken profile.
struct ColourProfile: Equatable {
    /// The data colour space signature of the header (`RGB `, `GRAY`, `CMYK`, `Lab `, ...).
    let colourSpace: String
    /// The `desc` tag's text (v2 `desc` or v4 `mluc`, first record), nil when absent.
    let description: String?

    /// Whether the profile describes RGB pixels.
    var isRGB: Bool { colourSpace == "RGB " }

    /// Whether the profile is (named as) sRGB: a whitespace-separated word of its description
    /// starts with `sRGB` ("sRGB IEC61966-2.1" of HP, Apple and Microsoft, libvips' "sRGB",
    /// Google's "sRGB Gamut with sRGB Transfer", "sRGB2014"). "e-sRGB" and "scRGB" are other
    /// encodings and do not match (hence whitespace only: splitting at the hyphen would make
    /// "e-sRGB" a match). An sRGB profile named otherwise is converted, which costs time, not
    /// correctness.
    var isSRGB: Bool {
        guard isRGB, let description else { return false }
        return description.split(whereSeparator: \.isWhitespace).contains { $0.hasPrefix("sRGB") }
    }

    /// Reads a profile's header and description; nil when the bytes are not an ICC profile.
    init?(_ bytes: UnsafeRawBufferPointer) {
        // Header (128 bytes), then the tag count; "acsp" at 36 marks an ICC profile.
        guard bytes.count >= 132, Self.ascii(bytes, 36, 4) == "acsp", let space = Self.ascii(bytes, 16, 4) else {
            return nil
        }
        colourSpace = space
        description = Self.description(bytes).map(Self.printable)
    }

    /// The text without control and format characters (newlines, NULs, bidi overrides): it comes
    /// from the input file and reaches the manifest's operations and the logs.
    private static func printable(_ text: String) -> String {
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: continue
            default: kept.append(scalar)
            }
        }
        return String(kept)
    }

    /// The text of the `desc` tag, if the tag table has one that lies within the bytes.
    private static func description(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let count = uint32(bytes, 128) else { return nil }
        // A tag table entry is 12 bytes: signature, offset, size.
        for index in 0..<min(count, 1000) {
            let entry = 132 + index * 12
            guard let offset = uint32(bytes, entry + 4), let size = uint32(bytes, entry + 8) else { return nil }
            guard ascii(bytes, entry, 4) == "desc" else { continue }
            guard size >= 12, offset <= bytes.count, size <= bytes.count - offset else { return nil }
            let tag = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)])
            switch ascii(tag, 0, 4) {
            case "desc": return textDescription(tag)
            case "mluc": return multiLocalizedUnicode(tag)
            default: return nil
            }
        }
        return nil
    }

    /// ICC v2 `textDescriptionType`: a byte count at 8, then that many ASCII bytes with a NUL.
    private static func textDescription(_ tag: UnsafeRawBufferPointer) -> String? {
        guard let length = uint32(tag, 8), length <= tag.count - 12 else { return nil }
        let text = tag[12..<(12 + length)].prefix { $0 != 0 }
        return String(decoding: text, as: UTF8.self)
    }

    /// ICC v4 `multiLocalizedUnicodeType`: records of (language, country, length, offset) from
    /// 16; the first record's UTF-16BE text.
    private static func multiLocalizedUnicode(_ tag: UnsafeRawBufferPointer) -> String? {
        guard let records = uint32(tag, 8), records >= 1, let length = uint32(tag, 20),
            let offset = uint32(tag, 24), offset <= tag.count, length <= tag.count - offset
        else { return nil }
        let units = stride(from: offset, to: offset + length - length % 2, by: 2).map {
            UInt16(tag[$0]) << 8 | UInt16(tag[$0 + 1])
        }
        return String(decoding: units, as: UTF16.self)
    }

    private static func uint32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> Int? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        return (0..<4).reduce(0) { $0 << 8 | Int(bytes[at + $1]) }
    }

    private static func ascii(_ bytes: UnsafeRawBufferPointer, _ at: Int, _ length: Int) -> String? {
        guard at >= 0, at + length <= bytes.count else { return nil }
        return String(decoding: bytes[at..<(at + length)], as: UTF8.self)
    }
}

extension VipsImageRef {
    /// The embedded ICC profile, read in place (libvips keeps the bytes with the image).
    var colourProfile: ColourProfile? {
        guard has(VIPS_META_ICC_NAME) else { return nil }
        var data: UnsafeRawPointer? = nil
        var length = 0
        guard vips_image_get_blob(pointer, VIPS_META_ICC_NAME, &data, &length) == 0, let data else {
            _ = takeVipsError()
            return nil
        }
        return ColourProfile(UnsafeRawBufferPointer(start: data, count: length))
    }
}
