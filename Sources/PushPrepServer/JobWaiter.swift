import HTTPTypes
import Metrics
import PushPrepCore
import PushPrepQueue
import Synchronization

/// The long polls of one server (`GET /v1/jobs/{id}?wait=`, `POST /v1/process`): how many
/// may wait at once, and one shared look at the queue for all of them.
///
/// The jobs may run in this process or on another host (PostgreSQL), so the queue's rows are
/// the one place their state is known. Instead of each wait reading them again and again, one
/// poller reads the jobs that anyone waits for, every ``interval`` while someone waits (and
/// not at all otherwise), and wakes the waits whose jobs are done: the database's load no
/// longer grows with the number of waits, only with the distinct jobs waited for.
///
/// A wait ends when its jobs are done, at its deadline, or when its task is cancelled (the
/// client went away: see ``JobRoutes``), whichever is first; a cancelled wait is forgotten at
/// once, so it neither holds a slot nor is polled for.
final class JobWatch: Sendable {
    let queue: any JobQueueAdmin
    /// The most waits at once over all clients (`--max-waits`).
    let maxWaits: Int
    /// The most waits at once per client (`--max-waits-per-client`).
    let maxWaitsPerClient: Int
    /// How often the jobs waited for are read while anyone waits.
    let interval: Duration
    private let state = Mutex(State())
    /// `pushprep_api_waits`: long polls waiting now.
    private let waitsGauge = Gauge(label: "pushprep_api_waits")
    /// `pushprep_api_wait_polls_total`: the poller's reads of the queue (one per round, however
    /// many wait); it stops growing when nobody waits.
    private let pollsCounter = Counter(label: "pushprep_api_wait_polls_total")
    /// `pushprep_api_waits_refused_total`: long polls refused with `429`.
    private let refusedCounter = Counter(label: "pushprep_api_waits_refused_total")

    /// When a wait is done.
    enum Until: Sendable {
        /// Every job finished (succeeded, failed, dead or cancelled).
        case allFinished
        /// Every job finished, or one of them ended without succeeding (its failure is worth
        /// answering at once; the others go on).
        case allFinishedOrAnyFailed

        /// Whether `records` (the jobs that still exist) are done waiting for.
        func isDone(_ records: [JobRecord]) -> Bool {
            switch self {
            case .allFinished: records.allSatisfy(\.state.isFinished)
            case .allFinishedOrAnyFailed:
                records.allSatisfy(\.state.isFinished)
                    || records.contains { $0.state.isFinished && $0.state != .succeeded }
            }
        }
    }

    private struct Waiter {
        var ids: [JobID]
        var until: Until
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<[JobRecord]?, any Error>
    }

    private struct State {
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
        /// Whether the poller task runs (it ends when nobody waits).
        var polling = false
        /// Slots held per client, and in all.
        var slots: [String: Int] = [:]
        var slotsInUse = 0
    }

    init(queue: any JobQueueAdmin, maxWaits: Int, maxWaitsPerClient: Int, interval: Duration = .milliseconds(100)) {
        self.queue = queue
        self.maxWaits = maxWaits
        self.maxWaitsPerClient = maxWaitsPerClient
        self.interval = interval
    }

    // MARK: Slots

    /// Runs `body` (a wait, and what it needs before, such as enqueueing the jobs of `POST
    /// /v1/process`) holding one of the server's wait slots and one of `client`'s; `429
    /// rate_limited` with `Retry-After` when either is taken up.
    func withSlot<Result>(client: String, _ body: () async throws -> Result) async throws -> Result {
        let refusal = state.withLock { state -> String? in
            if state.slotsInUse >= maxWaits {
                return "\(state.slotsInUse) long polls are waiting on this server, which allows \(maxWaits) at once"
            }
            if state.slots[client, default: 0] >= maxWaitsPerClient {
                return "this client has \(maxWaitsPerClient) long polls waiting, the most allowed at once"
            }
            state.slotsInUse += 1
            state.slots[client, default: 0] += 1
            // Recorded under the lock, so the gauge's last value is the count's.
            waitsGauge.record(state.slotsInUse)
            return nil
        }
        if let refusal {
            refusedCounter.increment()
            throw Problem(
                .tooManyRequests, .rateLimited, "\(refusal); retry later, or use a webhook", retryAfter: 1)
        }
        defer {
            state.withLock { state in
                state.slotsInUse -= 1
                state.slots[client, default: 1] -= 1
                if state.slots[client] == 0 { state.slots[client] = nil }
                waitsGauge.record(state.slotsInUse)
            }
        }
        return try await body()
    }

    // MARK: Waiting

    /// The jobs `ids` once `until` holds, or as they are at `timeout` or when the task is
    /// cancelled (nil then when they were not read yet). A job that no longer exists is left
    /// out.
    func wait(for ids: [JobID], until: Until, upTo timeout: Duration) async throws -> [JobRecord]? {
        guard timeout > .zero, !Task.isCancelled else { return try await Self.read(ids, from: queue) }
        let deadline = ContinuousClock.now + timeout
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[JobRecord]?, any Error>) in
                let startPoller = state.withLock { state -> Bool? in
                    // A cancellation handler that ran before this found no waiter to resume.
                    if Task.isCancelled { return nil }
                    state.waiters[id] = Waiter(ids: ids, until: until, deadline: deadline, continuation: continuation)
                    defer { state.polling = true }
                    return !state.polling
                }
                switch startPoller {
                case nil: continuation.resume(returning: nil)
                case true?: Task { await self.poll() }
                case false?: break
                }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
    }

    /// Reads the jobs waited for, wakes the waits that are done or past their deadline, and
    /// sleeps ``interval`` (or until the nearest deadline); ends when nobody waits.
    private func poll() async {
        while true {
            let ids = state.withLock { state -> Set<JobID>? in
                guard !state.waiters.isEmpty else {
                    state.polling = false
                    return nil
                }
                return Set(state.waiters.values.flatMap(\.ids))
            }
            guard let ids else { return }
            pollsCounter.increment()
            var records: [JobID: JobRecord] = [:]
            var failure: (any Error)?
            do {
                for id in ids {
                    if let record = try await queue.job(id) { records[id] = record }
                }
            } catch {
                failure = error
            }
            let now = ContinuousClock.now
            let (woken, nearest) = state.withLock { state in
                var woken: [(CheckedContinuation<[JobRecord]?, any Error>, Result<[JobRecord]?, any Error>)] = []
                var nearest: ContinuousClock.Instant?
                for (id, waiter) in state.waiters {
                    let mine = waiter.ids.compactMap { records[$0] }
                    if let failure {
                        woken.append((waiter.continuation, .failure(failure)))
                    } else if waiter.until.isDone(mine) || waiter.deadline <= now {
                        woken.append((waiter.continuation, .success(mine)))
                    } else {
                        nearest = min(nearest ?? waiter.deadline, waiter.deadline)
                        continue
                    }
                    state.waiters[id] = nil
                }
                return (woken, nearest)
            }
            for (continuation, result) in woken { continuation.resume(with: result) }
            let pause = min(interval, max((nearest ?? now + interval) - now, .milliseconds(1)))
            try? await Task.sleep(for: pause)
        }
    }

    /// The jobs `ids` that exist, read once.
    private static func read(_ ids: [JobID], from queue: any JobQueueAdmin) async throws -> [JobRecord] {
        var records: [JobRecord] = []
        for id in ids {
            if let record = try await queue.job(id) { records.append(record) }
        }
        return records
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
    let queue: any JobQueueAdmin
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

    init(queue: any JobQueueAdmin, maxQueued: Int, maxAge: Duration = .seconds(1)) {
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
