import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrepJSON

/// PushPrep's JSON parser against Python's `json` (`scripts/json-canonical.py`, which reads with
/// `object_pairs_hook` so that member order and repeated keys show): on thousands of generated
/// documents, valid and broken, both accept the same ones and read the same value from them.
///
/// Where RFC 8259 leaves room PushPrep is stricter than Python on purpose, and the test expects
/// exactly that: a `\u` escape of an unpaired surrogate and nesting deeper than
/// ``JSONValue/maximumNestingDepth`` are refused by PushPrep only.
@Suite(.enabled(if: TestTools.programAvailable(TestTools.python), "needs \(TestTools.python)"))
struct JSONDifferentialTests {
    /// What Python's json made of one file.
    struct PythonReading: Decodable {
        let file: String
        let ok: Bool
        let error: String?
        let canonical: String?
        let duplicates: Int?
        let depth: Int?
        let loneSurrogate: Bool?
    }

    @Test("the parser accepts what Python's json accepts and reads the same members, order, numbers and strings")
    func againstPython() throws {
        var documents = Self.handWritten.map { Array($0.utf8) } + Self.deep
        var maker = DocumentMaker(seed: 0x5EED_2026)
        for _ in 0..<5000 { documents.append(maker.document()) }

        let readings = try TestTools.withTemporaryDirectory { directory in
            for (index, document) in documents.enumerated() {
                try Data(document).write(to: directory.appendingPathComponent(String(format: "%05d.json", index)))
            }
            let output = try TestTools.runChecked(
                TestTools.python,
                [TestTools.packageRoot.appendingPathComponent("scripts/json-canonical.py").path, directory.path])
            return try output.split(separator: UInt8(ascii: "\n")).map {
                try JSONDecoder().decode(PythonReading.self, from: Data($0))
            }
        }
        try #require(readings.count == documents.count)

        var accepted = 0
        var duplicates = 0
        for (document, python) in zip(documents, readings) {
            let text = String(decoding: document.prefix(200), as: UTF8.self).debugDescription
            let ours = Result<JSONDocument, JSONParseError> { () throws(JSONParseError) in try JSONValue.parse(document)
            }
            let pushPrepOnlyRefuses =
                python.ok && (python.loneSurrogate == true || (python.depth ?? 0) > JSONValue.maximumNestingDepth)
            switch ours {
            case .success(let parsed):
                #expect(python.ok && !pushPrepOnlyRefuses, "\(python.file) \(text): accepted; Python: \(python)")
                #expect(
                    Self.canonical(parsed.value) == python.canonical,
                    "\(python.file) \(text): read differently from Python")
                #expect(parsed.duplicateKeyCount == python.duplicates, "\(python.file) \(text): repeated keys")
                accepted += 1
                duplicates += parsed.duplicateKeyCount > 0 ? 1 : 0
            case .failure(let error):
                #expect(!python.ok || pushPrepOnlyRefuses, "\(python.file) \(text): refused (\(error)); Python read it")
            }
        }
        // The generator must reach both sides and repeated keys, or this test shows nothing.
        #expect(accepted > documents.count / 4 && accepted < documents.count * 3 / 4, "\(accepted) accepted")
        #expect(duplicates > 50, "\(duplicates) documents with repeated keys")
        print("JSON differential: \(documents.count) documents, \(accepted) accepted, \(duplicates) with repeated keys")
    }

    /// The value written as `json-canonical.py` writes Python's: compact, every character outside
    /// ' '...'~' escaped as `\uXXXX` of its UTF-16 code units except the short escapes.
    static func canonical(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .number(let literal): literal
        case .string(let text): canonical(text)
        case .array(let elements): "[" + elements.map(canonical).joined(separator: ",") + "]"
        case .object(let object):
            "{" + object.map { canonical($0.key) + ":" + canonical($0.value) }.joined(separator: ",") + "}"
        }
    }

    private static func canonical(_ text: String) -> String {
        var out = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x20...0x7E: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default: out += String(format: "\\u%04x", unit)
            }
        }
        return out + "\""
    }

    /// Edge cases named one by one.
    static let handWritten: [String] = [
        #"{"a":1,"a":2}"#, #"{"a":1,"b":2,"a":3}"#, #"{"a":{"x":1},"a":[2]}"#, #"[{"k":1,"k":1,"k":1}]"#,
        "\u{FEFF}{}", "", " ", "[1,]", #"{"a":1,}"#, "{'a':1}", "{a:1}", "[01]", "[1.]", "[.5]", "[-]", "[+1]",
        "[1e]", "[1e+]", "[-0]", "[0e0]", "[1E-0]", "[NaN]", "[Infinity]", "[-Infinity]", "[1]x", "[1] ",
        "\t[\r\n1\n]\r",
        "[\u{0B}1]", "[\u{A0}1]", #"["\u00e9\u00E9"]"#, #"["\ud83d\ude00"]"#, #"["\ud800"]"#, #"["\udc00"]"#,
        #"["\ud800\u0041"]"#, #"["\x"]"#, #"["\u12G4"]"#, "[\"\u{01}\"]", "[\"\u{7F}\"]", #"["\/"]"#,
        "123456789012345678901234567890", "1e999", "-0.0e-0", "true", "tru", "nul", "null ", "[true false]",
        #"{"":0,"":1}"#, #"{"a" 1}"#, #"{"a":}"#, "[[[]]]", "[[]", "[]]", "/* c */ 1", "1 // c",
    ]

    /// Nesting at and past the limit: Python's recursion limit is about 1,000 levels.
    static let deep: [[UInt8]] = [255, 256, 257, 400].flatMap { depth in
        [
            Array(String(repeating: "[", count: depth).utf8) + Array(String(repeating: "]", count: depth).utf8),
            Array(String(repeating: #"{"a":"#, count: depth).utf8) + Array("0".utf8)
                + Array(String(repeating: "}", count: depth).utf8),
        ]
    }
}

/// Random JSON-ish documents from a fixed seed: mostly well formed, with hostile pieces
/// (escapes, surrogates, raw control characters and invalid UTF-8 in strings, malformed numbers,
/// repeated keys, odd whitespace) and, for a share of them, a byte deleted, inserted or the text cut.
struct DocumentMaker {
    var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    private mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    private mutating func pick<T>(_ choices: [T]) -> T { choices.randomElement(using: &random)! }

    mutating func document() -> [UInt8] {
        var bytes = space() + (chance(50) ? object(depth: 0) : value(depth: 0)) + space()
        if chance(25) && !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes.remove(at: at)
            case 1: bytes.insert(pick(Array(#"{}[]:,"\ 0-.e1x"#.utf8) + [0x00, 0xFF]), at: at)
            default: bytes.removeSubrange(at...)
            }
        }
        return bytes
    }

    private mutating func space() -> [UInt8] {
        chance(80) ? [] : Array(pick([" ", "\n", "\t", "\r\n", "  ", "\u{0C}", "\u{A0}"]).utf8)
    }

    private mutating func value(depth: Int) -> [UInt8] {
        let kind = Int.random(in: 0..<(depth > 4 ? 4 : 6), using: &random)
        switch kind {
        case 0: return number()
        case 1: return string(key: false)
        case 2: return Array(pick(["true", "false", "null", "true", "false", "null", "tru", "nulll", "True"]).utf8)
        case 3: return number()
        case 4:
            let count = Int.random(in: 0...4, using: &random)
            let elements = (0..<count).map { _ in space() + value(depth: depth + 1) + space() }
            return Array("[".utf8) + elements.joined(separator: Array(",".utf8)) + Array("]".utf8)
        default: return object(depth: depth)
        }
    }

    private mutating func object(depth: Int) -> [UInt8] {
        let count = Int.random(in: 0...6, using: &random)
        let members = (0..<count).map { _ in
            space() + string(key: true) + space() + Array(":".utf8) + space() + value(depth: depth + 1)
        }
        return Array("{".utf8) + members.joined(separator: Array(",".utf8)) + Array("}".utf8)
    }

    private mutating func number() -> [UInt8] {
        if chance(8) {
            return Array(
                pick(["01", "1.", ".5", "+1", "1e", "-", "1.e5", "0x10", "NaN", "-Infinity", "1e+", "--1"]).utf8)
        }
        var text = chance(30) ? "-" : ""
        text += chance(25) ? "0" : String(Int.random(in: 1...9, using: &random))
        if chance(20) {
            text += String((0..<Int.random(in: 1...25, using: &random)).map { _ in pick(Array("0123456789")) })
        }
        if chance(35) {
            text += "." + String((0..<Int.random(in: 1...6, using: &random)).map { _ in pick(Array("0123456789")) })
        }
        if chance(20) { text += pick(["e", "E", "e+", "e-", "E-"]) + String(Int.random(in: 0...400, using: &random)) }
        return Array(text.utf8)
    }

    private mutating func string(key: Bool) -> [UInt8] {
        if key && chance(90) { return Array("\"\(pick(["a", "b", "é", "a"]))\"".utf8) }
        var bytes: [UInt8] = [0x22]
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3: bytes += Array(pick(["a", "Z", "9", " ", "/", "é", "😀", "中", "\u{7F}", "'"]).utf8)
            case 4...6:
                bytes += Array(
                    pick([
                        #"\n"#, #"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\r"#, #"\t"#, #"\u00e9"#, #"\u0000"#,
                        #"\uD83D\uDE00"#, #"\u20AC"#, #"\u001F"#,
                    ]).utf8)
            case 7:
                bytes += Array(pick([#"\uD800"#, #"\uDC00"#, #"\uD83D\u0041"#, #"\x41"#, #"\u12G4"#, #"\U00E9"#]).utf8)
            case 8: bytes += pick([[0x01], [0x1F], [0x0A], [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82]])
            default: bytes += Array("abc".utf8)
            }
        }
        return bytes + [0x22]
    }
}
