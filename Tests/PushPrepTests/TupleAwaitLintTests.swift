import Foundation
import PushPrepTestSupport
import Testing

/// `make lint` runs scripts/lint-tuple-await.py, which refuses the shape behind issue 26 §0: a
/// tuple literal with an element before a `try await` inside it, whose earlier elements Swift
/// 6.3's optimiser loses (every publication came back for index 0 in release builds). Run it on
/// the shapes it must flag and on those it must leave alone (each measured correct at -O).
struct TupleAwaitLintTests {
    static let script = TestTools.packageRoot.appendingPathComponent("scripts/lint-tuple-await.py").path

    /// The 1-based lines of `source` the script flags, and its exit status.
    static func flagged(_ source: String) throws -> (lines: [Int], status: Int32) {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        try source.write(to: directory.appendingPathComponent("Code.swift"), atomically: true, encoding: .utf8)
        let result = try TestTools.run("python3", [Self.script, directory.path])
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.split(separator: ":").dropFirst().first.flatMap { Int($0) }
        }
        return (lines, result.status)
    }

    @Test func flagsAnElementBeforeATryAwaitInOneTuple() throws {
        let (lines, status) = try Self.flagged(
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
        let (lines, status) = try Self.flagged(
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
        let result = try TestTools.run(
            "python3",
            [
                Self.script, TestTools.packageRoot.appendingPathComponent("Sources").path,
                TestTools.packageRoot.appendingPathComponent("Tests").path,
            ])
        #expect(result.status == 0, "\(String(decoding: result.stdout, as: UTF8.self))")
    }
}
