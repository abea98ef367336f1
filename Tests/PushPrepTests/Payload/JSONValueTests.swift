import Foundation
import Testing

@testable import PushPrep

/// The order-keeping JSON value: parsing, writing, pointers and edits.
@Suite struct JSONValueTests {
    private func parse(_ text: String) throws -> JSONDocument { try JSONValue.parse(Array(text.utf8)) }

    private func path(_ pointer: String) -> JSONPath { JSONPath(pointer: pointer)! }

    @Test(
        "compact output is the minified input: key order and number literals kept",
        arguments: [
            #"{"z":1,"a":[true,false,null],"m":{"b":"x","a":-0}}"#, #"[1.0,-2e3,1E+2,0.5,12345678901234567890]"#,
            #""caf\u00e9 ☕ /x""#, #"{}"#, #"[]"#, #"{"k":[{},[]]}"#,
        ])
    func roundTrip(_ text: String) throws {
        let value = try parse(text).value
        let expected = text.replacingOccurrences(of: "\\u00e9", with: "é")
        #expect(value.serialized() == expected)
        #expect(value.compactByteCount == expected.utf8.count)
        #expect(try parse(value.serialized(pretty: true)).value == value)
    }

    @Test("pretty output")
    func pretty() throws {
        let value = try parse(#"{"aps":{"alert":"hi","mutable-content":1},"list":[1,{}],"empty":[]}"#).value
        #expect(
            value.serialized(pretty: true) == """
                {
                  "aps": {
                    "alert": "hi",
                    "mutable-content": 1
                  },
                  "list": [
                    1,
                    {}
                  ],
                  "empty": []
                }
                """)
    }

    @Test("escapes: control characters written as escapes, surrogate pairs and \\/ read")
    func escapes() throws {
        let value = try parse(#""a\"b\\c\/d\n\t\u0001\ud83d\ude00""#).value
        #expect(value.stringValue == "a\"b\\c/d\n\t\u{01}😀")
        #expect(value.serialized() == #""a\"b\\c/d\n\t\u0001😀""#)
    }

    @Test("duplicate keys: reported by pointer, the last value kept at the first position")
    func duplicates() throws {
        let document = try parse(#"{"a":1,"b":{"x":1,"x":2},"a":3}"#)
        #expect(document.duplicateKeys.map(\.pointer) == ["/b/x", "/a"])
        #expect(document.value.serialized() == #"{"a":3,"b":{"x":2}}"#)
    }

    @Test(
        "invalid documents: message and position",
        arguments: [
            ("", "empty document", 1, 1), ("{", "expected a string key", 1, 2),
            ("{\"a\" 1}", "expected ':'", 1, 6), ("[1,]", "expected a value", 1, 4),
            ("[1 2]", "expected ',' or ']'", 1, 4), ("{\"a\":1,}", "expected a string key", 1, 8),
            ("01", "leading zero", 1, 2), ("-", "expected a digit", 1, 2), ("1.", "after the decimal point", 1, 3),
            (".5", "unexpected character", 1, 1), ("1e", "exponent", 1, 3), ("NaN", "unexpected character", 1, 1),
            ("tru", "expected true", 1, 1), ("\"abc", "unterminated string", 1, 5),
            ("\"a\nb\"", "control character", 1, 3), ("\"\\x\"", "invalid escape", 1, 3),
            ("\"\\ud800\"", "unpaired surrogate", 1, 8), ("\"\\udc00\"", "unpaired surrogate", 1, 8),
            ("{}\n x", "after the JSON value", 2, 2), ("\u{FEFF}{}", "byte order mark", 1, 1),
            ("{\"a\":\n\n  [1,\n  x]}", "expected a value", 4, 3),
        ])
    func invalid(_ text: String, _ message: String, _ line: Int, _ column: Int) {
        #expect {
            _ = try JSONValue.parse(Array(text.utf8))
        } throws: { error in
            guard let error = error as? JSONParseError else { return false }
            return error.message.contains(message) && error.line == line && error.column == column
        }
    }

    @Test("invalid UTF-8 inside a string is an error")
    func invalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test("nesting is bounded: 256 levels parse, 257 fail without crashing")
    func depth() throws {
        let deep = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(try parse(deep).value.arrayValue != nil)
        let deeper = String(repeating: "[", count: 100_000)
        #expect {
            _ = try JSONValue.parse(Array(deeper.utf8))
        } throws: { error in
            (error as? JSONParseError)?.message.contains("nesting deeper than 256") == true
        }
    }

    @Test("numbers: integers, doubles and booleans are told apart")
    func numbers() throws {
        #expect(JSONValue(1) == .number("1"))
        #expect(JSONValue(1.0) == .number("1"))
        #expect(JSONValue(0.5) == .number("0.5"))
        #expect(JSONValue(1e21).doubleValue == 1e21)
        #expect(JSONValue.number("1").intValue == 1)
        #expect(JSONValue.number("1.0").intValue == 1)
        #expect(JSONValue.number("1.5").intValue == nil)
        #expect(JSONValue.bool(true).intValue == nil)
        #expect(JSONValue.number("1").boolValue == nil)
        #expect(try parse("true").value.boolValue == true)
    }

    @Test("pointers: parsing, escaping and the steps of a path")
    func pointers() throws {
        let path = try #require(JSONPath(pointer: "/a~1b/0/c~0d/01"))
        #expect(path.components == [.key("a/b"), .index(0), .key("c~d"), .key("01")])
        #expect(path.pointer == "/a~1b/0/c~0d/01")
        #expect(JSONPath(pointer: "a") == nil)
        #expect(JSONPath(pointer: "/a~2") == nil)
        #expect(JSONPath(pointer: "")?.components.isEmpty == true)
        #expect(path.parent?.pointer == "/a~1b/0/c~0d")
        #expect(path.lastKey == "01")
        #expect(JSONPath.root.parent == nil)
        #expect(JSONPath.root.appending("aps").appending(index: 2).pointer == "/aps/2")
    }

    @Test("get, set and remove through paths; set creates the objects on the way")
    func edits() throws {
        var value = try parse(#"{"aps":{"alert":"hi"},"list":[1,2,3]}"#).value
        #expect(value[path("/aps/alert")]?.stringValue == "hi")
        #expect(value[path("/list/1")]?.intValue == 2)
        #expect(value[path("/list/9")] == nil)
        #expect(value[path("/aps/alert/x")] == nil)
        value[path("/aps/mutable-content")] = JSONValue(1)
        value[path("/message/apns/payload/aps/mutable-content")] = JSONValue(1)
        value[path("/list/1")] = nil
        value[path("/list/7")] = .null
        value[path("/aps/alert")] = nil
        value[path("/missing/key")] = nil
        #expect(
            value.serialized()
                == #"{"aps":{"mutable-content":1},"list":[1,3],"message":{"apns":{"payload":{"aps":{"mutable-content":1}}}}}"#
        )
    }
}
