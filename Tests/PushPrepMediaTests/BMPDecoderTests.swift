import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepMedia

// MARK: - Test-only BMP writer

private func le16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
private func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }

/// Builds a BMP file byte by byte. `palette` is RGB triples; `masks` go inside V2+ headers or,
/// for a 40-byte header, right after it. `pixels` is the raw (already padded / RLE) body.
private func makeBMP(
    headerSize: Int = 40, width: Int, height: Int, bitCount: Int, compression: Int = 0,
    palette: [[UInt8]] = [], colorsUsed: Int? = nil, masks: [UInt32] = [], planes: Int = 1,
    pixels: [UInt8], dataOffset: Int? = nil
) -> [UInt8] {
    var dib: [UInt8] = []
    if headerSize == 12 {
        dib = cat(le32(12), le16(width), le16(height), le16(planes), le16(bitCount))
    } else {
        dib = cat(le32(headerSize), le32(width), le32(height), le16(planes), le16(bitCount))
        dib += cat(le32(compression), le32(pixels.count), le32(2835), le32(2835))
        dib += cat(le32(colorsUsed ?? palette.count), le32(0))
        if headerSize > 40 { dib += masks.flatMap { le32(Int($0)) } }
        dib += [UInt8](repeating: 0, count: max(0, headerSize - dib.count))
        dib = Array(dib.prefix(headerSize))
        if headerSize == 40 { dib += masks.flatMap { le32(Int($0)) } }
    }
    let pal: [UInt8] = palette.flatMap { (c: [UInt8]) -> [UInt8] in
        headerSize == 12 ? [c[2], c[1], c[0]] : [c[2], c[1], c[0], 0]
    }
    let offset = dataOffset ?? 14 + dib.count + pal.count
    let total = 14 + dib.count + pal.count + pixels.count
    return cat([0x42, 0x4D], le32(total), le32(0), le32(offset), dib, pal, pixels)
}

private func cat(_ parts: [UInt8]...) -> [UInt8] { parts.flatMap { $0 } }

/// Pads each stored row to a multiple of 4 bytes.
private func rows(_ rows: [[UInt8]]) -> [UInt8] {
    rows.flatMap { $0 + [UInt8](repeating: 0, count: (4 - $0.count % 4) % 4) }
}

private func code(of body: () throws(PushPrepError) -> Void) -> PushPrepError.Code? {
    do { try body(); return nil } catch { return error.code }
}

private func decodeCode(_ bytes: [UInt8], maxPixels: Int = .max) -> PushPrepError.Code? {
    code { () throws(PushPrepError) in _ = try BMPDecoder.decode(bytes, maxPixels: maxPixels) }
}

private let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255]
private let white: [UInt8] = [255, 255, 255], black: [UInt8] = [0, 0, 0]

/// A small valid 24-bit file used as the base of hostile variants.
private let base24 = makeBMP(
    width: 3, height: 2, bitCount: 24,
    pixels: rows([[0, 0, 255, 0, 255, 0, 255, 0, 0], [255, 255, 255, 0, 0, 0, 1, 2, 3]]))

// MARK: - Valid files

@Suite("BMPDecoder") struct BMPDecoderTests {
    @Test func bottomUp24BitWithOddWidthPadding() throws {
        // 3 px × 3 bytes = 9 bytes per row, padded to 12. Stored bottom row first.
        let file = makeBMP(
            width: 3, height: 2, bitCount: 24,
            pixels: rows([
                [0, 0, 255, 0, 255, 0, 255, 0, 0],  // bottom: red, green, blue (as BGR)
                [255, 255, 255, 0, 0, 0, 3, 2, 1],  // top: white, black, (1,2,3)
            ]))
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        #expect(bmp.width == 3 && bmp.height == 2 && bmp.bands == 3)
        #expect(bmp.pixels == cat(white, black, [1, 2, 3], red, green, blue))
    }

    @Test func topDown24Bit() throws {
        let file = makeBMP(width: 1, height: -2, bitCount: 24, pixels: rows([[0, 0, 255], [255, 0, 0]]))
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        #expect(bmp.height == 2)
        #expect(bmp.pixels == cat(red, blue))
    }

    @Test func bgrx32BitIgnoresFourthByte() throws {
        let file = makeBMP(width: 2, height: 1, bitCount: 32, pixels: [30, 20, 10, 0x7F, 3, 2, 1, 0])
        #expect(try BMPDecoder.header(file).hasAlpha == false)
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        #expect(bmp.bands == 3)
        #expect(bmp.pixels == [10, 20, 30, 1, 2, 3])
    }

    @Test(arguments: [108, 124]) func bitfields32WithAlphaInV4V5Header(headerSize: Int) throws {
        let file = makeBMP(
            headerSize: headerSize, width: 2, height: 1, bitCount: 32, compression: 3,
            masks: [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000],
            pixels: [30, 20, 10, 0x80, 3, 2, 1, 0xFF])
        let header = try BMPDecoder.header(file)
        #expect(header.width == 2 && header.height == 1 && header.hasAlpha)
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        #expect(bmp.bands == 4)
        #expect(bmp.pixels == [10, 20, 30, 0x80, 1, 2, 3, 0xFF])
    }

    @Test func alphaBitfieldsAfterInfoHeaderWithUnusualOrder() throws {
        // BI_ALPHABITFIELDS (6) with a 40-byte header: four masks follow the header. RGBA byte order.
        let file = makeBMP(
            width: 1, height: 1, bitCount: 32, compression: 6,
            masks: [0x0000_00FF, 0x0000_FF00, 0x00FF_0000, 0xFF00_0000], pixels: [1, 2, 3, 4])
        let bmp = try BMPDecoder.decode(file, maxPixels: 1)
        #expect(bmp.pixels == [1, 2, 3, 4])
    }

    @Test func bitfields32WithoutAlphaMaskHasThreeBands() throws {
        let file = makeBMP(
            width: 1, height: 1, bitCount: 32, compression: 3,
            masks: [0x00FF_0000, 0x0000_FF00, 0x0000_00FF], pixels: [3, 2, 1, 9])
        let bmp = try BMPDecoder.decode(file, maxPixels: 1)
        #expect(bmp.bands == 3 && bmp.pixels == [1, 2, 3])
    }

    @Test func v5RGBIgnoresAlphaMaskInHeader() throws {
        // BI_RGB: masks in the header are not used, so the fourth byte is padding.
        let file = makeBMP(
            headerSize: 124, width: 1, height: 1, bitCount: 32,
            masks: [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000], pixels: [3, 2, 1, 9])
        #expect(try BMPDecoder.header(file).hasAlpha == false)
        #expect(try BMPDecoder.decode(file, maxPixels: 1).pixels == [1, 2, 3])
    }

    @Test func sixteenBit555Default() throws {
        // 0x7FFF white, 0x7C00 red, 0x0010 blue 16/31 → 132, 0x8000 (unused top bit) black.
        let file = makeBMP(
            width: 4, height: 1, bitCount: 16, pixels: cat(le16(0x7FFF), le16(0x7C00), le16(0x0010), le16(0x8000)))
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        #expect(bmp.pixels == cat(white, red, [0, 0, 132], black))
    }

    @Test func sixteenBit565Bitfields() throws {
        // Width 3 → 6 bytes, padded to 8. Green 32/63 → 130.
        let file = makeBMP(
            width: 3, height: 1, bitCount: 16, compression: 3, masks: [0xF800, 0x07E0, 0x001F],
            pixels: rows([cat(le16(0xF800), le16(0x0400), le16(0x001F))]))
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        #expect(bmp.pixels == cat(red, [0, 130, 0], blue))
    }

    @Test func sixteenBit4444WithAlpha() throws {
        let file = makeBMP(
            headerSize: 108, width: 1, height: 1, bitCount: 16, compression: 3,
            masks: [0x0F00, 0x00F0, 0x000F, 0xF000],
            pixels: rows([le16(0x8F05)]))
        let bmp = try BMPDecoder.decode(file, maxPixels: 1)
        #expect(bmp.bands == 4 && bmp.pixels == [255, 0, 85, 136])
    }

    @Test func eightBitPaletteClampsOutOfRangeIndexToEntryZero() throws {
        let palette: [[UInt8]] = [[10, 20, 30], red, green]
        let file = makeBMP(
            width: 3, height: 2, bitCount: 8, palette: palette, pixels: rows([[0, 1, 2], [2, 200, 1]]))
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        #expect(bmp.pixels == cat(green, [10, 20, 30], red, [10, 20, 30], red, green))
    }

    @Test func fourBitPaletteOddWidth() throws {
        let palette = (0..<16).map { i -> [UInt8] in [UInt8(i), UInt8(i * 2), UInt8(i * 3)] }
        let file = makeBMP(width: 3, height: 1, bitCount: 4, palette: palette, pixels: rows([[0x1F, 0x70]]))
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        #expect(bmp.pixels == cat(palette[1], palette[15], palette[7]))
    }

    @Test func oneBitPalette() throws {
        // Width 10: two bytes per row, padded to 4.
        let palette: [[UInt8]] = [[1, 2, 3], [250, 251, 252]]
        let file = makeBMP(
            width: 10, height: 2, bitCount: 1, palette: palette,
            pixels: rows([[0b1010_0000, 0b0100_0000], [0xFF, 0b1000_0000]]))
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        let (o, i) = (palette[0], palette[1])
        let top: [UInt8] = cat(cat(i, i, i, i, i, i, i, i, i), o)
        let bottom: [UInt8] = cat(i, o, i, o, o, o, o, o, o, i)
        #expect(bmp.pixels == cat(top, bottom))
    }

    @Test func rle8WithAllEscapes() throws {
        let palette: [[UInt8]] = [[10, 20, 30], red, green, blue]
        let body: [UInt8] = [
            3, 1,  // row 0: three reds
            0, 3, 2, 3, 1, 0,  // absolute: green, blue, red + pad byte
            0, 0,  // end of line → row 1
            0, 2, 2, 1,  // delta: x += 2, y += 1 → (2, row 2); row 1 stays unwritten
            2, 0,  // two of entry 0
            0, 1,  // end of bitmap
        ]
        let file = makeBMP(width: 6, height: 3, bitCount: 8, compression: 1, palette: palette, pixels: body)
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        let row2: [UInt8] = cat(black, black, [10, 20, 30], [10, 20, 30], black, black)
        let row1 = [UInt8](repeating: 0, count: 18)
        let row0: [UInt8] = cat(red, red, red, green, blue, red)
        #expect(bmp.pixels == cat(row2, row1, row0))
    }

    @Test func rle4WithAllEscapes() throws {
        let palette = (0..<16).map { i -> [UInt8] in [UInt8(i), UInt8(i * 2), UInt8(i * 3)] }
        let body: [UInt8] = [
            4, 0x12,  // row 0: 1 2 1 2
            0, 3, 0x34, 0x50,  // absolute 3 nibbles (2 bytes, no pad): 3 4 5
            0, 0,  // end of line
            0, 3, 0x56, 0x70,  // row 1, absolute 3 nibbles (2 bytes): 5 6 7
            0, 2, 1, 0,  // delta x += 1
            0, 3, 0xAB, 0xC0,  // absolute: A B C at x 4...6
            0, 0,  // end of line
            0, 5, 0x9A, 0xBC, 0xD0, 0,  // row 2, absolute 5 nibbles (3 bytes + pad)
            0, 1,
        ]
        let file = makeBMP(width: 7, height: 3, bitCount: 4, compression: 2, palette: palette, pixels: body)
        let bmp = try BMPDecoder.decode(file, maxPixels: 100)
        func p(_ idx: [Int]) -> [UInt8] { idx.flatMap { (k: Int) -> [UInt8] in k < 0 ? black : palette[k] } }
        let expected = cat(p([9, 10, 11, 12, 13, -1, -1]), p([5, 6, 7, -1, 10, 11, 12]), p([1, 2, 1, 2, 3, 4, 5]))
        #expect(bmp.pixels == expected)
    }

    @Test func rleWithoutEndOfBitmapAfterLastRowIsAccepted() throws {
        let file = makeBMP(width: 1, height: 1, bitCount: 8, compression: 1, palette: [red], pixels: [1, 0, 0, 0])
        #expect(try BMPDecoder.decode(file, maxPixels: 1).pixels == red)
    }

    @Test func os2CoreHeader8BitAnd24Bit() throws {
        let pal = makeBMP(
            headerSize: 12, width: 2, height: 2, bitCount: 8,
            palette: [red, green, blue] + [[UInt8]](repeating: black, count: 253), pixels: rows([[0, 1], [2, 0]]))
        #expect(try BMPDecoder.decode(pal, maxPixels: 4).pixels == cat(blue, red, red, green))
        let rgb = makeBMP(headerSize: 12, width: 1, height: 2, bitCount: 24, pixels: rows([[1, 2, 3], [4, 5, 6]]))
        #expect(try BMPDecoder.decode(rgb, maxPixels: 2).pixels == [6, 5, 4, 3, 2, 1])
    }

    @Test func maxPixelsIsInclusive() throws {
        #expect(try BMPDecoder.decode(base24, maxPixels: 6).pixels.count == 18)
        #expect(decodeCode(base24, maxPixels: 5) == .tooManyPixels)
    }

    // MARK: - Hostile and unsupported input

    @Test func emptyAndTinyFilesAreCorrupt() {
        #expect(decodeCode([]) == .corruptInput)
        #expect(decodeCode([0x42]) == .corruptInput)
        #expect(decodeCode([0x42, 0x4D]) == .corruptInput)
        #expect(decodeCode(Array("GIF89a-not-a-bmp-at-all".utf8)) == .corruptInput)
    }

    @Test func everyTruncationIsRefused() {
        for files in [
            base24,
            makeBMP(width: 2, height: 2, bitCount: 8, palette: [red, green], pixels: rows([[0, 1], [1, 0]])),
        ] {
            for length in 0..<files.count {
                #expect(decodeCode(Array(files.prefix(length))) == .corruptInput, "prefix \(length)")
            }
        }
    }

    @Test func hugeDimensionsFailFastWithoutAllocating() {
        let huge = makeBMP(width: 100_000, height: 100_000, bitCount: 24, pixels: [1, 2, 3, 4])
        #expect(code { () throws(PushPrepError) in _ = try BMPDecoder.header(huge) } == .tooManyPixels)
        #expect(decodeCode(huge) == .tooManyPixels)
        #expect(
            decodeCode(makeBMP(width: 1, height: Int(Int32.min), bitCount: 24, pixels: [0, 0, 0, 0])) == .tooManyPixels)
        // At the size cap with no limit the truncation check runs before the 12 GiB output would be allocated.
        let big = makeBMP(width: 65535, height: 65535, bitCount: 24, pixels: [1, 2, 3, 4])
        #expect(decodeCode(big) == .corruptInput)
        let bigRLE = makeBMP(width: 65535, height: 65535, bitCount: 8, compression: 1, palette: [red], pixels: [0, 1])
        #expect(decodeCode(bigRLE, maxPixels: 1_000_000) == .tooManyPixels)
    }

    @Test func badDimensionsAreCorrupt() {
        #expect(
            decodeCode(makeBMP(width: -3, height: 2, bitCount: 24, pixels: [UInt8](repeating: 0, count: 24)))
                == .corruptInput)
        #expect(decodeCode(makeBMP(width: 0, height: 2, bitCount: 24, pixels: [0, 0, 0, 0])) == .corruptInput)
        #expect(decodeCode(makeBMP(width: 2, height: 0, bitCount: 24, pixels: [0, 0, 0, 0])) == .corruptInput)
        #expect(
            decodeCode(makeBMP(headerSize: 12, width: 0, height: 1, bitCount: 24, pixels: [0, 0, 0, 0]))
                == .corruptInput)
        #expect(
            decodeCode(makeBMP(width: 1, height: 1, bitCount: 24, planes: 0, pixels: [0, 0, 0, 0])) == .corruptInput)
    }

    @Test func badOffsetsAreCorrupt() {
        let pixels: [UInt8] = [1, 2, 3, 0]
        #expect(
            decodeCode(makeBMP(width: 1, height: 1, bitCount: 24, pixels: pixels, dataOffset: 1_000_000))
                == .corruptInput)
        #expect(
            decodeCode(makeBMP(width: 1, height: 1, bitCount: 24, pixels: pixels, dataOffset: 0xFFFF_FFFF))
                == .corruptInput)
        #expect(decodeCode(makeBMP(width: 1, height: 1, bitCount: 24, pixels: pixels, dataOffset: 20)) == .corruptInput)
        #expect(decodeCode(makeBMP(width: 1, height: 1, bitCount: 24, pixels: pixels, dataOffset: 58)) == .corruptInput)
    }

    @Test func badHeaderSizes() {
        var file = base24
        file[14] = 64  // OS/2 2.x
        #expect(decodeCode(file) == .unsupportedType)
        file[14] = 200
        #expect(decodeCode(file) == .corruptInput)
        file[14] = 0
        #expect(decodeCode(file) == .corruptInput)
        #expect(decodeCode(Array(base24.prefix(40))) == .corruptInput)
    }

    @Test(arguments: [(4, "JPEG"), (5, "PNG"), (11, "CMYK"), (12, "CMYK"), (13, "CMYK"), (7, "7"), (99, "99")])
    func unsupportedCompressions(compression: Int, mentions: String) {
        let file = makeBMP(width: 1, height: 1, bitCount: 24, compression: compression, pixels: [0, 0, 0, 0])
        do {
            _ = try BMPDecoder.decode(file, maxPixels: 10)
            Issue.record("decoded compression \(compression)")
        } catch {
            #expect(error.code == .unsupportedType)
            #expect(error.message.contains(mentions))
        }
    }

    @Test(arguments: [0, 2, 3, 12, 48, 64])
    func unsupportedBitDepths(bitCount: Int) {
        let file = makeBMP(width: 1, height: 1, bitCount: bitCount, pixels: [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(decodeCode(file) == .unsupportedType)
    }

    @Test func compressionAndDepthMustAgree() {
        #expect(
            decodeCode(makeBMP(width: 1, height: 1, bitCount: 24, compression: 1, pixels: [1, 0, 0, 1]))
                == .corruptInput)
        #expect(
            decodeCode(makeBMP(width: 1, height: 1, bitCount: 8, compression: 2, palette: [red], pixels: [1, 0, 0, 1]))
                == .corruptInput)
        #expect(
            decodeCode(
                makeBMP(
                    width: 1, height: 1, bitCount: 24, compression: 3, masks: [0xFF, 0xFF00, 0xFF0000],
                    pixels: [0, 0, 0, 0])) == .corruptInput)
    }

    @Test func invalidMasksAreCorrupt() {
        func file(_ masks: [UInt32], bitCount: Int = 32) -> [UInt8] {
            makeBMP(width: 1, height: 1, bitCount: bitCount, compression: 3, masks: masks, pixels: [0, 0, 0, 0])
        }
        #expect(decodeCode(file([0x00FF_00FF, 0x0000_FF00, 0])) == .corruptInput)  // not contiguous
        #expect(decodeCode(file([0x00FF_FF00, 0x0000_FF00, 0xFF])) == .corruptInput)  // overlapping
        #expect(decodeCode(file([0x1F_0000, 0x3E0, 0x1F], bitCount: 16)) == .corruptInput)  // outside 16 bits
        #expect(decodeCode(Array(file([0xFF0000, 0xFF00, 0xFF]).prefix(60))) == .corruptInput)  // truncated masks
    }

    @Test func badRLEIsCorrupt() {
        func rle(_ body: [UInt8], height: Int = 2) -> [UInt8] {
            makeBMP(width: 4, height: height, bitCount: 8, compression: 1, palette: [red, green], pixels: body)
        }
        #expect(decodeCode(rle([5, 1, 0, 1])) == .corruptInput)  // run past the row end
        #expect(decodeCode(rle([3, 1, 2, 1, 0, 1])) == .corruptInput)  // second run crosses the row end
        #expect(decodeCode(rle([0, 5, 1, 1, 1, 1, 1, 0, 0, 1])) == .corruptInput)  // absolute past the row end
        #expect(decodeCode(rle([0, 2, 5, 0, 0, 1])) == .corruptInput)  // delta past the right edge
        #expect(decodeCode(rle([0, 2, 0, 3, 0, 1])) == .corruptInput)  // delta past the top
        #expect(decodeCode(rle([0, 0, 0, 0, 0, 0, 0, 1])) == .corruptInput)  // too many end-of-lines
        #expect(decodeCode(rle([0, 0, 0, 0, 1, 1, 0, 1])) == .corruptInput)  // run after the last row
        #expect(decodeCode(rle([2, 1])) == .corruptInput)  // no end of bitmap, rows missing
        #expect(decodeCode(rle([0, 4, 1, 1])) == .corruptInput)  // absolute block truncated
        #expect(decodeCode(rle([0, 2, 1])) == .corruptInput)  // delta truncated
        #expect(
            decodeCode(
                makeBMP(width: 1, height: -1, bitCount: 8, compression: 1, palette: [red], pixels: [1, 0, 0, 1]))
                == .corruptInput)
    }

    /// Random byte corruption of valid files must never crash or trap; whatever decodes must be consistent.
    @Test func mutatedFilesNeverCrash() {
        let palette16 = (0..<16).map { i -> [UInt8] in [UInt8(i), 0, 0] }
        let seeds: [[UInt8]] = [
            base24,
            makeBMP(
                width: 5, height: 3, bitCount: 8, compression: 1, palette: [red, green],
                pixels: [2, 1, 0, 3, 0, 1, 0, 0, 0, 0, 1, 1, 0, 2, 1, 1, 1, 0, 0, 1]),
            makeBMP(
                width: 5, height: 2, bitCount: 4, compression: 2, palette: palette16,
                pixels: [5, 0x12, 0, 0, 0, 3, 0x45, 0x60, 0, 1]),
            makeBMP(
                headerSize: 124, width: 2, height: -2, bitCount: 32, compression: 3,
                masks: [0xFF0000, 0xFF00, 0xFF, 0xFF00_0000], pixels: Array(0..<16)),
            makeBMP(
                width: 3, height: 2, bitCount: 16, compression: 3, masks: [0xF800, 0x07E0, 0x001F],
                pixels: Array(0..<16)),
            makeBMP(headerSize: 12, width: 9, height: 2, bitCount: 1, palette: [red, blue], pixels: Array(0..<8)),
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(truncatingIfNeeded: state >> 1)
        }
        for seed in seeds {
            for _ in 0..<3000 {
                var file = seed
                for _ in 0...(next() % 4) {
                    let value = next() % 3 == 0 ? UInt8.max : UInt8(truncatingIfNeeded: next())
                    file[next() % file.count] = value
                }
                if next() % 5 == 0 { file = Array(file.prefix(next() % file.count)) }
                _ = try? BMPDecoder.header(file)
                if let bmp = try? BMPDecoder.decode(file, maxPixels: 1 << 22) {
                    #expect(bmp.pixels.count == bmp.width * bmp.height * bmp.bands)
                }
            }
        }
    }
}

// MARK: - Cross-check against ffmpeg

private let ffmpeg = "/usr/bin/ffmpeg"

@Suite(
    "BMPDecoder vs ffmpeg",
    .enabled(if: FileManager.default.isExecutableFile(atPath: ffmpeg), "ffmpeg not installed at /usr/bin/ffmpeg"))
struct BMPDecoderFFmpegTests {
    private func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = ["-v", "error", "-y"] + arguments
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "ffmpeg \(arguments.joined(separator: " "))")
    }

    /// ffmpeg writes the BMP in `pixelFormat`, then decodes that BMP to RGB24 as the reference.
    /// Tolerances cover ffmpeg widening 4/5/6-bit channels by shifting (15 → 240) where we round (15 → 255).
    @Test(arguments: [
        ("bgr24", 0), ("bgra", 0), ("pal8", 0), ("rgb565", 4), ("rgb555", 4), ("rgb444", 15), ("monob", 0),
    ])
    func matchesFFmpeg(pixelFormat: String, tolerance: Int) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bmptest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bmpURL = dir.appendingPathComponent("out.bmp"), rawURL = dir.appendingPathComponent("out.rgb")
        try run(["-f", "lavfi", "-i", "testsrc=size=33x17", "-frames:v", "1", "-pix_fmt", pixelFormat, bmpURL.path])
        try run(["-i", bmpURL.path, "-f", "rawvideo", "-pix_fmt", "rgb24", rawURL.path])
        let bmp = try BMPDecoder.decode([UInt8](Data(contentsOf: bmpURL)), maxPixels: 10_000)
        let reference = [UInt8](try Data(contentsOf: rawURL))
        #expect(bmp.width == 33 && bmp.height == 17)
        let rgb =
            bmp.bands == 3
            ? bmp.pixels : stride(from: 0, to: bmp.pixels.count, by: 4).flatMap { bmp.pixels[$0..<$0 + 3] }
        try #require(rgb.count == reference.count)
        let worst = zip(rgb, reference).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= tolerance, "\(pixelFormat): largest channel difference \(worst)")
    }
}
