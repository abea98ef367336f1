import PushPrepTestSupport
import Testing

@testable import PushPrepJSON

/// The order-keeping JSON value: parsing, writing, pointers and edits.
@Suite struct JSONValueTests {
    private func parse(_ text: String) throws -> JSONDocument { try JSONValue.parse(Array(text.utf8)) }

    private func value(_ text: String) throws -> JSONValue { try parse(text).value }

    /// A path from a pointer the test knows is well formed.
    private func path(_ pointer: String) -> JSONPath { JSONPath(pointer: pointer)! }

    // MARK: - Round trips

    @Test(
        "compact output is the minified input: member order and number literals kept",
        arguments: [
            #"{"z":1,"a":[true,false,null],"m":{"b":"x","a":-0}}"#,
            #"[1.0,-0,1E+2,-2e-3,0.5,12345678901234567890,1e999,0.000]"#,
            #""café ☕ 𝄞 a/b""#, #"{}"#, #"[]"#, #"{"k":[{},[],""]}"#, #"{"":{"":""}}"#, "0", "-1.5e+300",
            #""\u0000\u001f\"\\""#, "true", "null",
        ])
    func roundTrip(_ text: String) throws {
        let parsed = try value(text)
        #expect(parsed.serialized() == text)
        #expect(parsed.compactByteCount == text.utf8.count)
        #expect(try value(parsed.serialized(pretty: true)) == parsed)
    }

    @Test("whitespace (space, tab, CR, LF) is dropped from compact output")
    func minifies() throws {
        let text = " {\r\n\t\"aps\" : { \"alert\" :\"hi\" , \"mutable-content\":1 } ,\n\"list\":[ 1 , 2.50 ] }\n"
        #expect(try value(text).serialized() == #"{"aps":{"alert":"hi","mutable-content":1},"list":[1,2.50]}"#)
    }

    @Test("pretty output: two-space indentation, one member per line, empty containers inline")
    func pretty() throws {
        let parsed = try value(
            #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"list":[1,{},[true]],"e":[]}"#)
        #expect(
            parsed.serialized(pretty: true) == """
                {
                  "aps": {
                    "alert": {
                      "title": "T",
                      "body": "B"
                    },
                    "mutable-content": 1
                  },
                  "list": [
                    1,
                    {},
                    [
                      true
                    ]
                  ],
                  "e": []
                }
                """)
        #expect(JSONValue.string("x").serialized(pretty: true) == #""x""#)
    }

    @Test("a large document parses and writes back unchanged")
    func largeDocument() throws {
        let member =
            #"{"id":"attachment-%d","url":"https://cdn.example.com/a/%d.jpg","size":1.0e3,"ok":true,"tags":["a","é"]}"#
        let elements = (0..<8_000).map { index in member.replacing("%d", with: String(index)) }
        let text = "[" + elements.joined(separator: ",") + "]"
        #expect(text.utf8.count > 800_000)
        let parsed = try value(text)
        #expect(parsed.arrayValue?.count == 8_000)
        #expect(parsed[path("/7999/url")]?.stringValue == "https://cdn.example.com/a/7999.jpg")
        #expect(parsed.serialized() == text)
    }

    // MARK: - Duplicate keys

    @Test("duplicate keys: reported by pointer, the last value kept at the first position")
    func duplicates() throws {
        let document = try parse(#"{"a":1,"b":{"x":1,"y":0,"x":2},"a":3,"l":[{"k/~":1,"k/~":2}]}"#)
        #expect(document.duplicateKeys.map(\.pointer) == ["/b/x", "/a", "/l/0/k~1~0"])
        #expect(document.value.serialized() == #"{"a":3,"b":{"x":2,"y":0},"l":[{"k/~":2}]}"#)
        #expect(try parse(#"{"a":{"a":1},"b":[{"a":1}]}"#).duplicateKeys.isEmpty)
    }

    // MARK: - Invalid documents

    /// A text that is not JSON, the message fragment expected and where.
    struct InvalidCase: Sendable, CustomTestStringConvertible {
        var bytes: [UInt8]
        var message: String
        var line: Int
        var column: Int

        init(_ text: String, _ message: String, _ line: Int, _ column: Int) {
            self.init(Array(text.utf8), message, line, column)
        }

        init(_ bytes: [UInt8], _ message: String, _ line: Int, _ column: Int) {
            (self.bytes, self.message, self.line, self.column) = (bytes, message, line, column)
        }

        var testDescription: String { String(decoding: bytes, as: UTF8.self).debugDescription }
    }

    static let invalidCases: [InvalidCase] = [
        InvalidCase("", "empty document", 1, 1),
        InvalidCase("  \n ", "empty document", 2, 2),
        InvalidCase("{", "unexpected end of input, expected a string key or '}'", 1, 2),
        InvalidCase(#"{"a" 1}"#, "unexpected '1', expected ':' after an object key", 1, 6),
        InvalidCase("[1,]", "unexpected ']', expected a value", 1, 4),
        InvalidCase("[1 2]", "unexpected '2', expected ',' or ']' after an array element", 1, 4),
        InvalidCase(#"{"a":1,}"#, "unexpected '}', expected a string key after ','", 1, 8),
        InvalidCase(#"{"a":1 "b":2}"#, "expected ',' or '}' after an object member", 1, 8),
        InvalidCase("{a:1}", "unexpected 'a', expected a string key or '}'", 1, 2),
        InvalidCase("['a']", "expected a value", 1, 2),
        InvalidCase("01", "a number cannot have a leading zero", 1, 1),
        InvalidCase("[-007]", "leading zero", 1, 3),
        InvalidCase("-", "unexpected end of input, expected a digit in a number", 1, 2),
        InvalidCase("1.", "expected a digit after the decimal point", 1, 3),
        InvalidCase("[1.e5]", "unexpected 'e', expected a digit after the decimal point", 1, 4),
        InvalidCase(".5", "unexpected '.', expected a value", 1, 1),
        InvalidCase("+1", "unexpected '+', expected a value", 1, 1),
        InvalidCase("1e", "expected a digit in the exponent", 1, 3),
        InvalidCase("1E+", "expected a digit in the exponent", 1, 4),
        InvalidCase("NaN", "unexpected 'N', expected a value", 1, 1),
        InvalidCase("-Infinity", "unexpected 'I', expected a digit in a number", 1, 2),
        InvalidCase("tru", "invalid literal, expected true", 1, 1),
        InvalidCase("[nul]", "invalid literal, expected null", 1, 2),
        InvalidCase("True", "unexpected 'T', expected a value", 1, 1),
        InvalidCase("\"abc", "unterminated string", 1, 5),
        InvalidCase("\"ab\\", "unterminated string", 1, 5),
        InvalidCase("\"a\nb\"", "control character byte 0xA in a string must be escaped", 1, 3),
        InvalidCase("[\"\t\"]", "control character byte 0x9", 1, 3),
        InvalidCase(#""\x""#, #"invalid escape: '\' followed by 'x'"#, 1, 2),
        InvalidCase(#""\u12""#, #"unexpected '"', expected four hex digits after \u"#, 1, 6),
        InvalidCase(#""ok\ud800""#, "unpaired surrogate in a \\u escape", 1, 4),
        InvalidCase(#""\udc00\ud800""#, "unpaired surrogate", 1, 2),
        InvalidCase(#""\ud800\u0041""#, "unpaired surrogate", 1, 2),
        InvalidCase(#""\ud800\n""#, "unpaired surrogate", 1, 2),
        InvalidCase("{}\n x", "unexpected 'x' after the JSON value", 2, 2),
        InvalidCase("[1]]", "unexpected ']' after the JSON value", 1, 4),
        InvalidCase("1 2", "unexpected '2' after the JSON value", 1, 3),
        InvalidCase(#"{"a":1}// note"#, "unexpected '/' after the JSON value", 1, 8),
        InvalidCase("\u{FEFF}{}", "byte order mark", 1, 1),
        InvalidCase("[1,\u{0B}2]", "unexpected byte 0xB, expected a value", 1, 4),
        InvalidCase("\u{A0}1", "unexpected byte 0xC2, expected a value", 1, 1),
        InvalidCase("{\"a\":\n\n  [1,\n  x]}", "unexpected 'x', expected a value", 4, 3),
        InvalidCase("[\r\n1,\r\n]", "unexpected ']', expected a value", 3, 1),
        InvalidCase([0x22, 0x61, 0xC3, 0x28, 0x22], "invalid UTF-8 in a string", 1, 3),
        InvalidCase([0x22, 0xC0, 0x80, 0x22], "invalid UTF-8", 1, 2),  // overlong NUL
        InvalidCase([0x22, 0xED, 0xA0, 0x80, 0x22], "invalid UTF-8", 1, 2),  // a surrogate, encoded
        InvalidCase([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], "invalid UTF-8", 1, 2),  // past U+10FFFF
        InvalidCase([0x22, 0x5C, 0x6E, 0xF0, 0x9F, 0x98, 0x22], "invalid UTF-8", 1, 4),  // cut short, after an escape
        InvalidCase([0x22, 0xFF, 0x22], "invalid UTF-8", 1, 2),
        InvalidCase([0x5B, 0xFF, 0x5D], "unexpected byte 0xFF, expected a value", 1, 2),
    ]

    @Test("invalid documents: message, line and column", arguments: invalidCases)
    func invalid(_ testCase: InvalidCase) throws {
        let error = try #require(throws: JSONParseError.self) { try JSONValue.parse(testCase.bytes) }
        #expect(error.message.contains(testCase.message), "\(error)")
        #expect(error.line == testCase.line, "\(error)")
        #expect(error.column == testCase.column, "\(error)")
        #expect(error.description == "line \(testCase.line), column \(testCase.column): \(error.message)")
    }

    @Test("nesting is bounded: 256 levels parse, 257 fail without crashing")
    func depth() throws {
        let arrays = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(try value(arrays).arrayValue != nil)
        let mixed = String(repeating: #"{"a":["#, count: 128) + String(repeating: "]}", count: 128)
        #expect(try value(mixed).objectValue != nil)

        let tooDeep = String(repeating: "[", count: 257) + String(repeating: "]", count: 257)
        let error = try #require(throws: JSONParseError.self) { try parse(tooDeep) }
        #expect(error.message == "nesting deeper than 256 levels")
        #expect(error.column == 257)
        let hostile = try #require(throws: JSONParseError.self) {
            try JSONValue.parse(Array(repeating: UInt8(ascii: "["), count: 1_000_000))
        }
        #expect(hostile.message == "nesting deeper than 256 levels")
    }

    @Test("every truncation of a document is an error, never a crash")
    func truncations() throws {
        let bytes = Array(#"{"aps":{"alert":"caf\u00e9 ☕","n":[-1.5e+3,true,false,null,"\ud83d\ude00\/"]}}"#.utf8)
        _ = try JSONValue.parse(bytes)
        for length in 0..<bytes.count {
            #expect(throws: JSONParseError.self) { try JSONValue.parse(Array(bytes[..<length])) }
        }
    }

    @Test("damaged documents either fail or parse to a value that writes and reads back the same")
    func damagedDocuments() throws {
        let original = Array(#"{"a":[1,-2.5e3,"x\n\u00e9é",{"b":null,"c":true}],"d":"\ud83d\ude00","e":0}"#.utf8)
        let replacements = Array(#"{}[]",:"\-+.eE019 tfnu"#.utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xED, 0xFF]
        var random = SplitMix64(seed: 0x5EED)
        var parsedCount = 0
        for _ in 0..<3_000 {
            var bytes = original
            for _ in 0...random.next(below: 3) {
                let index = random.next(below: bytes.count)
                switch random.next(below: 3) {
                case 0: bytes[index] = replacements[random.next(below: replacements.count)]
                case 1: bytes.remove(at: index)
                default: bytes.insert(replacements[random.next(below: replacements.count)], at: index)
                }
            }
            guard let document = try? JSONValue.parse(bytes) else { continue }
            parsedCount += 1
            let written = document.value.serialized()
            #expect(try JSONValue.parse(Array(written.utf8)).value == document.value, "\(written)")
        }
        #expect(parsedCount > 0)
    }

    // MARK: - Strings

    @Test("escapes on input: \\u with either case of hex, surrogate pairs, \\/ and the short forms")
    func inputEscapes() throws {
        let parsed = try value(#""caf\u00e9 \u00C9 \ud83d\ude00 \/ \" \\ \b\f\n\r\t \u0041""#)
        #expect(parsed.stringValue == "café É 😀 / \" \\ \u{08}\u{0C}\n\r\t A")
        #expect(parsed.serialized() == #""café É 😀 / \" \\ \b\f\n\r\t A""#)
        #expect(try value(#""\u0000""#).stringValue == "\u{0}")
        #expect(try value(#""\uDBFF\uDFFF""#).stringValue == "\u{10FFFF}")
    }

    @Test("output escapes only quotes, backslashes and control characters; the rest is raw UTF-8")
    func outputEscapes() {
        let text = "q\" b\\ s/ \u{00}\u{01}\u{08}\u{09}\u{0A}\u{0C}\u{0D}\u{1B}\u{1F} \u{7F} é 😀"
        let written = JSONValue.string(text).serialized()
        #expect(written == "\"q\\\" b\\\\ s/ \\u0000\\u0001\\b\\t\\n\\f\\r\\u001b\\u001f \u{7F} é 😀\"")
        #expect(JSONValue.string("é😀/").compactByteCount == 2 + 2 + 4 + 1)
        #expect(JSONValue.object(["k\n": .string("v")]).serialized() == #"{"k\n":"v"}"#)
    }

    // MARK: - Numbers and accessors

    @Test(
        "Double init: shortest round-trip text, no .0, no leading exponent zeros",
        arguments: [
            (1.0, "1"), (0.5, "0.5"), (-0.0, "-0"), (100, "100"), (0.1, "0.1"), (-2.25, "-2.25"),
            (9_007_199_254_740_992, "9007199254740992"), (1e21, "1e+21"), (1e16, "1e+16"), (1.5e300, "1.5e+300"),
            (1e-7, "1e-7"), (0.0001, "0.0001"), (.leastNonzeroMagnitude, "5e-324"),
        ] as [(Double, String)])
    func doubleInit(_ double: Double, _ literal: String) {
        #expect(JSONValue(double) == .number(literal))
        #expect(JSONValue(double).doubleValue == double)
    }

    @Test(
        "intValue is the exact integer of a literal, nil for fractions, overflow and non-numbers",
        arguments: [
            ("1", 1), ("-0", 0), ("1.0", 1), ("1.5", nil), ("1e2", 100), ("1E+2", 100), ("2.50e1", 25),
            ("25e-1", nil), ("100e-2", 1), ("0.1e1", 1), ("1.0000000000000001", nil), ("0e999999999999", 0),
            ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min), ("9223372036854775808", nil),
            ("1e19", nil), ("5e-99999999999999999999", nil), ("+1", nil), ("1x", nil),
        ] as [(String, Int?)])
    func intValue(_ literal: String, _ expected: Int?) {
        #expect(JSONValue.number(literal).intValue == expected)
    }

    @Test("accessors answer only for their own type")
    func accessors() throws {
        #expect(JSONValue(42) == .number("42"))
        #expect(JSONValue.bool(true).intValue == nil)
        #expect(JSONValue.bool(true).doubleValue == nil)
        #expect(JSONValue.number("1").boolValue == nil)
        #expect(JSONValue.string("1").intValue == nil)
        #expect(JSONValue.number("0.25").doubleValue == 0.25)
        #expect(JSONValue.number("1e999").doubleValue == .infinity)
        #expect(try value("false").boolValue == false)
        #expect(try value(#""s""#).stringValue == "s")
        #expect(JSONValue.null.stringValue == nil)
        #expect(try value("[1]").arrayValue == [.number("1")])
        #expect(try value("[1]").objectValue == nil)
        #expect(try value(#"{"a":1}"#)["a"] == .number("1"))
        #expect(try value("[1]")["a"] == nil)
        let values: [JSONValue] = [.null, .bool(false), .number("0"), .string(""), .array([]), .object([:])]
        #expect(values.map(\.typeName) == ["null", "boolean", "number", "string", "array", "object"])
        #expect(try value("1.0") != value("1"))
    }

    // MARK: - Objects

    @Test("objects keep order: new keys append, replacing keeps the position, nil removes")
    func objects() {
        var object = JSONObject([
            (key: "b", value: .number("1")), (key: "a", value: .null), (key: "b", value: .number("2")),
        ])
        #expect(object.keys == ["b", "a"])
        #expect(object["b"] == .number("2"))
        object["c"] = .bool(true)
        object["b"] = .string("x")
        object["a"] = nil
        object["missing"] = nil
        #expect(object.map(\.key) == ["b", "c"])
        #expect(object.map(\.value) == [.string("x"), .bool(true)])
        #expect(object.count == 2 && !object.isEmpty && JSONObject().isEmpty)
        object["a"] = .null
        #expect(object.keys == ["b", "c", "a"])
        #expect(object["c"] == .bool(true))

        let literal: JSONObject = ["b": .string("x"), "c": .bool(true), "a": .null]
        #expect(literal == object)
        #expect(literal.hashValue == object.hashValue)
        let reordered: JSONObject = ["c": .bool(true), "b": .string("x"), "a": .null]
        #expect(reordered != object)
    }

    // MARK: - Pointers

    @Test(
        "JSONPath(pointer:) parses tokens; only canonical non-negative integers are indexes",
        arguments: [
            ("", []), ("/", [.key("")]), ("//", [.key(""), .key("")]), ("/aps/alert", [.key("aps"), .key("alert")]),
            ("/0", [.index(0)]), ("/12", [.index(12)]), ("/01", [.key("01")]), ("/-1", [.key("-1")]),
            ("/+1", [.key("+1")]), ("/99999999999999999999", [.key("99999999999999999999")]),
            ("/a~1b/c~0d", [.key("a/b"), .key("c~d")]), ("/~01", [.key("~1")]), ("/é/☕", [.key("é"), .key("☕")]),
        ] as [(String, [JSONPath.Component])])
    func pointerParsing(_ pointer: String, _ components: [JSONPath.Component]) throws {
        let path = try #require(JSONPath(pointer: pointer))
        #expect(path.components == components)
        #expect(path.pointer == pointer)
        #expect(path.description == pointer)
    }

    @Test("malformed pointers are refused", arguments: ["a", "a/b", "/~", "/a~", "/~2", "/a~x/b"])
    func malformedPointers(_ pointer: String) {
        #expect(JSONPath(pointer: pointer) == nil)
    }

    @Test("pointers escape ~ and / in keys, also before combining marks")
    func pointerEscaping() throws {
        let path = JSONPath([.key("a/b"), .index(3), .key("~"), .key("/\u{301}"), .key("")])
        #expect(path.pointer == "/a~1b/3/~0/~1\u{301}/")
        #expect(JSONPath(pointer: path.pointer) == path)
        #expect(JSONPath(pointer: "/aps/mutable-content")?.components == [.key("aps"), .key("mutable-content")])
    }

    @Test("path steps: root, appending, parent and last key")
    func pathSteps() {
        let path = JSONPath.root.appending("aps").appending(index: 2).appending("url")
        #expect(path.pointer == "/aps/2/url")
        #expect(path.parent?.pointer == "/aps/2")
        #expect(path.parent?.lastKey == "2")
        #expect(path.lastKey == "url")
        #expect(JSONPath.root.pointer == "")
        #expect(JSONPath.root.parent == nil)
        #expect(JSONPath.root.lastKey == nil)
        #expect(JSONPath.root.appending("x").parent == .root)
    }

    // MARK: - Edits through paths

    @Test("get walks keys and indexes; nil when absent or of the wrong type")
    func pathGet() throws {
        let payload = try value(#"{"aps":{"alert":"hi"},"list":[1,{"u":"x"}],"map":{"0":"zero"},"a/b":{"~":1}}"#)
        #expect(payload[JSONPath.root] == payload)
        #expect(payload[path("/aps/alert")]?.stringValue == "hi")
        #expect(payload[path("/list/1/u")]?.stringValue == "x")
        #expect(payload[path("/list/2")] == nil)
        #expect(payload[path("/aps/alert/x")] == nil)
        #expect(payload[path("/aps/missing")] == nil)
        #expect(payload[path("/a~1b/~0")]?.intValue == 1)
        // An index applied to an object names the member with that decimal key...
        #expect(payload[path("/map/0")]?.stringValue == "zero")
        // ...but a key never names an array element.
        #expect(payload[JSONPath([.key("list"), .key("0")])] == nil)
        // A string literal in brackets is a member key, not a pointer.
        #expect(payload["/aps/alert"] == nil)
        #expect(try value(#"{"/a":1}"#)["/a"] == .number("1"))
    }

    @Test("set replaces in place, appends new members and creates the objects on the way")
    func pathSet() throws {
        var payload = try value(#"{"aps":{"alert":"hi","sound":"a"},"list":[1,2],"n":5}"#)
        payload[path("/aps/alert")] = .object(["title": .string("T")])
        payload[path("/aps/mutable-content")] = JSONValue(1)
        payload[path("/message/apns/payload/aps/mutable-content")] = JSONValue(1)
        payload[path("/list/1")] = .bool(true)
        payload[path("/n/x")] = .null  // a number on the way is replaced by an object
        payload[path("/map/0")] = .string("zero")  // an index on a missing member makes an object key
        payload[path("/a~1b/~0")] = .string("escaped")
        #expect(
            payload.serialized()
                == #"{"aps":{"alert":{"title":"T"},"sound":"a","mutable-content":1},"list":[1,true],"n":{"x":null},"#
                + #""message":{"apns":{"payload":{"aps":{"mutable-content":1}}}},"map":{"0":"zero"},"a/b":{"~":"escaped"}}"#
        )
        #expect(payload[path("/map/0")]?.stringValue == "zero")
    }

    @Test("set does nothing for an index out of range or a key into an array")
    func pathSetNoOps() throws {
        let original = try value(#"{"list":[1,2],"grid":[[0]]}"#)
        var payload = original
        payload[path("/list/2")] = .null
        payload[path("/list/9/x")] = .null
        payload[JSONPath([.key("list"), .key("first")])] = .null
        payload[path("/grid/0/5")] = .null
        #expect(payload == original)
        payload[path("/grid/0/0")] = JSONValue(7)
        #expect(payload.serialized() == #"{"list":[1,2],"grid":[[7]]}"#)
        payload[JSONPath.root] = .array([])
        #expect(payload == .array([]))
    }

    @Test("setting nil removes the member or element; a path that leads nowhere changes nothing")
    func pathRemove() throws {
        let original = try value(#"{"aps":{"alert":"hi","badge":1},"list":[1,2,3],"m":{"0":true}}"#)
        var payload = original
        payload[path("/aps/missing")] = nil
        payload[path("/aps/alert/x")] = nil
        payload[path("/missing/key")] = nil
        payload[path("/list/3")] = nil
        payload[JSONPath([.key("list"), .key("0")])] = nil
        #expect(payload == original)

        payload[path("/aps/alert")] = nil
        payload[path("/list/0")] = nil
        payload[path("/m/0")] = nil
        #expect(payload.serialized() == #"{"aps":{"badge":1},"list":[2,3],"m":{}}"#)
        payload[JSONPath.root] = nil
        #expect(payload == .null)
    }
}
