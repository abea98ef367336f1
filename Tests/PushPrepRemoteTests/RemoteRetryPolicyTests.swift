import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepRemote

/// Backoff, `Retry-After` and the concurrency bound, as pure logic.
@Suite struct RemoteRetryPolicyTests {
    @Test("backoff doubles per try, is jittered, and never exceeds its ceiling")
    func backoff() {
        let policy = RetryPolicy(maxTries: 3, baseDelay: .milliseconds(200), maxDelay: .seconds(1))
        #expect(policy.backoff(beforeTry: 2, random: { $0.upperBound }) == .milliseconds(200))
        #expect(policy.backoff(beforeTry: 3, random: { $0.upperBound }) == .milliseconds(400))
        #expect(policy.backoff(beforeTry: 4, random: { $0.upperBound }) == .milliseconds(800))
        #expect(policy.backoff(beforeTry: 9, random: { $0.upperBound }) == .seconds(1))
        #expect(policy.backoff(beforeTry: 2, random: { $0.lowerBound }) == .milliseconds(20))
        for _ in 0..<100 {
            let delay = policy.backoff(beforeTry: 3)
            #expect(delay >= .milliseconds(40) && delay <= .milliseconds(400))
        }
    }

    /// A library caller's durations and fraction are not checked by any CLI: the delay is
    /// computed without a trap (before, `Int64(seconds * 1000)` trapped past Int64 and on NaN,
    /// and `base * 2^n` on a huge base), bounded by the cap and never negative.
    @Test("backoff never traps on extreme durations, fractions or draws")
    func backoffExtremes() {
        let huge = Duration.seconds(Int64.max)
        #expect(Backoff(base: huge, cap: huge).delay(afterFailure: 31, random: { $0.upperBound }) > .seconds(1e12))
        #expect(
            Backoff(base: .seconds(1), cap: huge).delay(afterFailure: .max, random: { $0.upperBound })
                == .seconds(1 << 30))
        #expect(Backoff(base: .seconds(-5), cap: .seconds(10)).delay(afterFailure: 3) == .zero)
        #expect(Backoff(base: .seconds(5), cap: .seconds(-10)).delay(afterFailure: 1) == .zero)
        #expect(
            Backoff(base: .seconds(4), cap: .seconds(10), minimumFraction: .nan).delay(
                afterFailure: 1, random: { $0.lowerBound }) == .seconds(2))
        #expect(
            Backoff(base: .seconds(4), cap: .seconds(10), minimumFraction: -3).delay(
                afterFailure: 1, random: { $0.lowerBound }) == .zero)
        #expect(
            Backoff(base: .seconds(4), cap: .seconds(10)).delay(afterFailure: 1, random: { _ in .nan }) == .seconds(4))
        #expect(
            Backoff(base: .seconds(4), cap: .seconds(10)).delay(afterFailure: 2, random: { _ in .infinity })
                == .seconds(8))
        #expect(
            Backoff(base: .seconds(4), cap: .seconds(10)).delay(afterFailure: 1, random: { _ in -.infinity }) == .zero)
    }

    @Test("Retry-After: seconds or an HTTP date; garbage is ignored")
    func retryAfter() {
        #expect(RetryAfter.parse("3") == .seconds(3))
        #expect(RetryAfter.parse(" 0 ") == .seconds(0))
        #expect(RetryAfter.parse(nil) == nil)
        #expect(RetryAfter.parse("soon") == nil)
        #expect(RetryAfter.parse("-5") == nil)
        #expect(RetryAfter.parse("99999999999999999999999") == nil)
        #expect(RetryAfter.parse("Tue, 01 Apr 20250 10:00:30 GMT")! > .seconds(500_000_000_000))
        let now = Date(timeIntervalSince1970: 1_743_501_600)  // Tue, 01 Apr 2025 10:00:00 GMT
        #expect(RetryAfter.parse("Tue, 01 Apr 2025 10:00:30 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.parse("Tue, 01 Apr 2025 09:00:00 GMT", now: now) == .zero)
        // The obsolete forms a recipient must still read (RFC 9110 §5.6.7).
        #expect(RetryAfter.parse("Tuesday, 01-Apr-25 10:00:30 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.parse("Tue Apr  1 10:01:00 2025", now: now) == .seconds(60))
        #expect(RetryAfter.parse("Tue, 01 Apr 2025 10:00", now: now) == nil)
        #expect(RetryPolicy.transientStatuses == [429, 502, 503, 504])
    }

    @Test("the limiter never runs more than its bounds, overall and per host")
    func limiter() async throws {
        let limiter = FetchLimiter(overall: 3, perHost: 2)
        let peaks = PeakCounter()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<24 {
                group.addTask {
                    let host = index % 2 == 0 ? "a" : "b"
                    _ = try? await limiter.withSlot(host: host) { () async throws(PushPrepError) -> Void in
                        peaks.enter(host)
                        try? await Task.sleep(for: .milliseconds(5))
                        peaks.leave(host)
                    }
                }
            }
        }
        #expect(peaks.overallPeak == 3)
        #expect(peaks.hostPeak <= 2)
        #expect(limiter.running == 0)
    }
}

private final class PeakCounter: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var running = 0
    private var perHost: [String: Int] = [:]
    private(set) var overallPeak = 0
    private(set) var hostPeak = 0

    func enter(_ host: String) {
        lock.withLock {
            running += 1
            perHost[host, default: 0] += 1
            overallPeak = max(overallPeak, running)
            hostPeak = max(hostPeak, perHost[host]!)
        }
    }

    func leave(_ host: String) {
        lock.withLock {
            running -= 1
            perHost[host, default: 0] -= 1
        }
    }
}
