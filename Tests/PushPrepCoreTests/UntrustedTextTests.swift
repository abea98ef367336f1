import Foundation
import PushPrepCore
import Testing

/// The one check, escape and logfmt quoting of client text (sources, file names, keys), on the
/// hostile values the issue reproduced: a terminal title escape, a forged log line, a file name
/// that spells `key=` and `request_id=` fields.
@Suite("Untrusted text")
struct UntrustedTextTests {
    static let terminalEscape = "http://x.example/a\u{1B}]0;PWN\u{07}\u{1B}[31m.jpg"
    static let forgedLine = "a.jpg\n2026-01-01T00:00:00+0000 error pushprep: forged=1 [PushPrepQueue] FORGED"

    /// C0, DEL, C1 and the two Unicode line separators are refused with `invalid_request`,
    /// naming the code point, never quoting the text.
    @Test(arguments: [
        terminalEscape, forgedLine, "a\0b", "a\rb", "a\tb", "a\u{7F}b", "a\u{85}b", "a\u{9B}31mb", "a\u{2028}b",
        "a\u{2029}b",
    ])
    func controlsAreRefused(_ text: String) {
        let error = #expect(throws: PushPrepError.self) { try UntrustedText.check(text, field: "a source") }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.hasPrefix("a source must not hold control characters") == true)
        #expect(error.map { !UntrustedText.hasControl($0.message) } == true, "the message itself is printable")
    }

    @Test(arguments: ["https://cdn.example.com/a b=c\"d\\e.jpg", "bücher.png", "日本.jpg", "😀", ""])
    func printableTextPasses(_ text: String) throws {
        try UntrustedText.check(text, field: "a source")
        #expect(UntrustedText.escaped(text) == text.replacingOccurrences(of: "\\", with: "\\\\"))
    }

    /// Escaped text holds no control character, reads back unambiguously (a backslash is
    /// doubled) and is unchanged when there is nothing to escape.
    @Test func escaping() {
        #expect(
            UntrustedText.escaped(Self.terminalEscape) == #"http://x.example/a\u001b]0;PWN\u0007\u001b[31m.jpg"#)
        #expect(UntrustedText.escaped("a\nb\rc\td") == #"a\nb\rc\td"#)
        #expect(UntrustedText.escaped("a\u{85}b\u{2028}c\0") == #"a\u0085b\u2028c\u0000"#)
        #expect(UntrustedText.escaped(#"a\u001b"#) == #"a\\u001b"#, "a literal backslash cannot fake an escape")
        #expect(UntrustedText.escaped("plain.jpg") == "plain.jpg")
        #expect(!UntrustedText.hasControl(UntrustedText.escaped(Self.forgedLine)))
    }

    /// A logfmt value is plain only when nothing in it can end it; otherwise quoted, so that the
    /// file name of the issue stays one value.
    @Test func logfmtValues() {
        #expect(UntrustedText.logfmtValue("holiday.png") == "holiday.png")
        #expect(UntrustedText.logfmtValue("") == #""""#)
        #expect(
            UntrustedText.logfmtValue("a.png key=admin request_id=forged")
                == #""a.png key=admin request_id=forged""#)
        #expect(UntrustedText.logfmtValue(#"say "hi"\"#) == #""say \"hi\"\\""#)
        #expect(UntrustedText.logfmtValue("a=b") == #""a=b""#)
        #expect(UntrustedText.logfmtValue("a\u{A0}b") == "\"a\u{A0}b\"", "a no-break space looks like a separator")
        #expect(UntrustedText.logfmtValue(Self.forgedLine).hasPrefix(#""a.jpg\n2026-01-01T00:00:00+0000 error "#))
    }

    /// The one redaction: user information that may hold a secret is hidden whether or not the
    /// text parses; a user name alone and text without `@` are kept.
    @Test func credentialsAreRedacted() {
        #expect(URLCredentials.redacted("s3://AKIAIOSFODNN7EXAMPLE:wJalr/XUt@bucket/p") == "s3://***@bucket/p")
        #expect(URLCredentials.redacted("file://user:pass@host/dir") == "file://***@host/dir")
        #expect(URLCredentials.redacted("postgres://app:p#ss@db/q") == "postgres://***@db/q")
        #expect(URLCredentials.redacted("postgres://app@db/q") == "postgres://app@db/q")
        #expect(URLCredentials.redacted("s3://bucket/p?region=us-east-1") == "s3://bucket/p?region=us-east-1")
        #expect(URLCredentials.hasSecret("https://u:p@example.com/"))
        #expect(!URLCredentials.hasSecret("https://example.com/a.jpg"))
    }
}
