import Foundation
import Hummingbird
import PushPrep
import PushPrepCore
import PushPrepQueue

/// `GET /jobs/{id}`: one job, its files, preview, manifest entry, settings, attempts and webhook
/// deliveries. Its retry and cancel forms post to ``ConsoleRoutes/register(on:)``'s routes.
extension ConsoleRoutes {
    /// The page of job `id`; `404 job_not_found` when the queue has none.
    func job(_ id: JobID, _ visit: ConsoleVisit) async throws -> Response {
        guard let record = try await queue.job(id) else { throw JobRoutes.notFound(id) }
        let deliveries = try await queue.deliveries(job: id)
        let attempts = try await queue.attempts(job: id)
        let view = ConsoleJobView(record, renderer: renderer).page(
            deliveries: deliveries, attempts: attempts, publicURL: publicURL.url, pictureOrigin: pictureOrigin,
            files: ConsoleFiles(configuration))
        var answer = page(visit, title: "Job \(id)", view)
        answer.mainID = "job"
        return html("job", answer)
    }
}

/// What the job page's template reads: the job's header (``ConsoleJobRow``) and its sections,
/// in the page's order.
struct ConsoleJobPageView {
    /// A file of the output, linked through this server's attachment route.
    struct FileLink {
        var role, file, mime, href: String
    }

    /// A manifest warning: with its code and advice when this version writes its kind.
    struct Warning {
        var message: String
        var warningCode, warningAdvice: String?
    }

    /// An attempt the queue recorded: its number, worker, start and outcome in words; once it
    /// ended, how long it took and its error.
    struct Attempt {
        var number: Int
        var worker, started, outcome: String
        var took, code, message: String?
    }

    /// A webhook delivery of the job: its event, state and tries, and the last try's answer.
    struct Delivery {
        var id: Int64
        var event, state: String
        var attempts: Int
        var lastStatus: Int?
        var lastError: String?
    }

    var job: ConsoleJobRow
    /// The facts besides the header's (the worker is the lease's owner).
    var finishedISO, leaseOwner, errorMessage, errorAdvice, callbackURL: String?
    /// The output's files when it has some; `filesElsewhere` when this server does not serve them.
    var fileLinks: [FileLink]?
    var hasFileLinks, filesElsewhere: Bool?
    /// ``ConsolePreview/html(for:publicURL:pictureOrigin:)``; the manifest entry, the settings
    /// and the metadata as indented JSON.
    var previewHTML, manifest, settingsJSON, metadataJSON: String?
    var operations: [String]
    var hasOperations: Bool
    var warnings: [Warning]
    var hasWarnings: Bool
    var attemptRows: [Attempt]
    var deliveries: [Delivery]
}

/// The job page's view, from the job and what the queue recorded of it.
extension ConsoleJobView {
    /// The job page; `files` links the outputs when this server serves them (nil when it
    /// publishes elsewhere only).
    func page(
        deliveries: [WebhookDelivery], attempts: [JobAttempt], publicURL: String?, pictureOrigin: String? = nil,
        files: ConsoleFiles? = nil
    ) -> ConsoleJobPageView {
        let attachment = resource.attachment?.attachment
        let links = attachment.map { files?.links(of: $0) ?? [] }
        let operations = attachment?.operations ?? []
        let warnings = attachment?.warnings ?? []
        let message = record.errorMessage ?? resource.attachment?.failure?.error.message
        return ConsoleJobPageView(
            job: row(), finishedISO: record.finishedAt.map(ConsoleFormat.iso),
            leaseOwner: record.leaseOwner.map(UntrustedText.escaped), errorMessage: message.map(UntrustedText.escaped),
            errorAdvice: Self.errorCode(of: record).flatMap(PushPrepError.Code.init(rawValue:)).map {
                ConsoleAdvice.text(for: $0)
            },
            callbackURL: record.callbackURL.map(UntrustedText.escaped), fileLinks: links,
            hasFileLinks: links.map { !$0.isEmpty }, filesElsewhere: attachment != nil && files == nil ? true : nil,
            previewHTML: ConsolePreview.html(for: resource, publicURL: publicURL, pictureOrigin: pictureOrigin),
            manifest: resource.attachment.map { ConsoleFormat.prettyJSON($0) },
            settingsJSON: resource.settings.map { ConsoleFormat.prettyJSON($0) },
            metadataJSON: resource.metadata.map { ConsoleFormat.prettyJSON($0) }, operations: operations,
            hasOperations: !operations.isEmpty, warnings: warnings.map(Self.warningRow), hasWarnings: !warnings.isEmpty,
            attemptRows: Self.attemptRows(attempts),
            deliveries: deliveries.map {
                .init(
                    id: $0.id, event: $0.event, state: $0.state.rawValue, attempts: $0.attempts,
                    lastStatus: $0.lastStatus, lastError: $0.lastError.map(UntrustedText.escaped))
            })
    }

    /// A manifest's warning as the job page lists it: with its code and advice when it is a kind
    /// this version writes, as it is otherwise (an older PushPrep's text).
    static func warningRow(_ warning: AttachmentWarning) -> ConsoleJobPageView.Warning {
        .init(
            message: warning.message, warningCode: warning.code?.rawValue,
            warningAdvice: warning.code.map { ConsoleAdvice.text(for: $0) })
    }

    /// The attempts the queue recorded, oldest first.
    static func attemptRows(_ attempts: [JobAttempt]) -> [ConsoleJobPageView.Attempt] {
        attempts.map { attempt in
            .init(
                number: attempt.attempt, worker: UntrustedText.escaped(attempt.worker),
                started: ConsoleFormat.iso(attempt.startedAt), outcome: attempt.outcome.map(Self.words) ?? "running",
                took: attempt.endedAt.map { ConsoleFormat.duration(seconds: $0.timeIntervalSince(attempt.startedAt)) },
                code: attempt.errorCode, message: attempt.errorMessage.map(UntrustedText.escaped))
        }
    }

    /// An attempt's outcome in words.
    static func words(_ outcome: JobAttempt.Outcome) -> String {
        switch outcome {
        case .succeeded: "succeeded"
        case .failed: "failed"
        case .cancelled: "cancelled"
        case .expired: "lease expired (the worker was lost)"
        case .released: "given back (not counted)"
        }
    }
}

/// The links of a job's output files through this server's attachment route
/// (`/v1/attachments/<file>`), signed as the API signs them under `--sign-attachments`: the
/// browser sends no key to that route, and a phone's URL may be the CDN's (`--base-url`).
struct ConsoleFiles {
    /// `--sign-attachments`' signer, when set.
    let signer: AttachmentURLSigner?

    /// Links when `configuration` serves an out directory, else nil.
    init?(_ configuration: ServerConfiguration) {
        guard configuration.attachmentsDirectory != nil else { return nil }
        signer = configuration.attachmentSigner
    }

    /// The output, the poster and the renditions, each as the row the job page lists: what it
    /// is, its file's name and type, and its link.
    func links(of attachment: Attachment, now: Date = Date()) -> [ConsoleJobPageView.FileLink] {
        var files: [(role: String, file: String, mime: String)] = [("Output", attachment.file, attachment.mime)]
        if let poster = attachment.poster { files.append(("Poster", poster.file, MediaType.jpeg.mime)) }
        for (key, rendition) in attachment.renditions.all {
            files.append((Self.role(of: key), rendition.file, rendition.mime))
        }
        return files.map { file in
            let name = file.file.addingPercentEncoding(withAllowedCharacters: ConsoleJobFilter.unreserved) ?? ""
            let path = "/v1/attachments/" + name
            return .init(
                role: file.role, file: UntrustedText.escaped(file.file), mime: file.mime,
                href: signer?.sign(path, now: now) ?? path)
        }
    }

    /// A rendition in words.
    static func role(of key: Renditions.Key) -> String {
        switch key {
        case .android: "Android big picture"
        case .web: "Web image"
        case .webIcon: "Web icon"
        }
    }
}
