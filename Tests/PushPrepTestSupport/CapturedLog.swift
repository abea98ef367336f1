package import Logging
import Synchronization

/// A logger whose lines a test reads back: level, message and metadata of each.
package final class CapturedLog: Sendable {
    package struct Line: Sendable {
        package let level: Logger.Level
        package let message: String
        package let metadata: [String: String]
    }

    private let captured = Mutex<[Line]>([])

    /// An empty log.
    package init() {}

    package var lines: [Line] { captured.withLock { $0 } }

    /// A logger at `level` that records here.
    package func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "pushprep.test") { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let line = Line(
                level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" })
            log.captured.withLock { $0.append(line) }
        }
    }
}
