import Foundation
import PushPrepTestSupport
import Testing

/// Embedded ICC profiles through the built `pushprep process`: wide-gamut RGB comes out as sRGB
/// (checked against `vips icc_transform … srgb --embedded`, an independent reference), with no
/// profile left in the output; sRGB-tagged and untagged inputs are not transformed.
///
/// Fixtures are made with the `vips` program: noise in sRGB, converted into the wide-gamut space
/// and tagged with its profile, so the stored numbers differ from the sRGB ones by up to a
/// hundred levels and an output that ignored the profile could not pass.
@Suite(
    .enabled(
        if: TestTools.programAvailable("vips") && TestTools.pushprepBinary() != nil,
        "needs the vips program and the built pushprep"))
struct ColourProfileTests {
    /// Debian's libgs-common (make deps) ships these; `p3` is built into libvips.
    static let ghostscriptProfiles = "/usr/share/color/icc/ghostscript"

    /// Display P3 (iPhone photos), Adobe RGB (a98) and ProPhoto (ROMM RGB).
    static let wideGamutProfiles = ["p3", "\(ghostscriptProfiles)/a98.icc", "\(ghostscriptProfiles)/rommrgb.icc"]

    @Test(
        "a wide-gamut PNG with real transparency is converted to sRGB as vips icc_transform does",
        arguments: wideGamutProfiles)
    func wideGamutPNG(profile: String) throws {
        try TestTools.withTemporaryDirectory { dir in
            try requireProfile(profile)
            let noise = try Self.noise(in: dir, alpha: true)
            let input = dir.appendingPathComponent("wide.png")
            try TestTools.vips("icc_transform", noise.path, input.path, profile, "--input-profile", "srgb")

            let (output, operations) = try process(input, in: dir)
            #expect(output.pathExtension == "png", "real transparency keeps a lossless PNG")
            let reference = dir.appendingPathComponent("reference.v")
            try TestTools.vips("icc_transform", input.path, reference.path, "srgb", "--embedded")
            #expect(try ImageProbe.maxDifference(input, reference, scratch: dir) > 20, "the fixture is not wide-gamut")
            let difference = try ImageProbe.maxDifference(output, reference, scratch: dir)
            #expect(difference <= 3, "\(profile): up to \(difference) levels from vips icc_transform")
            #expect(!(try ImageProbe.probe(output).hasICC), "the output keeps no profile")
            #expect(operations.contains { $0.hasSuffix("profile to srgb") }, "\(operations)")
        }
    }

    @Test("a Display P3 JPEG, as an iPhone writes it, comes out as sRGB JPEG without a profile")
    func displayP3JPEG() throws {
        try TestTools.withTemporaryDirectory { dir in
            // A flat, saturated red: JPEG keeps flat areas within a level or two, so the
            // comparison can be per pixel. Its P3 numbers are 20 levels off the sRGB ones.
            let flat = dir.appendingPathComponent("flat.v")
            let black = dir.appendingPathComponent("black.v")
            try TestTools.vips("black", black.path, "64", "64", "--bands", "3")
            try TestTools.vips("linear", black.path, flat.path, "1 1 1", "230 40 60", "--uchar")
            let tagged = dir.appendingPathComponent("srgb.v")
            try TestTools.vips("copy", flat.path, tagged.path, "--interpretation", "srgb")
            let input = dir.appendingPathComponent("p3.jpg")
            try TestTools.vips("icc_transform", tagged.path, input.path + "[Q=95]", "p3", "--input-profile", "srgb")

            let (output, _) = try process(input, in: dir)
            #expect(output.pathExtension == "jpg")
            let reference = dir.appendingPathComponent("reference.v")
            try TestTools.vips("icc_transform", input.path, reference.path, "srgb", "--embedded")
            #expect(try ImageProbe.maxDifference(input, reference, scratch: dir) > 10, "the fixture is not wide-gamut")
            let difference = try ImageProbe.maxDifference(output, reference, scratch: dir)
            #expect(difference <= 3, "up to \(difference) levels from vips icc_transform")
            let probe = try ImageProbe.probe(output)
            #expect(!probe.hasICC && probe.interpretation == "srgb")
        }
    }

    @Test("an sRGB-tagged input is not transformed: the same pixels untagged give the same bytes")
    func sRGBTaggedIsUntouched() throws {
        try TestTools.withTemporaryDirectory { dir in
            // Ghostscript's sRGB profile is not libvips' own: transforming with it moves some
            // pixels by a level, so a needless transform would change the output's bytes.
            let srgb = "\(Self.ghostscriptProfiles)/srgb.icc"
            try requireProfile(srgb)
            let noise = try Self.noise(in: dir, alpha: false)
            let pixels = dir.appendingPathComponent("tagged.v")
            try TestTools.vips("icc_transform", noise.path, pixels.path, srgb, "--input-profile", "srgb")
            let tagged = dir.appendingPathComponent("tagged.jpg")
            let untagged = dir.appendingPathComponent("untagged.jpg")
            try TestTools.vips("copy", pixels.path, tagged.path + "[Q=90]")
            try TestTools.vips("copy", pixels.path, untagged.path + "[Q=90,strip]")
            try #require(try ImageProbe.probe(tagged).hasICC && !(try ImageProbe.probe(untagged).hasICC))

            let (fromTagged, taggedOperations) = try process(tagged, in: dir)
            let (fromUntagged, untaggedOperations) = try process(untagged, in: dir)
            #expect(try Data(contentsOf: fromTagged) == Data(contentsOf: fromUntagged))
            #expect(!taggedOperations.contains { $0.contains("profile") }, "\(taggedOperations)")
            #expect(!untaggedOperations.contains { $0.contains("profile") }, "\(untaggedOperations)")
        }
    }

    @Test("an animated WebP with a Display P3 profile stays animated and is converted")
    func animatedWideGamutWebP() throws {
        try #require(TestTools.programAvailable("ffmpeg"), "needs ffmpeg to write an animation")
        try TestTools.withTemporaryDirectory { dir in
            // ffmpeg's colour test pattern, 4 frames, re-saved by vips as a P3-tagged WebP.
            let gif = dir.appendingPathComponent("frames.gif")
            try TestTools.ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=0.4", gif.path)
            let input = dir.appendingPathComponent("animated.webp")
            try TestTools.vips(
                "icc_transform", gif.path + "[n=-1]", input.path + "[lossless]", "p3", "--input-profile", "srgb")
            let probe = try ImageProbe.probe(input, allPages: true)
            try #require(probe.pages == 4 && probe.hasICC, "the fixture must be an animation with a profile")

            let (output, operations) = try process(input, in: dir)
            #expect(output.pathExtension == "gif")
            let out = try ImageProbe.probe(output, allPages: true)
            #expect(out.pages == 4 && out.pageHeight == 48)
            #expect(operations.contains { $0.hasSuffix("profile to srgb") }, "\(operations)")
            // GIF's palette moves pixels by about 2 levels on average; ignoring the profile
            // would move them by about 10.
            let reference = dir.appendingPathComponent("reference.v")
            try TestTools.vips("icc_transform", input.path + "[n=-1]", reference.path, "srgb", "--embedded")
            let frames = dir.appendingPathComponent("output.v")
            try TestTools.vips("copy", output.path + "[n=-1]", frames.path)
            let allInputFrames = URL(fileURLWithPath: input.path + "[n=-1]")
            #expect(
                try ImageProbe.meanDifference(allInputFrames, reference, scratch: dir) > 6,
                "the fixture is not wide-gamut")
            #expect(try ImageProbe.meanDifference(frames, reference, scratch: dir) < 4)
        }
    }

    // MARK: - Helpers

    private func requireProfile(_ profile: String) throws {
        guard profile.hasPrefix("/") else { return }
        try #require(
            FileManager.default.fileExists(atPath: profile), "\(profile) is missing: make deps installs libgs-common")
    }

    /// Colour noise in sRGB (fixed seeds), optionally with a constant alpha of 200.
    private static func noise(in dir: URL, alpha: Bool, width: Int = 96, height: Int = 64) throws -> URL {
        var bands: [String] = []
        for seed in 1...3 {
            let band = dir.appendingPathComponent("band\(seed).v")
            try TestTools.vips(
                "gaussnoise", band.path, "\(width)", "\(height)", "--mean", "128", "--sigma", "70", "--seed", "\(seed)")
            bands.append(band.path)
        }
        if alpha {
            let black = dir.appendingPathComponent("alpha0.v")
            let alpha = dir.appendingPathComponent("alpha.v")
            try TestTools.vips("black", black.path, "\(width)", "\(height)")
            try TestTools.vips("linear", black.path, alpha.path, "1", "200")
            bands.append(alpha.path)
        }
        let joined = dir.appendingPathComponent("joined.v")
        let cast = dir.appendingPathComponent("cast.v")
        let noise = dir.appendingPathComponent("noise.v")
        try TestTools.vips("bandjoin", bands.joined(separator: " "), joined.path)
        try TestTools.vips("cast", joined.path, cast.path, "uchar")
        try TestTools.vips("copy", cast.path, noise.path, "--interpretation", "srgb")
        return noise
    }

    /// Runs `pushprep process INPUT` and returns its one output and operations.
    private func process(_ input: URL, in dir: URL) throws -> (URL, [String]) {
        let binary = try #require(TestTools.pushprepBinary())
        let out = dir.appendingPathComponent("out-\(UUID().uuidString)")
        let result = try TestTools.run(binary.path, ["process", input.path, "--out", out.path])
        try #require(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        let manifest = try Data(contentsOf: out.appendingPathComponent("manifest.json"))
        let object = try JSONSerialization.jsonObject(with: manifest) as? [String: Any]
        let entry = try #require((object?["attachments"] as? [[String: Any]])?.first)
        let file = try #require(entry["file"] as? String)
        return (out.appendingPathComponent(file), entry["operations"] as? [String] ?? [])
    }
}
