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

/// The number of queued jobs, looked up at most every `maxAge` (a count over the queue is not
/// free; at thousands of requests a second, one a second is plenty), for the backpressure of
/// `--max-queued`.
final class QueueDepth: Sendable {
    let queue: any JobQueue
    let maxQueued: Int
    let maxAge: Duration
    private let state = Mutex<(queued: Int, at: ContinuousClock.Instant?)>((0, nil))

    init(queue: any JobQueue, maxQueued: Int, maxAge: Duration = .seconds(1)) {
        self.queue = queue
        self.maxQueued = maxQueued
        self.maxAge = maxAge
    }

    /// Throws `queue_full` (429, `Retry-After`) when `adding` more jobs would take the queue
    /// past `maxQueued`; counts the jobs it lets through until the next look.
    func admit(_ adding: Int) async throws {
        let now = ContinuousClock.now
        let cached = state.withLock { state -> Int? in
            guard let at = state.at, now - at < maxAge else { return nil }
            return state.queued
        }
        var queued: Int
        if let cached {
            queued = cached
        } else {
            queued = try await queue.stats().byState[.queued] ?? 0
            let fresh = queued
            state.withLock { $0 = (fresh, now) }
        }
        guard queued + adding <= maxQueued else {
            throw Problem(
                .tooManyRequests, .queueFull,
                "\(queued) jobs are queued, the server accepts up to \(maxQueued); retry later", retryAfter: 5)
        }
        state.withLock { $0.queued += adding }
        queued += adding
    }
}
