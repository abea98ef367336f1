import Synchronization

/// Bounds how many fetches run at once, overall and per host. Waiters are served first come,
/// first served, skipping those whose host is still at its limit.
final class FetchLimiter: Sendable {
    private struct Waiter {
        let host: String
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var running = 0
        var perHost: [String: Int] = [:]
        var waiters: [Waiter] = []
    }

    private let overall: Int
    private let perHost: Int
    private let state = Mutex(State())

    init(overall: Int, perHost: Int) {
        self.overall = max(1, overall)
        self.perHost = max(1, perHost)
    }

    /// Runs `body` once a slot for `host` is free.
    func withSlot<T>(host: String, _ body: () async throws(PushPrepError) -> T) async throws(PushPrepError) -> T {
        await acquire(host: host)
        defer { release(host: host) }
        return try await body()
    }

    private func acquire(host: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.running < overall && state.perHost[host, default: 0] < perHost {
                    state.running += 1
                    state.perHost[host, default: 0] += 1
                    return true
                }
                state.waiters.append(Waiter(host: host, continuation: continuation))
                return false
            }
            if granted { continuation.resume() }
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
}
