import Foundation
import PushPrepTestSupport
import Testing

/// `make lint` runs scripts/lint-raced-sleep.py, which refuses a `Task.sleep` inside a task
/// group's child: a cancelled sleep stays scheduled until its deadline (swiftlang/swift#60441),
/// which kept memory per request (issue 32) and per job (the worker's job timeout). The grep it
/// replaces stopped at the first `}` and missed the worker's sleep inside a loop.
struct RacedSleepLintTests {
    static let script = LintScript("lint-raced-sleep.py")

    @Test func flagsASleepInAChildEvenInsideALoop() throws {
        let (lines, status) = try Self.script.flagged(
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
        let (lines, status) = try Self.script.flagged(
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
        let (status, output) = try Self.script.run(onProject: ["Sources"])
        #expect(status == 0, "\(output)")
    }
}
