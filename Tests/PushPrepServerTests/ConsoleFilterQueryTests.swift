import Foundation
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// The jobs table's filter read from the query a browser's GET form sends, and written back into
/// the pager's links.
struct ConsoleFilterQueryTests {
    /// A form sends a space as `+` and a `+` as `%2B`: `summer+sale` finds `summer sale.jpg`,
    /// `a+b` finds `a b.jpg`, `a%2Bb` finds the `a+b` sources, and the "Older jobs" link keeps
    /// the `+` a `+`.
    @Test func sourceFilterReadsTheFormsEncoding() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let browser = ConsoleBrowser(baseURL: server.baseURL)
        defer { Task { try? await browser.shutdown() } }
        let plus = try await ConsoleQueue.enqueue(dir, (0..<52).map { "https://media.example.com/a+b-\($0).jpg" })
        let others = try await ConsoleQueue.enqueue(
            dir, ["https://media.example.com/summer sale.jpg", "https://media.example.com/a b.jpg"])

        let summer = try await browser.get("/jobs?source=summer+sale")
        #expect(ConsoleTests.rows(summer.text) == [others[0]])
        #expect(summer.text.contains(#"name="source" value="summer sale""#))
        let spaced = try await browser.get("/jobs?source=a+b")
        #expect(ConsoleTests.rows(spaced.text) == [others[1]])

        let first = try await browser.get("/jobs?source=a%2Bb")
        #expect(ConsoleTests.rows(first.text) == Array(plus.suffix(50).reversed()))
        let older = try #require(ConsoleTests.link(first.text, rel: "next"))
        #expect(older.contains("source=a%2Bb"), "\(older)")
        let second = try await browser.get(older.replacingOccurrences(of: "&amp;", with: "&"))
        #expect(ConsoleTests.rows(second.text) == Array(plus.prefix(2).reversed()))
    }
}
