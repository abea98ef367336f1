import Foundation
import Synchronization

/// Asks a running job to stop at its next step. Thread-safe; set from any thread.
///
/// A job processed with a control checks it between pipeline steps (before reading the input,
/// after detecting its type, between decoding and encoding, before and after a fetch, before
/// writing the output); media pipelines also see it inside libav's blocking calls and between
/// packets, so a movie stops within a fraction of a second. A stopped job ends with a failed
/// entry whose code is `cancelled` or `timeout`, and leaves no output behind.
public final class ProcessingControl: Sendable {
    /// Why a job was asked to stop.
    public enum Reason: Sendable, Equatable {
        /// Someone cancelled the job (`jobs cancel`, a worker shutting down).
        case cancelled
        /// The job ran longer than its own timeout, which was this long.
        case timedOut(Duration)
    }

    /// An action registered with ``onStop(_:)``, to remove with ``removeObserver(_:)``.
    package struct Observation: Hashable {
        fileprivate let id: UInt64
    }

    private struct State {
        var reason: Reason?
        var observers: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
        /// Time the job's timeout does not count: its waits for memory that have ended.
        var excluded: Duration = .zero
        /// Waits under way (inputs of one job may wait at once), and since when one has been.
        var waits = 0
        var waitingSince: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// A control that has not been stopped.
    public init() {}

    /// Asks the job to stop. The first reason wins: later calls change nothing.
    public func stop(_ reason: Reason) {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.observers = [:] }
            return Array(state.observers.values)
        }
        // Outside the lock: an action may take locks of its own (cancelling a task runs its
        // cancellation handlers).
        for action in actions { action() }
    }

    /// Why the job was asked to stop, or nil while it may run on.
    public var reason: Reason? { state.withLock { $0.reason } }

    /// Runs `action` once when the control is stopped, from the thread that stops it; at once,
    /// on this thread, when it already is (then returns nil). `action` must be quick and
    /// must not call back into this control.
    package func onStop(_ action: @escaping @Sendable () -> Void) -> Observation? {
        let id = state.withLock { state -> UInt64? in
            guard state.reason == nil else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.observers[id] = action
            return id
        }
        guard let id else {
            action()
            return nil
        }
        return Observation(id: id)
    }

    /// Forgets an action registered with ``onStop(_:)``. It may still be running, or about to
    /// run, on the thread that is stopping the control.
    package func removeObserver(_ observation: Observation) {
        _ = state.withLock { $0.observers.removeValue(forKey: observation.id) }
    }

    /// Runs `body` in a task of its own that is cancelled as soon as this control stops (or the
    /// caller's task is cancelled): a download or an upload a stopped job no longer needs ends at
    /// once instead of at its own deadline.
    package func cancellingOnStop<Result: Sendable>(
        _ body: @escaping @Sendable () async -> Result
    ) async -> Result {
        let task = Task { await body() }
        let observation = onStop { task.cancel() }
        defer {
            if let observation { removeObserver(observation) }
        }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Runs `body`, a wait for the process's memory budget, with the job's timeout clock
    /// stopped: time spent queued behind other jobs' inputs is not the job's own, as it is not
    /// a movie's `--timeout` either. While any input of the job waits, the clock is stopped.
    package func excludingFromTimeout<Result, Failure: Error>(
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        state.withLock { state in
            if state.waits == 0 { state.waitingSince = .now }
            state.waits += 1
        }
        defer {
            state.withLock { state in
                state.waits -= 1
                if state.waits == 0, let since = state.waitingSince {
                    state.excluded += .now - since
                    state.waitingSince = nil
                }
            }
        }
        return try body()
    }

    /// When a job that started at `start` with `timeout` times out, given the waits excluded so
    /// far (``excludingFromTimeout(_:)``), and whether a wait is under way: the deadline then
    /// moves on with the clock, and is to be asked again later.
    package func timeoutDeadline(
        start: ContinuousClock.Instant, timeout: Duration
    ) -> (deadline: ContinuousClock.Instant, moving: Bool) {
        state.withLock { state in
            let waiting = state.waitingSince.map { .now - $0 } ?? .zero
            return (start + timeout + state.excluded + waiting, state.waitingSince != nil)
        }
    }

    /// Throws the stop's error once the control has been stopped.
    package func check() throws(PushPrepError) {
        if let reason { throw reason.error }
    }
}

extension ProcessingControl.Reason {
    /// The error a job stopped for this reason ends with.
    package var error: PushPrepError {
        switch self {
        case .cancelled:
            PushPrepError(.cancelled, "cancelled")
        case .timedOut(let limit):
            PushPrepError(.timeout, "the job's timeout of \(Self.secondsText(limit)) s passed")
        }
    }

    /// "30", "1.5", "0.25": seconds without a trailing ".0".
    static func secondsText(_ duration: Duration) -> String {
        let value = duration.seconds
        if value == value.rounded() { return String(Int64(value)) }
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}

extension PushPrepError {
    /// Whether this error stops a job as a whole (its deadline passed, or it was cancelled)
    /// rather than describing one step's failure that a fallback could get around.
    package var stopsProcessing: Bool { code == .timeout || code == .cancelled }
}
