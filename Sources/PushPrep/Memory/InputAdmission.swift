import Logging
import PushPrepCore
import PushPrepMedia

/// One input's share of its session's ``MemoryBudget``: asked for by the media pipeline once
/// the input's plan is made, before anything is decoded (``admit(_:)``), and given back by
/// ``InputProcessor`` when the input is done, however it ends (``release()``).
///
/// Confined to the thread processing the input.
final class InputAdmission {
    private let budget: MemoryBudget?
    private let control: ProcessingControl?
    private let logger: Logger
    private var reservation: MemoryBudget.Reservation?
    /// Whether the admitted input is big (``FreedMemory/bigInput``), by its estimate: the
    /// reservation of one over the whole budget is clamped to the budget.
    private var big = false

    /// An admission to `budget` (none: every input is admitted at once) that stops waiting when
    /// `control` is stopped, logging to `logger`.
    init(budget: MemoryBudget?, control: ProcessingControl?, logger: Logger) {
        self.budget = budget
        self.control = control
        self.logger = logger
    }

    /// Reserves `estimate` (once: an input admitted already keeps what it holds) and returns how
    /// long that waited, which a caller with a deadline of its own does not count (nor does the
    /// job's timeout, through `control`). An input over
    /// the whole budget runs alone, with a warning.
    @discardableResult
    func admit(_ estimate: MemoryEstimate) throws(PushPrepError) -> Duration {
        guard let budget, reservation == nil else { return .zero }
        let start = ContinuousClock.now
        // The wait is not the job's own time: its --job-timeout clock stops meanwhile.
        let reservation: MemoryBudget.Reservation
        if let control {
            reservation = try control.excludingFromTimeout { () throws(PushPrepError) in
                try budget.reserve(estimate.bytes, control: control)
            }
        } else {
            reservation = try budget.reserve(estimate.bytes, control: nil)
        }
        self.reservation = reservation
        big = estimate.bytes >= FreedMemory.bigInput
        if big { FreedMemory.bigInputStarted() }
        let waited = ContinuousClock.now - start
        // Built only for a line that is logged: every photo passes here.
        func metadata() -> Logger.Metadata {
            [
                "estimate": "\(estimate.bytes)", "budget": "\(budget.limit)", "basis": "\(estimate.basis)",
                "waited_ms": "\(waited.wholeMilliseconds)",
            ]
        }
        if reservation.alone {
            logger.warning(
                "the input's memory estimate is over the whole memory budget (--memory-limit): it ran alone",
                metadata: metadata())
        } else if waited > .milliseconds(10) {
            logger.debug("waited for memory", metadata: metadata())
        }
        return waited
    }

    /// ``admit(_:)`` as a media pipeline calls it, for an input whose pipeline has `deadline`:
    /// the time the input waited for memory moves the deadline as much later, since it is not
    /// the input's own processing time.
    func admit(postponing deadline: MediaDeadline) -> (MemoryEstimate) throws(PushPrepError) -> Void {
        { estimate throws(PushPrepError) in deadline.postpone(by: try self.admit(estimate)) }
    }

    /// Gives the reservation back; calling it again does nothing. After a big input the
    /// allocator's free memory goes back to the system first (``FreedMemory``), so the inputs
    /// admitted next find the room the budget says is there.
    func release() {
        guard let reservation else { return }
        if big { FreedMemory.bigInputEnded() }
        reservation.release()
        self.reservation = nil
    }
}
