import Foundation
package import Logging
import Synchronization

/// The log lines of every `pushprep` command, written to standard error in swift-log's
/// `StreamLogHandler` layout, `TIME LEVEL LABEL: key=value key=value [SOURCE] message`, with
/// what a line holds made safe at this one place where lines are written:
///
/// - every key and value is a logfmt value (``UntrustedText/logfmtValue(_:)``): plain when it
///   is, else in double quotes with `"`, `\` and control characters escaped. A file name such as
///   `a key=admin request_id=x` stays one value, `filename="a key=admin request_id=x"`, and no
///   text can pass for a field of its own;
/// - the message and the source are escaped (``UntrustedText/escaped(_:)``): a `\n` in anything
///   logged never starts a line of its own, and an escape sequence never reaches a terminal.
package struct LogLineHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    /// A handler writing lines with `write` (each line ends with a newline).
    package init(
        label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.label = label
        self.logLevel = level
        self.metadataProvider = metadataProvider
        self.write = write
    }

    /// A handler writing to standard error, each line with one `write(2)` (more only for a
    /// line past what one call takes). A failed write is dropped, as `StreamLogHandler` drops
    /// it: logging never stops the process.
    package static func standardError(label: String, level: Logger.Level) -> LogLineHandler {
        LogLineHandler(label: label, level: level, metadataProvider: LoggingSystem.metadataProvider) { line in
            var line = line
            // One writer at a time: past PIPE_BUF a line takes several write(2)s, and two tasks'
            // lines must not interleave into one forged line.
            standardErrorLock.withLock { _ in
                line.withUTF8 { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let written = systemWrite(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                        if written > 0 {
                            offset += written
                        } else if written < 0 && errno == EINTR {
                            continue
                        } else {
                            return
                        }
                    }
                }
            }
        }
    }

    /// Serialises the lines written to standard error.
    private static let standardErrorLock = Mutex(())

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        write(
            Self.line(
                timestamp: Self.timestamp(), level: event.level, label: label, metadata: merged, source: event.source,
                message: "\(event.message)") + "\n")
    }

    /// One line, without its newline: the timestamp, the level, the label, the metadata sorted
    /// by key as logfmt pairs, the source in brackets and the message.
    package static func line(
        timestamp: String, level: Logger.Level, label: String, metadata: Logger.Metadata, source: String,
        message: String
    ) -> String {
        var line = "\(timestamp) \(level)"
        if !label.isEmpty { line += " " + UntrustedText.escaped(label) }
        line += ":"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " " + UntrustedText.logfmtValue(key) + "=" + UntrustedText.logfmtValue(text(of: value))
        }
        line += " [\(UntrustedText.escaped(source))] " + UntrustedText.escaped(message)
        return line
    }

    /// A metadata value as text: strings as they are, lists and dictionaries as swift-log
    /// describes them.
    static func text(of value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        default: value.description
        }
    }

    /// The local time as `StreamLogHandler` writes it, `2026-11-28T13:19:33+0000`.
    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// `write(2)`, named apart from the handler's own `write`.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}
