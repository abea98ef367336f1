package import PushPrepPayload

/// A checked payload as the pre-flight pages show it: the notification preview, and beside it
/// the findings grouped by the part of the notification their JSON Pointer names (the title,
/// the body, the attachment, or the payload as a whole). `preflight --report` puts one per
/// payload in its page; the console's pre-flight page can use the same fragment.
package struct PreflightView: Sendable {
    /// The part of the notification a finding is about.
    package enum Part: String, Sendable, CaseIterable {
        case title
        case body
        case attachment
        case payload

        /// The heading of the part's findings.
        var heading: String {
            switch self {
            case .title: "Title"
            case .body: "Body and alert"
            case .attachment: "Attachment"
            case .payload: "Whole payload"
            }
        }
    }

    package var report: PreflightReport
    package var preview: NotificationPreview
    private var presentation: PreflightPresentation?

    /// The view of `report`, the check of `payload` with `options` (after `--fix`, the corrected
    /// payload); `imageSource` loads the attachment's picture when the caller has one, and
    /// `picture` holds the ones `--fetch` made (else the preview says why there is none, with
    /// `pictureNote` when given).
    package init(
        report: PreflightReport, payload: [UInt8], options: PreflightOptions = PreflightOptions(),
        imageSource: String? = nil, picture: AttachmentPicture? = nil, pictureNote: String? = nil,
        appName: String = NotificationPreview.defaultAppName
    ) {
        self.report = report
        var options = options
        options.dialect = report.dialect ?? options.dialect
        presentation = Preflight.presentation(of: payload, options: options)
        preview = NotificationPreview(
            preflight: report, payload: payload, options: options, imageSource: imageSource, picture: picture,
            pictureNote: pictureNote, appName: appName)
    }

    /// The part of the notification `pointer` names.
    package func part(of pointer: String) -> Part {
        Self.part(of: pointer, in: presentation)
    }

    /// The part `pointer` names in a payload presented as `presentation`: the title's or the
    /// body's key (or below it), the alert (the body's group), an attachment's entry, URL or
    /// options, else the payload as a whole.
    package static func part(of pointer: String, in presentation: PreflightPresentation?) -> Part {
        func within(_ root: String?) -> Bool {
            guard let root, !root.isEmpty else { return false }
            return pointer == root || pointer.hasPrefix(root + "/")
        }
        guard let presentation else { return .payload }
        if within(presentation.titlePointer) { return .title }
        if within(presentation.bodyPointer) || within(presentation.alertPointer) { return .body }
        for attachment in presentation.attachments {
            var roots = [attachment.pointer, attachment.optionsPointer]
            // An entry that holds the URL under "url" (PushPrep's attachments[i], Airship's
            // media_attachment): the entry is the attachment.
            let components = attachment.pointer.split(separator: "/", omittingEmptySubsequences: false)
            if let index = components.lastIndex(of: "url"), index > 1 {
                roots.append(components[..<index].joined(separator: "/"))
            }
            if roots.contains(where: within) { return .attachment }
        }
        return .payload
    }

    /// The fragment: `<section class="preflight">` with the preview and the findings.
    package var html: String {
        PreflightTemplates.render(PreflightSectionView(self))
    }
}

/// What the pre-flight template reads.
struct PreflightSectionView {
    var file: String
    var dialect: String
    var size: String?
    /// Where `--fix` wrote the corrected payload, which the preview then draws.
    var fixedPayload: String?
    var preview: String
    var clean: Bool
    var totals: String
    var groups: [Group]

    struct Group {
        var part: String
        var heading: String
        var findings: [Finding]
    }

    struct Finding {
        var code: String
        var severity: String
        var pointer: String
        var message: String
        var meaning: String
        var action: String
    }

    init(_ view: PreflightView) {
        let report = view.report
        file = report.file
        dialect = report.dialect?.displayName ?? "not a JSON object"
        size = report.bytes.flatMap { bytes in report.limit.map { "\(bytes) of \($0) bytes" } }
        fixedPayload = report.fixedPayload
        preview = view.preview.html
        let outcome = report.outcome
        clean = outcome.isEmpty
        totals = PreflightSeverity.allCases.map { severity in
            let count = report.count(severity)
            return "\(count) \(severity.rawValue)\(count == 1 ? "" : "s")"
        }.joined(separator: ", ")
        var byPart: [PreflightView.Part: [Finding]] = [:]
        for finding in outcome {
            let words = Explanation(finding.code)
            byPart[view.part(of: finding.pointer), default: []].append(
                Finding(
                    code: finding.code.rawValue, severity: finding.severity.rawValue,
                    pointer: finding.pointer.isEmpty ? "(payload)" : finding.pointer, message: finding.message,
                    meaning: words.meaning, action: words.action))
        }
        groups = PreflightView.Part.allCases.compactMap { part in
            guard let findings = byPart[part], !findings.isEmpty else { return nil }
            return Group(part: part.rawValue, heading: part.heading, findings: findings)
        }
    }
}
