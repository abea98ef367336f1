import Metrics
import PushPrep

/// The memory budget's metrics, through swift-metrics (exported with the worker's, see
/// ``WorkerMetrics``), so an operator sees how close the worker runs to its `--memory-limit`
/// and whether inputs wait for memory:
///
/// - `pushprep_memory_budget_bytes`: the budget (`--memory-limit`, or the default share).
/// - `pushprep_memory_reserved_bytes`: the estimates of the inputs being processed now.
/// - `pushprep_memory_waiting_inputs`: inputs waiting for their share now.
/// - `pushprep_memory_over_budget_inputs_total`: inputs whose estimate was over the whole
///   budget, which ran alone.
///
/// Made after the metrics system is bootstrapped (its gauges are created here).
package struct MemoryBudgetMetrics: MemoryBudgetObserver {
    private let budget = Gauge(label: "pushprep_memory_budget_bytes")
    private let reserved = Gauge(label: "pushprep_memory_reserved_bytes")
    private let waiting = Gauge(label: "pushprep_memory_waiting_inputs")
    private let alone = Counter(label: "pushprep_memory_over_budget_inputs_total")

    /// Metrics of a budget of `limit` bytes.
    package init(limit: Int) {
        budget.record(limit)
    }

    package func memoryBudgetChanged(reserved: Int, waiting: Int) {
        self.reserved.record(reserved)
        self.waiting.record(waiting)
    }

    package func memoryBudgetRanAlone(bytes: Int) {
        alone.increment()
    }
}
