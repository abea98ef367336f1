import Foundation
import Testing

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

private func failureEntry() -> [String: Any] {
    [
        "status": "failed", "source": "photos/broken.png", "kind": "image",
        "error": ["code": "corrupt_input", "message": "PNG data ends early"],
    ]
}

private func manifest(_ entries: [[String: Any]]) -> [String: Any] {
    [
        "version": 1,
        "generator": ["name": "pushprep", "version": "0.1.0"],
        "settings": [
            "width": 1024, "quality": 82, "imageMaxBytes": 10_000_000, "maxPixels": 100_000_000,
            "maxInputBytes": 200_000_000, "jobs": 4, "baseURL": "https://cdn.example.com/push/",
        ],
        "attachments": entries,
    ]
}

private func violations(_ value: [String: Any]) throws -> [String] {
    try JSONSchemaValidator.projectSchema().validate(JSONSerialization.data(withJSONObject: value))
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

@Suite struct ManifestSchemaTests {
    @Test func schemaLoadsFromTheProject() throws {
        _ = try JSONSchemaValidator.projectSchema()
    }

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

    struct Case: Sendable, CustomTestStringConvertible {
        let testDescription: String
        /// The violation expected, as a prefix: "pointer: start of message".
        let expected: String
        let edit: @Sendable (inout [String: Any]) -> Void
    }

    static let invalid: [Case] = [
        Case(
            testDescription: "missing required field", expected: "#/attachments/0: missing required property \"sha256\""
        ) {
            $0.editEntry(0) { $0["sha256"] = nil }
        },
        Case(testDescription: "wrong type", expected: "#/attachments/0/width: expected integer, got string") {
            $0.editEntry(0) { $0["width"] = "1024" }
        },
        Case(testDescription: "fractional width", expected: "#/attachments/0/width: expected integer, got number") {
            $0.editEntry(0) { $0["width"] = 1024.5 }
        },
        Case(testDescription: "bad id pattern", expected: "#/attachments/0/id: \"IMG_0001\" does not match") {
            $0.editEntry(0) { $0["id"] = "IMG_0001" }
        },
        Case(
            testDescription: "id prefix not the kind's",
            expected: "#/attachments/0/id: \"vid-3f2a9c1b\" does not match ^img-"
        ) {
            $0.editEntry(0) { $0["id"] = "vid-3f2a9c1b" }
        },
        Case(testDescription: "sha256 of wrong length", expected: "#/attachments/0/sha256: ") {
            $0.editEntry(0) { $0["sha256"] = String(sha.dropLast()) }
        },
        Case(testDescription: "sha256 in uppercase", expected: "#/attachments/0/sha256: ") {
            $0.editEntry(0) { $0["sha256"] = sha.uppercased() }
        },
        Case(testDescription: "image over 10 MB", expected: "#/attachments/0/bytes: 10000001 is greater than 10000000")
        {
            $0.editEntry(0) { $0["bytes"] = 10_000_001 }
        },
        Case(testDescription: "video over 50 MB", expected: "#/attachments/0/bytes: 50000001 is greater than 50000000")
        {
            $0 = manifest([videoEntry()])
            $0.editEntry(0) { $0["bytes"] = 50_000_001 }
        },
        Case(testDescription: "audio over 5 MB", expected: "#/attachments/0/bytes: 5000001 is greater than 5000000") {
            $0 = manifest([audioEntry()])
            $0.editEntry(0) { $0["bytes"] = 5_000_001 }
        },
        Case(
            testDescription: "unknown option key",
            expected: "#/attachments/0/options/UNNotificationAttachmentOptionsFooKey: additional property not allowed"
        ) {
            $0.editEntry(0) { $0.edit("options") { $0["UNNotificationAttachmentOptionsFooKey"] = true } }
        },
        Case(
            testDescription: "missing type hint",
            expected:
                "#/attachments/0/options: missing required property \"UNNotificationAttachmentOptionsTypeHintKey\""
        ) {
            $0.editEntry(0) { $0["options"] = [String: Any]() }
        },
        Case(
            testDescription: "clipping rect outside the unit square",
            expected:
                "#/attachments/0/options/UNNotificationAttachmentOptionsThumbnailClippingRectKey/Width: 1.5 is greater than 1"
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
            expected:
                "#/attachments/0/options/UNNotificationAttachmentOptionsThumbnailHiddenKey: expected boolean, got integer"
        ) {
            $0.editEntry(0) { $0.edit("options") { $0["UNNotificationAttachmentOptionsThumbnailHiddenKey"] = 0 } }
        },
        Case(testDescription: "image with a video UTI", expected: "#/attachments/0/uti: must be one of") {
            $0.editEntry(0) { $0["uti"] = "public.mpeg-4" }
        },
        Case(testDescription: "JPEG file with PNG MIME type", expected: "#/attachments/0/mime: must be \"image/jpeg\"")
        {
            $0.editEntry(0) { $0["mime"] = "image/png" }
        },
        Case(
            testDescription: "file with a directory",
            expected: "#/attachments/0/file: \"sub/img-3f2a9c1b.jpg\" does not match ^[^/]+$"
        ) {
            $0.editEntry(0) { $0["file"] = "sub/img-3f2a9c1b.jpg" }
        },
        Case(testDescription: "poster on an image", expected: "#/attachments/0/poster: not allowed") {
            $0.editEntry(0) { $0["poster"] = ["file": "p.jpg", "width": 1, "height": 1] }
        },
        Case(testDescription: "additional top-level key", expected: "#/extra: additional property not allowed") {
            $0["extra"] = 1
        },
        Case(
            testDescription: "additional key in an entry",
            expected: "#/attachments/0/thumbnail: additional property not allowed"
        ) {
            $0.editEntry(0) { $0["thumbnail"] = "x" }
        },
        Case(testDescription: "version 2", expected: "#/version: must be 1") {
            $0["version"] = 2
        },
        Case(
            testDescription: "image byte limit setting over 10 MB",
            expected: "#/settings/imageMaxBytes: 20000000 is greater than 10000000"
        ) {
            $0.edit("settings") { $0["imageMaxBytes"] = 20_000_000 }
        },
        Case(
            testDescription: "failure without error code",
            expected: "#/attachments/0/error: missing required property \"code\""
        ) {
            $0 = manifest([failureEntry()])
            $0.editEntry(0) { $0["error"] = ["message": "no code"] }
        },
        Case(
            testDescription: "failure with a malformed code",
            expected: "#/attachments/0/error/code: \"Timeout\" does not match"
        ) {
            $0 = manifest([failureEntry()])
            $0.editEntry(0) { $0["error"] = ["code": "Timeout", "message": "slow"] }
        },
        Case(
            testDescription: "failure with an empty message", expected: "#/attachments/0/error/message: shorter than 1"
        ) {
            $0 = manifest([failureEntry()])
            $0.editEntry(0) { $0["error"] = ["code": "timeout", "message": ""] }
        },
        Case(
            testDescription: "failure carrying success fields",
            expected: "#/attachments/0/bytes: additional property not allowed"
        ) {
            $0 = manifest([failureEntry()])
            $0.editEntry(0) { $0["bytes"] = 1 }
        },
        Case(
            testDescription: "status neither ok nor failed",
            expected: "#/attachments/0/status: must be one of \"ok\", \"failed\""
        ) {
            $0.editEntry(0) { $0["status"] = "pending" }
        },
        Case(testDescription: "second entry bad", expected: "#/attachments/1/frames: 0 is less than 1") {
            $0 = manifest([failureEntry(), imageEntry()])
            $0.editEntry(1) { $0["frames"] = 0 }
        },
    ]

    @Test(arguments: invalid)
    func rejects(_ invalid: Case) throws {
        var m = manifest([imageEntry()])
        invalid.edit(&m)
        let found = try violations(m)
        #expect(found.contains { $0.hasPrefix(invalid.expected) }, "violations: \(found)")
    }
}

// MARK: - The validator itself

@Suite struct JSONSchemaValidatorTests {
    private func check(_ schema: String, _ instance: String) throws -> [String] {
        try JSONSchemaValidator(schemaData: Data(schema.utf8)).validate(Data(instance.utf8))
    }

    private func valid(_ schema: String, _ instance: String) throws -> Bool {
        try check(schema, instance).isEmpty
    }

    @Test func oneOfMeansExactlyOne() throws {
        let schema = #"{"oneOf": [{"type": "integer"}, {"minimum": 0}]}"#
        #expect(try valid(schema, "-1"))  // first only
        #expect(try valid(schema, "1.5"))  // second only
        #expect(try check(schema, "5") == [#"#: matches oneOf schemas ["0", "1"] but must match exactly one"#])
        #expect(try !valid(schema, "-1.5"))  // neither
    }

    @Test func oneOfReportsTheClosestBranch() throws {
        let schema = #"""
            {"oneOf": [
              {"type": "object", "properties": {"k": {"const": "a"}, "n": {"type": "integer"}}},
              {"type": "object", "properties": {"k": {"const": "b"}, "s": {"type": "string"}}, "required": ["s"]}
            ]}
            """#
        #expect(
            try check(schema, #"{"k": "a", "n": "x"}"#) == [
                "#: matches none of the oneOf schemas; closest one's errors follow",
                "#/n: expected integer, got string",
            ])
    }

    @Test func anyOf() throws {
        let schema = #"{"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}]}"#
        #expect(try valid(schema, #""x""#))
        #expect(try valid(schema, "10"))
        #expect(try !valid(schema, "9"))
    }

    @Test func ifThenElse() throws {
        let schema = #"""
            {"if": {"properties": {"kind": {"const": "a"}}},
             "then": {"required": ["a"]},
             "else": {"required": ["b"]}}
            """#
        #expect(try valid(schema, #"{"kind": "a", "a": 1}"#))
        #expect(try check(schema, #"{"kind": "a", "b": 1}"#) == [#"#: missing required property "a""#])
        #expect(try valid(schema, #"{"kind": "z", "b": 1}"#))
        #expect(try !valid(schema, #"{"kind": "z", "a": 1}"#))
        #expect(try valid(#"{"if": {"type": "string"}, "then": {"minLength": 2}}"#, "3"))
    }

    @Test func refAndAllOf() throws {
        let schema = #"""
            {"$defs": {"small": {"type": "integer", "maximum": 9}, "even": {"enum": [0, 2, 4, 6, 8]}},
             "type": "array", "items": {"allOf": [{"$ref": "#/$defs/small"}, {"$ref": "#/$defs/even"}]}}
            """#
        #expect(try valid(schema, "[0, 8, 2.0]"))
        #expect(
            try check(schema, "[4, 10]") == [
                "#/1: 10 is greater than 9", "#/1: must be one of 0, 2, 4, 6, 8",
            ])
    }

    @Test func integerVersusNumber() throws {
        #expect(try valid(#"{"type": "integer"}"#, "3"))
        #expect(try valid(#"{"type": "integer"}"#, "3.0"))
        #expect(try check(#"{"type": "integer"}"#, "3.5") == ["#: expected integer, got number"])
        #expect(try valid(#"{"type": "number"}"#, "3"))
        #expect(try valid(#"{"type": "number"}"#, "3.5"))
        #expect(try valid(#"{"type": ["integer", "null"]}"#, "null"))
        #expect(try !valid(#"{"type": ["integer", "null"]}"#, #""3""#))
        #expect(try valid(#"{"const": 1}"#, "1.0"))
    }

    @Test func booleansAreNotNumbers() throws {
        #expect(try check(#"{"type": "integer"}"#, "true") == ["#: expected integer, got boolean"])
        #expect(try !valid(#"{"type": "number"}"#, "false"))
        #expect(try check(#"{"type": "boolean"}"#, "1") == ["#: expected boolean, got integer"])
        #expect(try !valid(#"{"type": "boolean"}"#, "0"))
        #expect(try valid(#"{"type": "boolean"}"#, "false"))
        #expect(try !valid(#"{"const": true}"#, "1"))
        #expect(try !valid(#"{"enum": [1, 0]}"#, "true"))
        #expect(try !valid(#"{"enum": [false]}"#, "0"))
        #expect(try valid(#"{"enum": [false]}"#, "false"))
    }

    @Test func stringsAndNumbers() throws {
        let schema = #"{"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-zé]+$"}"#
        #expect(try valid(schema, #""éé""#))  // code points, not bytes
        #expect(try check(schema, #""a""#) == ["#: shorter than 2"])
        #expect(try check(schema, #""abcd""#) == ["#: longer than 3"])
        #expect(try check(schema, #""A1""#) == [#"#: "A1" does not match ^[a-zé]+$"#])
        #expect(try valid(#"{"pattern": "b"}"#, #""abc""#))  // unanchored, like ECMA-262
        #expect(try check(#"{"minimum": 0, "maximum": 1}"#, "-0.5") == ["#: -0.5 is less than 0"])
        #expect(try valid(#"{"minimum": 0, "maximum": 1}"#, "1"))
    }

    @Test func additionalProperties() throws {
        let closed = #"{"properties": {"a": {}}, "additionalProperties": false}"#
        #expect(try valid(closed, #"{"a": 1}"#))
        #expect(try check(closed, #"{"a": 1, "a/b~": 2}"#) == ["#/a~1b~0: additional property not allowed"])
        let typed = #"{"properties": {"a": {}}, "additionalProperties": {"type": "string"}}"#
        #expect(try valid(typed, #"{"a": 1, "b": "x"}"#))
        #expect(try check(typed, #"{"b": 2}"#) == ["#/b: expected string, got integer"])
        #expect(try valid(#"{"properties": {"a": {}}}"#, #"{"b": 2}"#))
    }

    @Test func booleanSchemas() throws {
        #expect(try check(#"{"properties": {"a": false, "b": true}}"#, #"{"a": 1, "b": 2}"#) == ["#/a: not allowed"])
    }

    @Test(arguments: [
        #"{"format": "uri"}"#,
        #"{"properties": {"a": {"patternProperties": {}}}}"#,
        ##"{"$ref": "#/$defs/missing"}"##,
        #"{"$ref": "other.json"}"#,
        #"{"type": "int"}"#,
        #"{"pattern": "("}"#,
        #"{"required": "a"}"#,
        #"{"oneOf": []}"#,
        #"{"items": 3}"#,
        #"{"$defs": {"x": {"unevaluatedProperties": false}}}"#,
    ])
    func refusesUnsupportedSchemas(_ schema: String) {
        #expect(throws: JSONSchemaValidator.Failure.self) {
            try JSONSchemaValidator(schemaData: Data(schema.utf8))
        }
    }

    @Test func refusesInvalidJSON() throws {
        let validator = try JSONSchemaValidator(schemaData: Data("{}".utf8))
        #expect(throws: JSONSchemaValidator.Failure.self) { try validator.validate(Data("{".utf8)) }
        #expect(try validator.validate(Data("null".utf8)) == [])
    }
}
