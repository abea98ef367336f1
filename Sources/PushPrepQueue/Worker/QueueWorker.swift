import Foundation
public import Logging
import Metrics
import PushPrepCore
public import ServiceLifecycle
import Synchronization

/// A queue worker: claims jobs, runs them through a ``JobHandler`` with bounded concurrency,
/// keeps their leases alive, and reports how they ended.
///
/// A `Service` for a `ServiceGroup`: on graceful shutdown (SIGTERM/SIGINT) it stops claiming,
/// lets running jobs finish for up to the drain timeout, then stops the rest and gives their
/// leases back so that another worker takes them at once.
public final class QueueWorker<Handler: JobHandler>: Service {
    let url: QueueURL
    let configuration: WorkerConfiguration
    let handler: Handler
    let logger: Logger
    let metrics: WorkerMetrics
    let state = Mutex(WorkerState())

    public init(url: QueueURL, configuration: WorkerConfiguration, handler: Handler, logger: Logger) {
        self.url = url
        self.configuration = configuration
        self.handler = handler
        self.logger = logger.with("worker", "\(configuration.workerID)")
        self.metrics = WorkerMetrics()
    }

    /// Opens the queue and works until graceful shutdown or cancellation. The queue stays open
    /// through the drain (see ``JobQueues/withBackend(_:logger:_:)``).
    public func run() async throws {
        try configuration.validate()
        try await JobQueues.withBackend(url, logger: logger) { queue in await self.work(on: queue) }
    }

    /// Stops claiming and starts the drain, as a graceful shutdown does.
    func stop() {
        let wake = state.withLock { state in
            state.stopping = true
            return state.wake
        }
        wake?.yield()
    }

    /// Works on an open queue until graceful shutdown or cancellation.
    package func work(on queue: any WorkerQueue) async {
        logger.info(
            "worker started",
            metadata: [
                "queue": "\(queue.description)", "concurrency": "\(configuration.concurrency)",
                "lease": "\(configuration.lease)",
            ])
        // Built once: the host name can take a resolver's round trip, not one per heartbeat.
        let registration = WorkerRegistration(
            id: configuration.workerID, host: ProcessInfo.processInfo.hostName,
            pid: Int(ProcessInfo.processInfo.processIdentifier), concurrency: configuration.concurrency)
        await announce(registration, on: queue)
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        state.withLock { $0.wake = wake }
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.listen(queue, wake: wake) }
                group.addTask { await self.heartbeatLoop(queue, registration: registration) }
                group.addTask { await self.maintenanceLoop(queue) }
                var wakeup = wakeups.makeAsyncIterator()
                await self.claimLoop(queue, group: &group, wake: wake, wakeup: &wakeup)
                await self.drain(queue, wakeup: &wakeup)
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.stop()
        }
        await flush(queue)
        do {
            try await queue.removeWorker(id: configuration.workerID)
        } catch {
            logger.debug("cannot remove the worker's registration", metadata: ["error": "\(error.message)"])
        }
        logger.info("worker stopped")
    }

    // MARK: - Claiming

    private func claimLoop(
        _ queue: any WorkerQueue, group: inout DiscardingTaskGroup, wake: AsyncStream<Void>.Continuation,
        wakeup: inout AsyncStream<Void>.Iterator
    ) async {
        while !Task.isCancelled {
            await flush(queue)
            let (stopping, running) = state.withLock { ($0.stopping, $0.running.count) }
            if stopping { return }
            let free = configuration.concurrency - running
            var claimed: [ClaimedJob] = []
            if free > 0 {
                do {
                    claimed = try await queue.claim(
                        worker: configuration.workerID, limit: free, lease: configuration.lease)
                } catch {
                    logger.warning("claim failed", metadata: ["code": "\(error.code)", "error": "\(error.message)"])
                }
                for job in claimed {
                    let control = ProcessingControl()
                    state.withLock { $0.running[job.id] = RunningJob(lease: job.lease, control: control) }
                    group.addTask {
                        await self.run(job, control: control, queue: queue)
                        wake.yield()
                    }
                }
                metrics.running.record(running + claimed.count)
            }
            // A full batch means more may be ready: claim again at once if slots are free.
            if free > 0 && claimed.count == free { continue }
            _ = await wakeup.next()
        }
    }

    /// Wakes the claim loop when the queue signals new work, or every poll interval.
    private func listen(_ queue: any WorkerQueue, wake: AsyncStream<Void>.Continuation) async {
        while !Task.isCancelled {
            await queue.waitForWork(timeout: configuration.pollInterval)
            wake.yield()
        }
    }

    // MARK: - Running one job

    private func run(_ job: ClaimedJob, control: ProcessingControl, queue: any WorkerQueue) async {
        var logger = self.logger
        logger[metadataKey: "job"] = "\(job.id)"
        logger[metadataKey: "attempt"] = "\(job.attempt)/\(job.maxAttempts)"
        logger[metadataKey: "source"] = "\(job.source)"
        // The request that created the job, so one id follows it from the API into these logs.
        if let requestID = job.requestID { logger[metadataKey: "request_id"] = "\(requestID)" }
        logger.debug("job started")
        let timeout = job.timeout ?? configuration.defaultJobTimeout
        let leaseDuration = configuration.lease
        let context = JobContext(
            control: control, logger: logger,
            retryDelay: configuration.backoff.delay(afterFailure: job.attempt),
            workerID: configuration.workerID,
            confirmLease: { [logger] in
                do throws(PushPrepError) {
                    return try await queue.heartbeat([job.lease], lease: leaseDuration).held.contains(job.lease)
                } catch {
                    logger.warning("cannot confirm the lease", metadata: ["error": "\(error.message)"])
                    return false
                }
            })
        let start = ContinuousClock.now
        let kind: JobOutcome.Kind
        if let problem = job.invalidSettings {
            // Stored wrong (a row written by hand): no attempt could run it, so none is retried.
            kind = .failed(code: .invalidSettings, message: problem)
        } else {
            kind = await attempt(job, context: context, control: control, timeout: timeout)
        }
        let elapsed = ContinuousClock.now - start
        let report = state.withLock { state -> Bool in
            let running = state.running.removeValue(forKey: job.id)
            guard let running, !running.lost, !running.released else { return false }
            state.outcomes.append(JobOutcome(job: job, kind: kind))
            return true
        }
        metrics.recordFinished(kind, elapsed: elapsed, reported: report)
        switch kind {
        case .succeeded: logger.info("job succeeded", metadata: ["seconds": "\(elapsed.seconds)"])
        case .failed(let code, let message):
            logger.info("job failed", metadata: ["code": "\(code)", "error": "\(message)"])
        case .retry(let code, let message, _):
            logger.info("job failed", metadata: ["code": "\(code)", "error": "\(message)"])
        case .cancelled(let message): logger.info("job cancelled", metadata: ["reason": "\(message)"])
        }
        if !report { logger.info("result dropped: the lease is no longer this worker's") }
    }

    /// Runs the handler, stopped by `control` once `timeout` passes, not counting its inputs'
    /// waits for memory (``ProcessingControl/excludingFromTimeout(_:)``).
    private func attempt(
        _ job: ClaimedJob, context: JobContext, control: ProcessingControl, timeout: Duration
    ) async -> JobOutcome.Kind {
        await withTaskGroup(of: JobOutcome.Kind?.self) { group in
            group.addTask { await self.handler.handle(job, context: context) }
            group.addTask {
                // The deadline moves while an input waits for memory (not the job's own time):
                // sleep until it, and look again, until it has passed.
                let start = ContinuousClock.now
                while true {
                    let (deadline, moving) = control.timeoutDeadline(start: start, timeout: timeout)
                    let now = ContinuousClock.now
                    if now >= deadline { break }
                    let wake = moving ? max(deadline, now + .milliseconds(100)) : deadline
                    // An Alarm, not Task.sleep: a sleep cancelled when the job ends stays
                    // scheduled, with its task, until the job's deadline (swiftlang/swift#60441),
                    // so every job kept memory for its whole timeout after it finished.
                    await Alarm(after: now.duration(to: wake)).wait()
                    if Task.isCancelled { return nil }
                }
                if !Task.isCancelled { control.stop(.timedOut(timeout)) }
                return nil
            }
            var kind: JobOutcome.Kind = .retry(
                code: "io_error", message: "the job ended without a result", delay: .zero)
            for await result in group {
                if let result {
                    kind = result
                    group.cancelAll()
                }
            }
            return kind
        }
    }

    /// Reports finished jobs in one batch; keeps them for the next try when the queue fails.
    private func flush(_ queue: any WorkerQueue) async {
        let outcomes = state.withLock { state in
            defer { state.outcomes.removeAll(keepingCapacity: true) }
            return state.outcomes
        }
        guard !outcomes.isEmpty else { return }
        do {
            let accepted = try await queue.finish(outcomes)
            for outcome in outcomes where !accepted.contains(outcome.lease.id) {
                logger.warning(
                    "result refused: another claim owns the job now", metadata: ["job": "\(outcome.lease.id)"])
            }
        } catch {
            logger.warning(
                "cannot report results, will try again",
                metadata: ["code": "\(error.code)", "error": "\(error.message)", "jobs": "\(outcomes.count)"])
            state.withLock { $0.outcomes.insert(contentsOf: outcomes, at: 0) }
            try? await Task.sleep(for: min(configuration.pollInterval, .seconds(1)))
        }
    }

    // MARK: - Leases

    /// Renews the leases, then refreshes the registration: a slow registry write never holds up
    /// a renewal.
    private func heartbeatLoop(_ queue: any WorkerQueue, registration: WorkerRegistration) async {
        while true {
            do { try await Task.sleep(for: configuration.heartbeatInterval) } catch { return }
            await renewLeases(on: queue)
            await announce(registration, on: queue)
        }
    }

    /// Heartbeats the held leases; stops the jobs whose lease is lost or whose cancellation was
    /// requested.
    private func renewLeases(on queue: any WorkerQueue) async {
        let leases = state.withLock { state in state.running.values.filter { !$0.released }.map(\.lease) }
        guard !leases.isEmpty else { return }
        do {
            let result = try await queue.heartbeat(leases, lease: configuration.lease)
            // Only jobs still running under the same lease: one that finished while the
            // heartbeat was on its way is not held any more, yet was not lost.
            let (lost, stopped) = state.withLock { state -> ([Lease], [ProcessingControl]) in
                var lost: [Lease] = []
                var controls: [ProcessingControl] = []
                for lease in leases where !result.held.contains(lease) && state.running[lease.id]?.lease == lease {
                    state.running[lease.id]?.lost = true
                    lost.append(lease)
                    if let control = state.running[lease.id]?.control { controls.append(control) }
                }
                for lease in result.cancelRequested where state.running[lease.id]?.lease == lease {
                    if let control = state.running[lease.id]?.control { controls.append(control) }
                }
                return (lost, controls)
            }
            for lease in lost {
                logger.warning("lease lost: stopping the job", metadata: ["job": "\(lease.id)"])
            }
            for lease in result.cancelRequested {
                logger.info("cancellation requested: stopping the job", metadata: ["job": "\(lease.id)"])
            }
            for control in stopped { control.stop(.cancelled) }
        } catch {
            logger.warning("heartbeat failed", metadata: ["code": "\(error.code)", "error": "\(error.message)"])
        }
    }

    /// Registers this worker for the console's list of workers alive, or refreshes its last-seen
    /// time (at the start and at every heartbeat, busy or idle). A failure is only logged: the
    /// registry is for people, not for the jobs.
    private func announce(_ registration: WorkerRegistration, on queue: any WorkerQueue) async {
        do {
            try await queue.recordWorker(registration)
        } catch {
            logger.debug(
                "cannot register the worker", metadata: ["code": "\(error.code)", "error": "\(error.message)"])
        }
    }

    /// Waits for running jobs for up to the drain timeout, then stops the rest and gives their
    /// leases back.
    private func drain(_ queue: any WorkerQueue, wakeup: inout AsyncStream<Void>.Iterator) async {
        let deadline = ContinuousClock.now + configuration.drainTimeout
        var running = state.withLock { $0.running.count }
        if running > 0 {
            logger.info(
                "draining", metadata: ["running": "\(running)", "timeout": "\(configuration.drainTimeout)"])
        }
        while running > 0 && ContinuousClock.now < deadline && !Task.isCancelled {
            await flush(queue)
            _ = await wakeup.next()
            running = state.withLock { $0.running.count }
        }
        await flush(queue)
        let left = state.withLock { state -> [RunningJob] in
            for id in state.running.keys { state.running[id]?.released = true }
            return Array(state.running.values)
        }
        guard !left.isEmpty else { return }
        for job in left { job.control.stop(.cancelled) }
        do {
            let released = try await queue.release(left.map(\.lease))
            logger.info(
                "drain timeout: gave running jobs back to the queue",
                metadata: ["released": "\(released.count)", "jobs": "\(left.map(\.lease.id))"])
        } catch {
            logger.warning(
                "cannot give leases back; they expire after the lease",
                metadata: ["code": "\(error.code)", "error": "\(error.message)"])
        }
    }

    // MARK: - Maintenance

    /// Rescues expired leases and those of dead workers of this host, refreshes the queue
    /// gauges, prunes old finished jobs and the idempotency keys past the API's retention.
    private func maintenanceLoop(_ queue: any WorkerQueue) async {
        var lastPrune: ContinuousClock.Instant?
        while true {
            do {
                try await expireDeadHolders(queue)
                _ = try await queue.rescueExpired()
                if configuration.recordsQueueStats { metrics.recordQueue(try await queue.stats()) }
                if lastPrune.map({ ContinuousClock.now - $0 >= configuration.pruneInterval }) ?? true {
                    lastPrune = .now
                    try await prune(queue)
                }
            } catch {
                logger.debug("maintenance failed", metadata: ["code": "\(error.code)", "error": "\(error.message)"])
            }
            do { try await Task.sleep(for: configuration.statsInterval) } catch { return }
        }
    }
}

extension QueueWorker {
    /// Prunes the finished jobs past the retention (unless jobs are kept) and the idempotency
    /// keys past ``IdempotencyKey/defaultRetention``, the retention the HTTP API records them
    /// with (keys are pruned even when jobs are kept: they only guard against a retried request).
    func prune(_ queue: any WorkerQueue) async throws(PushPrepError) {
        if let retention = configuration.retention {
            let pruned = try await queue.prune(finishedBefore: Date().addingTimeInterval(-retention.seconds))
            if pruned > 0 { logger.info("pruned finished jobs", metadata: ["jobs": "\(pruned)"]) }
        }
        let keys = try await queue.pruneIdempotencyKeys(
            before: Date().addingTimeInterval(-IdempotencyKey.defaultRetention.seconds))
        if keys > 0 { logger.debug("pruned idempotency keys", metadata: ["keys": "\(keys)"]) }
    }

    /// Ends the leases of running jobs whose holder is a worker of this host whose process is
    /// gone (SIGKILL, a crash, the OOM killer), so that the rescue that follows takes them at
    /// once instead of after their lease.
    func expireDeadHolders(_ queue: any WorkerQueue) async throws(PushPrepError) {
        let running = try await queue.list(state: .running, limit: WorkerHost.holderScanLimit)
        let dead = running.filter { job in job.leaseOwner.map(WorkerHost.isGoneHolder) ?? false }
        guard !dead.isEmpty else { return }
        let expired = try await queue.expire(dead.map { Lease(id: $0.id, token: $0.leaseToken) })
        guard !expired.isEmpty else { return }
        logger.warning(
            "rescuing the jobs of dead workers of this host",
            metadata: [
                "jobs": "\(expired.sorted())",
                "workers": "\(Set(dead.filter { expired.contains($0.id) }.compactMap(\.leaseOwner)).sorted())",
            ])
    }
}

/// A job this worker runs.
struct RunningJob: Sendable {
    var lease: Lease
    var control: ProcessingControl
    /// The heartbeat found another claim owns the job: its result is dropped.
    var lost = false
    /// Given back at the end of a drain: its result is dropped.
    var released = false
}

/// What the worker's tasks share.
struct WorkerState: Sendable {
    var running: [JobID: RunningJob] = [:]
    var outcomes: [JobOutcome] = []
    var stopping = false
    /// Wakes the claim loop (and the drain), once `work(on:)` runs.
    var wake: AsyncStream<Void>.Continuation?
}
