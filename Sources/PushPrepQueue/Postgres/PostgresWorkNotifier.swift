import Logging
import PostgresNIO
import PushPrepCore
import Synchronization

/// Wakes idle workers when the database announces work on the `pushprep_jobs` channel.
///
/// One dedicated connection (outside the pool, so it never takes a pooled connection away
/// from queries) runs `LISTEN pushprep_jobs`. It is opened lazily, by the first
/// ``wait(timeout:)``, so a queue opened only to enqueue or to list jobs never listens. A
/// notification wakes every waiter, or, when nobody waits, the next wait: a worker that is busy
/// claiming when a job arrives still returns at once from its next wait.
///
/// Listening is an optimization over polling: when the connection cannot be opened or breaks,
/// the failure is logged at debug level, waits run out their timeout (the poll interval), and
/// the listener reconnects with a growing backoff.
final class PostgresWorkNotifier: Sendable {
    /// The channel that enqueues, releases and retries notify.
    static let channel = "pushprep_jobs"

    private struct State {
        /// Whether a wait asked for the listener to start.
        var startRequested = false
        /// A notification arrived while nobody waited: the next wait returns at once.
        var pending = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterID = 0
    }

    private let state = Mutex(State())
    private let startRequests: AsyncStream<Void>
    private let startRequestsContinuation: AsyncStream<Void>.Continuation
    private let connect: @Sendable () async throws -> PostgresConnection
    private let logger: Logger

    /// - Parameter connect: Opens the dedicated listening connection.
    init(logger: Logger, connect: @escaping @Sendable () async throws -> PostgresConnection) {
        self.logger = logger
        self.connect = connect
        (startRequests, startRequestsContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Listens until the task is cancelled, once a wait asked for it. Runs in the queue's task
    /// group.
    func run() async {
        for await _ in startRequests { break }
        var failures = 0
        while !Task.isCancelled {
            do {
                try await listen()
                failures = 0
            } catch {
                guard !Task.isCancelled else { break }
                failures += 1
                logger.debug(
                    "cannot listen for new jobs; idle workers poll until it works again",
                    metadata: ["error": "\(PostgresJobQueue.reason(error))", "failures": "\(failures)"])
            }
            // Notifications sent while nobody listened are lost: let a waiter look for itself.
            signal()
            try? await Task.sleep(for: Self.backoff(afterFailures: failures))
        }
    }

    /// Returns after a notification (including one that arrived since the last wait), after
    /// `timeout`, or when the task is cancelled.
    func wait(timeout: Duration) async {
        requestStart()
        guard timeout > .zero else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal() }
            // An Alarm, not Task.sleep: a cancelled sleep stays scheduled, with its task, for the
            // whole timeout (swiftlang/swift#60441), once for every wait a notification ended.
            group.addTask { await Alarm(after: timeout).wait() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Wakes every waiter, or the next wait when nobody waits.
    func signal() {
        let waiters = state.withLock { state in
            guard !state.waiters.isEmpty else {
                state.pending = true
                return [CheckedContinuation<Void, Never>]()
            }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - Listening

    /// Listens on one new connection until it breaks (throws) or the task is cancelled.
    private func listen() async throws {
        let connection = try await connect()
        do {
            try await connection.listen(on: Self.channel) { notifications in
                logger.debug("listening for new jobs", metadata: ["channel": "\(Self.channel)"])
                // Work may have arrived between the waiter's last claim and LISTEN.
                signal()
                for try await _ in notifications {
                    signal()
                }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    private func requestStart() {
        let first = state.withLock { state in
            defer { state.startRequested = true }
            return !state.startRequested
        }
        if first {
            startRequestsContinuation.yield()
            startRequestsContinuation.finish()
        }
    }

    /// 1 s after a clean end (the server closed the connection), then doubling per failure up
    /// to 30 s.
    private static func backoff(afterFailures failures: Int) -> Duration {
        .seconds(min(30, 1 << min(max(failures - 1, 0), 5)))
    }

    // MARK: - Waiters

    /// Returns at the next ``signal()``, at once when one is pending, or when the task is
    /// cancelled.
    private func waitForSignal() async {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    // A cancellation handler that ran before this found no waiter to resume.
                    if Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
