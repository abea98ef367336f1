import Foundation
import Logging
import PushPrepCommandLine
import Testing

/// `--log-level`'s loggers: the process's logging system is bootstrapped once, however many
/// commands make a logger in one process.
@Suite struct LoggingOptionsTests {
    /// In a fresh process (an exit test): swift-log stops a process that bootstraps twice, and the
    /// second `makeLogger` did, which an in-process `serve` after another command would reach.
    @Test("makeLogger twice in one process: no second bootstrap, and each logger has its own level")
    func twiceInOneProcess() async {
        await #expect(processExitsWith: .success) {
            let first = LoggingOptions.makeLogger(level: .warning, label: "first")
            let second = LoggingOptions.makeLogger(level: .debug, label: "second")
            exit(first.logLevel == .warning && second.logLevel == .debug ? 0 : 1)
        }
    }
}
