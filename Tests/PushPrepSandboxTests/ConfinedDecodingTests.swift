import Foundation
import PushPrepCore
import PushPrepSandbox
import PushPrepTestSupport
import Testing

/// libvips and libav run under every layer: a real JPEG and a real MP4 go through the
/// product's pipeline (ProcessingSession) inside one confined decoder process, one after the
/// other, and the outputs it writes into its staging directory are what the reference tools
/// read back.
@Suite(.serialized)
struct ConfinedDecodingTests {
    static let canMake = TestTools.programAvailable("ffmpeg") && TestTools.programAvailable("vips")

    @Test("a JPEG and an MP4 are processed inside the confinement", .enabled(if: canMake, "needs ffmpeg and vips"))
    func jpegAndMovie() async throws {
        let run = try await DecoderUnderTest.start()
        let staging = run.staging
        do {
            try await ChildProcessTools.blocking {
                try TestTools.vips(
                    "gaussnoise", staging.appendingPathComponent("photo.jpg").path, "1600", "1200", "--mean", "128")
                try TestTools.ffmpeg(
                    // MPEG-4 Part 2, which the phone does not take: libav decodes it to H.264.
                    "-v", "error", "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=25:duration=3", "-f", "lavfi",
                    "-i", "sine=duration=3", "-c:v", "mpeg4", "-q:v", "4", "-c:a", "aac", "-shortest",
                    staging.appendingPathComponent("movie.mp4").path)
            }
            #expect(run.state(.seccomp)?.applied == true)

            let photo = try await process(run, "photo.jpg")
            #expect(photo.kind == .image)
            #expect(photo.operations.contains { $0.hasPrefix("resized 1600x1200") }, "\(photo.operations)")
            let image = try await ChildProcessTools.blocking {
                try ImageProbe.probe(staging.appendingPathComponent("out").appendingPathComponent(photo.file))
            }
            #expect(image.width == photo.width && image.height == photo.height)

            let movie = try await process(run, "movie.mp4")
            #expect(movie.kind == .video)
            #expect(movie.operations.contains("transcode"), "decoded and encoded, not remuxed: \(movie.operations)")
            let (hasVideo, bytes) = try await ChildProcessTools.blocking {
                let probe = try MovieProbe.probe(
                    staging.appendingPathComponent("out").appendingPathComponent(movie.file).path)
                return (probe.streams.contains { $0["codec_type"] as? String == "video" }, probe.bytes)
            }
            #expect(hasVideo, "ffprobe finds no video stream in \(movie.file)")
            #expect(bytes == movie.bytes)
        } catch {
            await run.finish()
            throw error
        }
        #expect(await run.finish() == 0)
    }

    /// Processes a staged input into `out/` and returns its attachment; admits the memory the
    /// decoder asks for at once, as a parent whose budget is free does.
    private func process(_ run: DecoderUnderTest, _ input: String) async throws -> PushPrepCore.Attachment {
        var reply = try await run.decoder.request(
            .process(input: input, outputDirectory: "out", settings: ProcessingSettings()), timeout: .seconds(240))
        var asked = 0
        while case .admit(let bytes) = reply {
            asked += 1
            #expect(bytes > 0 && asked == 1, "\(input): asked for \(bytes) bytes, request \(asked)")
            reply = try await run.decoder.request(.admitted(alone: false), timeout: .seconds(240))
        }
        #expect(asked == 1, "\(input): the decoder asks the parent's budget for the input's memory once")
        guard case .processed(let entry) = reply else {
            throw TestTools.Failure(description: "\(input): the decoder answered \(reply)")
        }
        switch entry {
        case .ok(let attachment): return attachment
        case .failed(let failure): throw TestTools.Failure(description: "\(input): \(failure.error)")
        }
    }
}
