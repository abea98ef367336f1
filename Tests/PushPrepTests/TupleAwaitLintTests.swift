import Foundation
import PushPrepTestSupport
import Testing

/// `make lint` runs scripts/lint-tuple-await.py, which refuses the shape behind issue 26 §0: a
/// tuple literal with an element before a `try await` inside it, whose earlier elements Swift
/// 6.3's optimiser loses (every publication came back for index 0 in release builds). Run it on
/// the shapes it must flag and on those it must leave alone (each measured correct at -O).
struct TupleAwaitLintTests {
    static let script = LintScript("lint-tuple-await.py")

    @Test func flagsAnElementBeforeATryAwaitInOneTuple() throws {
        let (lines, status) = try Self.script.flagged(
            """
            return (index, .ok(try await publish(attachment, from: directory, urls: urls)))
            let pair = (a, try await g())
            group.addTask { (i, .ok(try? await p(x))) }
            let raw = #"{"a": (1"#; let after = (c, try await d())
            """)
        #expect(lines == [1, 2, 3, 4])
        #expect(status == 1)
    }

    @Test func leavesCallsInitialisersClosuresAndStringsAlone() throws {
        let (lines, status) = try Self.script.flagged(
            """
            let published = try await publish(attachment); return (index, .ok(published))
            let call = pair(index, .ok(try await publish(item)))
            let made = IndexedEntry(index: index, entry: .ok(try await publish(item)))
            let first = (try await a(), b)
            let later = (a, { try await b() }())
            let text = "(a, try await b)"  // (c, try await d)
            return (index, .ok(await publish(item)))
            """)
        #expect(lines == [])
        #expect(status == 0)
    }

    @Test func theProjectsSourcesAreClean() throws {
        let (status, output) = try Self.script.run(onProject: ["Sources", "Tests"])
        #expect(status == 0, "\(output)")
    }
}
