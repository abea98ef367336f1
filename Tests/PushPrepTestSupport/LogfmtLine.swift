/// A log line as `pushprep` writes it (`LogLineHandler`), read back strictly: `TIME LEVEL LABEL:`, then
/// `key=value` pairs (logfmt: plain, or quoted with backslash escapes), then `[SOURCE] message`.
/// Throws on anything else, so a forged field or a broken quote fails the test.
package struct LogfmtLine {
    /// The level word.
    package var level: String
    /// The fields in order, unescaped.
    package var fields: [(key: String, value: String)] = []
    /// What is in the brackets.
    package var source: String
    /// The rest of the line, as written.
    package var message: String

    /// Why a line does not read as one.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads `line` (without its newline).
    package init(_ line: String) throws {
        let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard words.count == 3 else { throw Malformed(description: "no time, level and label: \(line)") }
        level = String(words[1])
        var rest = words[2]
        let label = rest.prefix { $0 != ":" }
        guard label.count < rest.count else { throw Malformed(description: "no label: \(line)") }
        rest = rest.dropFirst(label.count + 1)
        while rest.hasPrefix(" ") {
            rest.removeFirst()
            if rest.hasPrefix("[") { break }
            let key = try Self.token(&rest, line)
            guard rest.hasPrefix("=") else { throw Malformed(description: "no = after \(key): \(line)") }
            rest.removeFirst()
            fields.append((key, try Self.token(&rest, line)))
        }
        guard rest.hasPrefix("["), let close = rest.firstIndex(of: "]") else {
            throw Malformed(description: "no [source]: \(line)")
        }
        source = String(rest[rest.index(after: rest.startIndex)..<close])
        message = String(rest[close...].dropFirst(2))
    }

    /// The value of the one field named `key`; nil when there is none, or more than one.
    package func value(_ key: String) -> String? {
        let matches = fields.filter { $0.key == key }
        return matches.count == 1 ? matches[0].value : nil
    }

    /// A plain token (up to a space or `=`) or a quoted one, unescaped.
    static func token(_ rest: inout Substring, _ line: String) throws -> String {
        guard rest.hasPrefix("\"") else {
            let plain = rest.prefix { $0 != " " && $0 != "=" }
            rest = rest.dropFirst(plain.count)
            return String(plain)
        }
        rest.removeFirst()
        var text = ""
        while let character = rest.first {
            rest.removeFirst()
            switch character {
            case "\"":
                return text
            case "\\":
                guard let escaped = rest.first else { throw Malformed(description: "a dangling \\: \(line)") }
                rest.removeFirst()
                switch escaped {
                case "n": text += "\n"
                case "r": text += "\r"
                case "t": text += "\t"
                case "u":
                    let digits = rest.prefix(4)
                    guard digits.count == 4, let value = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(value)
                    else { throw Malformed(description: "a bad \\u escape: \(line)") }
                    rest = rest.dropFirst(4)
                    text.unicodeScalars.append(scalar)
                default: text.append(escaped)
                }
            default:
                text.append(character)
            }
        }
        throw Malformed(description: "an unterminated quote: \(line)")
    }
}
