import ArgumentParser
import Foundation
import Logging
import PushPrep
import PushPrepCommandLine
import PushPrepCore
import PushPrepSandbox
import PushPrepStorage

/// `pushprep process`: inputs in, attachments and a manifest out.
struct ProcessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract:
            "Turn images, movies and sounds (files or URLs) into notification-ready attachments and write a manifest.",
        discussion: """
            INPUT is a file, a directory (processed recursively, sorted by path) or - for one \
            path per line on standard input. Outputs are named <id>.<ext> in the out directory; \
            the manifest lists one entry per input, in input order.

            With --store s3://BUCKET/PREFIX, outputs are written to a private temporary folder, \
            then uploaded as PREFIX/<id>.<ext> (skipped when the bucket already holds them with \
            the same SHA-256), and the folder is removed. An input whose upload fails is a failed \
            entry (storage_denied or storage_unavailable). The manifest then goes to standard \
            output unless --manifest says where: it names local sources and is not for the bucket.

            Exit status: 0 when every input succeeded, 1 when any failed (the manifest is still \
            complete), 2 on a usage error.

            Examples:
              pushprep process photo.jpg
              pushprep process samples/ --out demo-out --base-url https://cdn.example.com/push
              find uploads -name '*.heic' | pushprep process - --width 1179 --manifest -
              pushprep process big.png --image-max-bytes 2000000 --quality 75
              pushprep process https://cdn.example.com/a.jpg photo.png --out out
              pushprep process uploads/ --store s3://media/push --presign 7d > manifest.json
              pushprep process samples/ --out demo-out --report demo-out/report.html
            """
    )

    @OptionGroup var options: ImageOptions

    @OptionGroup(title: "Remote sources") var remote: RemoteOptions

    @OptionGroup var output: OutputOptions

    @Option(
        help: ArgumentHelp(
            "Where to write the manifest (- for standard output). Default: <out>/manifest.json; standard output "
                + "with an s3:// store (the manifest names local sources: keep it out of the bucket)."))
    var manifest: String?

    @OptionGroup var manifestVersion: ManifestVersionOption

    @Option(name: ProcessingSettings.Declared.jobs.name, help: ProcessingSettings.Declared.jobs.argumentHelp)
    var jobs: Int = ProcessingSettings.Declared.jobs.defaultValue

    @OptionGroup var memory: MemoryLimitOption

    @Option(name: ProcessingSettings.Declared.baseURL.name, help: ProcessingSettings.Declared.baseURL.argumentHelp)
    var baseURL: String?

    @Flag(help: "Print one line per input after the run (source, output, size).")
    var list = false

    @Option(
        help: ArgumentHelp(
            "Also write a self-contained HTML report here: each input's notification preview, sizes before and after "
                + "against Apple's limits, warnings and failures in plain words."))
    var report: String?

    @Option(help: Isolation.help(slots: "--jobs"))
    var isolation: Isolation = .none

    @OptionGroup var logging: LoggingOptions

    @Argument(help: "Files, directories, http(s) URLs, or - for paths and URLs on standard input.")
    var inputs: [String]

    func validate() throws {
        try asUsageError { try settings.validate() }
        try output.validate(baseURL: baseURL)
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
        let location = try output.location
        let bucket: (location: S3Location, configuration: S3Configuration, urls: ObjectURLStyle)?
        let outputDirectory: String
        switch location {
        case .directory(let path):
            bucket = nil
            outputDirectory = path
        case .s3(let s3):
            do {
                bucket = (s3, try output.storage.configuration(for: s3), try output.storage.urls(baseURL: baseURL))
            } catch {
                throw CommandFailure(message: error.description)
            }
            outputDirectory = try LocalStaging.makeFolder("process")
        }
        defer { if bucket != nil { try? FileManager.default.removeItem(atPath: outputDirectory) } }

        var processor = Processor(
            settings: settings, outputDirectory: outputDirectory, logger: logger, remote: remote.settings,
            memoryLimit: try memory.limit(logger: logger))
        let decoders = try await isolation.decoders(
            size: jobs, in: outputDirectory, timeout: settings.timeout, logger: logger)
        processor.decoders = decoders
        let bar = ProgressBar(total: items.count)
        let started = ContinuousClock.now
        var result: Manifest
        do {
            result = try await processor.run(items) { bar.update(done: $0.done, failed: $0.failed) }
        } catch {
            bar.finish()
            await decoders?.shutdown()
            throw CommandFailure(message: error.description)
        }
        await decoders?.shutdown()
        bar.finish()
        if let bucket {
            let processed = result
            do {
                // Publication failures are failed entries; only the client's setup could throw here.
                result = try await S3Client.withClient(bucket.configuration, logger: logger) { client in
                    await S3AttachmentStore(client: client, location: bucket.location).publish(
                        processed, from: outputDirectory, urls: bucket.urls, concurrency: jobs)
                }
            } catch {
                throw CommandFailure(message: error.description)
            }
        }

        let manifestPath = manifest ?? (bucket == nil ? "\(outputDirectory)/manifest.json" : "-")
        result.version = manifestVersion.version
        let data = try result.jsonData()
        if manifestPath == "-" {
            FileHandle.standardOutput.write(data)
        } else {
            try ManifestWriter.write(data, to: manifestPath)
        }

        let failed = result.attachments.filter { $0.failure != nil }.count
        let seconds = (ContinuousClock.now - started).seconds
        if let report {
            // Before the s3 run's private folder goes: the thumbnails are made from its files.
            let size = try await BatchReportWriter.write(
                result, outputDirectory: outputDirectory, seconds: seconds, concurrency: jobs, to: report)
            logger.info("wrote the report", metadata: ["path": "\(report)", "bytes": "\(size)"])
        }
        let summary =
            "\(items.count - failed) of \(items.count) ready, \(failed) failed in \(String(format: "%.1f", seconds)) s"
            + (manifestPath == "-" ? "" : "; manifest: \(manifestPath)")
            + (report.map { "; report: \($0)" } ?? "")
        // With the manifest on stdout, the summary goes to stderr to keep stdout pure JSON.
        if manifestPath == "-" {
            FileHandle.standardError.write(Data((summary + "\n").utf8))
        } else {
            print(summary)
        }
        if list {
            let lines = result.attachments.map(Self.line(for:)).joined(separator: "\n")
            if manifestPath == "-" {
                FileHandle.standardError.write(Data((lines + "\n").utf8))
            } else {
                print(lines)
            }
        }
        for entry in result.attachments where !list {
            if let failure = entry.failure {
                FileHandle.standardError.write(
                    Data("failed: \(failure.source): \(failure.error.code): \(failure.error.message)\n".utf8))
            }
        }
        if failed > 0 { throw ExitCode(1) }
    }
}

extension ProcessCommand {
    /// One line describing an entry, for `--list`.
    static func line(for entry: ManifestEntry) -> String {
        switch entry {
        case .ok(let a):
            let size = a.width.flatMap { w in a.height.map { "\(w)x\($0)" } }.map { "  \($0)" } ?? ""
            let frames = (a.frames ?? 1) > 1 ? ", \(a.frames ?? 1) frames" : ""
            let duration = a.duration.map { String(format: ", %.1f s", $0) } ?? ""
            return "  ok      \(a.source) -> \(a.file)\(size)\(frames)\(duration), \(a.bytes) bytes"
        case .failed(let f):
            return "  failed  \(f.source): \(f.error.code): \(f.error.message)"
        }
    }
}

/// A failure of the whole command (not of one input), reported with exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
