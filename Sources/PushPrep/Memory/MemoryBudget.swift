import Dispatch
package import PushPrepCore
import Synchronization

/// Sees a ``MemoryBudget`` change: the worker's metrics export it.
package protocol MemoryBudgetObserver: Sendable {
    /// The bytes reserved and the inputs waiting changed. Called under the budget's lock, so
    /// calls arrive in order: must be quick and must not call back into the budget.
    func memoryBudgetChanged(reserved: Int, waiting: Int)
    /// An input whose estimate, `bytes`, is over the whole budget was admitted to run alone.
    func memoryBudgetRanAlone(bytes: Int)
}

/// A byte-weighted gate in front of decoding: the inputs being decoded at once may not add up
/// to more than `limit` bytes of estimated peak memory (``PushPrepMedia/MemoryEstimate``, worked
/// out from each input's header), so a process under a memory limit is not killed on a day of
/// big photos (issue 16, §2).
///
/// - An input asks for its estimate once its plan is made and before anything is decoded (a
///   movie or sound: after libav has probed its streams, decoding a few frames, whose buffers
///   are outside the budget), and gives it back when it is done, however it ends.
/// - Inputs are admitted in the order they ask (first come, first served): while one waits,
///   later ones wait behind it even when they would fit, so a stream of small inputs cannot
///   starve a big one. Admission is a counter check when nobody waits, so ordinary photos
///   under a budget they fit in never wait.
/// - An input whose estimate is over the whole budget is never refused for it: it waits until
///   nothing else is admitted and runs alone (``Reservation/alone``; the caller logs a warning).
/// - Waiting blocks the calling thread: inputs are processed synchronously on a thread pool's
///   threads (``ProcessingSession``), which may block. A wait ends at once when the input's
///   ``ProcessingControl`` is stopped (cancelled, or the job's timeout passed).
///
/// One per process, owned by its ``ProcessingSession``; a confined decoder process's asks its
/// parent's (``init(askingParent:)``), so that one budget admits every decoder of a pool.
package final class MemoryBudget: Sendable {
    /// What admitted inputs may reserve in all, in bytes.
    package let limit: Int
    private let state = Mutex(State())
    private let observer: (any MemoryBudgetObserver)?
    /// Asks another process's budget for `bytes` (the estimate), blocking until it admits them;
    /// returns whether alone. That budget takes them back when the input is done.
    package typealias Parent = @Sendable (_ bytes: Int) throws(PushPrepError) -> Bool
    private let parent: Parent?

    /// What an admitted input holds until it calls ``release()``.
    package final class Reservation: Sendable {
        /// The bytes reserved.
        package let bytes: Int
        /// Whether the input was admitted alone because its estimate is over the whole budget.
        package let alone: Bool
        private let budget: MemoryBudget
        private let released = Atomic(false)

        fileprivate init(bytes: Int, alone: Bool, budget: MemoryBudget) {
            self.bytes = bytes
            self.alone = alone
            self.budget = budget
        }

        /// Gives the bytes back, letting waiting inputs in. Calling it again does nothing.
        package func release() {
            guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            budget.release(bytes)
        }

        deinit {
            // A safety net only: callers release explicitly, when the input is done.
            release()
        }
    }

    /// An input waiting its turn.
    private struct Waiter {
        let id: UInt64
        let bytes: Int
        /// The estimate asked for, which `bytes` may be clamped from: what the observer is told.
        let estimate: Int
        let wake: DispatchSemaphore
    }

    /// How a request for memory began: admitted at once, or in the queue.
    private enum Entry {
        case admitted(alone: Bool)
        case queued(Waiter)
    }

    /// How a wait ended, set under the lock before the waiter is woken.
    private enum Outcome {
        case admitted(alone: Bool)
        case stopped
    }

    private struct State {
        var reserved = 0
        var admitted = 0
        /// First come, first served.
        var queue: [Waiter] = []
        var outcomes: [UInt64: Outcome] = [:]
        var nextID: UInt64 = 0
    }

    /// The share of the memory the process may use (``MachineMemory/available``) that the
    /// budget is when `--memory-limit` is not given. The budget counts estimates above the
    /// process's baseline, and an estimate may be 30% under the real peak; the rest is for the
    /// baseline (75 MB for `process`, release build: README, "Memory budget"), the allocator's
    /// free but unreturned memory, downloads and uploads in flight, and other processes. Half leaves room for all of that, and is still gigabytes
    /// on any machine or container big enough for 9000x7000 HEICs, so ordinary photos never wait.
    package static let defaultShare = 0.5

    /// The default budget: ``defaultShare`` of what `machine` lets the process use.
    package static func defaultLimit(of machine: MachineMemory = .current()) -> Int {
        Int(Double(machine.available) * defaultShare)
    }

    /// The largest limit: reserved bytes (at most the limit plus one input over it, clamped to
    /// `limit + 1`) and a request added to them never overflow. 1 EiB, far over any machine.
    package static let maximumLimit = 1 << 60

    /// A budget of `limit` bytes (1...``maximumLimit``), reporting its changes to `observer`.
    package init(limit: Int, observer: (any MemoryBudgetObserver)? = nil) {
        self.limit = min(max(1, limit), Self.maximumLimit)
        self.observer = observer
        self.parent = nil
        observer?.memoryBudgetChanged(reserved: 0, waiting: 0)
    }

    /// A decoder process's budget: each reservation is its parent's, asked for through `parent`
    /// (which blocks until the parent's budget admits it); releasing one does nothing here, as
    /// the parent takes the bytes back when the input's answer is in.
    package init(askingParent parent: @escaping Parent) {
        limit = Self.maximumLimit
        observer = nil
        self.parent = parent
    }

    /// Bytes reserved by admitted inputs now.
    package var reserved: Int { state.withLock { $0.reserved } }
    /// Inputs waiting to be admitted now.
    package var waiting: Int { state.withLock { $0.queue.count } }

    /// Waits, blocking the calling thread, until `bytes` may be reserved, and reserves them.
    /// Throws the stop's error (`cancelled` or `timeout`) when `control` is stopped first; the
    /// input then holds nothing. An estimate over the whole budget reserves `limit + 1` (it
    /// runs alone either way), so the sums below cannot overflow whatever the estimate.
    package func reserve(_ bytes: Int, control: ProcessingControl?) throws(PushPrepError) -> Reservation {
        if let parent {
            try control?.check()
            return Reservation(bytes: 0, alone: try parent(max(0, bytes)), budget: self)
        }
        let estimate = max(0, bytes)
        let bytes = min(estimate, limit + 1)
        try control?.check()
        let entry = state.withLock { state -> Entry in
            if state.queue.isEmpty, let alone = fits(bytes, state) {
                admit(bytes, estimate: estimate, alone: alone, in: &state)
                return .admitted(alone: alone)
            }
            let waiter = Waiter(id: state.nextID, bytes: bytes, estimate: estimate, wake: DispatchSemaphore(value: 0))
            state.nextID += 1
            state.queue.append(waiter)
            observer?.memoryBudgetChanged(reserved: state.reserved, waiting: state.queue.count)
            return .queued(waiter)
        }
        let waiter: Waiter
        switch entry {
        case .admitted(let alone): return Reservation(bytes: bytes, alone: alone, budget: self)
        case .queued(let queued): waiter = queued
        }

        // A stop wakes the wait; when the control is already stopped this runs at once.
        let observation = control?.onStop { [weak self] in self?.abandon(waiter.id) }
        waiter.wake.wait()
        if let observation { control?.removeObserver(observation) }
        let outcome = state.withLock { $0.outcomes.removeValue(forKey: waiter.id) }
        switch outcome {
        case .admitted(let alone):
            return Reservation(bytes: bytes, alone: alone, budget: self)
        case .stopped, nil:
            throw control?.reason?.error ?? PushPrepError(.cancelled, "cancelled while waiting for memory")
        }
    }

    /// Whether `bytes` may be admitted now, and if so whether alone; nil when it must wait.
    private func fits(_ bytes: Int, _ state: State) -> Bool? {
        if state.admitted == 0 { return bytes > limit }
        return state.reserved + bytes <= limit ? false : nil
    }

    private func admit(_ bytes: Int, estimate: Int, alone: Bool, in state: inout State) {
        state.reserved += bytes
        state.admitted += 1
        if alone { observer?.memoryBudgetRanAlone(bytes: estimate) }
        observer?.memoryBudgetChanged(reserved: state.reserved, waiting: state.queue.count)
    }

    /// Admits waiters from the front of the queue while they fit; returns whom to wake.
    private func admitWaiting(in state: inout State) -> [DispatchSemaphore] {
        var woken: [DispatchSemaphore] = []
        while let first = state.queue.first, let alone = fits(first.bytes, state) {
            state.queue.removeFirst()
            state.outcomes[first.id] = .admitted(alone: alone)
            admit(first.bytes, estimate: first.estimate, alone: alone, in: &state)
            woken.append(first.wake)
        }
        return woken
    }

    private func release(_ bytes: Int) {
        guard parent == nil else { return }
        let woken = state.withLock { state in
            state.reserved -= bytes
            state.admitted -= 1
            let woken = admitWaiting(in: &state)
            observer?.memoryBudgetChanged(reserved: state.reserved, waiting: state.queue.count)
            return woken
        }
        for wake in woken { wake.signal() }
    }

    /// A waiter's control was stopped: it leaves the queue (unless it was admitted meanwhile,
    /// then it goes on and releases as usual), which may let the ones behind it in.
    private func abandon(_ id: UInt64) {
        let woken = state.withLock { state -> [DispatchSemaphore] in
            guard let index = state.queue.firstIndex(where: { $0.id == id }) else { return [] }
            let waiter = state.queue.remove(at: index)
            state.outcomes[id] = .stopped
            let woken = [waiter.wake] + admitWaiting(in: &state)
            observer?.memoryBudgetChanged(reserved: state.reserved, waiting: state.queue.count)
            return woken
        }
        for wake in woken { wake.signal() }
    }
}
