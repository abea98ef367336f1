import Testing

@testable import PushPrepReport

@Suite struct HTMLTests {
    @Test func escapesMarkup() {
        #expect(HTML.escape(#"<a href="x">'&'</a>"#) == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(HTML.escape("plain é") == "plain é")
    }
}
