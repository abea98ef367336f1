import Foundation
import Logging
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrep

/// The real-world images of `../shared/corpus/sharp-fixtures` (the hard cases that broke image
/// resizers in the field). That folder is on the developers' and CI's machines but not in a
/// user's clone, so the suite skips, saying so, when it is absent.
@Suite(
    .enabled(
        if: SharedCorpus.sharpFixtures != nil && TestTools.programPath("vipsheader") != nil,
        "../shared/corpus/sharp-fixtures is absent (it is not part of the project) or vipsheader is missing"
    )
)
struct CorpusTests {
    static var corpus: URL? { SharedCorpus.sharpFixtures }

    static let documentedCodes = Set(PushPrepError.Code.all)

    /// Files that must fail, and how. Everything else in the corpus must succeed.
    static let expectedFailures: [String: PushPrepError.Code] = [
        "65536-uint32-limit.png": .tooManyPixels,
        "giant-image.jpg": .tooManyPixels,
        "check.svg": .unsupportedType,
        "circle.svg": .unsupportedType,
        "struct-image-04-t.svg": .unsupportedType,
        "relax.jp2": .unsupportedType,
        "relax_tileparts.jp2": .unsupportedType,
        "vfile.v": .unsupportedType,
        "README.md": .unsupportedType,
        "testimgl.jpg": .unsupportedType,
        "corrupt-header.jpg": .corruptInput,
        "truncated.jpg": .corruptInput,
        "truncated.png": .corruptInput,
    ]

    @Test("every corpus file becomes a valid attachment or fails with a documented code")
    func everyFile() async throws {
        let corpus = try #require(Self.corpus)
        let out = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(out) }
        let inputs = InputExpander.expand([corpus.path])
        #expect(inputs.count > 50)
        let processor = Processor(settings: ProcessingSettings(), outputDirectory: out.path, logger: .quiet)
        let manifest = try await processor.run(inputs)
        try ManifestAssertions.validate(manifest)
        #expect(manifest.attachments.count == inputs.count)

        var renditions = 0
        for entry in manifest.attachments {
            let name = URL(fileURLWithPath: entry.source).lastPathComponent
            switch entry {
            case .failed(let failure):
                #expect(Self.documentedCodes.contains(failure.error.code), "\(name): \(failure.error.code)")
                #expect(
                    Self.expectedFailures[name] == failure.error.code,
                    "\(name) failed with \(failure.error.code): \(failure.error.message)")
            case .ok(let attachment):
                #expect(Self.expectedFailures[name] == nil, "\(name) should have failed")
                try checkOutput(attachment, in: out, name: name)
                // Android's rendition (the default platforms are ios,android): within FCM's rules,
                // decoded by Pillow, its crop inside the source.
                #expect(attachment.renditions.android != nil, "\(name): no Android rendition \(attachment.warnings)")
                renditions += try RenditionAssertions.check(attachment, in: out)
            }
        }
        #expect(renditions > 50)
    }

    private func checkOutput(_ attachment: PushPrepCore.Attachment, in out: URL, name: String) throws {
        let file = out.appendingPathComponent(attachment.file)
        let probe = try ImageProbe.probe(file)
        #expect(attachment.bytes <= AppleLimits.imageBytes, "\(name)")
        #expect((attachment.width ?? .max) <= 1290, "\(name) is \(String(describing: attachment.width)) wide")
        #expect(probe.width == attachment.width, "\(name)")
        #expect(probe.interpretation == "srgb", "\(name) is \(probe.interpretation)")
        #expect(!probe.hasEXIF && !probe.hasGPS && !probe.hasXMP && !probe.hasIPTC, "\(name) kept metadata")
        #expect(probe.orientation == 1, "\(name)")
        let loader = ["public.jpeg": "jpegload", "public.png": "pngload", "com.compuserve.gif": "gifload"]
        #expect(probe.loader == loader[attachment.uti], "\(name): \(probe.loader) for \(attachment.uti)")
        #expect(ImageProbe.decodesFully(file), "\(name): output does not decode")
    }

    @Test("EXIF orientations 2...8 come out looking like orientation 1")
    func orientationsAreUpright() async throws {
        let corpus = try #require(Self.corpus)
        let out = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(out) }
        for kind in ["Landscape", "Portrait"] {
            let inputs = (1...8).map { corpus.appendingPathComponent("\(kind)_\($0).jpg").path }
            let processor = Processor(settings: ProcessingSettings(), outputDirectory: out.path, logger: .quiet)
            let manifest = try await processor.run(inputs.map { InputItem(source: $0, path: $0) })
            let files = manifest.attachments.compactMap { $0.attachment.map { out.appendingPathComponent($0.file) } }
            try #require(files.count == 8)
            for (index, file) in files.enumerated().dropFirst() {
                // The fixtures differ only by the digit drawn on them; a wrongly rotated or
                // mirrored image differs everywhere (mean difference far above 30).
                let difference = try ImageProbe.meanDifference(files[0], file, scratch: out)
                #expect(difference < 30, "\(kind)_\(index + 1): mean difference \(difference) from \(kind)_1")
            }
        }
    }
}

/// `../shared/corpus` beside the package, when it is there.
enum SharedCorpus {
    static let sharpFixtures: URL? = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                let corpus = directory.deletingLastPathComponent().appendingPathComponent(
                    "shared/corpus/sharp-fixtures")
                return FileManager.default.fileExists(atPath: corpus.path) ? corpus : nil
            }
            directory.deleteLastPathComponent()
        }
        return nil
    }()
}

/// The whole corpus through the real binary, as a user runs it: it must finish (no hang), exit
/// with 1 (some fixtures must fail), and stay within a bounded amount of memory.
@Suite(
    .enabled(
        if: SharedCorpus.sharpFixtures != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/time")
            && TestTools.pushprepBinary() != nil,
        "needs ../shared/corpus (absent outside the developers' machines), GNU time and the built binary"
    )
)
struct CorpusProcessTests {
    @Test("the corpus through the CLI: no crash, no hang, peak memory under 300 MB")
    func boundedMemory() throws {
        let corpus = try #require(SharedCorpus.sharpFixtures)
        let binary = try #require(TestTools.pushprepBinary())
        let out = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(out) }
        let result = try TestTools.run(
            "/usr/bin/time",
            ["-f", "peak-kb=%M", binary.path, "process", corpus.path, "--out", out.path, "--jobs", "2"],
            timeout: .seconds(300)
        )
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        // Exit 1: the corpus holds fixtures that must fail. A crash would be a signal (>128).
        #expect(result.status == 1, "exit \(result.status): \(stderr.suffix(2000))")
        let peak = stderr.split(separator: "\n").last { $0.hasPrefix("peak-kb=") }
            .flatMap { Int($0.dropFirst("peak-kb=".count)) }
        let kilobytes = try #require(peak, "GNU time printed no peak: \(stderr.suffix(500))")
        #expect(kilobytes < 300_000, "peak memory \(kilobytes / 1024) MB")
    }
}
