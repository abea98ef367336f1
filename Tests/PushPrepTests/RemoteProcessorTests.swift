import Foundation
import Logging
import PushPrepCore
import PushPrepRemote
import PushPrepTestSupport
import Testing

@testable import PushPrep

/// URLs through ``Processor`` and the CLI, beside files, against a real HTTP server on
/// 127.0.0.1 serving real images made with the `vips` program.
@Suite(
    .enabled(if: TestTools.programPath("vips") != nil, "needs the vips program (make deps installs libvips-tools)"),
    .timeLimit(.minutes(3)))
final class RemoteProcessorTests {
    let directory: URL

    init() throws {
        directory = try TestTools.temporaryDirectory()
    }

    deinit {
        TestTools.removeDirectory(directory)
    }

    private func jpeg(_ name: String, width: Int, height: Int) throws -> [UInt8] {
        let path = directory.appendingPathComponent(name).path
        try TestTools.vips("gaussnoise", path, "\(width)", "\(height)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func withServer(_ body: (TestServer<SourceFixtures>) async throws -> Void) async throws {
        let files = [
            "photo.jpg": try jpeg("photo.jpg", width: 320, height: 240),
            "other.jpg": try jpeg("other.jpg", width: 200, height: 100),
            // Another JPEG under a .png name, for the extension check.
            "photo.png": try jpeg("photo-as-png.jpg", width: 320, height: 240),
        ]
        try await TestServer.with(files: files, body)
    }

    private func run(
        _ sources: [String], out: URL? = nil,
        configure: (inout RemoteSettings) -> Void = { $0.allowedHosts = ["127.0.0.1"] }
    ) async throws -> (Manifest, URL) {
        var settings = ProcessingSettings()
        settings.jobs = 2
        var remote = RemoteSettings()
        remote.totalTimeout = .seconds(30)
        configure(&remote)
        let out = out ?? directory.appendingPathComponent("out-\(UUID().uuidString)")
        let processor = Processor(settings: settings, outputDirectory: out.path, logger: .quiet, remote: remote)
        let manifest = try await processor.run(InputExpander.expand(sources))
        try ManifestAssertions.validate(manifest)
        return (manifest, out)
    }

    @Test("a URL and a file in the same run; source is the URL as given, input has the final URL and status")
    func mixedRun() async throws {
        try await withServer { server in
            let file = directory.appendingPathComponent("other.jpg").path
            let url = server.url("/redirect/2/photo.jpg")
            let (manifest, out) = try await run([url, file])
            #expect(manifest.attachments.count == 2)
            let remote = try #require(manifest.attachments[0].attachment, "\(manifest.attachments[0])")
            #expect(remote.source == url)
            #expect(remote.input.url == server.url("/files/photo.jpg"))
            #expect(remote.input.status == 200)
            #expect(remote.input.type == "jpeg" && remote.width == 320 && remote.height == 240)
            #expect(remote.operations.first?.hasPrefix("fetched \(server.url("/files/photo.jpg"))") == true)
            #expect(remote.warnings.isEmpty)
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(remote.file).path))
            let local = try #require(manifest.attachments[1].attachment)
            #expect(local.source == file && local.input.url == nil && local.input.status == nil)
            // Only remote entries carry the new keys.
            let json = String(decoding: try manifest.jsonData(), as: UTF8.self)
            #expect(json.components(separatedBy: "\"status\" : 200").count == 2)
            // No download is left behind.
            let cache = out.appendingPathComponent(FetchCache.directoryName).path
            let names = try FileManager.default.contentsOfDirectory(atPath: cache)
            #expect(names.allSatisfy { $0.hasSuffix(".json") }, "\(names)")
        }
    }

    @Test("by default a loopback URL fails with blocked_address and the run goes on")
    func blockedByDefault() async throws {
        try await withServer { server in
            let (manifest, _) = try await run(
                [server.url("/files/photo.jpg"), directory.appendingPathComponent("other.jpg").path],
                configure: { _ in })
            #expect(manifest.attachments[0].failure?.error.code == .blockedAddress)
            #expect(manifest.attachments[1].attachment != nil)
            #expect(server.hits("/files/photo.jpg") == 0)
        }
    }

    @Test("no extension works; a wrong Content-Type or extension is a warning, not an error")
    func typesFromBytes() async throws {
        try await withServer { server in
            let (manifest, _) = try await run([
                server.url("/noext/photo"), server.url("/wrong-type/photo.jpg"), server.url("/files/photo.png"),
            ])
            let noExtension = try #require(manifest.attachments[0].attachment, "\(manifest.attachments[0])")
            #expect(noExtension.warnings.isEmpty)
            #expect(noExtension.file.hasSuffix(".jpg"))
            let wrongType = try #require(manifest.attachments[1].attachment)
            #expect(wrongType.warnings.count == 1)
            #expect(wrongType.warnings.first?.message.contains("Content-Type image/png") == true)
            let wrongExtension = try #require(manifest.attachments[2].attachment)
            #expect(wrongExtension.warnings.count == 2, "\(wrongExtension.warnings)")
            #expect(wrongExtension.warnings.contains { $0.message.contains("extension .png") })
        }
    }

    @Test("processing the same URL again revalidates with If-None-Match and reuses the output on a 304")
    func revalidation() async throws {
        try await withServer { server in
            let url = server.url("/files/photo.jpg")
            let (first, out) = try await run([url])
            let made = try #require(first.attachments[0].attachment)
            #expect(made.input.status == 200)
            let (second, _) = try await run([url], out: out)
            let reused = try #require(second.attachments[0].attachment)
            #expect(reused.id == made.id && reused.file == made.file && reused.sha256 == made.sha256)
            #expect(reused.input.status == 304)
            #expect(reused.operations.first == "revalidated \(url): 304 Not Modified")
            #expect(server.hits("/files/photo.jpg") == 2)
            #expect(server.conditionalHits("/files/photo.jpg") == 1)

            // Changed content (new ETag): downloaded and processed again.
            server.setETag("\"v2\"")
            let (third, _) = try await run([url], out: out)
            #expect(third.attachments[0].attachment?.input.status == 200)

            // A missing output is never "reused": the fetch is unconditional.
            try FileManager.default.removeItem(at: out.appendingPathComponent(made.file))
            let (fourth, _) = try await run([url], out: out)
            #expect(fourth.attachments[0].attachment?.input.status == 200)
            #expect(server.conditionalHits("/files/photo.jpg") == 2)
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(made.file).path))
        }
    }

    @Test("two URLs serving identical bytes share one output")
    func identicalBytesShareOutput() async throws {
        try await withServer { server in
            let (manifest, out) = try await run([server.url("/files/photo.jpg"), server.url("/noext/photo")])
            let a = try #require(manifest.attachments[0].attachment)
            let b = try #require(manifest.attachments[1].attachment)
            #expect(a.id == b.id && a.file == b.file)
            let outputs = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { !$0.hasPrefix(".") }
            #expect(Set(outputs) == Set([a.file] + a.companionFiles.map(\.file)), "one output and its renditions")
        }
    }

    @Test("fetch failures are entries with stable codes: 404, over the cap, other schemes")
    func failures() async throws {
        try await withServer { server in
            let (manifest, _) = try await run(
                [server.url("/status/404"), server.url("/chunked/photo.jpg"), "ftp://127.0.0.1/photo.jpg"],
                configure: {
                    $0.allowedHosts = ["127.0.0.1"]
                    $0.maxDownloadBytes = 1_000
                })
            #expect(
                manifest.attachments.map { $0.failure?.error.code } == [
                    .fetchFailed, .inputTooLarge, .fetchFailed,
                ])
            #expect(manifest.attachments[0].failure?.error.message.contains("404") == true)
            #expect(manifest.attachments[0].source == server.url("/status/404"))
        }
    }

    // MARK: - CLI

    private func pushprep(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let result = try TestTools.run(binary.path, arguments, currentDirectory: directory, timeout: .seconds(120))
        return (
            result.status, String(decoding: result.stdout, as: UTF8.self),
            String(decoding: result.stderr, as: UTF8.self)
        )
    }

    @Test("pushprep process and inspect take URLs; --allow-host opts in for that host only")
    func commandLine() async throws {
        try await withServer { server in
            let url = server.url("/files/photo.jpg")
            let escape = server.url(
                "/redirect-to?location=http://%5B::ffff:127.0.0.1%5D:\(server.port)/files/photo.jpg")
            let ok = try pushprep(["process", "--out", "out", "--allow-host", "127.0.0.1", url, "other.jpg"])
            #expect(ok.status == 0, "\(ok.stderr)")
            let manifest = try JSONDecoder().decode(
                Manifest.self, from: Data(contentsOf: directory.appendingPathComponent("out/manifest.json")))
            try ManifestAssertions.validate(manifest)
            #expect(manifest.attachments[0].attachment?.input.url == url)

            let refused = try pushprep(["process", "--out", "out2", url])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("blocked_address"))

            let escaped = try pushprep(["process", "--out", "out3", "--allow-host", "127.0.0.1", escape])
            #expect(escaped.status == 1)
            #expect(escaped.stderr.contains("blocked_address"), "\(escaped.stderr)")

            let inspect = try pushprep(["inspect", "--json", "--allow-host", "127.0.0.1", url])
            #expect(inspect.status == 0, "\(inspect.stderr)")
            let reports = try JSONDecoder().decode([InspectReport].self, from: Data(inspect.stdout.utf8))
            #expect(reports.first?.type == "jpeg" && reports.first?.width == 320)
            #expect(reports.first?.plan.first?.hasPrefix("fetch \(url)") == true)

            let usage = try pushprep(["process", "--max-download-bytes", "0", url])
            #expect(usage.status == 2)
        }
    }
}
