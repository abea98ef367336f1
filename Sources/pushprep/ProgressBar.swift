import Foundation
import PushPrepCore
import Synchronization

/// A one-line progress bar on standard error: done/total, failures and rate. Shown only when
/// standard error is a terminal, so logs and CI output stay clean.
final class ProgressBar: Sendable {
    private struct Drawing {
        var lastDraw = ContinuousClock.now - .seconds(1)
        var drawn = false
    }

    private let total: Int
    private let enabled: Bool
    private let started = ContinuousClock.now
    // Updated from the task group's consumer one call at a time; the lock guards the
    // occasional concurrent `finish`.
    private let drawing = Mutex(Drawing())

    init(total: Int, enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.total = total
        self.enabled = enabled
    }

    func update(done: Int, failed: Int) {
        guard enabled else { return }
        drawing.withLock { drawing in
            let now = ContinuousClock.now
            // At most ten redraws a second: drawing is cheap, a flickering terminal is not.
            guard done == total || now - drawing.lastDraw >= .milliseconds(100) else { return }
            drawing.lastDraw = now
            let elapsed = max((now - started).seconds, 0.001)
            let width = 30
            let filled = total == 0 ? width : width * done / total
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let rate = Double(done) / elapsed
            let line = "\r\(bar) \(done)/\(total)  \(failed) failed  \(String(format: "%.1f", rate))/s "
            FileHandle.standardError.write(Data(line.utf8))
            drawing.drawn = true
        }
    }

    func finish() {
        drawing.withLock { drawing in
            if enabled && drawing.drawn { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
        }
    }
}
