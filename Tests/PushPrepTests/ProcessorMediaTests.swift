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
        #expect(animation.warnings.contains { $0.contains("MP4") })

        for attachment in [movie, audio, animation] {
            let path = out.appendingPathComponent(attachment.file).path
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
            #expect(size == attachment.bytes)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(!names.contains { $0.hasPrefix(AtomicFile.temporaryPrefix) })
    }
}
