import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrep
@testable import PushPrepCore

/// Video, audio and animations through ``Processor``: final names, posters, options and
/// manifests valid against the schema.
@Suite(.enabled(if: TestTools.programPath("ffmpeg") != nil, "needs the ffmpeg program to make fixtures"))
final class ProcessorMediaTests {
    let directory: URL

    init() throws { directory = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(directory) }

    @Test("a movie, a sound and an animation become attachments with the right files and options")
    func mediaEntries() async throws {
        let clip = directory.appendingPathComponent("clip.mov").path
        let sound = directory.appendingPathComponent("sound.wav").path
        let gif = directory.appendingPathComponent("anim.gif").path
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=30:duration=3", "-f", "lavfi", "-i", "sine=duration=3",
            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", clip)
        try TestTools.ffmpeg("-f", "lavfi", "-i", "sine=duration=40", sound)
        try TestTools.ffmpeg("-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-frames:v", "8", gif)
        var settings = ProcessingSettings()
        settings.gifAsVideo = .always
        settings.baseURL = "https://cdn.example.com/push?sig=1"
        let out = directory.appendingPathComponent("out")
        let processor = Processor(settings: settings, outputDirectory: out.path, logger: .quiet)
        let manifest = try await processor.run([clip, sound, gif].map { InputItem(source: $0, path: $0) })
        try ManifestAssertions.validate(manifest)

        let movie = try #require(manifest.attachments[0].attachment)
        #expect(movie.kind == .video && movie.file == "\(movie.id).mp4" && movie.id.hasPrefix("vid-"))
        #expect(movie.width == 720 && abs((movie.duration ?? 0) - 3) < 0.5)
        #expect(movie.options.thumbnailTime != nil)
        let poster = try #require(movie.poster)
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(poster.file).path))
        #expect(movie.url == "https://cdn.example.com/push/\(movie.file)?sig=1")
        #expect(poster.url == "https://cdn.example.com/push/\(poster.file)?sig=1", "the poster has its own URL")
        #expect(movie.posterURL == poster.url)
        #expect(movie.input.videoCodec == "h264" && movie.input.audioCodec == "aac")

        let audio = try #require(manifest.attachments[1].attachment)
        #expect(audio.kind == .audio && audio.file.hasSuffix(".m4a") && audio.uti == "public.mpeg-4-audio")
        #expect(abs((audio.duration ?? 0) - 30) < 0.5 && audio.width == nil)

        let animation = try #require(manifest.attachments[2].attachment)
        #expect(animation.kind == .video && animation.file.hasSuffix(".mp4"))
        #expect(animation.warnings.contains { $0.message.contains("MP4") })

        for attachment in [movie, audio, animation] {
            let path = out.appendingPathComponent(attachment.file).path
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
            #expect(size == attachment.bytes)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(!names.contains { $0.hasPrefix(AtomicFile.temporaryPrefix) })
    }

    @Test("a copied MP4 whose header gives no duration still gets a poster (a short last group of pictures)")
    func posterWithoutDuration() async throws {
        // 3.2 s at 30 fps, a keyframe every second: the last group of pictures has 6 frames,
        // fewer than a candidate decodes. With no duration the candidates are placed in the
        // planned 15 s, past the end of the clip.
        let plain = directory.appendingPathComponent("plain.mp4").path
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "3.2", "-c:v", "libx264", "-profile:v", "main",
            "-pix_fmt", "yuv420p", "-g", "30", "-sc_threshold", "0", plain)
        let clip = directory.appendingPathComponent("no-duration.mp4")
        try Data(Self.zeroingDurations(Array(try Data(contentsOf: URL(fileURLWithPath: plain))))).write(to: clip)
        let probed = try TestTools.runChecked(
            "ffprobe",
            ["-v", "error", "-show_entries", "format=duration:stream=duration", "-of", "compact=p=0:nk=1", clip.path])
        let durations = String(decoding: probed, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        #expect(durations.count == 2 && durations.allSatisfy { Double($0) ?? 0 <= 0 }, "ffprobe: \(durations)")

        let out = directory.appendingPathComponent("out")
        let processor = Processor(settings: ProcessingSettings(), outputDirectory: out.path, logger: .quiet)
        let manifest = try await processor.run([InputItem(source: clip.path, path: clip.path)])
        try ManifestAssertions.validate(manifest)
        let movie = try #require(manifest.attachments.first?.attachment)
        #expect(movie.operations.first == "remux", "\(movie.operations)")
        #expect(abs((movie.duration ?? 0) - 3.2) < 0.2)
        let poster = try #require(movie.poster, "no poster")
        #expect(poster.width == 320 && poster.height == 240, "poster \(poster.width)x\(poster.height)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(poster.file).path))
        let time = try #require(movie.options.thumbnailTime)
        #expect(time >= 0 && time <= 3.2, "thumbnail time \(time)")
    }

    /// `mp4` with the durations of its `mvhd`, `tkhd` and `mdhd` boxes set to 0, as a recorder
    /// that never wrote them leaves them; the sample tables are untouched.
    private static func zeroingDurations(_ mp4: [UInt8]) -> [UInt8] {
        var bytes = mp4
        func number(_ at: Int, _ count: Int) -> Int { bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) } }
        func walk(_ start: Int, _ end: Int) {
            var offset = start
            while offset + 8 <= end {
                let size = number(offset, 4)
                guard size >= 8, offset + size <= end else { return }
                let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
                let wide = bytes[offset + 8] == 1
                let field: Int? =
                    switch type {
                    // version/flags, creation and modification times, timescale, duration
                    case "mvhd", "mdhd": offset + 12 + (wide ? 16 : 8) + 4
                    // version/flags, creation and modification times, track ID, reserved, duration
                    case "tkhd": offset + 12 + (wide ? 16 : 8) + 8
                    default: nil
                    }
                if ["moov", "trak", "mdia"].contains(type) { walk(offset + 8, offset + size) }
                if let field {
                    for index in field..<field + (wide ? 8 : 4) { bytes[index] = 0 }
                }
                offset += size
            }
        }
        walk(0, bytes.count)
        return bytes
    }
}
