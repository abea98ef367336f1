import Foundation
import Synchronization
import Testing

@testable import PushPrepCore

/// ``withDeadline(_:_:)``: the operation's value or error before the deadline, nil (and the
/// operation cancelled) after it, and nothing left behind once it returns.
struct DeadlineTests {
    @Test func anOperationThatEndsInTimeGivesItsValueOrError() async throws {
        #expect(try await withDeadline(.seconds(30)) { 42 } == 42)
        await #expect(throws: PushPrepError.self) {
            _ = try await withDeadline(.seconds(30)) { () async throws -> Int in
                throw PushPrepError(.invalidRequest, "refused")
            }
        }
    }

    @Test func pastTheDeadlineTheOperationIsCancelledAndNilReturned() async throws {
        let started = ContinuousClock.now
        let value = try await withDeadline(.milliseconds(100)) { () async throws -> Bool in
            // Returns (true) only when cancelled: the sleep would take a minute otherwise.
            do { try await Task.sleep(for: .seconds(60)) } catch { return true }
            return false
        }
        #expect(value == nil)
        #expect(ContinuousClock.now - started < .seconds(30), "the operation was not cancelled at the deadline")
        #expect(try await withDeadline(.zero) { try await Task.sleep(for: .seconds(60)) } == nil)
    }

    /// ``withDeadlineAbandoning(_:_:)`` gives every in-time operation's value: its first version
    /// let the alarm, cancelled as the operation ended, report the deadline first now and then.
    @Test func abandoningGivesInTimeValues() async throws {
        for i in 0..<500 {
            #expect(try await withDeadlineAbandoning(.seconds(30)) { i } == i)
        }
        await #expect(throws: PushPrepError.self) {
            _ = try await withDeadlineAbandoning(.seconds(30)) { () async throws -> Int in
                throw PushPrepError(.invalidRequest, "refused")
            }
        }
    }

    /// Issue 31: an operation that does not heed cancellation (a query on a connection whose
    /// server stopped answering) is left behind at the deadline instead of awaited.
    @Test func abandoningReturnsAtTheDeadlineWithoutTheOperation() async throws {
        let release = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let started = ContinuousClock.now
        let value = try await withDeadlineAbandoning(.milliseconds(100)) { () async -> Bool in
            // Deaf to cancellation: ends only when the test releases it.
            await withCheckedContinuation { continuation in release.withLock { $0 = continuation } }
            return true
        }
        #expect(value == nil)
        #expect(ContinuousClock.now - started < .seconds(30), "the call waited for the operation")
        release.withLock { $0?.resume() }
    }

    /// Issue 32: racing the operation against `Task.sleep` kept every sleep scheduled, with its
    /// task, until its deadline: 50,000 calls with a 300 s deadline kept ~37 MB. The alarm of
    /// `withDeadline` is freed when the call returns.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status"), "reads /proc/self/status"))
    func finishedCallsKeepNothing() async throws {
        for index in 0..<1_000 { _ = try await withDeadline(.seconds(300)) { index } }
        let before = try Self.anonymousKiB()
        for index in 0..<50_000 {
            let value = try await withDeadline(.seconds(300)) { index }
            #expect(value == index)
        }
        let growth = try Self.anonymousKiB() - before
        #expect(growth < 8 * 1024, "50,000 finished deadlines grew this process by \(growth) kB")
    }

    /// `RssAnon` of this process, in KiB.
    static func anonymousKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") })
        return try #require(
            line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) })
    }
}
