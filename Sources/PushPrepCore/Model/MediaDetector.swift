import Foundation

/// Tells a file's type from its first bytes. Extensions and Content-Type headers are never
/// trusted: they are only compared with the answer to produce warnings.
public enum MediaDetector {
    /// How many leading bytes ``detect(_:)`` needs to see at most.
    public static let prefixLength = 4096

    /// The type the bytes are, or nil when PushPrep does not recognise them.
    public static func detect(_ bytes: some Collection<UInt8>) -> MediaType? {
        let b = Array(bytes.prefix(prefixLength))
        func at(_ offset: Int, _ signature: [UInt8]) -> Bool {
            offset + signature.count <= b.count && Array(b[offset..<offset + signature.count]) == signature
        }
        func ascii(_ offset: Int, _ text: String) -> Bool { at(offset, Array(text.utf8)) }

        if at(0, [0xFF, 0xD8, 0xFF]) { return jpegFrameMarker(b).map(isDecodableJPEGFrame) == false ? nil : .jpeg }
        if at(0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if ascii(0, "GIF87a") || ascii(0, "GIF89a") { return .gif }
        if ascii(0, "RIFF") && b.count >= 12 {
            if ascii(8, "WEBP") { return .webp }
            if ascii(8, "WAVE") { return .wav }
            if ascii(8, "AVI ") { return .avi }
            return nil
        }
        if ascii(0, "RF64") && ascii(8, "WAVE") { return .wav }
        if ascii(0, "FORM") && (ascii(8, "AIFF") || ascii(8, "AIFC")) { return .aiff }
        if ascii(4, "ftyp") { return isoBaseMedia(b) }
        if at(0, [0x49, 0x49, 0x2A, 0x00]) || at(0, [0x4D, 0x4D, 0x00, 0x2A])
            || at(0, [0x49, 0x49, 0x2B, 0x00]) || at(0, [0x4D, 0x4D, 0x00, 0x2B])
        {
            return .tiff
        }
        if isBMP(b) { return .bmp }
        if at(0, [0x1A, 0x45, 0xDF, 0xA3]) { return matroska(b) }
        if ascii(0, "OggS") { return .ogg }
        if ascii(0, "fLaC") { return .flac }
        if ascii(0, "ID3") { return id3Tagged(b) }
        if isMPEGTS(b) { return .mpegts }
        if let frame = mpegAudioFrame(b, at: 0) { return frame }
        if isSVG(b) { return .svg }
        return nil
    }

    /// Names formats PushPrep recognises only to refuse them with a clear message.
    public static func unsupportedFormatName(_ bytes: some Collection<UInt8>) -> String? {
        let b = Array(bytes.prefix(64))
        func at(_ offset: Int, _ signature: [UInt8]) -> Bool {
            offset + signature.count <= b.count && Array(b[offset..<offset + signature.count]) == signature
        }
        if at(0, [0xFF, 0xD8, 0xFF]), let marker = jpegFrameMarker(Array(bytes.prefix(prefixLength))),
            !isDecodableJPEGFrame(marker)
        {
            return marker == 0xC3 || marker == 0xCB
                ? "lossless JPEG" : "hierarchical JPEG (SOF\(marker & 0x0F))"
        }
        if at(0, [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]) || at(0, [0xFF, 0x4F, 0xFF, 0x51]) {
            return "JPEG 2000"
        }
        if at(0, [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) || at(0, [0xFF, 0x0A]) { return "JPEG XL" }
        if at(0, Array("%PDF".utf8)) { return "PDF" }
        if at(0, Array("%!PS".utf8)) { return "PostScript" }
        if at(0, Array("8BPS".utf8)) { return "Photoshop (PSD)" }
        if at(0, [0x00, 0x00, 0x01, 0x00]) || at(0, [0x00, 0x00, 0x02, 0x00]) { return "Windows icon" }
        if at(0, [0x08, 0xF2, 0xA6, 0xB6]) || at(0, [0xB6, 0xA6, 0xF2, 0x08]) { return "libvips native (.v)" }
        if at(0, Array("P1".utf8)) || at(0, Array("P3".utf8)) || at(0, Array("P6".utf8)) || at(0, Array("P5".utf8)) {
            return "Netpbm"
        }
        if at(0, Array("#?RADIANCE".utf8)) { return "Radiance HDR" }
        if at(0, [0x76, 0x2F, 0x31, 0x01]) { return "OpenEXR" }
        if at(0, Array("SIMPLE  =".utf8)) { return "FITS" }
        return nil
    }

    /// The JPEG's start-of-frame marker (0xC0…0xCF but DHT, JPG and DAC), found by walking
    /// the marker segments from SOI; nil when no frame header lies within `b` (a long EXIF
    /// block can push it past the prefix) or the segments are malformed.
    package static func jpegFrameMarker(_ b: [UInt8]) -> UInt8? {
        var offset = 2
        while offset + 4 <= b.count {
            guard b[offset] == 0xFF else { return nil }
            let marker = b[offset + 1]
            switch marker {
            case 0xFF:
                offset += 1  // fill byte
            case 0x01, 0xD0...0xD8:
                offset += 2  // markers without a length
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                return marker
            case 0xD9, 0xDA:
                return nil  // end of image or scan data before any frame header
            default:
                let length = Int(b[offset + 2]) << 8 | Int(b[offset + 3])
                guard length >= 2 else { return nil }
                offset += 2 + length
            }
        }
        return nil
    }

    /// Whether libjpeg (libjpeg-turbo 2.1, which libvips uses) decodes frames of this process:
    /// baseline, extended and progressive, Huffman or arithmetic coded. Lossless (SOF3, SOF11)
    /// and hierarchical (SOF5-7, SOF13-15) frames it refuses.
    static func isDecodableJPEGFrame(_ marker: UInt8) -> Bool {
        [0xC0, 0xC1, 0xC2, 0xC9, 0xCA].contains(marker)
    }

    /// ISO base media files (MP4, MOV, M4A, HEIF, AVIF) say what they are in the `ftyp` box:
    /// a major brand and a list of compatible brands.
    private static func isoBaseMedia(_ b: [UInt8]) -> MediaType? {
        guard b.count >= 12 else { return nil }
        let size = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        let end = min(b.count, max(size, 16))
        func brand(_ offset: Int) -> String {
            String(decoding: b[offset..<offset + 4], as: UTF8.self)
        }
        let major = brand(8)
        var brands = [major]
        var offset = 16
        while offset + 4 <= end {
            brands.append(brand(offset))
            offset += 4
        }
        if brands.contains(where: { ["avif", "avis"].contains($0) }) { return .avif }
        let heifBrands = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs", "mif1", "msf1"]
        if heifBrands.contains(major) { return .heic }
        if major == "qt  " { return .mov }
        if ["M4A ", "M4B ", "M4P ", "F4A "].contains(major) { return .m4a }
        if brands.contains(where: heifBrands.contains)
            && !brands.contains(where: { $0.hasPrefix("iso") || $0.hasPrefix("mp4") })
        {
            return .heic
        }
        return .mp4
    }

    /// Matroska and WebM share the EBML header; its DocType element (0x4282) says which.
    private static func matroska(_ b: [UInt8]) -> MediaType? {
        let limit = min(b.count, 64)
        var i = 4
        while i + 2 < limit {
            if b[i] == 0x42 && b[i + 1] == 0x82 {
                let rest = String(decoding: b[(i + 2)..<min(limit, i + 16)], as: UTF8.self)
                if rest.contains("webm") { return .webm }
                if rest.contains("matroska") { return .matroska }
            }
            i += 1
        }
        return .matroska
    }

    /// MP3 files usually start with an ID3v2 tag; what follows it decides (an ID3 tag can
    /// also precede AAC or FLAC).
    private static func id3Tagged(_ b: [UInt8]) -> MediaType? {
        guard b.count >= 10 else { return .mp3 }
        let size = (Int(b[6] & 0x7F) << 21) | (Int(b[7] & 0x7F) << 14) | (Int(b[8] & 0x7F) << 7) | Int(b[9] & 0x7F)
        let footer = b[5] & 0x10 != 0 ? 10 : 0
        let next = 10 + size + footer
        if next + 4 <= b.count {
            if Array(b[next..<next + 4]) == Array("fLaC".utf8) { return .flac }
            if let frame = mpegAudioFrame(b, at: next) { return frame }
        }
        // The tag is longer than the prefix we read: ID3v2 is used by MP3 far more than anything.
        return .mp3
    }

    /// An MPEG audio frame header (MP3) or an ADTS header (AAC) at `offset`.
    private static func mpegAudioFrame(_ b: [UInt8], at offset: Int) -> MediaType? {
        guard offset + 4 <= b.count, b[offset] == 0xFF, b[offset + 1] & 0xE0 == 0xE0 else { return nil }
        let second = b[offset + 1]
        if second & 0xF6 == 0xF0 {
            // ADTS: sync word 0xFFF, layer 00. The sampling-frequency index must be valid.
            let frequencyIndex = (b[offset + 2] >> 2) & 0x0F
            return frequencyIndex < 13 ? .aac : nil
        }
        let version = (second >> 3) & 0x03  // 01 is reserved
        // MP3 is layer III (01). Layers I and II are not MP3, and accepting layer I (11) made
        // UTF-16LE text (BOM FF FE) look like an MP3 frame header.
        let layer = (second >> 1) & 0x03
        let bitrate = (b[offset + 2] >> 4) & 0x0F  // 1111 is invalid
        let sampleRate = (b[offset + 2] >> 2) & 0x03  // 11 is reserved
        guard version != 0x01, layer == 0x01, bitrate != 0x0F, sampleRate != 0x03 else { return nil }
        return .mp3
    }

    /// MPEG transport streams are 188-byte packets each starting with 0x47; check a few.
    private static func isMPEGTS(_ b: [UInt8]) -> Bool {
        guard b.count >= 188 * 2 + 1, b[0] == 0x47 else { return false }
        var offset = 0
        while offset < b.count {
            if b[offset] != 0x47 { return false }
            offset += 188
        }
        return true
    }

    /// "BM", then a header size PushPrep knows at offset 14.
    private static func isBMP(_ b: [UInt8]) -> Bool {
        guard b.count >= 18, b[0] == 0x42, b[1] == 0x4D else { return false }
        let headerSize = Int(b[14]) | Int(b[15]) << 8 | Int(b[16]) << 16 | Int(b[17]) << 24
        return [12, 16, 40, 52, 56, 64, 108, 124].contains(headerSize)
    }

    /// SVG is XML text: optional BOM, whitespace, XML declaration, comments or a doctype,
    /// then an `<svg` element near the start.
    private static func isSVG(_ b: [UInt8]) -> Bool {
        var text = String(decoding: b.prefix(prefixLength), as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let trimmed = text.drop(while: { $0.isWhitespace })
        guard trimmed.hasPrefix("<") else { return false }
        return trimmed.range(of: "<svg", options: .caseInsensitive) != nil
    }
}

extension MediaDetector {
    /// The detected type, or `unsupported_type` naming the format when PushPrep knows it.
    package static func require(_ prefix: [UInt8]) throws(PushPrepError) -> MediaType {
        if let type = detect(prefix) { return type }
        if let name = unsupportedFormatName(prefix) {
            throw PushPrepError(.unsupportedType, "\(name) files are not supported")
        }
        throw PushPrepError(.unsupportedType, "not a recognised image, video or audio file")
    }
}
