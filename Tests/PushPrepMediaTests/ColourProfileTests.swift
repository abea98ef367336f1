import Testing

@testable import PushPrepMedia

/// ``ColourProfile`` on profiles built byte by byte: the v2 and v4 ways of writing the
/// description, which descriptions count as sRGB, and bytes that are not a whole profile.
struct ColourProfileTests {
    /// A profile of `space` whose only tag is `desc`, of type `desc` (ICC v2) or `mluc` (v4).
    static func profile(space: String, description: String, v4: Bool = false) -> [UInt8] {
        func u32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * (3 - $0))) } }
        let tag: [UInt8]
        if v4 {
            let text = description.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            tag = Array("mluc".utf8) + u32(0) + u32(1) + u32(12) + Array("enUS".utf8) + u32(text.count) + u32(28) + text
        } else {
            let text = Array(description.utf8) + [0]
            tag = Array("desc".utf8) + u32(0) + u32(text.count) + text
        }
        var header = [UInt8](repeating: 0, count: 128)
        header.replaceSubrange(16..<20, with: Array(space.utf8))
        header.replaceSubrange(36..<40, with: Array("acsp".utf8))
        let table = u32(1) + Array("desc".utf8) + u32(144) + u32(tag.count)
        return header + table + tag
    }

    static func read(_ bytes: [UInt8]) -> ColourProfile? {
        bytes.withUnsafeBytes { ColourProfile($0) }
    }

    @Test(
        "descriptions with an sRGB word are sRGB; other encodings and wide gamuts are not",
        arguments: [
            ("sRGB IEC61966-2.1", true), ("sRGB", true), ("sRGB2014", true), ("sRGB Gamut with sRGB Transfer", true),
            ("Artifex Software sRGB ICC Profile", true), ("Display P3", false), ("sP3C", false),
            ("Adobe RGB (1998)", false), ("ProPhoto RGB", false), ("Artifex Software esRGB ICCProfile", false),
            ("Artifex Software scRGB ICCProfile", false), ("Generic RGB Profile", false), ("e-sRGB", false),
            ("Kodak e-sRGB", false),
        ])
    func sRGBNames(description: String, isSRGB: Bool) throws {
        for v4 in [false, true] {
            let profile = try #require(Self.read(Self.profile(space: "RGB ", description: description, v4: v4)))
            #expect(profile.description == description)
            #expect(profile.isRGB)
            #expect(profile.isSRGB == isSRGB, "\(description), v4: \(v4)")
        }
    }

    /// The description comes from the file and reaches the manifest's operations and the logs.
    @Test("control and format characters of a description are dropped")
    func descriptionIsPrintable() throws {
        for v4 in [false, true] {
            let named = "Display\nP3\u{202E}\u{7}\r kit"
            let profile = try #require(Self.read(Self.profile(space: "RGB ", description: named, v4: v4)))
            #expect(profile.description == "DisplayP3 kit", "v4: \(v4)")
        }
    }

    @Test("a grey or CMYK profile named sRGB is not an RGB one")
    func otherSpaces() throws {
        let grey = try #require(Self.read(Self.profile(space: "GRAY", description: "sRGB grey")))
        #expect(!grey.isRGB && !grey.isSRGB)
        let cmyk = try #require(Self.read(Self.profile(space: "CMYK", description: "U.S. Web Coated (SWOP) v2")))
        #expect(cmyk.colourSpace == "CMYK" && !cmyk.isSRGB)
    }

    @Test("cut-off and foreign bytes give no profile or no description, never a crash")
    func damagedBytes() throws {
        let whole = Self.profile(space: "RGB ", description: "Display P3")
        for length in [0, 40, 131] {
            #expect(Self.read(Array(whole.prefix(length))) == nil, "\(length) bytes")
        }
        // The header and table survive, the tag does not: a profile without a description,
        // which is not taken for sRGB.
        for length in [132, 144, 150, whole.count - 1] {
            let profile = try #require(Self.read(Array(whole.prefix(length))))
            #expect(profile.description == nil && !profile.isSRGB, "\(length) bytes")
        }
        var foreign = whole
        foreign.replaceSubrange(36..<40, with: Array("xxxx".utf8))
        #expect(Self.read(foreign) == nil)
    }
}
