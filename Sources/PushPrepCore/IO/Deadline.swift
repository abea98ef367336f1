import Dispatch
import Synchronization

/// Runs `operation` in a child task and cancels it once `timeout` has passed. Returns what the
/// operation returned, or nil when the time ran out first: the operation is then cancelled and
/// awaited, and whatever it still returns or throws is dropped. An error the operation throws
/// before the deadline is rethrown.
///
/// Use this, never a task group that races the work against `Task.sleep`, for a deadline that is
/// usually not reached (a request's, a probe's). A cancelled `Task.sleep` on the Dispatch executor
/// (Linux) stays scheduled with `dispatch_after` until its original deadline, holding its task and
/// a Dispatch timer (about 600 bytes) all that time (swiftlang/swift#60441): with a 300 s request
/// deadline, `pushprep serve` grew by ~22 MB for every 30,000 requests. The alarm here is a
/// Dispatch timer source that is cancelled, and freed, as soon as the operation ends.
package func withDeadline<T: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T? {
    let alarm = Alarm(after: timeout)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            await alarm.wait()
            return nil
        }
        defer { group.cancelAll() }
        // The first child to finish decides: the operation's value or error, or the alarm (nil).
        guard let first = try await group.next(), let value = first else { return nil }
        return value
    }
}

/// Like ``withDeadline(_:_:)``, but when the time runs out the operation is cancelled and *not*
/// awaited: nil is returned at once, and whatever the operation still does is dropped when it
/// ends. For an operation that may not heed cancellation, such as a query already sent on a
/// connection whose peer stopped answering (postgres-nio waits for its reply however long the
/// connection takes to die); the caller must be able to leave it behind (a pool bounds how many
/// such operations can be in flight).
package func withDeadlineAbandoning<T: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T? {
    let work = Task { try await operation() }
    let outcome = Mutex<CheckedContinuation<Result<T, any Error>?, Never>?>(nil)
    let finish = { @Sendable (result: Result<T, any Error>?) in
        outcome.withLock { continuation in
            continuation?.resume(returning: result)
            continuation = nil
        }
    }
    let result = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>?, Never>) in
            outcome.withLock { $0 = continuation }
            let alarm = Alarm(after: timeout)
            let timer = Task {
                await alarm.wait()
                finish(nil)
            }
            Task {
                let result = await work.result
                // The result first: the cancelled alarm's task would otherwise report the
                // deadline in between.
                finish(result)
                timer.cancel()
            }
        }
    } onCancel: {
        work.cancel()
    }
    guard let result else {
        work.cancel()
        return nil
    }
    return try result.get()
}

/// A one-shot alarm for ``withDeadline(_:_:)`` and the webhook sender's deadline: ``wait()``
/// returns when the time has passed or when its task is cancelled, whichever comes first, and in
/// both cases nothing is left scheduled afterwards (the timer source is cancelled, its handler and
/// this object released), unlike a cancelled `Task.sleep`.
package final class Alarm: Sendable {
    private enum State {
        /// ``wait()`` has not suspended yet.
        case idle
        /// Suspended in ``wait()``, with the armed timer.
        case waiting(CheckedContinuation<Void, Never>, any DispatchSourceTimer)
        /// Rung or cancelled: a later ``wait()`` returns at once.
        case finished
    }

    private let state = Mutex<State>(.idle)
    private let timeout: Duration

    /// An alarm that rings `timeout` after ``wait()`` is called.
    package init(after timeout: Duration) {
        self.timeout = timeout
    }

    /// Returns once `timeout` has passed since the call, or as soon as the task is cancelled.
    package func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let armed = state.withLock { state -> Bool in
                    guard case .idle = state else { return false }
                    let timer = DispatchSource.makeTimerSource(queue: .global())
                    timer.schedule(deadline: .now() + Self.dispatchInterval(timeout), leeway: .milliseconds(10))
                    timer.setEventHandler { [self] in finish() }
                    state = .waiting(continuation, timer)
                    // Under the lock: a concurrent finish() must never cancel, and so release, a
                    // source that was never resumed (Dispatch traps on that).
                    timer.resume()
                    return true
                }
                if !armed { continuation.resume() }
            }
        } onCancel: {
            finish()
        }
    }

    /// Ends the wait now, as if the time had passed (a later ``wait()`` returns at once).
    package func ring() {
        finish()
    }

    /// Ends the wait (the timer fired or the task was cancelled): cancels the timer, which
    /// releases its handler, and resumes the waiter.
    private func finish() {
        let waiter = state.withLock { state -> (CheckedContinuation<Void, Never>, any DispatchSourceTimer)? in
            defer { state = .finished }
            guard case .waiting(let continuation, let timer) = state else { return nil }
            return (continuation, timer)
        }
        guard let (continuation, timer) = waiter else { return }
        timer.cancel()
        continuation.resume()
    }

    /// `duration` for Dispatch, in whole nanoseconds (at least zero, at most about 292 years).
    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .nanoseconds(0) }
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow || nanoseconds > Int64(Int.max) - 1_000_000_000 { return .nanoseconds(Int.max) }
        return .nanoseconds(Int(nanoseconds + attoseconds / 1_000_000_000))
    }
}
