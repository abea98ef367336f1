import ArgumentParser
import PushPrepCore

/// Runs `body`, a ``PushPrepError`` it throws told as a usage error (exit status 2) with the
/// error's message: how every command turns an option value the core refuses (a duration, a
/// size, a URL, settings out of range) into the error a bad option is. Any other error (a
/// usage error already) is thrown as it is.
package func asUsageError<Result>(_ body: () throws -> Result) throws -> Result {
    do {
        return try body()
    } catch let error as PushPrepError {
        throw ValidationError(error.message)
    }
}

extension Double {
    /// These seconds, given as the option `name`, as a duration: a usage error unless the
    /// number is finite and in `range` (``Duration/seconds(checking:in:_:)``, which never traps).
    package func seconds(option name: String, in range: ClosedRange<Double>) throws -> Duration {
        try asUsageError { try Duration.seconds(checking: self, in: range, name) }
    }
}
