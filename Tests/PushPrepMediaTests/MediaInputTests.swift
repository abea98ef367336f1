import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepMedia

/// Opening media safely: whitelisted demuxers only, no nested opens, stream facts probed.
@Suite(.enabled(if: TestTools.programPath("ffmpeg") != nil, "needs the ffmpeg program to make fixtures"))
final class MediaInputTests {
    let directory: URL

    init() throws { directory = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    @Test("an MP4 opens and its streams are probed")
    func probesMP4() throws {
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=2", "-f", "lavfi", "-i",
            "sine=frequency=440:duration=2", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac",
            path("clip.mp4"))
        let input = try MediaInput(
            path: path("clip.mp4"), maxPixels: ProcessingSettings().maxPixels, deadline: MediaDeadline(seconds: 30))
        let probe = MediaProbe(input)
        #expect(probe.isMP4Family)
        #expect(abs((probe.duration ?? 0) - 2) < 0.2)
        let video = try #require(probe.video)
        #expect(video.codec == "h264" && video.width == 320 && video.height == 240)
        #expect(video.pixelFormat == "yuv420p" && video.bitDepth == 8 && video.is420)
        #expect(abs((video.frameRate ?? 0) - 25) < 0.01)
        let audio = try #require(probe.audio)
        #expect(audio.codec == "aac" && audio.isAACLC)
    }

    @Test("an HLS playlist named .mp4 that points at another local file fails without reading it")
    func playlistInDisguise() throws {
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=1", "-c:v", "libx264", "-f", "mpegts",
            path("secret.ts"))
        let playlist = """
            #EXTM3U
            #EXT-X-TARGETDURATION:1
            #EXTINF:1.0,
            \(path("secret.ts"))
            #EXT-X-ENDLIST

            """
        try Data(playlist.utf8).write(to: URL(fileURLWithPath: path("clip.mp4")))
        let before = try FileManager.default.attributesOfItem(atPath: path("secret.ts"))[.modificationDate] as? Date
        let error = #expect(throws: PushPrepError.self) {
            _ = try MediaInput(
                path: path("clip.mp4"), maxPixels: ProcessingSettings().maxPixels, deadline: MediaDeadline(seconds: 10))
        }
        #expect(error?.code == .unsupportedType)
        // A concat script likewise.
        try Data("ffconcat version 1.0\nfile '\(path("secret.ts"))'\n".utf8).write(
            to: URL(fileURLWithPath: path("list.mp4")))
        #expect(throws: PushPrepError.self) {
            _ = try MediaInput(
                path: path("list.mp4"), maxPixels: ProcessingSettings().maxPixels, deadline: MediaDeadline(seconds: 10))
        }
        let after = try FileManager.default.attributesOfItem(atPath: path("secret.ts"))[.modificationDate] as? Date
        #expect(before == after)
    }

    @Test("zero-length, truncated and random files fail with documented codes")
    func badFiles() throws {
        try Data().write(to: URL(fileURLWithPath: path("empty.mp4")))
        try Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(
            to: URL(fileURLWithPath: path("random.mp4")))
        for name in ["empty.mp4", "random.mp4"] {
            let error = #expect(throws: PushPrepError.self) {
                _ = try MediaInput(
                    path: path(name), maxPixels: ProcessingSettings().maxPixels, deadline: MediaDeadline(seconds: 10))
            }
            #expect([.unsupportedType, .corruptInput].contains(error?.code), "\(name): \(String(describing: error))")
        }
    }
}
