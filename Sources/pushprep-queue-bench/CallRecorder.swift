import Foundation
import Synchronization

/// The calls one queue method received: how many, how many rows they carried and how long each
/// took.
struct CallStats: Codable, Sendable {
    /// Calls that returned.
    var calls = 0
    /// Calls that threw.
    var errors = 0
    /// Rows passed in (enqueue, heartbeat, finish, release) or returned (claim, list), summed.
    var rows = 0
    /// Each returned call's duration in nanoseconds, in call order.
    var nanoseconds: [Int64] = []

    mutating func add(_ duration: Duration, rows: Int) {
        calls += 1
        self.rows += rows
        nanoseconds.append(
            duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    mutating func merge(_ other: CallStats) {
        calls += other.calls
        errors += other.errors
        rows += other.rows
        nanoseconds += other.nanoseconds
    }

    /// Time spent in all calls, in seconds.
    var totalSeconds: Double { Double(nanoseconds.reduce(0, +)) / 1e9 }

    /// The duration below which `fraction` of the calls took, in milliseconds (nearest rank).
    func percentileMilliseconds(_ fraction: Double) -> Double {
        guard !nanoseconds.isEmpty else { return 0 }
        let sorted = nanoseconds.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return Double(sorted[min(max(rank, 0), sorted.count - 1)]) / 1e6
    }
}

/// What one worker (or all of them, merged) did to the queue while the benchmark ran.
struct WorkerReport: Codable, Sendable {
    /// Per queue method name (`claim`, `finish`, ...).
    var calls: [String: CallStats] = [:]
    /// The start of the first claim that returned jobs.
    var firstClaim: Date?
    /// The end of the last `finish` that accepted results.
    var lastFinish: Date?
    /// Results the queue accepted (`finish` returned their id).
    var accepted = 0
    /// Results the queue refused: another claim owned the job.
    var refused = 0
    /// Times the handler ran.
    var handled = 0

    mutating func merge(_ other: WorkerReport) {
        for (name, stats) in other.calls { calls[name, default: CallStats()].merge(stats) }
        firstClaim = [firstClaim, other.firstClaim].compactMap { $0 }.min()
        lastFinish = [lastFinish, other.lastFinish].compactMap { $0 }.max()
        accepted += other.accepted
        refused += other.refused
        handled += other.handled
    }

    /// From the first claim to the last accepted result, in seconds, or nil when nothing ran.
    var processSeconds: Double? {
        guard let firstClaim, let lastFinish else { return nil }
        return lastFinish.timeIntervalSince(firstClaim)
    }
}

/// Collects ``WorkerReport`` data from the queue calls of any number of tasks.
final class CallRecorder: Sendable {
    private let report = Mutex(WorkerReport())

    /// Records one returned call.
    func record(_ name: String, duration: Duration, rows: Int) {
        report.withLock { $0.calls[name, default: CallStats()].add(duration, rows: rows) }
    }

    /// Records one call that threw.
    func recordError(_ name: String) {
        report.withLock { $0.calls[name, default: CallStats()].errors += 1 }
    }

    /// Notes a claim that returned jobs and started at `start`.
    func noteClaim(startedAt start: Date) {
        report.withLock { report in
            if report.firstClaim.map({ start < $0 }) ?? true { report.firstClaim = start }
        }
    }

    /// Notes a `finish` that ended at `end`, with how many of its results the queue took.
    func noteFinish(endedAt end: Date, accepted: Int, refused: Int) {
        report.withLock { report in
            report.accepted += accepted
            report.refused += refused
            if accepted > 0, report.lastFinish.map({ end > $0 }) ?? true { report.lastFinish = end }
        }
    }

    /// Results the queue accepted so far.
    var accepted: Int { report.withLock { $0.accepted } }

    /// Everything recorded so far; `handled` comes from the handler.
    func snapshot(handled: Int) -> WorkerReport {
        var snapshot = report.withLock { $0 }
        snapshot.handled = handled
        return snapshot
    }
}
