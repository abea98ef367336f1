package import Logging
import NIOPosix
import PushPrepCore
import Synchronization

/// Where libvips' and libav's own log lines go.
///
/// Their log callbacks are process-wide C functions that carry no context. Processing runs one
/// input at a time on each pool thread, so the input a line is about is the one the calling
/// thread is processing: ``withInput(_:_:)`` marks the thread with that input's logger (the
/// session's, with the job's and the source's metadata) while it runs. A line from a thread
/// that runs no input goes to the process's logger, set once (the first ``Processor`` or
/// ``ProcessingSession`` sets it; later ones keep it): that includes the libraries' own worker
/// threads (libvips' evaluation pool, a multithreaded libav codec), whose lines carry no source.
package enum LibraryLog {
    private final class Current: Sendable {
        let logger: Logger
        init(_ logger: Logger) { self.logger = logger }
    }

    private static let process = Mutex<Logger?>(nil)
    private static let thread = ThreadSpecificVariable<Current>()

    /// Sets the process's logger for lines outside any input, unless one is set.
    package static func bootstrap(_ logger: Logger) {
        process.withLock { current in
            if current == nil { current = logger }
        }
    }

    /// Runs `body` with the library lines of this thread going to `logger`.
    package static func withInput<T, Failure: Error>(_ logger: Logger, _ body: () throws(Failure) -> T) throws(Failure)
        -> T
    {
        let previous = thread.currentValue
        thread.currentValue = Current(logger)
        defer { thread.currentValue = previous }
        return try body()
    }

    /// The logger for a line logged now, on this thread.
    static var logger: Logger? {
        thread.currentValue?.logger ?? process.withLock { $0 }
    }

    /// Logs a line from a library's callback.
    static func log(_ level: Logger.Level, _ text: String, domain: String) {
        logger?.log(level: level, "\(text)", metadata: ["domain": "\(domain)"])
    }
}
