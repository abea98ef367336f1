import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepJSON

// MARK: - Manifest fixtures

private let sha = String(repeating: "0123456789abcdef", count: 4)

private func imageEntry() -> [String: Any] {
    [
        "id": "img-3f2a9c1b", "status": "ok", "source": "photos/cat.heic", "kind": "image",
        "file": "img-3f2a9c1b.jpg", "url": "https://cdn.example.com/push/img-3f2a9c1b.jpg",
        "uti": "public.jpeg", "mime": "image/jpeg", "bytes": 183_422, "sha256": sha,
        "width": 1024, "height": 768, "duration": NSNull(), "frames": 1,
        "options": [
            "UNNotificationAttachmentOptionsTypeHintKey": "public.jpeg",
            "UNNotificationAttachmentOptionsThumbnailHiddenKey": false,
            "UNNotificationAttachmentOptionsThumbnailClippingRectKey": [
                "X": 0, "Y": 0.125, "Width": 1, "Height": 0.75,
            ],
        ],
        "input": ["type": "heic", "bytes": 2_811_004, "width": 4032, "height": 3024, "duration": NSNull()],
        "operations": ["decode", "orient", "resize", "encode:jpeg"],
        "warnings": [],
    ]
}

private func videoEntry() -> [String: Any] {
    var entry = imageEntry()
    entry["id"] = "vid-7"
    entry["kind"] = "video"
    entry["file"] = "vid-7.mp4"
    entry["url"] = NSNull()
    entry["uti"] = "public.mpeg-4"
    entry["mime"] = "video/mp4"
    entry["bytes"] = 40_000_000
    entry["duration"] = 12.5
    entry["frames"] = 375
    entry["options"] = [
        "UNNotificationAttachmentOptionsTypeHintKey": "public.mpeg-4",
        "UNNotificationAttachmentOptionsThumbnailTimeKey": 1.5,
    ]
    entry["input"] = [
        "type": "mov", "bytes": 90_000_000, "width": 1920, "height": 1080, "duration": 12.5, "videoCodec": "hevc",
    ]
    entry["poster"] = ["file": "vid-7-poster.jpg", "width": 1024, "height": 576]
    return entry
}

private func audioEntry() -> [String: Any] {
    var entry = imageEntry()
    entry["id"] = "aud-1"
    entry["kind"] = "audio"
    entry["file"] = "aud-1.mp3"
    entry["uti"] = "public.mp3"
    entry["mime"] = "audio/mpeg"
    entry["bytes"] = 4_000_000
    entry["duration"] = 29.9
    // A sound has no picture: width, height and frames are null.
    entry["width"] = NSNull()
    entry["height"] = NSNull()
    entry["frames"] = NSNull()
    entry["options"] = ["UNNotificationAttachmentOptionsTypeHintKey": "public.mp3"]
    entry["input"] = ["type": "wav", "bytes": 5_300_000, "width": NSNull(), "height": NSNull(), "duration": 29.9]
    return entry
}

/// A rendition as the manifest writes it: `prefix` is `and`, `web` or `wic`.
private func rendition(_ prefix: String, width: Int, height: Int, bytes: Int) -> [String: Any] {
    [
        "id": "\(prefix)-5e1d0c7a", "file": "\(prefix)-5e1d0c7a.jpg",
        "url": "https://cdn.example.com/push/\(prefix)-5e1d0c7a.jpg", "urlExpires": NSNull(), "mime": "image/jpeg",
        "bytes": bytes, "sha256": sha, "width": width, "height": height,
        "crop": ["x": 0, "y": 128, "width": 4032, "height": 2016],
    ]
}

/// The photo with every rendition: Android's, the web image and the web icon.
private func imageEntryWithRenditions() -> [String: Any] {
    var entry = imageEntry()
    entry["renditions"] = [
        "android": rendition("and", width: 1024, height: 512, bytes: 98_304),
        "web": rendition("web", width: 1350, height: 675, bytes: 141_000),
        "webIcon": rendition("wic", width: 192, height: 192, bytes: 9_800),
    ]
    return entry
}

private func failureEntry() -> [String: Any] {
    [
        "status": "failed", "source": "photos/broken.png", "kind": "image",
        "error": ["code": "corrupt_input", "message": "PNG data ends early"],
    ]
}

private func manifest(_ entries: [[String: Any]]) -> [String: Any] {
    [
        "version": 2,
        "generator": ["name": "pushprep", "version": "0.1.0"],
        "settings": [
            "width": 1024, "quality": 82, "imageMaxBytes": 10_000_000, "maxPixels": 100_000_000,
            "maxInputBytes": 200_000_000, "jobs": 4, "baseURL": "https://cdn.example.com/push/",
        ],
        "attachments": entries,
    ]
}

private func violations(_ value: [String: Any]) throws -> [ManifestSchema.Violation] {
    try ManifestSchema.violations(of: JSONSerialization.data(withJSONObject: value))
}

extension [String: Any] {
    /// Edits the attachment at `index` of a manifest.
    fileprivate mutating func editEntry(_ index: Int, _ body: (inout [String: Any]) -> Void) {
        var entries = self["attachments"] as! [[String: Any]]
        body(&entries[index])
        self["attachments"] = entries
    }

    /// Edits a nested object.
    fileprivate mutating func edit(_ key: String, _ body: (inout [String: Any]) -> Void) {
        var object = self[key] as! [String: Any]
        body(&object)
        self[key] = object
    }
}

// MARK: - The manifest schema

@Suite(.enabled(if: ManifestSchema.available, "needs /usr/bin/python3 with jsonschema (python3-jsonschema; make deps)"))
struct ManifestSchemaTests {

    @Test func acceptsOneImage() throws {
        #expect(try violations(manifest([imageEntry()])) == [])
    }

    @Test func acceptsOneFailure() throws {
        #expect(try violations(manifest([failureEntry()])) == [])
    }

    @Test func acceptsAMix() throws {
        var minimalFailure = failureEntry()
        minimalFailure["kind"] = nil
        var png = imageEntry()
        png["file"] = "img-2.png"
        png["id"] = "img-2"
        png["uti"] = "public.png"
        png["mime"] = "image/png"
        png["options"] = ["UNNotificationAttachmentOptionsTypeHintKey": "public.png"]
        var m = manifest([imageEntry(), failureEntry(), videoEntry(), audioEntry(), png, minimalFailure])
        m.edit("settings") {
            $0["baseURL"] = NSNull()
            $0["videoMaxBytes"] = 50_000_000  // later versions add settings
        }
        #expect(try violations(m) == [])
    }

    @Test func acceptsAnEmptyManifest() throws {
        #expect(try violations(manifest([])) == [])
    }

    @Test func acceptsRenditions() throws {
        var movie = videoEntry()
        movie["renditions"] = ["android": rendition("and", width: 1024, height: 512, bytes: 1_048_576)]
        var png = imageEntry()
        png["renditions"] = [
            "webIcon": [
                "id": "wic-9", "file": "wic-9.png", "url": NSNull(), "urlExpires": NSNull(), "mime": "image/png",
                "bytes": 512, "sha256": sha, "width": 192, "height": 192,
                "crop": ["x": 0, "y": 0, "width": 768, "height": 768],
            ]
        ]
        #expect(try violations(manifest([imageEntryWithRenditions(), movie, png, audioEntry()])) == [])
    }

    /// What this version writes, renditions and all, is what the schema describes; and a version 1
    /// manifest (which the schema no longer describes) still reads, with no renditions.
    @Test func swiftManifestsMatchAndVersionOneStillReads() throws {
        var written = manifest([imageEntryWithRenditions(), videoEntry(), audioEntry(), failureEntry()])
        let decoded = try JSONDecoder().decode(Manifest.self, from: JSONSerialization.data(withJSONObject: written))
        let android = try #require(decoded.attachments[0].attachment?.renditions.android)
        #expect(android.id == "and-5e1d0c7a")
        #expect(android.crop == CropRectangle(x: 0, y: 128, width: 4032, height: 2016))
        #expect(decoded.attachments[0].attachment?.renditions.webIcon?.width == 192)
        #expect(try ManifestSchema.violations(of: decoded.jsonData()) == [])

        written["version"] = 1
        written.editEntry(0) { $0["renditions"] = nil }
        let v1 = try JSONSerialization.data(withJSONObject: written)
        #expect(try ManifestSchema.violations(of: v1).map(\.pointer) == ["#/version"])
        let old = try JSONDecoder().decode(Manifest.self, from: v1)
        #expect(old.version == 1)
        #expect(Manifest.readableVersions.contains(old.version))
        #expect(old.attachments.compactMap(\.attachment).allSatisfy { $0.renditions.isEmpty })
        #expect(old.attachments[0].attachment?.renditions.has(.android) == false)
        // Written back, the entries carry no renditions key, as version 1 wrote them.
        let rewritten = try #require(
            try JSONSerialization.jsonObject(with: old.jsonData()) as? [String: Any])
        let entries = try #require(rewritten["attachments"] as? [[String: Any]])
        #expect(entries.allSatisfy { $0["renditions"] == nil })
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let testDescription: String
        /// The violation expected: "pointer keyword", or "pointer keyword 'name'" for a keyword
        /// about a named property (required, additionalProperties), whose message names it.
        let expected: String
        let edit: @Sendable (inout [String: Any]) -> Void
    }

    static let invalid: [Case] = [
        Case(testDescription: "missing required field", expected: "#/attachments/0 required 'sha256'") {
            $0.editEntry(0) { $0["sha256"] = nil }
        },
        Case(testDescription: "wrong type", expected: "#/attachments/0/width type") {
            $0.editEntry(0) { $0["width"] = "1024" }
        },
        Case(testDescription: "fractional width", expected: "#/attachments/0/width type") {
            $0.editEntry(0) { $0["width"] = 1024.5 }
        },
        Case(testDescription: "bad id pattern", expected: "#/attachments/0/id pattern") {
            $0.editEntry(0) { $0["id"] = "IMG_0001" }
        },
        Case(testDescription: "id prefix not the kind's", expected: "#/attachments/0/id pattern") {
            $0.editEntry(0) { $0["id"] = "vid-3f2a9c1b" }
        },
        Case(testDescription: "sha256 of wrong length", expected: "#/attachments/0/sha256 pattern") {
            $0.editEntry(0) { $0["sha256"] = String(sha.dropLast()) }
        },
        Case(testDescription: "sha256 in uppercase", expected: "#/attachments/0/sha256 pattern") {
            $0.editEntry(0) { $0["sha256"] = sha.uppercased() }
        },
        Case(testDescription: "image over 10 MB", expected: "#/attachments/0/bytes maximum") {
            $0.editEntry(0) { $0["bytes"] = 10_000_001 }
        },
        Case(testDescription: "video over 50 MB", expected: "#/attachments/0/bytes maximum") {
            $0 = manifest([videoEntry()])
            $0.editEntry(0) { $0["bytes"] = 50_000_001 }
        },
        Case(testDescription: "audio over 5 MB", expected: "#/attachments/0/bytes maximum") {
            $0 = manifest([audioEntry()])
            $0.editEntry(0) { $0["bytes"] = 5_000_001 }
        },
        Case(
            testDescription: "unknown option key",
            expected: "#/attachments/0/options additionalProperties 'UNNotificationAttachmentOptionsFooKey'"
        ) {
            $0.editEntry(0) { $0.edit("options") { $0["UNNotificationAttachmentOptionsFooKey"] = true } }
        },
        Case(
            testDescription: "missing type hint",
            expected: "#/attachments/0/options required 'UNNotificationAttachmentOptionsTypeHintKey'"
        ) {
            $0.editEntry(0) { $0["options"] = [String: Any]() }
        },
        Case(
            testDescription: "clipping rect outside the unit square",
            expected: "#/attachments/0/options/UNNotificationAttachmentOptionsThumbnailClippingRectKey/Width maximum"
        ) {
            $0.editEntry(0) {
                $0.edit("options") {
                    $0["UNNotificationAttachmentOptionsThumbnailClippingRectKey"] = [
                        "X": 0, "Y": 0, "Width": 1.5, "Height": 1,
                    ]
                }
            }
        },
        Case(
            testDescription: "thumbnail hidden not a boolean",
            expected: "#/attachments/0/options/UNNotificationAttachmentOptionsThumbnailHiddenKey type"
        ) {
            $0.editEntry(0) { $0.edit("options") { $0["UNNotificationAttachmentOptionsThumbnailHiddenKey"] = 0 } }
        },
        Case(testDescription: "image with a video UTI", expected: "#/attachments/0/uti enum") {
            $0.editEntry(0) { $0["uti"] = "public.mpeg-4" }
        },
        Case(testDescription: "JPEG file with PNG MIME type", expected: "#/attachments/0/mime const") {
            $0.editEntry(0) { $0["mime"] = "image/png" }
        },
        Case(testDescription: "file with a directory", expected: "#/attachments/0/file pattern") {
            $0.editEntry(0) { $0["file"] = "sub/img-3f2a9c1b.jpg" }
        },
        Case(testDescription: "poster on an image", expected: "#/attachments/0/poster false") {
            $0.editEntry(0) { $0["poster"] = ["file": "p.jpg", "width": 1, "height": 1] }
        },
        Case(testDescription: "additional top-level key", expected: "# additionalProperties 'extra'") {
            $0["extra"] = 1
        },
        Case(
            testDescription: "additional key in an entry", expected: "#/attachments/0 additionalProperties 'thumbnail'"
        ) {
            $0.editEntry(0) { $0["thumbnail"] = "x" }
        },
        Case(testDescription: "version 1", expected: "#/version const") {
            $0["version"] = 1
        },
        Case(testDescription: "empty renditions", expected: "#/attachments/0/renditions minProperties") {
            $0.editEntry(0) { $0["renditions"] = [String: Any]() }
        },
        Case(
            testDescription: "unknown rendition", expected: "#/attachments/0/renditions additionalProperties 'ios'"
        ) {
            $0 = manifest([imageEntryWithRenditions()])
            $0.editEntry(0) { $0.edit("renditions") { $0["ios"] = rendition("and", width: 2, height: 1, bytes: 1) } }
        },
        Case(testDescription: "android id prefix", expected: "#/attachments/0/renditions/android/id pattern") {
            $0 = manifest([imageEntryWithRenditions()])
            $0.editEntry(0) {
                $0.edit("renditions") { $0["android"] = rendition("web", width: 2, height: 1, bytes: 1) }
            }
        },
        Case(testDescription: "web icon id prefix", expected: "#/attachments/0/renditions/webIcon/id pattern") {
            $0 = manifest([imageEntryWithRenditions()])
            $0.editEntry(0) {
                $0.edit("renditions") { $0["webIcon"] = rendition("web", width: 2, height: 2, bytes: 1) }
            }
        },
        Case(testDescription: "android over 1 MiB", expected: "#/attachments/0/renditions/android/bytes maximum") {
            $0 = manifest([imageEntryWithRenditions()])
            $0.editEntry(0) {
                $0.edit("renditions") { $0["android"] = rendition("and", width: 2, height: 1, bytes: 1_048_577) }
            }
        },
        Case(testDescription: "web over 1 MB", expected: "#/attachments/0/renditions/web/bytes maximum") {
            $0 = manifest([imageEntryWithRenditions()])
            $0.editEntry(0) {
                $0.edit("renditions") { $0["web"] = rendition("web", width: 2, height: 1, bytes: 1_000_001) }
            }
        },
        Case(testDescription: "rendition as a GIF", expected: "#/attachments/0/renditions/android/mime enum") {
            $0 = manifest([imageEntryWithRenditions()])
            $0.editEntry(0) { $0.edit("renditions") { $0.edit("android") { $0["mime"] = "image/gif" } } }
        },
        Case(
            testDescription: "rendition without its crop",
            expected: "#/attachments/0/renditions/android required 'crop'"
        ) {
            $0 = manifest([imageEntryWithRenditions()])
            $0.editEntry(0) { $0.edit("renditions") { $0.edit("android") { $0["crop"] = nil } } }
        },
        Case(testDescription: "negative crop", expected: "#/attachments/0/renditions/web/crop/x minimum") {
            $0 = manifest([imageEntryWithRenditions()])
            $0.editEntry(0) {
                $0.edit("renditions") { $0.edit("web") { $0["crop"] = ["x": -1, "y": 0, "width": 2, "height": 1] } }
            }
        },
        Case(testDescription: "fractional crop", expected: "#/attachments/0/renditions/android/crop/width type") {
            $0 = manifest([imageEntryWithRenditions()])
            $0.editEntry(0) {
                $0.edit("renditions") {
                    $0.edit("android") { $0["crop"] = ["x": 0, "y": 0, "width": 2.5, "height": 1] }
                }
            }
        },
        Case(testDescription: "rendition of a sound", expected: "#/attachments/0/renditions false") {
            $0 = manifest([audioEntry()])
            $0.editEntry(0) { $0["renditions"] = ["android": rendition("and", width: 2, height: 1, bytes: 1)] }
        },
        Case(testDescription: "image byte limit setting over 10 MB", expected: "#/settings/imageMaxBytes maximum") {
            $0.edit("settings") { $0["imageMaxBytes"] = 20_000_000 }
        },
        Case(testDescription: "failure without error code", expected: "#/attachments/0/error required 'code'") {
            $0 = manifest([failureEntry()])
            $0.editEntry(0) { $0["error"] = ["message": "no code"] }
        },
        Case(testDescription: "failure with a malformed code", expected: "#/attachments/0/error/code pattern") {
            $0 = manifest([failureEntry()])
            $0.editEntry(0) { $0["error"] = ["code": "Timeout", "message": "slow"] }
        },
        Case(testDescription: "failure with an empty message", expected: "#/attachments/0/error/message minLength") {
            $0 = manifest([failureEntry()])
            $0.editEntry(0) { $0["error"] = ["code": "timeout", "message": ""] }
        },
        Case(
            testDescription: "failure carrying success fields", expected: "#/attachments/0 additionalProperties 'bytes'"
        ) {
            $0 = manifest([failureEntry()])
            $0.editEntry(0) { $0["bytes"] = 1 }
        },
        Case(testDescription: "status neither ok nor failed", expected: "#/attachments/0/status enum") {
            $0.editEntry(0) { $0["status"] = "pending" }
        },
        Case(testDescription: "second entry bad", expected: "#/attachments/1/frames minimum") {
            $0 = manifest([failureEntry(), imageEntry()])
            $0.editEntry(1) { $0["frames"] = 0 }
        },
    ]

    @Test(arguments: invalid)
    func rejects(_ invalid: Case) throws {
        var m = manifest([imageEntry()])
        invalid.edit(&m)
        let found = try violations(m)
        let parts = invalid.expected.split(separator: " ", maxSplits: 2).map(String.init)
        let (pointer, keyword, name) = (parts[0], parts[1], parts.count > 2 ? parts[2] : nil)
        #expect(
            found.contains { $0.pointer == pointer && $0.keyword == keyword && name.map($0.message.contains) ?? true },
            "violations: \(found)")
    }
}
