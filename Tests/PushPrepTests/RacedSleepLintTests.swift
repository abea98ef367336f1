import Foundation
import PushPrepTestSupport
import Testing

/// `make lint` runs scripts/lint-raced-sleep.py, which refuses a `Task.sleep` inside a task
/// group's child: a cancelled sleep stays scheduled until its deadline (swiftlang/swift#60441),
/// which kept memory per request (issue 32) and per job (the worker's job timeout). The grep it
/// replaces stopped at the first `}` and missed the worker's sleep inside a loop.
struct RacedSleepLintTests {
    static let script = TestTools.packageRoot.appendingPathComponent("scripts/lint-raced-sleep.py").path

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

    @Test func flagsASleepInAChildEvenInsideALoop() throws {
        let (lines, status) = try Self.flagged(
            """
            group.addTask { try await Task.sleep(for: limit); throw Timeout() }
            group.addTask {
                while true {
                    if now >= deadline { break }
                    do { try await Task.sleep(until: wake, clock: .continuous) } catch { return nil }
                }
            }
            group.addTaskUnlessCancelled(priority: .low) { try? await Task.sleep(for: .seconds(1)) }
            """)
        #expect(lines == [1, 5, 8])
        #expect(status == 1)
    }

    @Test func leavesSleepsOutsideChildrenCommentsAndStringsAlone() throws {
        let (lines, status) = try Self.flagged(
            """
            group.addTask { await Alarm(after: limit).wait() }
            while true { try await Task.sleep(for: interval); trim() }
            group.addTask { await work() } // Task.sleep would stay scheduled
            group.addTask { log("Task.sleep") }
            """)
        #expect(lines == [])
        #expect(status == 0)
    }

    @Test func theProjectsSourcesAreClean() throws {
        let result = try TestTools.run(
            "python3", [Self.script, TestTools.packageRoot.appendingPathComponent("Sources").path])
        #expect(result.status == 0, "\(String(decoding: result.stdout, as: UTF8.self))")
    }
}
