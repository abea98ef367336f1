import Foundation
import PushPrepQueue
import Testing

@testable import PushPrepServer

/// The console's ages and durations, from dates the queue holds.
struct ConsoleFormatTests {
    /// Ordinary ages in their unit; an age from a date far off (a damaged row) is written as the
    /// longest age instead of trapping in the conversion to an integer.
    @Test func agesStayWithinRange() {
        #expect(ConsoleFormat.age(seconds: 42) == "42 s")
        #expect(ConsoleFormat.age(seconds: 2 * 86_400 + 5) == "2 d")
        #expect(ConsoleFormat.age(seconds: -.infinity) == "0 s")
        #expect(ConsoleFormat.age(seconds: 1e300) == "11574074 d")
        #expect(ConsoleFormat.duration(seconds: 1e300) == "11574074 d")
    }
}

/// Which queued jobs the console writes as `retrying`, and what it says of their next attempt.
struct ConsoleRetryTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(
        state: JobState = .queued, attempt: Int = 1, runIn seconds: Double = 30, errorCode: String? = "fetch_failed"
    ) -> JobRecord {
        JobRecord(
            id: 7, state: state, source: "https://media.example.com/a.jpg", payload: "{}", dedupKey: nil, priority: 0,
            attempt: attempt, maxAttempts: 5, timeoutSeconds: nil, runAt: now + seconds, createdAt: now - 60,
            updatedAt: now - 1, finishedAt: nil, leaseOwner: nil, leaseToken: 1, leaseExpiresAt: nil,
            cancelRequested: false, errorCode: errorCode, errorMessage: "HTTP 503", result: nil)
    }

    /// A queued job that failed an attempt and waits for `run_at` is retrying: the next attempt
    /// is the one after those made, at `run_at`.
    @Test func aFailedAttemptWaitingIsRetrying() throws {
        let retry = try #require(ConsoleRetry(Self.record(attempt: 2, runIn: 90), now: Self.now))
        #expect(retry.label == "attempt 3 of 5")
        #expect(retry.at == Self.now + 90)
        #expect(retry.wait(now: Self.now) == "in 1 min")
        let row = ConsoleJobView(
            Self.record(attempt: 2, runIn: 90),
            renderer: JobRenderer(configuration: ServerConfiguration(port: 0), publicURL: PublicURL(configured: nil))
        ).row(now: Self.now)
        #expect(row.state == "queued", "the queue's state, as the API says it")
        #expect(row.shownState == "retrying")
        #expect(row.retrying?.nextAttemptISO == ConsoleFormat.iso(Self.now + 90))
    }

    /// Not retrying: a job delayed before its first attempt, one whose time has come, one that
    /// is running or finished, and one queued again by hand (no error kept).
    @Test func othersAreNot() {
        let others = [
            Self.record(attempt: 0, errorCode: nil), Self.record(runIn: 0), Self.record(runIn: -5),
            Self.record(state: .running), Self.record(state: .failed), Self.record(errorCode: nil),
        ]
        for record in others { #expect(ConsoleRetry(record, now: Self.now) == nil, "\(record)") }
    }
}
