import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrepCore

// MARK: - Helpers

/// Detects a file the way PushPrep does: from the prefix `InputFile` reads.
private func detectFile(_ url: URL) throws -> MediaType? {
    let (_, prefix) = try InputFile.readPrefix(path: url.path)
    return MediaDetector.detect(prefix)
}

/// The first bytes of a file, as hex, for failure messages.
private func hexPrefix(_ url: URL, _ count: Int = 16) -> String {
    let data = (try? Data(contentsOf: url)) ?? Data()
    return data.prefix(count).map { String(format: "%02x", $0) }.joined()
}

/// Makes `name` in a fresh directory with `make`, then checks what it is detected as.
private func expectDetected(
    _ expected: MediaType, name: String, sourceLocation: SourceLocation = #_sourceLocation,
    make: (URL) throws -> Void
) throws {
    try TestTools.withTemporaryDirectory { dir in
        let file = dir.appendingPathComponent(name)
        try make(file)
        let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        try #require(size > 0, "the tool wrote an empty \(name)", sourceLocation: sourceLocation)
        let detected = try detectFile(file)
        #expect(detected == expected, "\(name) starts with \(hexPrefix(file))", sourceLocation: sourceLocation)
    }
}

/// A 64x48 black RGB image in vips' own format, for converting to other formats.
private func vipsBlack(in dir: URL, bands: Int = 3) throws -> String {
    let path = dir.appendingPathComponent("black-\(bands).v").path
    if !FileManager.default.fileExists(atPath: path) {
        try TestTools.vips("black", path, "64", "48", "--bands", "\(bands)")
    }
    return path
}

/// Saves a 64x48 black image with vips to `file` (its extension, plus `[options]`, picks the saver).
private func vipsSave(_ file: URL, options: String = "") throws {
    let source = try vipsBlack(in: file.deletingLastPathComponent())
    try TestTools.vips("copy", source, file.path + options)
}

private let videoSource = ["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=0.2"]
private let audioSource = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=0.2"]

private func ffmpeg(_ args: [String], _ out: URL) throws {
    try TestTools.runChecked("ffmpeg", ["-y", "-v", "error", "-nostdin"] + args + [out.path])
}

private let vips = TestTools.programAvailable("vips")
private func ff(_ encoder: String, _ muxer: String) -> Bool {
    TestTools.ffmpegCanEncode(encoder) && TestTools.ffmpegCanMux(muxer)
}

/// A minimal but complete big-endian ("MM") TIFF: 8-bit greyscale, uncompressed, one strip.
/// vips 8.14 cannot choose the byte order it writes, so the test writes this one itself.
private func bigEndianTIFF(width: Int, height: Int) -> Data {
    func u16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    func u32(_ v: Int) -> [UInt8] { (0..<4).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }
    func short(_ tag: Int, _ value: Int) -> [UInt8] { u16(tag) + u16(3) + u32(1) + u16(value) + [0, 0] }
    func long(_ tag: Int, _ value: Int) -> [UInt8] { u16(tag) + u16(4) + u32(1) + u32(value) }
    let entries = 9
    let pixelOffset = 8 + 2 + 12 * entries + 4
    var out: [UInt8] = Array("MM".utf8) + u16(42) + u32(8) + u16(entries)
    out += short(256, width)  // ImageWidth
    out += short(257, height)  // ImageLength
    out += short(258, 8)  // BitsPerSample
    out += short(259, 1)  // Compression: none
    out += short(262, 1)  // PhotometricInterpretation: black is zero
    out += long(273, pixelOffset)  // StripOffsets
    out += short(277, 1)  // SamplesPerPixel
    out += short(278, height)  // RowsPerStrip
    out += long(279, width * height)  // StripByteCounts
    out += u32(0)
    out += (0..<(width * height)).map { UInt8($0 % 256) }
    return Data(out)
}

/// Type detection (``MediaDetector``) and the facts of each ``MediaType``. The nested suites
/// all run under `swift test --filter MediaDetectorTests`.
@Suite("MediaDetector")
struct MediaDetectorTests {}

// MARK: - Real files made by vips and ffmpeg

extension MediaDetectorTests {
    @Suite("Real files made by vips and ffmpeg")
    struct RealFiles {
        // Images (vips)

        @Test(.enabled(if: vips, "needs the vips command-line tool"))
        func jpeg() throws { try expectDetected(.jpeg, name: "a.jpg") { try vipsSave($0) } }

        @Test(.enabled(if: vips, "needs the vips command-line tool"))
        func png() throws { try expectDetected(.png, name: "a.png") { try vipsSave($0) } }

        @Test(.enabled(if: TestTools.vipsHasOperation("gifsave"), "needs vips with GIF saving (cgif)"))
        func stillGIF() throws { try expectDetected(.gif, name: "a.gif") { try vipsSave($0) } }

        @Test(
            .enabled(
                if: ff("gif", "gif") && TestTools.programAvailable("ffprobe"),
                "needs ffmpeg with the gif encoder, and ffprobe"))
        func animatedGIF() throws {
            try expectDetected(.gif, name: "anim.gif") { file in
                try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=0.3", "-c:v", "gif"], file)
                // The fixture really is animated: more than one frame.
                let frames = try TestTools.run(
                    "ffprobe",
                    [
                        "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                        "stream=nb_read_frames",
                        "-of", "csv=p=0", file.path,
                    ])
                let count = Int(
                    String(decoding: frames.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
                #expect((count ?? 0) > 1, "the animated GIF fixture has \(count.map(String.init) ?? "?") frames")
            }
        }

        @Test(.enabled(if: vips, "needs the vips command-line tool"))
        func progressiveJPEG() throws {
            try expectDetected(.jpeg, name: "p.jpg") { try vipsSave($0, options: "[interlace]") }
        }

        @Test(
            "a lossless JPEG (SOF3), which libjpeg cannot decode, is named and refused from its bytes",
            .enabled(if: ff("ljpeg", "image2"), "needs ffmpeg with the ljpeg encoder"))
        func losslessJPEG() throws {
            try TestTools.withTemporaryDirectory { dir in
                let file = dir.appendingPathComponent("lossless.jpg")
                try ffmpeg(videoSource + ["-frames:v", "1", "-c:v", "ljpeg", "-pix_fmt", "bgr24"], file)
                let (_, prefix) = try InputFile.readPrefix(path: file.path)
                #expect(MediaDetector.jpegFrameMarker(prefix) == 0xC3)
                #expect(MediaDetector.detect(prefix) == nil)
                #expect(MediaDetector.unsupportedFormatName(prefix) == "lossless JPEG")
            }
        }

        @Test(.enabled(if: TestTools.vipsHasOperation("webpsave"), "needs vips with WebP saving"))
        func webp() throws { try expectDetected(.webp, name: "a.webp") { try vipsSave($0) } }

        @Test(.enabled(if: TestTools.vipsHasOperation("heifsave"), "needs vips with HEIF saving (libheif)"))
        func heic() throws { try expectDetected(.heic, name: "a.heic") { try vipsSave($0) } }

        @Test(.enabled(if: TestTools.vipsHasOperation("heifsave"), "needs vips with HEIF saving (libheif)"))
        func heif() throws { try expectDetected(.heic, name: "a.heif") { try vipsSave($0) } }

        @Test(.enabled(if: TestTools.vipsHasOperation("heifsave"), "needs vips with HEIF saving and an AV1 encoder"))
        func avif() throws {
            try expectDetected(.avif, name: "a.avif") { try vipsSave($0, options: "[compression=av1]") }
        }

        @Test(.enabled(if: TestTools.vipsHasOperation("tiffsave"), "needs vips with TIFF saving"))
        func tiffLittleEndian() throws {
            try expectDetected(.tiff, name: "a.tif") { file in
                try vipsSave(file)
                #expect(hexPrefix(file, 4) == "49492a00", "vips writes little-endian TIFF")
            }
        }

        @Test(.enabled(if: TestTools.vipsHasOperation("tiffsave"), "needs vips with TIFF saving"))
        func bigTIFF() throws {
            try expectDetected(.tiff, name: "big.tif") { file in
                try vipsSave(file, options: "[bigtiff]")
                #expect(hexPrefix(file, 4) == "49492b00", "a BigTIFF header")
            }
        }

        /// vips cannot pick the byte order, so the file is written here; vips reading it back
        /// proves it is a real TIFF and not just a signature.
        @Test(.enabled(if: TestTools.programAvailable("vipsheader"), "needs the vipsheader tool"))
        func tiffBigEndian() throws {
            try expectDetected(.tiff, name: "be.tif") { file in
                try bigEndianTIFF(width: 16, height: 8).write(to: file)
                let header = try TestTools.runChecked("vipsheader", [file.path])
                #expect(String(decoding: header, as: UTF8.self).contains("16x8"))
            }
        }

        @Test(.enabled(if: ff("bmp", "image2"), "needs ffmpeg with the bmp encoder"))
        func bmpFromFFmpeg() throws {
            try expectDetected(.bmp, name: "a.bmp") { try ffmpeg(videoSource + ["-frames:v", "1", "-c:v", "bmp"], $0) }
        }

        @Test(.enabled(if: TestTools.vipsHasOperation("magicksave"), "needs vips with ImageMagick saving"))
        func bmpFromVips() throws {
            try expectDetected(.bmp, name: "a.bmp") { try vipsSave($0, options: "[format=bmp]") }
        }

        @Test func svg() throws {
            try expectDetected(.svg, name: "a.svg") { file in
                let text = """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <!-- a comment -->
                    <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>
                    """
                try Data(text.utf8).write(to: file)
            }
        }

        // Video (ffmpeg)

        @Test(.enabled(if: ff("libx264", "mp4"), "needs ffmpeg with libx264 and the mp4 muxer"))
        func mp4() throws {
            try expectDetected(.mp4, name: "a.mp4") {
                try ffmpeg(videoSource + ["-pix_fmt", "yuv420p", "-c:v", "libx264"], $0)
            }
        }

        @Test(.enabled(if: ff("libx264", "mov"), "needs ffmpeg with libx264 and the mov muxer"))
        func mov() throws {
            try expectDetected(.mov, name: "a.mov") {
                try ffmpeg(videoSource + ["-pix_fmt", "yuv420p", "-c:v", "libx264"], $0)
            }
        }

        @Test(.enabled(if: ff("mpeg4", "matroska"), "needs ffmpeg with mpeg4 and the matroska muxer"))
        func matroska() throws {
            try expectDetected(.matroska, name: "a.mkv") { try ffmpeg(videoSource + ["-c:v", "mpeg4"], $0) }
        }

        @Test(.enabled(if: ff("libvpx-vp9", "webm"), "needs ffmpeg with libvpx-vp9 and the webm muxer"))
        func webm() throws {
            try expectDetected(.webm, name: "a.webm") {
                try ffmpeg(videoSource + ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"], $0)
            }
        }

        @Test(.enabled(if: ff("mpeg4", "avi"), "needs ffmpeg with mpeg4 and the avi muxer"))
        func avi() throws {
            try expectDetected(.avi, name: "a.avi") { try ffmpeg(videoSource + ["-c:v", "mpeg4"], $0) }
        }

        @Test(.enabled(if: ff("mpeg4", "mpegts"), "needs ffmpeg with mpeg4 and the mpegts muxer"))
        func mpegTS() throws {
            try expectDetected(.mpegts, name: "a.ts") { try ffmpeg(videoSource + ["-c:v", "mpeg4"], $0) }
        }

        // Audio (ffmpeg)

        @Test(.enabled(if: ff("aac", "ipod"), "needs ffmpeg with aac and the ipod (m4a) muxer"))
        func m4a() throws { try expectDetected(.m4a, name: "a.m4a") { try ffmpeg(audioSource + ["-c:a", "aac"], $0) } }

        @Test(.enabled(if: ff("libmp3lame", "mp3"), "needs ffmpeg with libmp3lame"))
        func mp3WithID3() throws {
            try expectDetected(.mp3, name: "tagged.mp3") { file in
                try ffmpeg(audioSource + ["-c:a", "libmp3lame", "-metadata", "title=PushPrep"], file)
                #expect(hexPrefix(file, 3) == "494433", "starts with an ID3 tag")
            }
        }

        @Test(.enabled(if: ff("libmp3lame", "mp3"), "needs ffmpeg with libmp3lame"))
        func mp3WithoutID3() throws {
            try expectDetected(.mp3, name: "bare.mp3") { file in
                try ffmpeg(audioSource + ["-c:a", "libmp3lame", "-id3v2_version", "0", "-write_xing", "0"], file)
                #expect(hexPrefix(file, 1) == "ff", "starts with a frame header, no ID3 tag")
            }
        }

        @Test(.enabled(if: ff("aac", "adts"), "needs ffmpeg with aac and the adts muxer"))
        func aacADTS() throws {
            try expectDetected(.aac, name: "a.aac") { try ffmpeg(audioSource + ["-c:a", "aac", "-f", "adts"], $0) }
        }

        @Test(.enabled(if: ff("pcm_s16le", "wav"), "needs ffmpeg with pcm_s16le"))
        func wav() throws {
            try expectDetected(.wav, name: "a.wav") { try ffmpeg(audioSource + ["-c:a", "pcm_s16le"], $0) }
        }

        @Test(.enabled(if: ff("pcm_s16be", "aiff"), "needs ffmpeg with pcm_s16be and the aiff muxer"))
        func aiff() throws {
            try expectDetected(.aiff, name: "a.aiff") { try ffmpeg(audioSource + ["-c:a", "pcm_s16be"], $0) }
        }

        @Test(.enabled(if: ff("libvorbis", "ogg"), "needs ffmpeg with libvorbis"))
        func oggVorbis() throws {
            try expectDetected(.ogg, name: "a.ogg") { try ffmpeg(audioSource + ["-c:a", "libvorbis"], $0) }
        }

        @Test(.enabled(if: ff("libopus", "ogg"), "needs ffmpeg with libopus"))
        func oggOpus() throws {
            try expectDetected(.ogg, name: "a.opus") { try ffmpeg(audioSource + ["-c:a", "libopus", "-f", "ogg"], $0) }
        }

        @Test(.enabled(if: ff("flac", "flac"), "needs ffmpeg with the flac encoder"))
        func flac() throws {
            try expectDetected(.flac, name: "a.flac") { try ffmpeg(audioSource + ["-c:a", "flac"], $0) }
        }
    }
}

// MARK: - Synthetic headers (no tools)

private func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }
private func be32(_ v: Int) -> [UInt8] { (0..<4).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }
private func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
private func padded(_ bytes: [UInt8], to count: Int = 64) -> [UInt8] {
    bytes + [UInt8](repeating: 0, count: max(0, count - bytes.count))
}

/// An `ftyp` box: size, "ftyp", major brand, minor version, compatible brands.
private func ftyp(_ major: String, _ compatible: [String] = []) -> [UInt8] {
    let body = ascii(major) + [0, 0, 0, 0] + compatible.flatMap(ascii)
    return be32(8 + body.count) + ascii("ftyp") + body + be32(8) + ascii("free")
}

/// An EBML header with a DocType element (0x4282).
private func ebml(docType: String) -> [UInt8] {
    let elements: [UInt8] =
        [0x42, 0x86, 0x81, 0x01, 0x42, 0xF7, 0x81, 0x01, 0x42, 0xF2, 0x81, 0x04, 0x42, 0xF3, 0x81, 0x08]
        + [0x42, 0x82, UInt8(0x80 | docType.utf8.count)] + ascii(docType)
    return [0x1A, 0x45, 0xDF, 0xA3, UInt8(0x80 | elements.count)] + elements + [0x18, 0x53, 0x80, 0x67]
}

/// An ID3v2.4 tag of `size` body bytes (syncsafe size) and no footer.
private func id3(size: Int) -> [UInt8] {
    let syncsafe = [(size >> 21) & 0x7F, (size >> 14) & 0x7F, (size >> 7) & 0x7F, size & 0x7F].map { UInt8($0) }
    return ascii("ID3") + [0x04, 0x00, 0x00] + syncsafe + [UInt8](repeating: 0, count: size)
}

/// An MPEG-1 Layer III frame header: 128 kbit/s, 44.1 kHz.
private let mp3Frame: [UInt8] = [0xFF, 0xFB, 0x90, 0x64]
/// An ADTS header: MPEG-4 AAC LC, 44.1 kHz (index 4), stereo.
private let adtsFrame: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC]

/// One 188-byte MPEG-TS packet (sync byte, PID 0, payload of 0xFF).
private let tsPacket: [UInt8] = [0x47, 0x40, 0x00, 0x10] + [UInt8](repeating: 0xFF, count: 184)

struct DetectorSample: CustomTestStringConvertible, Sendable {
    let name: String
    let bytes: [UInt8]
    let expected: MediaType?
    var testDescription: String { name }
}

private let syntheticCases: [DetectorSample] = [
    .init(
        name: "JPEG SOI + APP0", bytes: padded([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + ascii("JFIF")), expected: .jpeg),
    .init(name: "PNG signature", bytes: padded([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), expected: .png),
    .init(name: "GIF87a", bytes: padded(ascii("GIF87a")), expected: .gif),
    .init(name: "GIF89a", bytes: padded(ascii("GIF89a")), expected: .gif),
    .init(name: "RIFF WEBP", bytes: padded(ascii("RIFF") + le32(100) + ascii("WEBPVP8 ")), expected: .webp),
    .init(name: "RIFF WAVE", bytes: padded(ascii("RIFF") + le32(100) + ascii("WAVEfmt ")), expected: .wav),
    .init(name: "RF64 WAVE", bytes: padded(ascii("RF64") + le32(-1) + ascii("WAVEds64")), expected: .wav),
    .init(name: "RIFF AVI", bytes: padded(ascii("RIFF") + le32(100) + ascii("AVI LIST")), expected: .avi),
    .init(name: "FORM AIFF", bytes: padded(ascii("FORM") + be32(100) + ascii("AIFFCOMM")), expected: .aiff),
    .init(name: "FORM AIFC", bytes: padded(ascii("FORM") + be32(100) + ascii("AIFCFVER")), expected: .aiff),
    .init(name: "ftyp heic", bytes: padded(ftyp("heic", ["mif1", "heic"])), expected: .heic),
    .init(name: "ftyp mif1 heic", bytes: padded(ftyp("mif1", ["mif1", "heic"])), expected: .heic),
    .init(name: "ftyp avif", bytes: padded(ftyp("avif", ["mif1", "avif", "miaf"])), expected: .avif),
    .init(name: "ftyp mif1 with avif compatible", bytes: padded(ftyp("mif1", ["mif1", "avif"])), expected: .avif),
    .init(name: "ftyp isom", bytes: padded(ftyp("isom", ["isom", "iso2", "avc1", "mp41"])), expected: .mp4),
    .init(name: "ftyp mp42", bytes: padded(ftyp("mp42", ["mp42", "isom"])), expected: .mp4),
    .init(name: "ftyp qt", bytes: padded(ftyp("qt  ", ["qt  "])), expected: .mov),
    .init(name: "ftyp M4A", bytes: padded(ftyp("M4A ", ["M4A ", "mp42", "isom"])), expected: .m4a),
    .init(name: "TIFF II*", bytes: padded([0x49, 0x49, 0x2A, 0x00, 0x08, 0, 0, 0]), expected: .tiff),
    .init(name: "TIFF MM*", bytes: padded([0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 0x08]), expected: .tiff),
    .init(name: "BigTIFF II+", bytes: padded([0x49, 0x49, 0x2B, 0x00, 0x08, 0x00, 0, 0]), expected: .tiff),
    .init(
        name: "BMP with a 40-byte header", bytes: padded(ascii("BM") + le32(1000) + le32(0) + le32(54) + le32(40)),
        expected: .bmp),
    .init(
        name: "BMP with a 124-byte header", bytes: padded(ascii("BM") + le32(1000) + le32(0) + le32(138) + le32(124)),
        expected: .bmp),
    .init(
        name: "BM with an unknown header size", bytes: padded(ascii("BM") + le32(1000) + le32(0) + le32(54) + le32(41)),
        expected: nil),
    .init(name: "EBML webm", bytes: padded(ebml(docType: "webm")), expected: .webm),
    .init(name: "EBML matroska", bytes: padded(ebml(docType: "matroska")), expected: .matroska),
    .init(name: "OggS", bytes: padded(ascii("OggS") + [0x00, 0x02]), expected: .ogg),
    .init(name: "fLaC", bytes: padded(ascii("fLaC") + [0x00, 0x00, 0x00, 0x22]), expected: .flac),
    .init(name: "MP3 frame", bytes: padded(mp3Frame), expected: .mp3),
    .init(name: "ID3 then MP3 frame", bytes: padded(id3(size: 20) + mp3Frame), expected: .mp3),
    .init(name: "ADTS", bytes: padded(adtsFrame), expected: .aac),
    .init(name: "ID3 then ADTS", bytes: padded(id3(size: 20) + adtsFrame), expected: .aac),
    .init(name: "ID3 then fLaC", bytes: padded(id3(size: 20) + ascii("fLaC") + [0, 0, 0, 0x22]), expected: .flac),
    .init(name: "ID3 longer than the prefix", bytes: id3(size: 10_000) + mp3Frame, expected: .mp3),
    .init(name: "3 MPEG-TS packets", bytes: tsPacket + tsPacket + tsPacket, expected: .mpegts),
    .init(name: "single 0x47 byte", bytes: [0x47], expected: nil),
    .init(name: "0x47 then garbage", bytes: [0x47] + [UInt8](repeating: 0x11, count: 600), expected: nil),
    .init(name: "SVG", bytes: ascii("<svg xmlns=\"http://www.w3.org/2000/svg\"/>"), expected: .svg),
    .init(
        name: "SVG with BOM, XML declaration and doctype",
        bytes: [0xEF, 0xBB, 0xBF] + ascii("\n  <?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<SVG></SVG>"), expected: .svg),
    .init(
        name: "unknown bytes", bytes: [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C],
        expected: nil),
    .init(name: "empty", bytes: [], expected: nil),
    .init(name: "plain text", bytes: ascii("Hello, world.\nThis is a plain text file, not an image.\n"), expected: nil),
    .init(
        name: "PDF", bytes: ascii("%PDF-1.4\n%\u{E2}\u{E3}\u{CF}\u{D3}\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"),
        expected: nil),
    .init(
        name: "JPEG 2000 signature box",
        bytes: padded(
            [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A] + be32(20) + ascii("ftypjp2 ")),
        expected: nil),
    .init(name: "JPEG 2000 codestream", bytes: padded([0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x2F]), expected: nil),
    .init(
        name: "RIFF with an unknown form", bytes: padded(ascii("RIFF") + le32(100) + ascii("CDDAfmt ")), expected: nil),
    .init(name: "truncated RIFF", bytes: ascii("RIFF") + le32(100), expected: nil),
    .init(name: "FORM 8SVX (not AIFF)", bytes: padded(ascii("FORM") + be32(100) + ascii("8SVXVHDR")), expected: nil),
    .init(name: "truncated JPEG SOI", bytes: [0xFF, 0xD8], expected: nil),
    // FF FE is also the UTF-16LE byte-order mark; read as MPEG audio it is a layer I header.
    .init(
        name: "UTF-16LE text with a BOM",
        bytes: [0xFF, 0xFE] + "Hello, world".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] },
        expected: nil),
    .init(name: "MPEG-1 layer I header (not MP3)", bytes: padded([0xFF, 0xFF, 0x90, 0x64]), expected: nil),
    .init(name: "MPEG-1 layer II header (not MP3)", bytes: padded([0xFF, 0xFD, 0x90, 0x64]), expected: nil),
    .init(name: "MPEG-2 layer III header", bytes: padded([0xFF, 0xF3, 0x90, 0x64]), expected: .mp3),
    .init(name: "MPEG-2.5 layer III header", bytes: padded([0xFF, 0xE3, 0x90, 0x64]), expected: .mp3),
    .init(
        name: "MPEG audio header with a reserved sample rate", bytes: padded([0xFF, 0xFB, 0x9C, 0x64]), expected: nil),
]

extension MediaDetectorTests {
    @Suite("Synthetic headers")
    struct SyntheticHeaders {
        @Test(arguments: syntheticCases)
        func detects(_ sample: DetectorSample) {
            #expect(MediaDetector.detect(sample.bytes) == sample.expected)
        }

        @Test func acceptsDataAndSlices() {
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D]
            #expect(MediaDetector.detect(Data(png)) == .png)
            #expect(MediaDetector.detect(([0x00] + png)[1...]) == .png)
        }

        @Test func onlyThePrefixMatters() {
            // Packets run past the prefix and then break off: bytes after the prefix are never
            // looked at, so the break does not matter.
            var ts = [UInt8]()
            for _ in 0..<((MediaDetector.prefixLength / 188) + 1) { ts += tsPacket }
            ts += [UInt8](repeating: 0x00, count: 1000)
            #expect(MediaDetector.detect(ts) == .mpegts)
        }

        @Test func mpegTSNeedsEveryPacketToStartWith0x47() {
            var bytes = tsPacket + tsPacket + tsPacket
            bytes[188] = 0x00
            #expect(MediaDetector.detect(bytes) != .mpegts)
        }

        @Test func jpegBytesInAPNGFile() throws {
            try TestTools.withTemporaryDirectory { dir in
                let file = dir.appendingPathComponent("photo.png")
                try Data(padded([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + ascii("JFIF"), to: 256)).write(to: file)
                let detected = try #require(try detectFile(file))
                #expect(detected == .jpeg)
                let warnings = ExtensionCheck.warnings(path: file.path, detected: detected)
                #expect(warnings.count == 1)
                let warning = try #require(warnings.first)
                #expect(warning.message.contains(".png"))
                #expect(warning.message.contains("jpeg"))
            }
        }

        @Test(arguments: [
            "photo", "photo.xyz", "photo.bin", "archive.tar.data", "photo.jpg", "photo.JPEG", "photo.jfif",
        ])
        func noExtensionWarning(_ name: String) {
            #expect(ExtensionCheck.warnings(path: "/tmp/some dir/\(name)", detected: .jpeg) == [])
        }

        @Test func extensionOfAnotherKnownTypeWarns() {
            #expect(ExtensionCheck.warnings(path: "clip.mp4", detected: .mov).count == 1)
            #expect(ExtensionCheck.warnings(path: "song.M4A", detected: .mp4).count == 1)
            // .mp4 is a name both MP4 and M4A files go by.
            #expect(ExtensionCheck.warnings(path: "song.mp4", detected: .m4a) == [])
        }
    }
}

// MARK: - Type facts

struct AppleAcceptedTypeFacts: Sendable, CustomTestStringConvertible {
    let type: MediaType
    let kind: MediaKind
    let uti: String
    let fileExtension: String
    var testDescription: String { type.rawValue }
}

private let appleTypes: [AppleAcceptedTypeFacts] = [
    .init(type: .jpeg, kind: .image, uti: "public.jpeg", fileExtension: "jpg"),
    .init(type: .png, kind: .image, uti: "public.png", fileExtension: "png"),
    .init(type: .gif, kind: .image, uti: "com.compuserve.gif", fileExtension: "gif"),
    .init(type: .mp3, kind: .audio, uti: "public.mp3", fileExtension: "mp3"),
    .init(type: .m4a, kind: .audio, uti: "public.mpeg-4-audio", fileExtension: "m4a"),
    .init(type: .wav, kind: .audio, uti: "com.microsoft.waveform-audio", fileExtension: "wav"),
    .init(type: .aiff, kind: .audio, uti: "public.aiff-audio", fileExtension: "aiff"),
    .init(type: .mp4, kind: .video, uti: "public.mpeg-4", fileExtension: "mp4"),
    .init(type: .avi, kind: .video, uti: "public.avi", fileExtension: "avi"),
]

extension MediaDetectorTests {
    @Suite("MediaType facts")
    struct TypeFacts {
        @Test(arguments: appleTypes)
        func appleAcceptedType(_ facts: AppleAcceptedTypeFacts) {
            #expect(facts.type.acceptedByApple)
            #expect(facts.type.kind == facts.kind)
            #expect(facts.type.uti == facts.uti)
            #expect(facts.type.fileExtension == facts.fileExtension)
            #expect(facts.type.knownExtensions.contains(facts.fileExtension))
        }

        @Test func exactlyTheseTypesAreAcceptedByApple() {
            let accepted = Set(MediaType.allCases.filter(\.acceptedByApple))
            #expect(accepted == Set(appleTypes.map(\.type)))
        }

        @Test(arguments: MediaType.allCases)
        func fileExtensionIsAKnownExtension(_ type: MediaType) {
            #expect(type.knownExtensions.contains(type.fileExtension))
            #expect(MediaType.allKnownExtensions.contains(type.fileExtension))
        }
    }
}

extension MediaDetectorTests {
    @Suite("JPEG frame markers")
    struct JPEGFrames {
        /// SOI, an APPn segment of `appLength` bytes, then a frame header with `marker`.
        static func jpeg(frame marker: UInt8, appLength: Int = 16) -> [UInt8] {
            let app =
                [0xFF, 0xE1, UInt8(appLength >> 8), UInt8(appLength & 0xFF)]
                + [UInt8](repeating: 0, count: appLength - 2)
            return [0xFF, 0xD8] + app + [0xFF, 0xFF, marker, 0x00, 0x0B, 8, 0, 16, 0, 16, 1, 1, 0x11, 0]
        }

        @Test(arguments: [0xC0, 0xC1, 0xC2, 0xC9, 0xCA] as [UInt8])
        func decodable(_ marker: UInt8) {
            #expect(MediaDetector.jpegFrameMarker(Self.jpeg(frame: marker)) == marker)
            #expect(MediaDetector.detect(Self.jpeg(frame: marker)) == .jpeg)
        }

        @Test(arguments: [0xC3, 0xC5, 0xC6, 0xC7, 0xCB, 0xCD, 0xCE, 0xCF] as [UInt8])
        func refused(_ marker: UInt8) {
            #expect(MediaDetector.detect(Self.jpeg(frame: marker)) == nil)
            #expect(MediaDetector.unsupportedFormatName(Self.jpeg(frame: marker))?.contains("JPEG") == true)
        }

        @Test("a frame header past the prefix, or malformed segments, leave the decision to the decoder")
        func unknown() {
            let late = Self.jpeg(frame: 0xC3, appLength: 8_000)
            #expect(MediaDetector.jpegFrameMarker(Array(late.prefix(MediaDetector.prefixLength))) == nil)
            #expect(MediaDetector.detect(late) == .jpeg)
            #expect(MediaDetector.detect([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0xFF, 0xC3]) == .jpeg)
            #expect(MediaDetector.detect([0xFF, 0xD8, 0xFF]) == .jpeg)
        }
    }
}
