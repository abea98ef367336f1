import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrep

/// `process --manifest-version 3`: the same run's manifest with each warning as
/// `{code, message}`, valid against the schema, and read by `payload` as version 2 is.
@Suite(.serialized)
struct ManifestVersionCLITests {
    @Test(.enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func versionThreeIsVersionTwoWithStructuredWarnings() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        // A JPEG named .png: its warning, extension_mismatch.
        try TestTools.vips("gaussnoise", dir.appendingPathComponent("photo.jpg").path, "64", "48")
        try FileManager.default.moveItem(
            at: dir.appendingPathComponent("photo.jpg"), to: dir.appendingPathComponent("photo.png"))

        let two = try PushPrepCLI.run(["process", "photo.png", "--out", "out2", "--manifest", "two.json"], in: dir)
        #expect(two.status == 0, "\(two.stderrText)")
        let three = try PushPrepCLI.run(
            ["process", "photo.png", "--out", "out3", "--manifest", "three.json", "--manifest-version", "3"], in: dir)
        #expect(three.status == 0, "\(three.stderrText)")
        let v2 = try Data(contentsOf: dir.appendingPathComponent("two.json"))
        let v3 = try Data(contentsOf: dir.appendingPathComponent("three.json"))
        #expect(try ManifestSchema.violations(of: v3) == [])

        let read = try JSONDecoder().decode(Manifest.self, from: v3)
        #expect(read.version == 3)
        let warning = try #require(read.attachments.first?.attachment?.warnings.first)
        #expect(warning.code == .extensionMismatch)
        let document = try #require(try JSONSerialization.jsonObject(with: v3) as? [String: Any])
        let entries = try #require(document["attachments"] as? [[String: Any]])
        let written = try #require((entries.first?["warnings"] as? [[String: Any]])?.first)
        #expect(written["code"] as? String == "extension_mismatch" && written["message"] as? String == warning.message)

        // But for its version and its warnings' form, the same document as the default's.
        var asTwo = document
        asTwo["version"] = 2
        asTwo["attachments"] = entries.map { entry -> [String: Any] in
            var entry = entry
            entry["warnings"] = (entry["warnings"] as? [[String: Any]])?.map { $0["message"] as Any }
            return entry
        }
        #expect(NSDictionary(dictionary: asTwo) == (try JSONSerialization.jsonObject(with: v2) as? NSDictionary))

        let content = ["--title", "Hi", "--base-url", "https://cdn.example.com/push", "--compact"]
        let fromTwo = try PushPrepCLI.run(["payload", "two.json"] + content, in: dir)
        let fromThree = try PushPrepCLI.run(["payload", "three.json"] + content, in: dir)
        #expect(fromTwo.status == 0 && fromThree.status == 0, "\(fromTwo.stderrText)\(fromThree.stderrText)")
        #expect(fromThree.stdout == fromTwo.stdout)
    }

    @Test func aVersionThisPushPrepDoesNotWriteIsAUsageError() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try Data([0xFF, 0xD8, 0xFF]).write(to: dir.appendingPathComponent("photo.jpg"))
        for version in ["1", "4", "two"] {
            let result = try PushPrepCLI.run(
                ["process", "photo.jpg", "--out", "out", "--manifest-version", version], in: dir)
            #expect(result.status == 2, "\(version): exit \(result.status), \(result.stderrText)")
            #expect(result.stderrText.contains("--manifest-version"), "\(result.stderrText)")
            #expect(result.stdout.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out").path), "nothing written")
        }
    }
}
