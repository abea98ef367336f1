import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepJSON

/// Manifest version 3: warnings as `{code, message}`, on request; version 2, the default, keeps
/// them as text; each reads back as the other wrote it.
struct ManifestVersionTests {
    /// An image with a warning of a known kind and one an older PushPrep wrote, and a failure.
    static func manifest(version: Int) -> Manifest {
        let mismatch = ProcessingWarning.extensionMismatch(extension: "png", detected: .jpeg)
        let attachment = Attachment(
            id: "img-3f2a9c1b", source: "photos/cat.png", kind: .image, file: "img-3f2a9c1b.jpg",
            uti: "public.jpeg", mime: "image/jpeg", bytes: 183_422, sha256: String(repeating: "0a", count: 32),
            width: 1024, height: 768, frames: 1, options: AttachmentOptions(typeHint: "public.jpeg"),
            input: InputInfo(type: "jpeg", bytes: 2_811_004, width: 4032, height: 3024, duration: nil),
            operations: ["decode", "resize"],
            warnings: [AttachmentWarning(mismatch), AttachmentWarning(message: "resized because it was large")])
        let failure = Failure(source: "b.gif", error: PushPrepError(.corruptInput, "truncated"))
        return Manifest(
            settings: ProcessingSettings(), attachments: [.ok(attachment), .failed(failure)], version: version)
    }

    /// The entries' warnings of a manifest's JSON.
    static func warnings(_ data: Data) throws -> [Any] {
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try #require(object["attachments"] as? [[String: Any]])
        return try #require(entries.first?["warnings"] as? [Any])
    }

    @Test func versionThreeWritesEachWarningAsCodeAndMessageAndReadsBack() throws {
        let v3 = Self.manifest(version: Manifest.structuredVersion)
        let data = try v3.jsonData()
        #expect(try ManifestSchema.violations(of: data) == [])
        let warnings = try Self.warnings(data).map { try #require($0 as? [String: Any]) }
        #expect(warnings.count == 2)
        #expect(warnings[0]["code"] as? String == "extension_mismatch")
        #expect(
            warnings[0]["message"] as? String
                == "the extension .png does not match the content, which is jpeg; processed as jpeg")
        #expect(warnings[1]["code"] is NSNull && warnings[1]["message"] as? String == "resized because it was large")
        let read = try JSONDecoder().decode(Manifest.self, from: data)
        #expect(read == v3 && read.version == 3)
        #expect(read.attachments[0].attachment?.warnings.map(\.code) == [.extensionMismatch, nil])
        #expect(try read.jsonData() == data, "written again, the same bytes")
    }

    @Test func versionTwoWritesTextAndItsCodesAreRecognisedOnReading() throws {
        let v2 = Self.manifest(version: Manifest.currentVersion)
        let data = try v2.jsonData()
        #expect(try ManifestSchema.violations(of: data) == [])
        let warnings = try Self.warnings(data)
        #expect(
            warnings as? [String] == [
                "the extension .png does not match the content, which is jpeg; processed as jpeg",
                "resized because it was large",
            ])
        let read = try JSONDecoder().decode(Manifest.self, from: data)
        #expect(read == v2, "the text's code is recognised again, an unknown text's is nil")
        // The same manifest in either version is the same but for the version and the warnings.
        let v3 = Self.manifest(version: Manifest.structuredVersion)
        var text = try #require(try JSONSerialization.jsonObject(with: v3.jsonData()) as? [String: Any])
        var entries = try #require(text["attachments"] as? [[String: Any]])
        entries[0]["warnings"] = warnings
        text["attachments"] = entries
        text["version"] = 2
        #expect(NSDictionary(dictionary: text) == (try JSONSerialization.jsonObject(with: data) as? NSDictionary))
    }

    @Test func anEncoderWithoutAVersionWritesText() throws {
        // The HTTP API encodes entries without a version: they stay as the contract has them.
        let entry = try #require(Self.manifest(version: Manifest.structuredVersion).attachments.first)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let object = try #require(try JSONSerialization.jsonObject(with: encoder.encode(entry)) as? [String: Any])
        #expect((object["warnings"] as? [String])?.count == 2)
    }

    @Test func eachVersionsSchemaRefusesTheOthersWarnings() throws {
        var v2 = try #require(
            try JSONSerialization.jsonObject(with: Self.manifest(version: 2).jsonData()) as? [String: Any])
        v2["version"] = 3
        let textInThree = try ManifestSchema.violations(of: JSONSerialization.data(withJSONObject: v2))
        #expect(textInThree.map(\.pointer).contains("#/attachments/0/warnings/0"), "\(textInThree)")
        var v3 = try #require(
            try JSONSerialization.jsonObject(with: Self.manifest(version: 3).jsonData()) as? [String: Any])
        v3["version"] = 2
        let objectsInTwo = try ManifestSchema.violations(of: JSONSerialization.data(withJSONObject: v3))
        #expect(objectsInTwo.map(\.pointer).contains("#/attachments/0/warnings/0"), "\(objectsInTwo)")
    }

    /// Version 3's attachment schema is a copy of version 2's (`$defs` is also the OpenAPI
    /// document's, which stays as it is): the two differ in their warnings and words only.
    @Test func versionThreesAttachmentSchemaIsVersionTwosButForWarnings() throws {
        let url = TestTools.packageRoot.appendingPathComponent("schema/manifest.schema.json")
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let two = try #require((schema["$defs"] as? [String: Any])?["success"] as? [String: Any])
        let three = try #require((schema["version3"] as? [String: Any])?["success"] as? [String: Any])
        func stripped(_ success: [String: Any]) throws -> NSDictionary {
            var success = success
            success["description"] = nil
            var properties = try #require(success["properties"] as? [String: Any])
            properties["warnings"] = nil
            success["properties"] = properties
            return NSDictionary(dictionary: success)
        }
        #expect(try stripped(two) == stripped(three))
        let codes =
            ((((schema["version3"] as? [String: Any])?["warning"] as? [String: Any])?["properties"]
            as? [String: Any])?["code"] as? [String: Any])?["enum"] as? [Any]
        #expect(codes?.compactMap { $0 as? String } == WarningCode.allCases.map(\.rawValue))
    }
}
