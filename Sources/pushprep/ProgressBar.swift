import Foundation
import PushPrep

/// A one-line progress bar on standard error: done/total, failures and rate. Shown only when
/// standard error is a terminal, so logs and CI output stay clean.
final class ProgressBar: @unchecked Sendable {
    // Updated from the task group's consumer one call at a time; the lock guards the
    // occasional concurrent `finish`.
    private let lock = NSLock()
    private let total: Int
    private let enabled: Bool
    private let started = ContinuousClock.now
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var drawn = false

    init(total: Int, enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.total = total
        self.enabled = enabled
    }

    func update(done: Int, failed: Int) {
        guard enabled else { return }
        lock.withLock {
            let now = ContinuousClock.now
            // At most ten redraws a second: drawing is cheap, a flickering terminal is not.
            guard done == total || now - lastDraw >= .milliseconds(100) else { return }
            lastDraw = now
            let elapsed = max((now - started).seconds, 0.001)
            let width = 30
            let filled = total == 0 ? width : width * done / total
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let rate = Double(done) / elapsed
            let line = "\r\(bar) \(done)/\(total)  \(failed) failed  \(String(format: "%.1f", rate))/s "
            FileHandle.standardError.write(Data(line.utf8))
            drawn = true
        }
    }

    func finish() {
        lock.withLock {
            if enabled && drawn { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
        }
    }
}
