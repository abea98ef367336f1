import PushPrepCore

/// The total deadline of one fetch.
extension RemoteFetcher {
    /// Runs `body`, cancelling it when `deadline` passes (then `timeout`), so that a server
    /// that trickles bytes just fast enough to beat the idle timeout still cannot hold a job.
    ///
    /// The deadline is an ``Alarm``, not a raced `Task.sleep`: a cancelled sleep stays scheduled,
    /// with its task, until `deadline` (swiftlang/swift#60441), so every fetch kept memory for the
    /// whole `--fetch-timeout` (120 s by default) after it ended.
    static func withDeadline<T: Sendable>(
        _ deadline: ContinuousClock.Instant, timeout: Duration, source: String,
        _ body: @escaping @Sendable () async throws(PushPrepError) -> T
    ) async throws(PushPrepError) -> T {
        let result: Result<T, PushPrepError>? = await withTaskGroup(of: Result<T, PushPrepError>?.self) { group in
            group.addTask {
                do throws(PushPrepError) {
                    return .success(try await body())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                await Alarm(after: ContinuousClock.now.duration(to: deadline)).wait()
                return nil
            }
            var first = await group.next() ?? nil
            group.cancelAll()
            if first == nil {
                // The deadline passed first. A body that still finishes as it is cancelled is
                // used (its temporary file must not leak); a failure becomes the timeout.
                if case .success(let value)?? = await group.next() { first = .success(value) }
            }
            return first
        }
        guard let result else {
            throw PushPrepError(.timeout, "fetching \(source) took longer than \(timeout)")
        }
        return try result.get()
    }
}
