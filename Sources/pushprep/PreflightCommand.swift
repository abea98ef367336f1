import ArgumentParser
import Foundation
import Logging
import PushPrep
import PushPrepCommandLine
import PushPrepCore
import PushPrepPayload
import PushPrepReport
import PushPrepStorage

/// `pushprep preflight`: checks push payloads and their attachments before they are sent.
struct PreflightCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preflight",
        abstract: "Check push payloads and their attachments before the push is sent.",
        discussion: """
            Each PAYLOAD (a file, or - for standard input) is read as APNs, OneSignal, Airship, \
            Braze or FCM (detected from its keys unless --dialect says), in the provider's REST \
            form or as the APNs payload the phone receives. Findings have a severity, a stable \
            code and a JSON Pointer to the key at fault (codes: see the README).

            --fetch downloads every attachment (remote-source rules apply: hosts on a private \
            network of yours need --allow-host or --allow-private-networks) and checks the bytes: the real type, \
            Apple's size limits, the extension, an animated GIF's memory, the download time.

            --fix OUT.json writes a corrected payload: attachments with findings are processed \
            into --out and their URLs replaced by --base-url + the file, mutable-content is set, \
            and so on; it implies --fetch and takes one payload. The exit status then describes \
            the corrected payload. With --store s3://BUCKET/PREFIX (as for process), the \
            processed attachments are published to the bucket instead (from a private temporary \
            folder) and get its URLs: --base-url joined with the key, --presign, or the bucket's.

            Android and web images (FCM android/webpush, OneSignal big_picture and chrome_web_*, \
            Airship android style and web, Braze android_push extra.appboy_image_url and web_push) \
            are checked against each platform's rules: Android's 1 MiB cap, https, the types \
            BitmapFactory decodes, FCM's 5 s download at --assume-bandwidth, the 2:1 shape, the \
            web icon's 192 px. --manifest judges the images a manifest made by its numbers; --fix \
            points a bad one at its rendition (the manifest's, else one processed from it).

            Exit status: 0 when clean, 1 on any error, 3 on warnings only with --strict, 2 on a \
            usage error.

            Examples:
              pushprep preflight payload.json
              pushprep preflight payload.json --fetch --strict
              pushprep preflight payload.json --report preflight.html
              pushprep preflight onesignal.json --dialect onesignal --json
              pushprep preflight payload.json --fix fixed.json --out out --base-url https://cdn.example.com/push
              pushprep preflight payload.json --fix fixed.json --store s3://media/push --presign 2d
            """
    )

    @Argument(help: "Payload files, or - for standard input.")
    var payloads: [String]

    @Option(help: "auto, apns, onesignal, airship, braze or fcm.")
    var dialect: String = "auto"

    @Flag(help: "Download the attachments (within the budget below) and check their bytes.")
    var fetch = false

    @Option(
        name: .customLong("fetch-max-urls"),
        help: "With --fetch: distinct attachment URLs downloaded per payload, 1...1000 (default 20).")
    var fetchMaxURLs: Int = PreflightSession.FetchBudget().maxURLs

    @Option(
        help: "With --fetch: no download starts once a payload's total reaches this, 1e6...1e10 (default 200000000).")
    var fetchMaxBytes: Int = PreflightSession.FetchBudget().maxBytes

    @Option(help: "alert, voip or background (sets the size limit).")
    var pushType: PushType = .alert

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Option(
        help: "Also write a self-contained HTML page here: each payload's notification preview beside its findings.")
    var report: String?

    @Flag(help: "Exit 3 when there are warnings (and no errors).")
    var strict = false

    @Flag(help: "The app has an App Transport Security exception: http:// attachment URLs are a warning.")
    var allowHTTP = false

    @Option(help: "Seconds the service extension has to download (default 30).")
    var timeBudget: Double = 30

    @Option(help: "The slow connection download times are estimated on, in kbit/s (default 1600).")
    var slowLinkKbps: Double = 1600

    @Option(
        help:
            "The speed the Android image's download is estimated at, against FCM's 5 s: 1mbit, 500kbit, or bits per second (default 1mbit)."
    )
    var assumeBandwidth: String = "1mbit"

    @Option(
        help:
            "A manifest written by process: images of the payload it made are judged by its numbers, and --fix uses its renditions."
    )
    var manifest: String?

    @Option(help: "Write a corrected payload here (implies --fetch; one payload).")
    var fix: String?

    @Option(help: "With --fix: where processed attachments are written (as --store file:DIR; default ./pushprep-out).")
    var out: String?

    @Option(
        name: ProcessingSettings.Declared.baseURL.name,
        help: ProcessingSettings.Declared.baseURL.argumentHelp(
            "With --fix: URL prefix of --out (or of the bucket); processed attachments' URLs."))
    var baseURL: String?

    @OptionGroup(title: "Object storage (--fix)") var storage: StoreOptions

    @OptionGroup(title: "Processing (--fix)") var options: ImageOptions

    @OptionGroup(title: "Remote sources (--fetch)") var remote: RemoteOptions

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if dialect != "auto" && PushDialect(rawValue: dialect) == nil {
            throw ValidationError("--dialect must be auto, apns, onesignal, airship, braze or fcm, got \(dialect)")
        }
        if fix != nil && payloads.count != 1 {
            throw ValidationError("--fix takes exactly one payload, got \(payloads.count)")
        }
        if fix == nil && baseURL != nil {
            throw ValidationError("--base-url is for --fix")
        }
        if fix == nil && (storage.selection.store != nil || storage.selection.presign != nil) {
            throw ValidationError("--store and --presign are for --fix")
        }
        if fix != nil { try storage.validate(location: try location, baseURL: baseURL) }
        if payloads.filter({ $0 == "-" }).count > 1 {
            throw ValidationError("standard input (-) can be read once")
        }
        guard Bandwidth(text: assumeBandwidth) != nil else {
            throw ValidationError(Bandwidth.invalid(assumeBandwidth, what: "--assume-bandwidth").message)
        }
        try asUsageError {
            var settings = options.settings
            settings.baseURL = baseURL
            try settings.validate()
            try preflightOptions.validate()
            try fetchBudget.validate()
        }
    }

    /// Where `--fix` puts processed attachments: `--store`, else `--out`, else `./pushprep-out`.
    var location: StoreLocation {
        get throws { try storage.location(out: out, defaultOut: "./pushprep-out") }
    }

    var fetchBudget: PreflightSession.FetchBudget {
        PreflightSession.FetchBudget(maxURLs: fetchMaxURLs, maxBytes: fetchMaxBytes)
    }

    var preflightOptions: PreflightOptions {
        var options = PreflightOptions()
        options.dialect = PushDialect(rawValue: dialect)
        options.pushType = pushType
        options.allowHTTP = allowHTTP
        options.timeBudget = timeBudget
        options.slowLinkKbps = slowLinkKbps
        options.assumedBandwidth = Bandwidth(text: assumeBandwidth) ?? .default
        return options
    }

    /// `--manifest`, read.
    private func readManifest() throws -> ManifestImages? {
        guard let manifest else { return nil }
        return ManifestImages(
            try ManifestDocument.decode(PayloadFiles.read(manifest, what: "manifest"), name: manifest))
    }

    /// A checked payload as `--report` previews it.
    private struct Checked {
        var report: PreflightReport
        /// The payload the preview draws: the one read, or the corrected one after `--fix`.
        var payload: [UInt8]
        /// With `--fetch --report`: the pictures of the attachment the preview shows.
        var picture: AttachmentPicture? = nil
        /// Why a downloaded attachment has no picture, when the report says so.
        var pictureNote: String? = nil
        /// With `--fetch --report`: the pictures of the Android and web images, by URL.
        var platformPictures: [String: PlatformPreview.Picture] = [:]
        /// Why one of those has none, by URL.
        var platformNotes: [String: String] = [:]

        init(
            report: PreflightReport, payload: [UInt8], picture: AttachmentPicture? = nil, pictureNote: String? = nil
        ) {
            self.report = report
            self.payload = payload
            self.picture = picture
            self.pictureNote = pictureNote
        }

        /// The report of a fix with its corrected payload: what the preview draws.
        init(_ fixed: PreflightSession.Fixed) {
            self.init(report: fixed.report, payload: fixed.payload, picture: fixed.picture)
        }
    }

    func run() async throws {
        let inputs = try payloads.map { path in (path, Array(try PayloadFiles.read(path, what: "payload"))) }
        let logger = logging.makeLogger()
        var checking = preflightOptions
        checking.manifestImages = try readManifest()
        // Only a report draws pictures, within the batch report's budget.
        let pictures =
            report == nil ? nil : PreflightPictures(payloads: inputs.count, maxPixels: options.settings.maxPixels)
        var checked: [Checked]
        if let fix {
            checked = [
                try await fixed(inputs[0], writeTo: fix, pictures: pictures, checking: checking, logger: logger)
            ]
        } else if fetch {
            checked = try await withSession(checking, logger: logger) { session in
                var checked: [Checked] = []
                var spent = 0
                for (path, bytes) in inputs {
                    guard let pictures else {
                        checked.append(Checked(report: await session.check(bytes, file: path), payload: bytes))
                        continue
                    }
                    guard spent < pictures.budgetBytes else {
                        checked.append(
                            Checked(
                                report: await session.check(bytes, file: path), payload: bytes,
                                pictureNote: pictures.budgetNote))
                        continue
                    }
                    let (report, picture) = await session.check(bytes, file: path, picturing: pictures)
                    spent += picture?.bytes ?? 0
                    checked.append(Checked(report: report, payload: bytes, picture: picture))
                }
                return checked
            }
        } else {
            checked = inputs.map {
                Checked(report: Preflight.check($0.1, file: $0.0, options: checking), payload: $0.1)
            }
        }
        let reports = checked.map(\.report)
        if let report {
            if let pictures, fetch || fix != nil {
                checked = await withPlatformPictures(checked, pictures: pictures, logger: logger)
            }
            let views = checked.map { checked in
                PreflightView(
                    report: checked.report, payload: checked.payload, options: checking,
                    picture: checked.picture, pictureNote: checked.pictureNote,
                    platformPictures: checked.platformPictures, platformNotes: checked.platformNotes)
            }
            let page = PreflightReportPage(views: views).html()
            try ManifestWriter.write(Array(page.utf8), to: report, what: "the report")
        }
        if json {
            try JSONOutputOptions.print(PreflightOutput(reports: reports))
        } else {
            print(PreflightText.render(reports))
        }
        let status = reports.map { $0.exitStatus(strict: strict) }.max() ?? 0
        if status != 0 { throw ExitCode(status) }
    }

    /// `checked` with the pictures of the Android and web images each payload names (downloaded
    /// for the page, within what is left of the pictures' budget after the iOS attachments').
    private func withPlatformPictures(
        _ checked: [Checked], pictures: PreflightPictures, logger: Logger
    ) async -> [Checked] {
        let downloads = PlatformPictures(remote: remote.settings, pictures: pictures, logger: logger)
        var left = pictures.budgetBytes - checked.reduce(0) { $0 + ($1.picture?.bytes ?? 0) }
        var result = checked
        for index in result.indices {
            let images = result[index].report.platformImages ?? []
            let made = await downloads.make(
                images.map { PlatformPictures.Request(url: $0.url, android: $0.role.platform == .android) },
                budgetBytes: max(0, left))
            left -= made.bytes
            for (url, picture) in made.pictures {
                result[index].platformPictures[url] = PlatformPreview.Picture(
                    source: picture.expanded, width: picture.width, height: picture.height,
                    thumbnailSource: picture.banner)
            }
            result[index].platformNotes = made.notes
        }
        return result
    }

    private func fixed(
        _ input: (String, [UInt8]), writeTo path: String, pictures: PreflightPictures?, checking: PreflightOptions,
        logger: Logger
    ) async throws -> Checked {
        var settings = options.settings
        settings.baseURL = baseURL
        let s3: S3Location
        switch try location {
        case .directory(let directory):
            let processor = Processor(
                settings: settings, outputDirectory: directory, logger: logger, remote: remote.settings)
            return try await withSession(checking, logger: logger) { session in
                do throws(PushPrepError) {
                    return Checked(
                        try await session.fixed(
                            input.1, file: input.0, writeTo: path, processing: processor, picturing: pictures))
                } catch {
                    throw CommandFailure(message: error.description)
                }
            }
        case .s3(let location):
            s3 = location
        }
        // Processed into a private folder, published from it, and the folder removed.
        let staging = try LocalStaging.makeFolder("preflight")
        defer { try? FileManager.default.removeItem(atPath: staging) }
        settings.baseURL = nil
        let processor = Processor(
            settings: settings, outputDirectory: staging, logger: logger, remote: remote.settings)
        return try await withSession(checking, logger: logger) { session in
            do throws(PushPrepError) {
                let urls = try storage.urls(baseURL: baseURL)
                return try await S3Client.withClient(try storage.configuration(for: s3), logger: logger) {
                    client throws(PushPrepError) -> Checked in
                    let publishing = PublishingProcessor(
                        processing: processor, store: S3AttachmentStore(client: client, location: s3), urls: urls,
                        concurrency: 4)
                    return Checked(
                        try await session.fixed(
                            input.1, file: input.0, writeTo: path, processing: publishing, picturing: pictures))
                }
            } catch {
                throw CommandFailure(message: error.description)
            }
        }
    }

    private func withSession<T>(
        _ checking: PreflightOptions, logger: Logger, _ body: (PreflightSession) async throws -> T
    ) async throws -> T {
        let session: PreflightSession
        do {
            session = try PreflightSession(
                options: checking, remote: remote.settings, budget: fetchBudget, logger: logger)
        } catch {
            throw CommandFailure(message: error.description)
        }
        return try await withShutDown(session, shutDown: { await $0.shutdown() }, body)
    }
}

/// The human report, every line printable (``UntrustedText/escaped(_:)``).
enum PreflightText {
    static func render(_ reports: [PreflightReport]) -> String {
        var lines: [String] = []
        for report in reports {
            lines.append(header(report))
            for attachment in report.attachments {
                lines.append("  attachment \(display(attachment.pointer)): \(attachment.url)")
                if let fetched = attachment.fetched { lines.append("    " + describe(fetched)) }
            }
            for image in report.platformImages ?? [] {
                lines.append("  \(image.role.rawValue) \(display(image.pointer)): \(image.url)")
                if let fetched = image.fetched { lines.append("    " + describe(fetched, platform: true)) }
            }
            lines += report.findings.map(line)
            if let changes = report.changes {
                lines.append(changes.isEmpty ? "  nothing to change" : "  changes:")
                lines += changes.map { "    \(display($0.pointer)): \($0.message)" }
                if let path = report.fixedPayload { lines.append("  wrote \(path)") }
            }
            // One verdict per report: after `--fix` it is the fixed payload's, said once.
            if let remaining = report.remaining {
                lines.append(remaining.isEmpty ? "  after the fix: \(totals(report))" : "  after the fix:")
                lines += remaining.map { "  " + line($0) }
                if !remaining.isEmpty { lines.append("  " + totals(report)) }
            } else {
                lines.append("  " + totals(report))
            }
        }
        // Keys, pointers and URLs are the payload's own text: a key holding ESC or a newline must
        // not reach the terminal as one (each line escaped, as a log line is).
        return lines.map(UntrustedText.escaped).joined(separator: "\n")
    }

    private static func header(_ report: PreflightReport) -> String {
        guard let dialect = report.dialect else { return "\(report.file):" }
        let size = report.bytes.map { bytes in report.limit.map { ", \(bytes) of \($0) bytes" } ?? "" } ?? ""
        return "\(report.file): \(dialect.rawValue), \(report.attachments.count) attachment(s)\(size)"
    }

    private static func line(_ finding: PreflightFinding) -> String {
        let severity = finding.severity.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
        return "  \(severity)  \(finding.code.rawValue) at \(display(finding.pointer)): \(finding.message)"
    }

    private static func display(_ pointer: String) -> String { pointer.isEmpty ? "(payload)" : pointer }

    private static func describe(_ fetched: FetchedAttachment, platform: Bool = false) -> String {
        var parts = ["HTTP \(fetched.status)", "\(fetched.bytes) bytes", fetched.type ?? "unrecognised"]
        if let width = fetched.width, let height = fetched.height { parts.append("\(width)x\(height)") }
        if let frames = fetched.frames, frames > 1 { parts.append("\(frames) frames") }
        if platform { parts.append(fetched.contentLength.map { "Content-Length \($0)" } ?? "no Content-Length") }
        parts.append(
            String(
                format: platform
                    ? "%.2f s here, ~%.1f s at the assumed bandwidth" : "%.2f s here, ~%.1f s on a slow link",
                fetched.seconds, fetched.slowLinkSeconds))
        return parts.joined(separator: ", ")
    }

    private static func totals(_ report: PreflightReport) -> String {
        let errors = report.count(.error)
        let warnings = report.count(.warning)
        let infos = report.count(.info)
        guard errors + warnings + infos > 0 else { return "clean" }
        return "\(errors) error(s), \(warnings) warning(s), \(infos) info(s)"
    }
}
