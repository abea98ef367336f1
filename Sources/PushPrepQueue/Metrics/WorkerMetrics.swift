import Metrics
import PushPrepCore

/// The worker's metrics, through swift-metrics (exported by ``MetricsServer`` as Prometheus
/// text when the worker has a metrics port; no-ops otherwise).
///
/// - `pushprep_worker_jobs_total{outcome}`: jobs this worker ran, by how they ended
///   (`succeeded`, `failed`, `retry`, `cancelled`, `dropped` for results of lost leases).
/// - `pushprep_job_duration_seconds`: processing time histogram.
/// - `pushprep_worker_running_jobs`: jobs running in this worker.
/// - `pushprep_queue_jobs{state}`: jobs in the queue by state (all workers).
/// - `pushprep_queue_depth`: queued jobs ready to run now.
/// - `pushprep_queue_scheduled_jobs`, `pushprep_queue_expired_leases`.
/// - `pushprep_input_bytes_total`, `pushprep_output_bytes_total`: recorded by
///   ``ProcessingJobHandler``.
struct WorkerMetrics: Sendable {
    let running = Gauge(label: "pushprep_worker_running_jobs")
    let duration = Timer(label: "pushprep_job_duration_seconds")
    let dropped = Counter(label: "pushprep_worker_jobs_total", dimensions: [("outcome", "dropped")])
    let outcomes: [String: Counter] = Dictionary(
        uniqueKeysWithValues: ["succeeded", "failed", "retry", "cancelled"].map {
            ($0, Counter(label: "pushprep_worker_jobs_total", dimensions: [("outcome", $0)]))
        })
    let states: [JobState: Gauge] = Dictionary(
        uniqueKeysWithValues: JobState.allCases.map {
            ($0, Gauge(label: "pushprep_queue_jobs", dimensions: [("state", $0.rawValue)]))
        })
    let depth = Gauge(label: "pushprep_queue_depth")
    let scheduled = Gauge(label: "pushprep_queue_scheduled_jobs")
    let expiredLeases = Gauge(label: "pushprep_queue_expired_leases")

    func recordFinished(_ kind: JobOutcome.Kind, elapsed: Duration, reported: Bool) {
        duration.recordNanoseconds(
            elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        guard reported else {
            dropped.increment()
            return
        }
        let name =
            switch kind {
            case .succeeded: "succeeded"
            case .failed: "failed"
            case .retry: "retry"
            case .cancelled: "cancelled"
            }
        outcomes[name]?.increment()
    }

    func recordQueue(_ stats: QueueStats) {
        for (state, gauge) in states { gauge.record(stats.byState[state] ?? 0) }
        depth.record(stats.ready)
        scheduled.record(stats.scheduled)
        expiredLeases.record(stats.expiredLeases)
    }
}
