package import Logging

extension Logger {
    /// A copy of this logger whose lines also carry `key=value`: how a component (the API, the
    /// metrics server, a worker) labels every line it logs, in one expression.
    package func with(_ key: String, _ value: Logger.MetadataValue) -> Logger {
        var logger = self
        logger[metadataKey: key] = value
        return logger
    }
}
