import OrderedCollections

extension JSONValue {
    /// The JSON text, compact (no whitespace at all) or pretty (two-space indentation,
    /// `"key": value`, one member or element per line, empty `{}` and `[]` inline, no final
    /// newline).
    ///
    /// Strings escape only `"`, `\` and control characters (U+0000–U+001F, as `\n`, `\t`,
    /// `\r`, `\b`, `\f` or `\u00XX`); `/` and non-ASCII characters are written as raw UTF-8,
    /// which is what APNs counts against its size limit. Numbers are written as their literal.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The size in UTF-8 bytes of the compact text: what counts against a payload size limit.
    public var compactByteCount: Int { serializedBytes(pretty: false).count }

    /// The JSON text as UTF-8 bytes (see ``serialized(pretty:)``).
    func serializedBytes(pretty: Bool) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        writer.write(self, indent: 0)
        return writer.output
    }
}

/// Writes JSON text into a byte buffer.
private struct JSONWriter {
    let pretty: Bool
    var output: [UInt8] = []

    init(pretty: Bool) {
        self.pretty = pretty
    }

    mutating func write(_ value: JSONValue, indent: Int) {
        switch value {
        case .null: writeRaw("null")
        case .bool(let value): writeRaw(value ? "true" : "false")
        case .number(let literal): writeRaw(literal)
        case .string(let text): writeString(text)
        case .array(let elements):
            writeContainer(open: "[", close: "]", count: elements.count, indent: indent) { writer, index in
                writer.write(elements[index], indent: indent + 1)
            }
        case .object(let object):
            let members = object.members.elements
            writeContainer(open: "{", close: "}", count: members.count, indent: indent) { writer, index in
                let member = members[index]
                writer.writeString(member.key)
                writer.writeRaw(writer.pretty ? ": " : ":")
                writer.write(member.value, indent: indent + 1)
            }
        }
    }

    /// Writes the brackets around `count` items, with separators and, when pretty, line breaks
    /// and indentation; `writeItem` writes the item at an index.
    private mutating func writeContainer(
        open: Unicode.Scalar, close: Unicode.Scalar, count: Int, indent: Int,
        writeItem: (inout JSONWriter, Int) -> Void
    ) {
        output.append(UInt8(ascii: open))
        for index in 0..<count {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            newline(indent: indent + 1)
            writeItem(&self, index)
        }
        if count > 0 { newline(indent: indent) }
        output.append(UInt8(ascii: close))
    }

    private mutating func newline(indent: Int) {
        guard pretty else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    /// Writes a quoted string, copying the runs that need no escape in one go.
    private mutating func writeString(_ text: String) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output += utf8[runStart..<index]
                appendEscape(for: byte)
                runStart = index + 1
            }
            output += utf8[runStart...]
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Writes text that needs no escaping (a number literal).
    private mutating func writeRaw(_ text: String) {
        var text = text
        text.withUTF8 { output += $0 }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    private mutating func appendEscape(for byte: UInt8) {
        let short: Unicode.Scalar? =
            switch byte {
            case UInt8(ascii: "\""): "\""
            case UInt8(ascii: "\\"): "\\"
            case UInt8(ascii: "\n"): "n"
            case UInt8(ascii: "\r"): "r"
            case UInt8(ascii: "\t"): "t"
            case 0x08: "b"
            case 0x0C: "f"
            default: nil
            }
        output.append(UInt8(ascii: "\\"))
        if let short {
            output.append(UInt8(ascii: short))
        } else {
            writeRaw("u00")
            output.append(Self.hexDigit(byte >> 4))
            output.append(Self.hexDigit(byte & 0xF))
        }
    }
}
