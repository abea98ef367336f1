/// Text that came from a client (a source, a file name, a metadata key, an idempotency key) and
/// ends up in terminals and log lines: the one definition of the characters such text may not
/// hold, the one check that refuses them, and the one escape every printer applies.
///
/// The characters are the ones a terminal or a log reader acts on rather than shows: the C0
/// controls (U+0000 to U+001F: NUL, which PostgreSQL refuses in text, `\n` and `\r`, which end a
/// log line, ESC, which starts a terminal escape sequence), DEL (U+007F), the C1 controls
/// (U+0080 to U+009F: CSI and OSC start escape sequences on their own), and the line and
/// paragraph separators (U+2028, U+2029), which some readers break lines at.
public enum UntrustedText {
    /// Whether `scalar` is one of the characters refused in client text and escaped when printed.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }

    /// Whether `text` holds one of the characters of ``isControl(_:)``.
    public static func hasControl(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    /// Refuses `text` with `invalid_request` when it holds a control character, naming `field`
    /// and the first such character (as `U+001B`), never the text itself: the message must be
    /// safe to print.
    public static func check(_ text: some StringProtocol, field: String) throws(PushPrepError) {
        guard let scalar = text.unicodeScalars.first(where: isControl) else { return }
        throw PushPrepError(
            .invalidRequest,
            "\(field) must not hold control characters or line separators (it holds \(codePoint(scalar)))")
    }

    /// `text` safe to print on a terminal or in a log line: each control character written as an
    /// escape (`\n`, `\r`, `\t`, else `\u001b`, `\u2028`) and each backslash doubled, so that the
    /// escape reads back unambiguously. Text without either is returned as it is.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) || $0 == "\\" }) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars { append(scalar, to: &escaped) }
        return escaped
    }

    /// `text` as a logfmt value: as it is when it is a non-empty run of characters that cannot
    /// end a value (no space, `=`, `"`, backslash or control character), else in double quotes
    /// with `"` and `\` escaped by a backslash and the control characters escaped as in
    /// ``escaped(_:)``. A value written this way cannot end early, so no text inside it can pass
    /// for another `key=value` field or another line.
    public static func logfmtValue(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && !text.unicodeScalars.contains {
                isControl($0) || $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\"
                    || $0.properties.isWhitespace
            }
        if plain { return text }
        var quoted = "\""
        quoted.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if scalar == "\"" {
                quoted += "\\\""
            } else {
                append(scalar, to: &quoted)
            }
        }
        quoted += "\""
        return quoted
    }

    /// Appends `scalar`, escaped when it is a control character or a backslash.
    private static func append(_ scalar: Unicode.Scalar, to text: inout String) {
        switch scalar {
        case "\\": text += "\\\\"
        case "\n": text += "\\n"
        case "\r": text += "\\r"
        case "\t": text += "\\t"
        case _ where isControl(scalar): text += "\\u" + hex4(scalar.value)
        default: text.unicodeScalars.append(scalar)
        }
    }

    /// `U+001B`.
    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        "U+" + hex4(scalar.value).uppercased()
    }

    /// Four lowercase hex digits (the controls are all below U+10000).
    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
