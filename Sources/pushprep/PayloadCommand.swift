public import ArgumentParser
import Foundation
import PushPrepCommandLine
import PushPrepCore
import PushPrepJSON
import PushPrepPayload
import PushPrepQueue
import PushPrepStorage
import SystemPackage

/// `pushprep payload`: a manifest's attachments in a ready-to-send payload for a provider.
struct PayloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payload",
        abstract: "Print a push payload for a provider with a manifest's attachments.",
        discussion: """
            MANIFEST is a manifest written by process (or - for standard input); --job ID (repeatable) \
            takes the entries of succeeded jobs from the queue instead (--queue, as jobs reads it). \
            The payload carries the first ready attachment: iOS shows only a push's first \
            attachment without a content extension. --id ID (repeatable) chooses others, --all \
            sends every ready one (APNs and OneSignal), and a line on standard error says which \
            one was taken when there were more. The attachments' URLs go in the provider's documented keys, with the service extension's flag \
            (mutable-content) and the type hint where the provider carries one:

              apns       aps + "attachments": [{id, url, type, options}] for your own service extension
              onesignal  REST body: contents/headings, ios_attachments {id: url}, mutable_content
              airship    push object: notification.ios.media_attachment {url, options}
              braze      /messages/send: messages.apple_push.asset_url + asset_file_type
              fcm        HTTP v1: message.notification + apns.fcm_options.image (images; a movie's poster)

            The attachment's Android and web renditions (process --platforms) go in each \
            provider's keys for those platforms, never the iOS file: onesignal big_picture, \
            chrome_web_image, chrome_web_icon; airship notification.android.style (big_picture) \
            and notification.web icon/image, with device_types naming the platforms; braze \
            android_push (extra.appboy_image_url) and web_push (image_url, large_image_url), \
            which need a title and a body; fcm message.android.notification.image and \
            message.webpush.notification image/icon. Where a platform has no rendition of an \
            attachment (a sound on Android, a manifest made with --platforms ios), its part \
            carries no picture, and a line on standard error says so.

            Airship, Braze and FCM carry one attachment per push: choose it with --id. Targeting \
            (tokens, audiences, app ids) and custom data are the sender's: add them with --merge. \
            Its object is merged from the payload's top level: each key lands beside the \
            generated top-level keys (beside aps for apns, where custom keys belong; beside \
            message for fcm, so a token goes in {"message": {"token": "…"}}; beside messages for \
            braze), an object both have is merged member by member, and where both set a key the \
            generated value stays. preflight warns unknown_key for a key where the provider does \
            not define it. \
            The payload must fit the provider's limit (APNs 4096 bytes, Braze 1912 for alert + \
            extra), or the command fails with payload_too_large.

            With --store s3://BUCKET/PREFIX (the store process --store wrote the manifest's \
            objects to), each attachment and poster gets its URL from the store now: --base-url \
            joined with the key, a presigned GET made now with --presign (its lifetime starts \
            when the push is built), or the bucket's URL. Nothing is uploaded; a HEAD checks that \
            each object is there (invalid_payload when it is not).

            Exit status: 0 with the payload on standard output, 1 when the manifest, the jobs, the \
            store or the limit does not allow one (job_not_found, invalid_job_state, \
            invalid_payload, payload_too_large), 2 on a usage error.

            Examples:
              pushprep payload out/manifest.json --title "New arrival" --body "Tap to see it"
              pushprep payload --job 3 --title "New arrival" --body "Tap to see it"
              pushprep jobs show 3 --manifest | pushprep payload - --title Hi
              pushprep payload out/manifest.json --dialect braze --id img-3f2a… --body "Sale!"
              pushprep payload out/manifest.json --dialect fcm --body Hi --merge target.json --compact
              pushprep payload manifest.json --store s3://media/push --presign 2d --body "New photo"
            """
    )

    @Argument(help: "A manifest written by process, or - for standard input (or give --job).")
    var manifest: String?

    @Option(
        name: .customLong("job"),
        help: ArgumentHelp(
            "Send the attachment of this succeeded job, from --queue (repeatable), instead of a manifest.",
            valueName: "id"))
    var jobs: [JobID] = []

    @OptionGroup(title: "Queue (with --job)") var queue: QueueOptions

    @Option(help: "apns, onesignal, airship, braze or fcm.")
    var dialect: PushDialect = .apns

    @Option(
        name: .customLong("id"),
        help: ArgumentHelp("Send this attachment (repeatable; default: the first ready one).", valueName: "id"))
    var ids: [String] = []

    @Flag(help: "Send every ready attachment (APNs and OneSignal; iOS shows the first without a content extension).")
    var all = false

    @Option(help: "The alert's title.")
    var title: String?

    @Option(help: "The alert's subtitle.")
    var subtitle: String?

    @Option(help: "The alert's body.")
    var body: String?

    @Option(help: "The notification category (registered by the app).")
    var category: String?

    @Option(help: "The thread the notification is grouped in.")
    var threadID: String?

    @Option(help: "The sound's file name, or default.")
    var sound: String?

    @Option(
        help: ArgumentHelp(
            "URL prefix of the out directory, for manifests written without one (overrides the manifest's); "
                + "with --store, of the bucket (joined with each object's key)."))
    var baseURL: String?

    @OptionGroup(title: "Object storage") var storage: StoreSelection

    @OptionGroup var logging: LoggingOptions

    @Option(
        help: ArgumentHelp(
            "A JSON object file merged into the payload from its top level (targeting, custom data;"
                + " fcm: {\"message\": {\"token\": …}}); generated keys win.", valueName: "file"))
    var merge: String?

    @Flag(help: "Print compact JSON (the bytes that count against the limit) instead of pretty.")
    var compact = false

    func validate() throws {
        switch (manifest, jobs.isEmpty) {
        case (nil, true): throw ValidationError("give a MANIFEST (or - for standard input), or --job ID")
        case (_?, false): throw ValidationError("give a MANIFEST or --job, not both")
        default: break
        }
        if all && !ids.isEmpty {
            throw ValidationError("give --id (the attachments to send) or --all (every ready one), not both")
        }
        guard title?.isEmpty == false || body?.isEmpty == false else {
            throw ValidationError("give --title or --body: the service extension runs only for pushes with an alert")
        }
        if let baseURL { try asUsageError { try ProcessingSettings.validate(baseURL: baseURL) } }
        guard let bucket = try bucket else {
            if storage.presign != nil { throw ValidationError("--presign needs --store s3://BUCKET/PREFIX") }
            return
        }
        try storage.validate(location: .s3(bucket), baseURL: baseURL)
    }

    /// The bucket `--store` names, or nil without `--store`; a usage error for a `file:` store,
    /// whose URLs are `--base-url` joined with the file's name (as without `--store`).
    var bucket: S3Location? {
        get throws {
            guard let store = storage.store else { return nil }
            guard case .s3(let s3) = try storage.location(out: nil, defaultOut: store) else {
                throw ValidationError(
                    "payload --store takes an s3:// store; for a directory, give --base-url (its URL prefix)")
            }
            return s3
        }
    }

    func run() async throws {
        var attachments = try select(from: try await entries())
        if let bucket = try bucket {
            attachments = try await located(attachments, in: bucket)
        }
        let extra = try readMerge()
        let content = PayloadContent(
            title: title, subtitle: subtitle, body: body, category: category, threadID: threadID, sound: sound)
        let built: BuiltPayload
        do {
            built = try PayloadBuilder.buildWithNotes(
                dialect: dialect, attachments: attachments, content: content, extra: extra)
        } catch {
            throw CommandFailure(message: error.description)
        }
        let payload = built.payload
        FileHandle.standardOutput.write(Data((payload.serialized(pretty: !compact) + "\n").utf8))
        for note in built.notes {
            FileHandle.standardError.write(Data("\(note)\n".utf8))
        }
        let now = Date()
        for attachment in attachments {
            if let url = attachment.url, let concern = SignedURLExpiry.concern(about: url, now: now) {
                FileHandle.standardError.write(Data("warning: \(attachment.id): \(concern.message)\n".utf8))
            }
            for (_, rendition) in attachment.renditions.all {
                if let url = rendition.url, let concern = SignedURLExpiry.concern(about: url, now: now) {
                    FileHandle.standardError.write(Data("warning: \(rendition.id): \(concern.message)\n".utf8))
                }
            }
        }
        FileHandle.standardError.write(
            Data(
                "\(dialect.rawValue) payload: \(attachments.count) attachment(s), \(payload.compactByteCount) bytes compact\n"
                    .utf8))
    }

    /// The entries to choose from: the manifest's (``ManifestDocument``), or the `--job`s'.
    private func entries() async throws -> [ManifestEntry] {
        guard let manifest else {
            // A job's error is a command failure with its code (``QueueOptions/withQueue(logger:_:)``).
            let finished = try await queue.withQueue(logger: logging.makeLogger()) { queue in
                try await JobEntries.read(jobs, from: queue)
            }
            return finished.map(\.entry)
        }
        return try ManifestDocument.decode(PayloadFiles.read(manifest, what: "manifest"), name: manifest).attachments
    }

    /// Where the entries came from, for messages.
    private var source: String {
        manifest ?? (jobs.count == 1 ? "job \(jobs[0])" : "the jobs")
    }

    /// The attachments to send: those named with --id, in that order, every ready one with
    /// --all, else the first ready one, said on standard error when there were more
    /// (``PayloadSelection``); `--base-url` applies here unless the URLs come from a store.
    private func select(from entries: [ManifestEntry]) throws -> [Attachment] {
        let selection: PayloadSelection
        do {
            selection = try PayloadSelection(
                from: entries, ids: ids, all: all, dialect: dialect, baseURL: storage.store == nil ? baseURL : nil,
                source: source, spelling: .cli)
        } catch {
            throw CommandFailure(message: error.description)
        }
        if selection.skippedFailures > 0 {
            FileHandle.standardError.write(Data("skipped \(selection.skippedFailures) failed manifest entries\n".utf8))
        }
        if let note = selection.note {
            FileHandle.standardError.write(Data("payload: \(note)\n".utf8))
        }
        return selection.attachments
    }

    /// `attachments` with their URLs from the store (``S3AttachmentStore/located(_:urls:)``):
    /// each object checked with a HEAD, its URL made now.
    private func located(_ attachments: [Attachment], in s3: S3Location) async throws -> [Attachment] {
        do {
            let urls = try storage.urls(baseURL: baseURL)
            let configuration = try storage.configuration(for: s3)
            return try await S3Client.withClient(configuration, logger: logging.makeLogger()) {
                client throws(PushPrepError) -> [Attachment] in
                let store = S3AttachmentStore(client: client, location: s3)
                var located: [Attachment] = []
                for attachment in attachments { located.append(try await store.located(attachment, urls: urls)) }
                return located
            }
        } catch {
            throw CommandFailure(message: error.description)
        }
    }

    private func readMerge() throws -> JSONObject {
        guard let merge else { return [:] }
        let data = try PayloadFiles.read(merge, what: "--merge file")
        do {
            guard let object = try JSONValue.parse(Array(data)).value.objectValue else {
                throw CommandFailure(message: "invalid_payload: --merge \(merge) must hold a JSON object")
            }
            return object
        } catch let error as JSONParseError {
            throw CommandFailure(message: "invalid_payload: --merge \(merge) is not valid JSON: \(error)")
        }
    }
}

extension PushDialect: ExpressibleByArgument {}
extension PushType: ExpressibleByArgument {}

/// Reading the JSON files `payload` and `preflight` take.
enum PayloadFiles {
    /// Larger files are refused before parsing: no payload is anywhere near this.
    static let maxBytes = 16 << 20

    /// The contents of `path`, or standard input for `-`.
    static func read(_ path: String, what: String) throws -> Data {
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            do {
                handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            } catch {
                throw ValidationError("cannot read the \(what) \(path): \(reason(error))")
            }
        }
        defer { if path != "-" { try? handle.close() } }
        // Read at most one byte past the cap, so an endless stream or a huge file cannot fill memory.
        let data: Data
        do {
            data = try handle.read(upToCount: maxBytes + 1) ?? Data()
        } catch {
            throw ValidationError("cannot read the \(what) \(path): \(reason(error))")
        }
        guard data.count <= maxBytes else {
            throw CommandFailure(message: "invalid_payload: the \(what) \(path) is over \(maxBytes) bytes")
        }
        return data
    }

    /// Why a file could not be read, in the system's words ("No such file or directory").
    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain
        {
            return Errno(rawValue: Int32(underlying.code)).description
        }
        return nsError.localizedDescription
    }
}
