import Foundation
import Hummingbird
import Logging
import PushPrep
import PushPrepCore
import PushPrepPayload
import PushPrepReport

/// `GET /preflight` and `POST /preflight`: a pasted payload checked as `POST /v1/preflight`
/// checks it, with its findings and the notification's preview.
extension ConsoleRoutes {
    /// The pre-flight page, and with `form` its check. A session with the `write` scope may
    /// tick `fetch`: the attachments are downloaded and checked (as `POST /v1/preflight` with
    /// `fetch` does) within `fetch_max_urls` and `fetch_max_bytes`, which the server's
    /// `--max-preflight-urls` and `--max-preflight-bytes` bound with the API's own check
    /// (``PreflightSession/FetchBudget/requested(maxURLs:maxBytes:within:)``). A read-only
    /// session is not offered it and is refused it (`403`): a download is work the server does
    /// for the caller, against hosts the caller names.
    func preflightPage(_ visit: ConsoleVisit, form: ConsolePreflightForm?, logger: Logger) async throws -> Response {
        let ceiling = configuration.preflightFetchCeiling
        let chosen = form?.dialect ?? "auto"
        let fetch = !(form?.fetch ?? "").isEmpty
        var view = ConsolePreflightView(
            dialects: [.init(value: "auto", label: "Detect from the payload's keys", selected: chosen == "auto")]
                + PushDialect.allCases.map {
                    .init(value: $0.rawValue, label: $0.displayName, selected: chosen == $0.rawValue)
                },
            fetchForm: visit.canWrite
                ? .init(
                    checked: fetch, maxURLs: ceiling.maxURLs, maxBytes: ceiling.maxBytes,
                    minBytes: PreflightSession.FetchBudget.byteRange.lowerBound, urls: form?.maxURLs ?? "",
                    bytes: form?.maxBytes ?? "") : nil)
        guard let form else { return html("preflight", page(visit, title: "Pre-flight", view)) }
        let payload = form.payload ?? ""
        if !payload.isEmpty { view.payload = payload }
        var options = PreflightOptions()
        if chosen != "auto" {
            guard let dialect = PushDialect(rawValue: chosen) else {
                return errorPage(
                    Problem(.badRequest, .invalidRequest, "pick a dialect from the list"), session: visit.session)
            }
            options.dialect = dialect
        }
        let bytes = Array(payload.utf8)
        let report: PreflightReport
        var picture: AttachmentPicture?
        if fetch {
            guard visit.canWrite else {
                throw Problem(
                    .forbidden, .forbidden, "downloading the attachments needs a key with the write scope")
            }
            let budget: PreflightSession.FetchBudget
            do throws(PushPrepError) {
                budget = try PreflightSession.FetchBudget.requested(
                    maxURLs: try Self.wholeNumber(form.maxURLs, "fetch_max_urls"),
                    maxBytes: try Self.wholeNumber(form.maxBytes, "fetch_max_bytes"), within: ceiling)
            } catch {
                throw Problem(error)
            }
            (report, picture) = try await PayloadRoutes.fetchingCheck(
                bytes, options: options, budget: budget, configuration: configuration,
                picturing: PreflightPictures(payloads: 1, maxPixels: ProcessingSettings().maxPixels), logger: logger)
            view.fetched = true
        } else {
            report = Preflight.check(bytes, file: "payload", options: options)
        }
        view.report = ConsolePreflightView.Report(report)
        // What the preview says of an attachment it has not downloaded: the form's own option,
        // never the CLI's flag.
        let notDownloaded =
            visit.canWrite
            ? "Not downloaded: tick \u{201C}Download the attachments\u{201D} and check again to see it"
            : "Not downloaded: downloading the attachments needs a key with the write scope"
        view.previewHTML =
            NotificationPreview(
                preflight: report, payload: bytes, options: options, picture: picture,
                notDownloadedNote: notDownloaded
            ).html
        return html("preflight", page(visit, title: "Pre-flight", view))
    }

    /// A form's field as a whole number; nil when empty or absent, `invalid_settings` (422)
    /// for anything else, naming the field as the API names it.
    static func wholeNumber(_ value: String?, _ name: String) throws(PushPrepError) -> Int? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        guard let number = Int(text) else {
            throw PushPrepError(.invalidSettings, "\(name) must be a whole number, got \(UntrustedText.escaped(text))")
        }
        return number
    }
}

/// The pre-flight form's fields.
struct ConsolePreflightForm: Decodable {
    /// The payload; `auto` or a ``PushDialect``'s raw value; any text but empty to download the
    /// attachments, within the two limits.
    var payload, dialect, fetch, maxURLs, maxBytes: String?

    enum CodingKeys: String, CodingKey {
        case payload, dialect, fetch
        case maxURLs = "fetch_max_urls"
        case maxBytes = "fetch_max_bytes"
    }
}

/// What the pre-flight page's template reads.
struct ConsolePreflightView {
    /// The download's part of the form, for a session that may download (the ticked box and
    /// the limits as sent, the server's bounds).
    struct FetchForm {
        var checked: Bool
        var maxURLs, maxBytes, minBytes: Int
        var urls, bytes: String
    }

    /// The check's findings.
    struct Report {
        /// A finding: its code, severity, where, what, and what to do.
        struct Finding {
            var code, severity, pointer, message, advice: String
        }

        var errors, warnings: Int
        var summary: String
        var findings: [Finding]

        /// The findings of `report`, counted and summed up in a line.
        init(_ report: PreflightReport) {
            errors = report.count(.error)
            warnings = report.count(.warning)
            summary = "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
            if let bytes = report.bytes, let limit = report.limit { summary += "; \(bytes) of \(limit) bytes" }
            if let dialect = report.dialect { summary += "; read as \(dialect.displayName)" }
            findings = report.outcome.map { finding in
                Finding(
                    code: finding.code.rawValue, severity: finding.severity.rawValue,
                    pointer: finding.pointer.isEmpty ? "(the payload)" : finding.pointer, message: finding.message,
                    advice: ConsoleAdvice.text(for: finding.code))
            }
        }
    }

    var dialects: [ConsoleOption]
    var fetchForm: FetchForm?
    /// The payload sent, shown back, and ``NotificationPreview``'s HTML of it.
    var payload, previewHTML: String?
    var report: Report?
    var fetched: Bool?
}
