package import ArgumentParser
package import Logging
import PushPrepCore
import Synchronization

/// The level `--log-level` has when it is not given.
package protocol DefaultLogLevel {
    /// The level.
    static var level: Logger.Level { get }
}

/// `warning`: the commands that do one thing and print its result log only what goes wrong.
package enum WarningsByDefault: DefaultLogLevel {
    package static var level: Logger.Level { .warning }
}

/// `info`: the commands that run until stopped (`worker`, `serve`) also say what they do.
package enum InfoByDefault: DefaultLogLevel {
    package static var level: Logger.Level { .info }
}

/// `--log-level`, with the default `Default` names: shared by every command of `pushprep` and
/// by the queue bench.
package struct LogLevelOption<Default: DefaultLogLevel>: ParsableArguments {
    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    package var logLevel: String = Default.level.rawValue

    /// The default level.
    package init() {}

    package func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    /// The level given (`validate()` has checked it), else the default.
    package var level: Logger.Level { Logger.Level(rawValue: logLevel) ?? Default.level }

    /// Sends every log line at the level given or above to standard error.
    package func makeLogger(label: String = "pushprep") -> Logger {
        Self.makeLogger(level: level, label: label)
    }

    /// Sends every log line at `level` or above to standard error, each key, value and message
    /// escaped where the line is written (``LogLineHandler``).
    ///
    /// The first call also makes this the process's logging system, for the loggers libraries
    /// make themselves (Hummingbird's, PostgresNIO's); swift-log allows that once per process, so
    /// a later call (another command run in the same process, as the in-process tests do) gets
    /// its logger without bootstrapping again.
    package static func makeLogger(level: Logger.Level, label: String = "pushprep") -> Logger {
        let first = bootstrapped.withLock { done in
            defer { done = true }
            return !done
        }
        if first {
            LoggingSystem.bootstrap { label in LogLineHandler.standardError(label: label, level: level) }
        }
        return Logger(label: label) { label in LogLineHandler.standardError(label: label, level: level) }
    }
}

/// Whether ``LogLevelOption/makeLogger(level:label:)`` has bootstrapped the logging system.
private let bootstrapped = Mutex(false)

/// `--log-level` of the commands that do one thing (default `warning`).
package typealias LoggingOptions = LogLevelOption<WarningsByDefault>
