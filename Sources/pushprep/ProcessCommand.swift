import ArgumentParser
import Foundation
import Logging
import PushPrep

/// `pushprep process`: inputs in, attachments and a manifest out.
struct ProcessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Turn images into notification-ready attachments and write a manifest.",
        discussion: """
            INPUT is a file, a directory (processed recursively, sorted by path) or - for one \
            path per line on standard input. Outputs are named <id>.<ext> in the out directory; \
            the manifest lists one entry per input, in input order.

            Exit status: 0 when every input succeeded, 1 when any failed (the manifest is still \
            complete), 2 on a usage error.

            Examples:
              pushprep process photo.jpg
              pushprep process samples/ --out demo-out --base-url https://cdn.example.com/push
              find uploads -name '*.heic' | pushprep process - --width 1179 --manifest -
              pushprep process big.png --image-max-bytes 2000000 --quality 75
            """
    )

    @OptionGroup var options: ImageOptions

    @Option(name: .long, help: "The out directory.")
    var out: String = "./pushprep-out"

    @Option(name: .long, help: "Where to write the manifest (- for standard output). Default: <out>/manifest.json.")
    var manifest: String?

    @Option(name: .long, help: "How many inputs to process at once (default: the number of cores).")
    var jobs: Int = ProcessingSettings.defaultJobs

    @Option(
        name: .customLong("base-url"), help: "URL prefix of the out directory; each entry's url is this + its file.")
    var baseURL: String?

    @OptionGroup var logging: LoggingOptions

    @Argument(help: "Files, directories, or - for paths on standard input.")
    var inputs: [String]

    func validate() throws {
        do {
            try settings.validate()
        } catch {
            throw ValidationError(error.message)
        }
    }

    var settings: ProcessingSettings {
        var settings = options.settings
        settings.jobs = jobs
        settings.baseURL = baseURL
        return settings
    }

    func run() async throws {
        let logger = logging.makeLogger()
        let items = InputExpander.expand(inputs)
        guard !items.isEmpty else {
            throw ValidationError("no inputs: the directories given hold no files")
        }
        let processor = Processor(settings: settings, outputDirectory: out, logger: logger)
        let bar = ProgressBar(total: items.count)
        let started = ContinuousClock.now
        let result: Manifest
        do {
            result = try await processor.run(items) { bar.update(done: $0.done, failed: $0.failed) }
        } catch {
            bar.finish()
            throw CommandFailure(message: error.description)
        }
        bar.finish()

        let manifestPath = manifest ?? "\(out)/manifest.json"
        let data = try result.jsonData()
        if manifestPath == "-" {
            FileHandle.standardOutput.write(data)
        } else {
            try ManifestWriter.write(data, to: manifestPath)
        }

        let failed = result.attachments.filter { $0.failure != nil }.count
        let seconds = (ContinuousClock.now - started).seconds
        let summary =
            "\(items.count - failed) of \(items.count) ready, \(failed) failed in \(String(format: "%.1f", seconds)) s"
            + (manifestPath == "-" ? "" : "; manifest: \(manifestPath)")
        // With the manifest on stdout, the summary goes to stderr to keep stdout pure JSON.
        if manifestPath == "-" {
            FileHandle.standardError.write(Data((summary + "\n").utf8))
        } else {
            print(summary)
        }
        for entry in result.attachments {
            if let failure = entry.failure {
                FileHandle.standardError.write(
                    Data("failed: \(failure.source): \(failure.error.code): \(failure.error.message)\n".utf8))
            }
        }
        if failed > 0 { throw ExitCode(1) }
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// A failure of the whole command (not of one input), reported with exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
