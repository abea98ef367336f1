import Testing

@testable import PushPrepStorage

/// Text PushPrep writes into an S3 request body (an ETag in `CompleteMultipartUpload`) is
/// escaped character reference by character reference, whatever follows a markup character: a
/// combining mark after `&` or `<` makes one `Character` with it, and escaping by `Character`
/// used to leave such a `&` raw, which made the body malformed XML.
@Suite struct S3XMLEscapeTests {
    @Test func markupCharactersAreEscapedEvenWhenAMarkCombinesWithThem() {
        #expect(S3XML.escaped(#""etag"&'<>"#) == "&quot;etag&quot;&amp;&apos;&lt;&gt;")
        #expect(S3XML.escaped("a&\u{301}b") == "a&amp;\u{301}b")
        #expect(S3XML.escaped("<\u{338}") == "&lt;\u{338}")
        #expect(S3XML.escaped("plain é") == "plain é")
    }
}
