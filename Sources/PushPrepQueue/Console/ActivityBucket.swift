package import Foundation
import PushPrepCore

/// The jobs that finished in one interval, for the console's throughput chart: counted by the
/// state they ended in (a job retried by hand counts once, at its latest end).
package struct ActivityBucket: Sendable, Equatable, Codable {
    /// The interval's start; it lasts the `bucket` asked for.
    package var start: Date
    package var succeeded: Int
    /// Ended `failed` or `dead`.
    package var failed: Int
    package var cancelled: Int

    package init(start: Date, succeeded: Int = 0, failed: Int = 0, cancelled: Int = 0) {
        self.start = start
        self.succeeded = succeeded
        self.failed = failed
        self.cancelled = cancelled
    }

    /// The most buckets one ``ConsoleQueries/activity(since:bucket:)`` returns (a day of minutes).
    package static let maximumCount = 1440
    /// A bucket's range in seconds.
    package static let widthSeconds: ClosedRange<Double> = 1...86_400

    /// The buckets covering `since` up to `now`: each `width` long (clamped to
    /// ``widthSeconds``), starting at `since` on its grid, the newest ``maximumCount`` only (the
    /// first start moves forward, on the same grid). Empty when `since` is not before `now`.
    static func grid(since: Date, until now: Date, width: Duration) -> (first: Date, width: Double, count: Int) {
        let seconds = min(max(width.seconds, widthSeconds.lowerBound), widthSeconds.upperBound)
        let span = now.timeIntervalSince(since)
        guard span > 0, span.isFinite else { return (since, seconds, 0) }
        let needed = (span / seconds).rounded(.up)
        guard needed > Double(maximumCount) else { return (since, seconds, Int(needed)) }
        // Only the newest: their first start is measured back from `now` (still on the grid of
        // `since`), so a `since` far in the past (1e300 seconds back) never reaches `Int(_:)`.
        let remainder = span.truncatingRemainder(dividingBy: seconds)
        let gap = remainder == 0 ? 0 : seconds - remainder
        return (now.addingTimeInterval(gap - Double(maximumCount) * seconds), seconds, maximumCount)
    }

    /// Every bucket of the grid, filled with the `counts` found by bucket index (missing ones
    /// are zero).
    static func fill(
        first: Date, width: Double, count: Int, counts: [Int: (succeeded: Int, failed: Int, cancelled: Int)]
    ) -> [ActivityBucket] {
        (0..<count).map { index in
            let found = counts[index]
            return ActivityBucket(
                start: first.addingTimeInterval(Double(index) * width), succeeded: found?.succeeded ?? 0,
                failed: found?.failed ?? 0, cancelled: found?.cancelled ?? 0)
        }
    }
}
