import Foundation
import PushPrepCore
import Testing

@testable import PushPrepRemote

/// The deadline of every fetch (``RemoteFetcher``'s `withDeadline`): nothing of it is left once
/// the fetch has ended.
struct RemoteDeadlineTests {
    /// Each fetch raced its body against a `Task.sleep` until the fetch deadline, and a cancelled
    /// sleep stays scheduled, with its task, until then (swiftlang/swift#60441): ~700 bytes kept
    /// for every fetch for 120 s (the default `--fetch-timeout`); 50,000 fetches kept ~34 MB.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status"), "reads /proc/self/status"))
    func finishedFetchDeadlinesKeepNothing() async throws {
        func run(_ count: Int) async throws {
            for index in 0..<count {
                let value = try await RemoteFetcher.withDeadline(
                    ContinuousClock.now + .seconds(300), timeout: .seconds(300), source: "http://127.0.0.1/x"
                ) { () async throws(PushPrepError) -> Int in index }
                #expect(value == index)
            }
        }
        try await run(1_000)
        let before = try Self.anonymousKiB()
        try await run(50_000)
        let growth = try Self.anonymousKiB() - before
        #expect(growth < 8 * 1024, "50,000 finished fetch deadlines grew this process by \(growth) kB")
    }

    /// `RssAnon` of this process, in KiB.
    static func anonymousKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") })
        return try #require(
            line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) })
    }
}
