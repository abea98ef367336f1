import ArgumentParser
import Foundation
import Logging
import PushPrepCommandLine
import PushPrepCore
import PushPrepQueue

/// `--queue` and where its password comes from, shared by `enqueue`, `worker` and `jobs`.
struct QueueOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "sqlite:PATH (one machine) or postgres://USER:PASSWORD@HOST:PORT/DB (many hosts).", valueName: "url"))
    var queue: String = QueueURL.defaultValue

    @Option(
        help: ArgumentHelp(
            "Read the PostgreSQL password from this file (one trailing newline ignored) instead of the URL; "
                + "without either, PGPASSWORD is used.",
            valueName: "file"))
    var queuePasswordFile: String?

    func validate() throws {
        _ = try url
    }

    /// The parsed `--queue`, with the password from `--queue-password-file` or `PGPASSWORD`
    /// when the URL has none.
    var url: QueueURL {
        get throws {
            try asUsageError {
                try QueueURL(parsing: queue).withPassword(
                    file: queuePasswordFile, environment: ProcessInfo.processInfo.environment)
            }
        }
    }

    /// Opens the queue, runs `body`, closes it; queue errors become a command failure.
    func withQueue<Result: Sendable>(logger: Logger, _ body: (any JobQueueBackend) async throws -> Result) async throws
        -> Result
    {
        do {
            return try await JobQueues.withBackend(try url, logger: logger, body)
        } catch let error as PushPrepError {
            throw CommandFailure(message: error.description)
        }
    }
}

/// `--json`, shared by the queue commands.
struct JSONOutputOptions: ParsableArguments {
    @Flag(help: "Print JSON instead of a table.")
    var json = false

    /// Prints `value` as pretty JSON with sorted keys and ISO 8601 dates. A number JSON cannot
    /// hold (an infinite timeout in a row written by another program) is printed as the string
    /// PostgreSQL spells it, `"Infinity"`, `"-Infinity"` or `"NaN"`, rather than failing the
    /// command that would show the row.
    static func print<Value: Encodable>(_ value: Value) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(JobView.longDate(date))
        }
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        FileHandle.standardOutput.write(try encoder.encode(value))
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}

/// Columns padded to their widest cell; the last column is not padded.
enum TextTable {
    /// The table as text. Every cell is printed through ``UntrustedText/escaped(_:)``: cells
    /// hold what clients queued (sources, error messages), and a control character in one must
    /// neither drive the terminal nor start a line of its own.
    static func render(header: [String], rows: [[String]]) -> String {
        let all = ([header] + rows).map { $0.map(UntrustedText.escaped) }
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
