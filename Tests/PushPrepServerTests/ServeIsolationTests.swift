import Foundation
import PushPrepTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `pushprep serve` decodes in its embedded workers' pool of decoder processes (`--isolation
/// process`, its default): a job whose decoder is killed twice fails with `decoder_crashed`, the
/// job beside it succeeds, and the server goes on answering and processing.
@Suite(.serialized)
struct ServeIsolationTests {
    static let canMake = TestTools.programAvailable("ffmpeg") && TestTools.programAvailable("vips")

    @Test(
        "a job whose decoder is killed twice fails with decoder_crashed; serve and the other jobs go on",
        .enabled(if: canMake, "needs ffmpeg and vips"))
    func decoderKilledInServe() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let movie = dir.appendingPathComponent("movie.mp4").path
        let photo = dir.appendingPathComponent("photo.jpg").path
        try await ChildProcessTools.blocking {
            // Long enough to be caught mid-transcode (about 2 s in a release build).
            try TestTools.ffmpeg(
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=1920x1080:rate=30:duration=15", "-f", "lavfi",
                "-i", "sine=duration=15", "-c:v", "mpeg4", "-q:v", "6", "-c:a", "aac", "-shortest", movie)
            try TestTools.vips("gaussnoise", photo, "900", "600", "--mean", "110")
        }
        let files = [
            "movie.mp4": [UInt8](try Data(contentsOf: URL(fileURLWithPath: movie))),
            "photo.jpg": [UInt8](try Data(contentsOf: URL(fileURLWithPath: photo))),
            "later.jpg": [UInt8](try Data(contentsOf: URL(fileURLWithPath: photo))),
        ]
        try await TestServer.with(files: files) { sources in
            let server = try await InProcessServe.start(["--workers", "2"], in: dir)
            let api = APITestClient(baseURL: server.baseURL)
            let movieURL = sources.url("/files/movie.mp4")
            let created = try await api.post(
                "/v1/jobs", json: #"{"sources": ["\#(movieURL)", "\#(sources.url("/files/photo.jpg"))"]}"#)
            let ids = try #require(
                (try created.json()["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }, "\(created.text)")
            try #require(ids.count == 2, "\(created.text)")

            let first = try await Self.decoder(of: server, processing: movieURL)
            kill(first, SIGSEGV)
            let second = try await Self.decoder(of: server, processing: movieURL, after: [first])
            kill(second, SIGKILL)

            let failed = try await Self.finished(ids[0], api: api)
            #expect(failed["state"] as? String == "failed", "\(failed)\n\(server.logTail(30))")
            #expect((failed["error"] as? [String: Any])?["code"] as? String == "decoder_crashed", "\(failed)")
            let done = try await Self.finished(ids[1], api: api)
            #expect(done["state"] as? String == "succeeded", "\(done)\n\(server.logTail(30))")

            // The server goes on: it answers, and a new job on a fresh decoder succeeds.
            #expect(server.isRunning)
            let again = try await AttachmentRoutesTests.processedAttachment(
                sources.url("/files/later.jpg"), server: server)
            #expect(again["file"] is String)
            #expect(await server.stop())
        }
    }

    /// Job `id` once it is finished (long polls of 30 s, two minutes at most).
    static func finished(_ id: Int, api: APITestClient) async throws -> [String: Any] {
        var job: [String: Any] = [:]
        for _ in 0..<4 {
            job = try (try await api.get("/v1/jobs/\(id)?wait=30s")).json()
            if let state = job["state"] as? String, ["succeeded", "failed", "dead", "cancelled"].contains(state) {
                break
            }
        }
        return job
    }

    /// The pid of the decoder the server's debug lines say took `source` (the first not in `after`).
    static func decoder(of server: InProcessServe, processing source: String, after: [pid_t] = []) async throws
        -> pid_t
    {
        try await Poll.value(
            "a decoder takes \(source)", within: .seconds(120), every: .milliseconds(20),
            diagnostics: { server.logTail(30) }
        ) { () -> pid_t? in
            server.stderrText.split(separator: "\n").lazy.filter { $0.hasSuffix(" decoding") }
                .compactMap { line -> pid_t? in
                    let fields = line.split(separator: " ")
                    guard fields.contains("source=\(source)") || fields.contains("source=\"\(source)\""),
                        let pid = fields.first(where: { $0.hasPrefix("decoder=") }).flatMap({
                            pid_t($0.dropFirst("decoder=".count))
                        })
                    else { return nil }
                    return pid
                }
                .first { !after.contains($0) }
        }
    }
}
