import PushPrepCore
import Synchronization

/// Bounds how many fetches run at once, overall and per host. Waiters are served first come,
/// first served, skipping those whose host is still at its limit.
package final class FetchLimiter: Sendable {
    private struct Waiter {
        let id: UInt64
        let host: String
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var perHost: [String: Int] = [:]
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
    }

    private let overall: Int
    private let perHost: Int
    private let state = Mutex(State())

    package init(overall: Int, perHost: Int) {
        self.overall = max(1, overall)
        self.perHost = max(1, perHost)
    }

    /// Runs `body` once a slot for `host` is free. A task cancelled while it waits for a slot
    /// stops waiting and fails with `fetch_failed`.
    func withSlot<T>(host: String, _ body: () async throws(PushPrepError) -> T) async throws(PushPrepError) -> T {
        do {
            try await acquire(host: host)
        } catch {
            throw PushPrepError(.fetchFailed, "cancelled while waiting for a free fetch slot for \(host)")
        }
        defer { release(host: host) }
        return try await body()
    }

    private func acquire(host: String) async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let granted = state.withLock { state -> Bool? in
                    // Checked under the lock that the cancellation handler takes too: either the
                    // handler already ran (and this sees the flag) or it will find the waiter.
                    if Task.isCancelled { return nil }
                    if state.running < overall && state.perHost[host, default: 0] < perHost {
                        state.running += 1
                        state.perHost[host, default: 0] += 1
                        return true
                    }
                    state.waiters.append(Waiter(id: id, host: host, continuation: continuation))
                    return false
                }
                switch granted {
                case true?: continuation.resume()
                case nil: continuation.resume(throwing: CancellationError())
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    private func release(host: String) {
        let next = state.withLock { state -> Waiter? in
            state.running -= 1
            state.perHost[host, default: 1] -= 1
            if state.perHost[host] == 0 { state.perHost[host] = nil }
            guard state.running < overall,
                let index = state.waiters.firstIndex(where: { state.perHost[$0.host, default: 0] < perHost })
            else { return nil }
            let waiter = state.waiters.remove(at: index)
            state.running += 1
            state.perHost[waiter.host, default: 0] += 1
            return waiter
        }
        next?.continuation.resume()
    }

    /// Fetches running now (for tests).
    var running: Int { state.withLock { $0.running } }

    /// Fetches waiting for a slot now (for tests).
    var waiting: Int { state.withLock { $0.waiters.count } }
}
