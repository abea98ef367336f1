import Dispatch
import Foundation
import Logging
import PushPrepTestSupport
import Synchronization
import Testing

@testable import PushPrep
@testable import PushPrepCore
@testable import PushPrepMedia

/// Records what a ``MemoryBudget`` reports, as the worker's metrics see it (shared by the
/// budget's and the admission's tests).
final class MemoryBudgetRecorder: MemoryBudgetObserver {
    let changes = Mutex<[(reserved: Int, waiting: Int)]>([])
    let alone = Mutex<[Int]>([])

    func memoryBudgetChanged(reserved: Int, waiting: Int) {
        changes.withLock { $0.append((reserved, waiting)) }
    }

    func memoryBudgetRanAlone(bytes: Int) {
        alone.withLock { $0.append(bytes) }
    }

    var peakReserved: Int { changes.withLock { $0.map(\.reserved).max() ?? 0 } }

    /// Forgets what was reported so far.
    func reset() { changes.withLock { $0 = [] } }
}

/// ``MemoryBudget``, the gate in front of decoding: what it admits at once, the order it admits
/// waiting inputs in, an input over the whole budget running alone, and stops leaving the wait.
/// Waiters block real threads, as the processing session's do; the tests wait for states
/// (``MemoryBudget/waiting``, who was admitted), never for a fixed time.
@Suite(.timeLimit(.minutes(1)))
struct MemoryBudgetTests {
    /// A request for memory made on a thread of its own (it may block), and how it ended.
    final class Request: Sendable {
        let name: String
        private let outcome = Mutex<Result<MemoryBudget.Reservation, PushPrepError>?>(nil)

        init(_ name: String, _ bytes: Int, from budget: MemoryBudget, control: ProcessingControl? = nil) {
            self.name = name
            Thread.detachNewThread { [self] in
                let result: Result<MemoryBudget.Reservation, PushPrepError>
                do throws(PushPrepError) {
                    result = .success(try budget.reserve(bytes, control: control))
                } catch {
                    result = .failure(error)
                }
                outcome.withLock { $0 = result }
            }
        }

        var reservation: MemoryBudget.Reservation? {
            outcome.withLock { if case .success(let reservation) = $0 { reservation } else { nil } }
        }
        var error: PushPrepError? {
            outcome.withLock { if case .failure(let error) = $0 { error } else { nil } }
        }
        var ended: Bool { outcome.withLock { $0 != nil } }
    }

    /// Waits until `condition` holds (polled; a blocked waiter shows in the budget's state).
    func until(_ what: String, _ condition: @escaping () -> Bool) async throws {
        try await Poll.until(what, within: .seconds(20), every: .milliseconds(2)) { condition() }
    }

    @Test("inputs that fit together are admitted at once, and their bytes come back when released")
    func fitsAtOnce() throws {
        let recorder = MemoryBudgetRecorder()
        let budget = MemoryBudget(limit: 100, observer: recorder)
        let first = try budget.reserve(60, control: nil)
        let second = try budget.reserve(40, control: nil)
        #expect(budget.reserved == 100 && budget.waiting == 0)
        #expect(!first.alone && !second.alone)
        first.release()
        first.release()  // a second release gives nothing back twice
        #expect(budget.reserved == 40)
        second.release()
        #expect(budget.reserved == 0)
        #expect(recorder.peakReserved == 100)
        #expect(recorder.alone.withLock { $0.isEmpty })
    }

    @Test("waiting inputs are admitted first come, first served; a small one does not pass a big one")
    func firstComeFirstServed() async throws {
        let budget = MemoryBudget(limit: 100)
        let held = try budget.reserve(70, control: nil)
        let big = Request("big", 60, from: budget)
        try await until("the big input waits") { budget.waiting == 1 }
        // 70 + 20 fits, but the big input asked first.
        let small = Request("small", 20, from: budget)
        try await until("the small input waits behind it") { budget.waiting == 2 }
        #expect(!big.ended && !small.ended)

        held.release()
        // 60 + 20 fit together: both go in, the big one first.
        try await until("both are admitted") { big.reservation != nil && small.reservation != nil }
        #expect(budget.reserved == 80 && budget.waiting == 0)

        // Now two that do not fit together: only the first is admitted when room is made.
        let third = Request("third", 50, from: budget)
        try await until("the third input waits") { budget.waiting == 1 }
        let fourth = Request("fourth", 50, from: budget)
        try await until("the fourth input waits") { budget.waiting == 2 }
        big.reservation?.release()
        try await until("the third input is admitted") { third.reservation != nil }
        #expect(budget.waiting == 1 && !fourth.ended)
        #expect(budget.reserved == 70)
        small.reservation?.release()
        try await until("the fourth input is admitted") { fourth.reservation != nil }
        #expect(budget.reserved == 100)
    }

    @Test("an input over the whole budget waits until nothing else runs, then runs alone")
    func overBudgetRunsAlone() async throws {
        let recorder = MemoryBudgetRecorder()
        let budget = MemoryBudget(limit: 100, observer: recorder)
        let small = try budget.reserve(10, control: nil)
        let huge = Request("huge", 250, from: budget)
        try await until("the huge input waits") { budget.waiting == 1 }
        // Behind it, even a tiny input waits.
        let after = Request("after", 1, from: budget)
        try await until("the next input waits behind it") { budget.waiting == 2 }

        small.release()
        try await until("the huge input is admitted") { huge.reservation != nil }
        let reservation = try #require(huge.reservation)
        #expect(reservation.alone)
        #expect(recorder.alone.withLock { $0 } == [250])
        #expect(!after.ended && budget.waiting == 1, "nothing runs beside an input over the budget")

        reservation.release()
        try await until("the next input is admitted") { after.reservation != nil }
        #expect(after.reservation?.alone == false)

        // With nothing admitted, an input over the budget is admitted at once.
        after.reservation?.release()
        let alone = try budget.reserve(1000, control: nil)
        // It holds the budget plus one byte, whatever its estimate: enough to keep others out.
        #expect(alone.alone && budget.reserved == budget.limit + 1)
        alone.release()
    }

    @Test(
        "a stopped job leaves the wait at once with its stop's error, holding nothing; those behind it move up",
        arguments: [ProcessingControl.Reason.cancelled, .timedOut(.seconds(30))])
    func stopLeavesTheWait(_ reason: ProcessingControl.Reason) async throws {
        let budget = MemoryBudget(limit: 100)
        let held = try budget.reserve(50, control: nil)
        let control = ProcessingControl()
        let stopped = Request("stopped", 80, from: budget, control: control)
        try await until("the input waits") { budget.waiting == 1 }
        let behind = Request("behind", 40, from: budget)
        try await until("another waits behind it") { budget.waiting == 2 }

        control.stop(reason)
        try await until("the stopped input ends") { stopped.ended }
        #expect(stopped.error?.code == reason.error.code)
        // 50 + 40 fits once the input ahead of it has left.
        try await until("the input behind it is admitted") { behind.reservation != nil }
        #expect(budget.reserved == 90 && budget.waiting == 0)
        held.release()
        behind.reservation?.release()
        #expect(budget.reserved == 0)

        // Already stopped: refused before waiting.
        #expect(throws: PushPrepError.self) { try budget.reserve(1, control: control) }
    }

    @Test("many threads asking and releasing at random never exceed the budget and all finish")
    func underLoad() async throws {
        let limit = 1000
        let recorder = MemoryBudgetRecorder()
        let budget = MemoryBudget(limit: limit, observer: recorder)
        let done = Atomic(0)
        let over = Atomic(false)
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                var random = SplitMix64(seed: UInt64(thread + 1))
                for _ in 0..<200 {
                    let bytes = Int(random.next() % 400) + 1
                    guard let reservation = try? budget.reserve(bytes, control: nil) else { continue }
                    if budget.reserved > limit { over.store(true, ordering: .relaxed) }
                    reservation.release()
                    done.add(1, ordering: .relaxed)
                }
                group.leave()
            }
        }
        try await until("every thread is done") { group.wait(timeout: .now()) == .success }
        let finished = done.load(ordering: .relaxed)
        let exceeded = over.load(ordering: .relaxed)
        #expect(finished == 1600)
        #expect(!exceeded)
        #expect(recorder.peakReserved <= limit)
        #expect(budget.reserved == 0 && budget.waiting == 0)
    }

    @Test("the largest estimates, twice, do not overflow the sums: the second waits, then runs alone")
    func largestEstimatesDoNotOverflow() async throws {
        let budget = MemoryBudget(limit: 100)
        let huge = Int(MemoryEstimate.maximum)
        let first = try budget.reserve(huge, control: nil)
        #expect(first.alone)
        let second = Request("second", huge, from: budget)
        try await until("the second waits") { budget.waiting == 1 }
        first.release()
        try await until("the second is admitted") { second.reservation != nil }
        #expect(second.reservation?.alone == true)
        second.reservation?.release()
        #expect(budget.reserved == 0)
    }
}
