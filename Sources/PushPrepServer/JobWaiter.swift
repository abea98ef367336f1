import HTTPTypes
import PushPrep
import PushPrepCore
import PushPrepQueue
import Synchronization

/// Waits for jobs to finish by looking at them again and again, 50 ms apart at first and up
/// to 1 s apart: the jobs may run in this process or on another host (PostgreSQL), so the
/// queue's rows are the one place their state is known.
struct JobWaiter {
    let queue: any JobQueue

    /// The jobs once every one is finished, or as they are when `timeout` has passed (or the
    /// request was cancelled: the client went away). A job that no longer exists is left out.
    func wait(for ids: [JobID], upTo timeout: Duration) async throws -> [JobRecord] {
        let deadline = ContinuousClock.now + timeout
        var pause: Duration = .milliseconds(50)
        while true {
            var records: [JobRecord] = []
            for id in ids {
                if let record = try await queue.job(id) { records.append(record) }
            }
            let remaining = deadline - .now
            if records.allSatisfy(\.state.isFinished) || remaining <= .zero || Task.isCancelled { return records }
            try? await Task.sleep(for: min(pause, remaining))
            pause = min(pause * 2, .seconds(1))
        }
    }
}

/// The number of queued jobs, for the backpressure of `--max-queued`: counted in the queue at
/// most every `maxAge` (a count over the queue is not free; at thousands of requests a second,
/// one a second is plenty) and kept up to date in between by the jobs this server admits.
///
/// Admission is checked and recorded under one lock, so concurrent requests cannot all pass
/// the same check. Jobs admitted but not yet written, and jobs written while a count runs, are
/// added to the count: the estimate may be high until the next count (refusing a little early),
/// never low. Jobs that other servers add are seen at the next count.
final class QueueDepth: Sendable {
    let queue: any JobQueue
    let maxQueued: Int
    let maxAge: Duration
    private let state = Mutex(State())

    private struct State {
        /// Queued jobs at the last count.
        var counted = 0
        var countedAt: ContinuousClock.Instant?
        var counting = false
        /// Admitted, not yet written (or refused by the queue).
        var inFlight = 0
        /// Written since the last count started.
        var written = 0

        var estimate: Int { counted + inFlight + written }
    }

    init(queue: any JobQueue, maxQueued: Int, maxAge: Duration = .seconds(1)) {
        self.queue = queue
        self.maxQueued = maxQueued
        self.maxAge = maxAge
    }

    /// Runs `enqueue` if `adding` more jobs keep the queue within `maxQueued`; throws
    /// `queue_full` (429, `Retry-After`) otherwise.
    func admitting<Result>(_ adding: Int, _ enqueue: () async throws -> Result) async throws -> Result {
        try await refreshIfStale()
        let estimate = state.withLock { state -> Int? in
            guard state.estimate + adding <= maxQueued else { return state.estimate }
            state.inFlight += adding
            return nil
        }
        if let estimate {
            throw Problem(
                .tooManyRequests, .queueFull,
                "\(estimate) jobs are queued, the server accepts up to \(maxQueued); retry later", retryAfter: 5)
        }
        do {
            let result = try await enqueue()
            state.withLock {
                $0.inFlight -= adding
                $0.written += adding
            }
            return result
        } catch {
            state.withLock { $0.inFlight -= adding }
            throw error
        }
    }

    /// Counts the queued jobs again when the last count is older than `maxAge` (one count at a
    /// time; other requests go on with the estimate meanwhile).
    private func refreshIfStale() async throws {
        let now = ContinuousClock.now
        enum Step { case go, wait, count(writtenBefore: Int) }
        var step = Step.wait
        while case .wait = step {
            step = state.withLock { state -> Step in
                if let at = state.countedAt, now - at < maxAge { return .go }
                // Another request is counting: go on with the estimate, or, before the first
                // count, wait for it.
                if state.counting { return state.countedAt == nil ? .wait : .go }
                state.counting = true
                return .count(writtenBefore: state.written)
            }
            if case .wait = step { try await Task.sleep(for: .milliseconds(5)) }
        }
        guard case .count(let writtenBefore) = step else { return }
        let counted: Int
        do {
            counted = try await queue.stats().byState[.queued] ?? 0
        } catch {
            state.withLock { $0.counting = false }
            throw error
        }
        state.withLock {
            $0.counted = counted
            // Writes before the count began are in it; those during it may be, and stay added.
            $0.written -= writtenBefore
            $0.countedAt = now
            $0.counting = false
        }
    }
}
