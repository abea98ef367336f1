import ArgumentParser
import Foundation
import Logging
import PushPrep
import PushPrepCore

/// `pushprep inspect`: headers only; what an input is and what `process` would do.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what inputs are, whether they meet Apple's rules, and what process would do.",
        discussion: """
            Reads headers only: nothing is decoded or written. Exit status: 0 when every input can be
            read and processed, 1 when one cannot (missing, unreadable, not a type PushPrep takes, or
            refused: its report says why), 2 on a usage error, as process.

            Examples:
              pushprep inspect photo.heic
              pushprep inspect uploads/ --json
              pushprep inspect banner.png --width 1179
              pushprep inspect https://cdn.example.com/banner.webp
            """
    )

    @OptionGroup var options: ImageOptions

    @OptionGroup(title: "Remote sources") var remote: RemoteOptions

    @Flag(help: "Print JSON (an array of reports) instead of text.")
    var json = false

    @Argument(help: "Files, directories, http(s) URLs, or - for paths and URLs on standard input.")
    var inputs: [String]

    func run() async throws {
        let settings = options.settings
        let reports = await Inspector.inspect(
            InspectInputs.expand(inputs), settings: settings, remote: remote.settings,
            logger: Self.quietLogger)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            FileHandle.standardOutput.write(try encoder.encode(reports) + Data("\n".utf8))
        } else {
            for report in reports { print(Self.text(report)) }
        }
        // As process: an input that would fail (its report carries the error) is exit status 1.
        if reports.contains(where: { $0.error != nil }) { throw ExitCode(1) }
    }

    /// Only warnings and worse: inspect prints its own report.
    static var quietLogger: Logger {
        Logger(label: "pushprep") { LogLineHandler.standardError(label: $0, level: .warning) }
    }

    static func text(_ r: InspectReport) -> String {
        var lines = ["\(r.source)"]
        var facts: [String] = [r.type ?? "unknown type"]
        if let width = r.width, let height = r.height { facts.append("\(width)x\(height)") }
        if let frames = r.frames, frames > 1 { facts.append("\(frames) frames") }
        if let duration = r.duration { facts.append(String(format: "%.2f s", duration)) }
        if let bytes = r.bytes { facts.append("\(bytes) bytes") }
        if r.hasAlpha == true { facts.append("alpha") }
        if !r.metadata.isEmpty { facts.append("metadata: \(r.metadata.joined(separator: ", "))") }
        lines.append("  " + facts.joined(separator: ", "))
        for stream in r.streams ?? [] { lines.append("  \(stream)") }
        lines.append("  meets Apple's rules: \(r.meetsAppleRules ? "yes" : "no")")
        for problem in r.problems { lines.append("    - \(problem)") }
        if let memory = r.memoryEstimate {
            let basis = r.memoryBasis.map { " (\($0))" } ?? ""
            lines.append("  memory: about \(InspectReport.megabytes(memory)) at its peak\(basis)")
        }
        if let error = r.error { lines.append("  error: \(error.code): \(error.message)") }
        lines.append("  process would:")
        for step in r.plan { lines.append("    - \(step)") }
        return lines.joined(separator: "\n")
    }
}

enum InspectInputs {
    static func expand(_ arguments: [String]) -> [InputItem] { InputExpander.expand(arguments) }
}
