import Foundation
import PushPrepCore
import PushPrepQueue

/// A queue that forwards every call to another and records how long it took, so that the
/// benchmark can say which round trip dominates.
struct TimedJobQueue: JobQueueBackend {
    let base: any JobQueueBackend
    let recorder: CallRecorder

    var description: String { base.description }

    func enqueue(_ specs: [JobSpec]) async throws(PushPrepError) -> [EnqueueResult] {
        try await timed("enqueue", rows: { _ in specs.count }) { () async throws(PushPrepError) in
            try await base.enqueue(specs)
        }
    }

    func claim(worker: String, limit: Int, lease: Duration) async throws(PushPrepError) -> [ClaimedJob] {
        let start = Date()
        let jobs = try await timed("claim", rows: \.count) { () async throws(PushPrepError) in
            try await base.claim(worker: worker, limit: limit, lease: lease)
        }
        if !jobs.isEmpty { recorder.noteClaim(startedAt: start) }
        return jobs
    }

    func heartbeat(_ leases: [Lease], lease: Duration) async throws(PushPrepError) -> HeartbeatResult {
        try await timed("heartbeat", rows: { _ in leases.count }) { () async throws(PushPrepError) in
            try await base.heartbeat(leases, lease: lease)
        }
    }

    func finish(_ outcomes: [JobOutcome]) async throws(PushPrepError) -> Set<JobID> {
        let accepted = try await timed("finish", rows: { _ in outcomes.count }) { () async throws(PushPrepError) in
            try await base.finish(outcomes)
        }
        recorder.noteFinish(endedAt: Date(), accepted: accepted.count, refused: outcomes.count - accepted.count)
        return accepted
    }

    func release(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID> {
        try await timed("release", rows: { _ in leases.count }) { () async throws(PushPrepError) in
            try await base.release(leases)
        }
    }

    func expire(_ leases: [Lease]) async throws(PushPrepError) -> Set<JobID> {
        try await timed("expire", rows: \.count) { () async throws(PushPrepError) in
            try await base.expire(leases)
        }
    }

    func rescueExpired() async throws(PushPrepError) -> Int {
        try await timed("rescueExpired", rows: { $0 }) { () async throws(PushPrepError) in
            try await base.rescueExpired()
        }
    }

    func list(state: JobState?, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord] {
        try await timed("list", rows: \.count) { () async throws(PushPrepError) in
            try await base.list(state: state, limit: limit, before: before)
        }
    }

    func job(_ id: JobID) async throws(PushPrepError) -> JobRecord? {
        try await timed("job", rows: { $0 == nil ? 0 : 1 }) { () async throws(PushPrepError) in
            try await base.job(id)
        }
    }

    func retry(_ id: JobID) async throws(PushPrepError) -> JobRecord {
        try await timed("retry", rows: { _ in 1 }) { () async throws(PushPrepError) in try await base.retry(id) }
    }

    func cancel(_ id: JobID) async throws(PushPrepError) -> JobRecord {
        try await timed("cancel", rows: { _ in 1 }) { () async throws(PushPrepError) in try await base.cancel(id) }
    }

    func prune(finishedBefore before: Date) async throws(PushPrepError) -> Int {
        try await timed("prune", rows: { $0 }) { () async throws(PushPrepError) in
            try await base.prune(finishedBefore: before)
        }
    }

    func stats() async throws(PushPrepError) -> QueueStats {
        try await timed("stats", rows: { _ in 0 }) { () async throws(PushPrepError) in try await base.stats() }
    }

    func enqueue(_ specs: [JobSpec], idempotency: IdempotencyKey) async throws(PushPrepError) -> IdempotentEnqueueResult
    {
        try await timed("enqueueIdempotent", rows: { _ in specs.count }) { () async throws(PushPrepError) in
            try await base.enqueue(specs, idempotency: idempotency)
        }
    }

    func recordedEnqueue(_ idempotency: IdempotencyKey) async throws(PushPrepError) -> IdempotentEnqueueResult? {
        try await timed("recordedEnqueue", rows: { $0?.results.count ?? 0 }) { () async throws(PushPrepError) in
            try await base.recordedEnqueue(idempotency)
        }
    }

    func unfinishedSources(withPrefix prefix: String) async throws(PushPrepError) -> Set<String> {
        try await base.unfinishedSources(withPrefix: prefix)
    }

    func pruneReturningFiles(finishedBefore before: Date) async throws(PushPrepError) -> [PrunedJob] {
        try await timed("prune", rows: { $0.count }) { () async throws(PushPrepError) in
            try await base.pruneReturningFiles(finishedBefore: before)
        }
    }

    func namedInResults(_ texts: [String]) async throws(PushPrepError) -> Set<String> {
        try await base.namedInResults(texts)
    }

    func pruneIdempotencyKeys(before: Date) async throws(PushPrepError) -> Int {
        try await timed("pruneIdempotencyKeys", rows: { $0 }) { () async throws(PushPrepError) in
            try await base.pruneIdempotencyKeys(before: before)
        }
    }

    func claimDeliveries(limit: Int, lease: Duration, slots: ReceiverSlots) async throws(PushPrepError)
        -> [WebhookDelivery]
    {
        try await timed("claimDeliveries", rows: \.count) { () async throws(PushPrepError) in
            try await base.claimDeliveries(limit: limit, lease: lease, slots: slots)
        }
    }

    func finishDelivery(_ id: Int64, attempt: Int, outcome: DeliveryOutcome) async throws(PushPrepError) -> Bool {
        try await timed("finishDelivery", rows: { $0 ? 1 : 0 }) { () async throws(PushPrepError) in
            try await base.finishDelivery(id, attempt: attempt, outcome: outcome)
        }
    }

    func deliveries(job: JobID) async throws(PushPrepError) -> [WebhookDelivery] {
        try await timed("deliveries", rows: \.count) { () async throws(PushPrepError) in
            try await base.deliveries(job: job)
        }
    }

    func listDeliveries(state: DeliveryState?, limit: Int) async throws(PushPrepError) -> [WebhookDelivery] {
        try await timed("listDeliveries", rows: \.count) { () async throws(PushPrepError) in
            try await base.listDeliveries(state: state, limit: limit)
        }
    }

    func list(filter: JobFilter, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord] {
        try await timed("listFiltered", rows: \.count) { () async throws(PushPrepError) in
            try await base.list(filter: filter, limit: limit, before: before)
        }
    }

    func count(filter: JobFilter) async throws(PushPrepError) -> Int {
        try await timed("count", rows: { _ in 0 }) { () async throws(PushPrepError) in
            try await base.count(filter: filter)
        }
    }

    func retry(matching filter: JobFilter) async throws(PushPrepError) -> Int {
        try await timed("retryMatching", rows: { $0 }) { () async throws(PushPrepError) in
            try await base.retry(matching: filter)
        }
    }

    func activity(since: Date, bucket: Duration) async throws(PushPrepError) -> [ActivityBucket] {
        try await timed("activity", rows: \.count) { () async throws(PushPrepError) in
            try await base.activity(since: since, bucket: bucket)
        }
    }

    func recordWorker(_ worker: WorkerRegistration) async throws(PushPrepError) {
        try await timed("recordWorker", rows: { _ in 1 }) { () async throws(PushPrepError) in
            try await base.recordWorker(worker)
        }
    }

    func removeWorker(id: String) async throws(PushPrepError) {
        try await timed("removeWorker", rows: { _ in 1 }) { () async throws(PushPrepError) in
            try await base.removeWorker(id: id)
        }
    }

    func workers(seenSince date: Date) async throws(PushPrepError) -> [WorkerRecord] {
        try await timed("workers", rows: \.count) { () async throws(PushPrepError) in
            try await base.workers(seenSince: date)
        }
    }

    func attempts(job: JobID) async throws(PushPrepError) -> [JobAttempt] {
        try await timed("attempts", rows: \.count) { () async throws(PushPrepError) in
            try await base.attempts(job: job)
        }
    }

    /// Not recorded: it waits by design.
    func waitForWork(timeout: Duration) async {
        await base.waitForWork(timeout: timeout)
    }

    private func timed<Value>(
        _ name: String, rows: (Value) -> Int, _ body: () async throws(PushPrepError) -> Value
    ) async throws(PushPrepError) -> Value {
        let start = ContinuousClock.now
        do {
            let value = try await body()
            recorder.record(name, duration: ContinuousClock.now - start, rows: rows(value))
            return value
        } catch {
            recorder.recordError(name)
            throw error
        }
    }
}
