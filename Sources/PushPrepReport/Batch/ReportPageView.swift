import Foundation
import PushPrepCore

/// What the report's template reads (stored properties only: swift-mustache reads through
/// `Mirror`); texts raw, the template escapes them, HTML fragments built and escaped in Swift.
struct ReportPageView {
    var generated: String
    var summary: Summary
    var articles: [Article]

    struct Summary {
        var countOK: Int
        var countFailed: Int
        var bytesBefore: Int
        var bytesAfter: Int
        var bytesBeforeText: String
        var bytesAfterText: String
        var change: String?
        var kinds: String
        var time: String
        var total: Int
        /// The inline `<svg id="size-chart">`.
        var chart: String
    }

    struct Article {
        var anchor: String
        var source: String
        var status: String
        var statusText: String
        var kind: String?
        var code: String?
        var bytesBefore: Int
        var bytesAfter: Int
        /// The previews' HTML: iOS's and the other platforms' (``PlatformPreview/row(ios:others:)``).
        var preview: String
        var sizes: Sizes?
        var failure: Problem?
        var warnings: [Problem]
        var hasWarnings: Bool
        var operations: [String]
        var hasOperations: Bool
    }

    struct Sizes {
        var beforeType: String
        var afterType: String
        var beforeDimensions: String
        var afterDimensions: String
        var beforeBytes: String
        var afterBytes: String
        var change: String
        var extra: String?
        /// The bar against Apple's limit, an inline SVG.
        var limitBar: String
        var limitText: String
    }

    struct Problem {
        var code: String?
        var message: String
        var meaning: String?
        var action: String?
    }

    init(_ report: BatchReport) {
        let formatter = ISO8601DateFormatter()
        generated = formatter.string(from: report.finished)
        articles = report.items.enumerated().map { index, item in
            Self.article(item, index: index, app: report.appName, platforms: report.platforms)
        }
        let ok = report.items.compactMap(\.entry.attachment)
        var sizes: [MediaKind: [Int]] = [:]
        for attachment in ok { sizes[attachment.kind, default: []].append(attachment.bytes) }
        let before = articles.map(\.bytesBefore).reduce(0, +)
        let after = ok.map(\.bytes).reduce(0, +)
        let okBefore = ok.map(\.input.bytes).reduce(0, +)
        let kinds = MediaKind.allCases.compactMap { kind -> String? in
            guard let count = sizes[kind]?.count, count > 0 else { return nil }
            return "\(count) \(SizeChart.noun(kind, count))"
        }
        summary = Summary(
            countOK: ok.count, countFailed: report.items.count - ok.count, bytesBefore: before, bytesAfter: after,
            bytesBeforeText: ReportFormat.bytes(before), bytesAfterText: ReportFormat.bytes(after),
            change: okBefore > 0 ? Self.change(from: okBefore, to: after) : nil,
            kinds: kinds.isEmpty ? "none ready" : kinds.joined(separator: ", "),
            time: ReportFormat.seconds(report.seconds), total: report.items.count, chart: SizeChart.svg(sizes))
    }

    /// `−84 %` (smaller) or `+12 %` (larger).
    static func change(from before: Int, to after: Int) -> String {
        guard before > 0 else { return "–" }
        let share = (Double(after) - Double(before)) / Double(before) * 100
        let rounded = Int(share.rounded())
        return rounded == 0 ? "±0 %" : rounded < 0 ? "−\(-rounded) %" : "+\(rounded) %"
    }

    private static func article(
        _ item: BatchReport.Item, index: Int, app: String, platforms: PlatformSet?
    ) -> Article {
        let name = ReportFormat.name(of: item.entry.source)
        switch item.entry {
        case .ok(let attachment):
            var preview = NotificationPreview(
                attachment: attachment, imageSource: item.imageSource, thumbnailSource: item.thumbnailSource,
                appName: app, title: name,
                body: describe(attachment))
            if preview.picture == nil, let note = item.imageNote, attachment.kind != .audio {
                preview.placeholder = note
            }
            let others = PlatformPreview.previews(
                of: attachment, platforms: platforms, pictures: item.renditionPictures, notes: item.renditionNotes,
                appName: app, title: name, body: describe(attachment))
            let warnings = attachment.warnings.map(Problem.init(warning:))
            return Article(
                anchor: "input-\(index + 1)", source: attachment.source, status: "ok", statusText: "Ready",
                kind: attachment.kind.rawValue, code: nil, bytesBefore: attachment.input.bytes,
                bytesAfter: attachment.bytes, preview: PlatformPreview.row(ios: preview.html, others: others),
                sizes: sizes(attachment), failure: nil,
                warnings: warnings, hasWarnings: !warnings.isEmpty, operations: attachment.operations,
                hasOperations: !attachment.operations.isEmpty)
        case .failed(let failure):
            let words = Explanation(failure.error.code)
            let preview = NotificationPreview(
                appName: app, title: name, body: "Failed: \(failure.error.code.rawValue)",
                placeholder: "Nothing to attach: this input failed")
            return Article(
                anchor: "input-\(index + 1)", source: failure.source, status: "failed", statusText: "Failed",
                kind: nil, code: failure.error.code.rawValue, bytesBefore: item.bytesBefore ?? 0, bytesAfter: 0,
                preview: PlatformPreview.row(ios: preview.html, others: []), sizes: nil,
                failure: Problem(
                    code: failure.error.code.rawValue, message: failure.error.message, meaning: words.meaning,
                    action: words.action),
                warnings: [], hasWarnings: false, operations: [], hasOperations: false)
        }
    }

    /// What the output is, for the notification's body: `JPEG 1179×786, 212 kB`.
    private static func describe(_ attachment: Attachment) -> String {
        var parts = [typeName(attachment)]
        if let dimensions = ReportFormat.dimensions(attachment.width, attachment.height) { parts.append(dimensions) }
        if let duration = attachment.duration { parts.append(NotificationPreview.clock(duration)) }
        return parts.joined(separator: " ") + ", " + ReportFormat.bytes(attachment.bytes)
    }

    /// The output's type from its file name's extension, upper case: `JPEG`, `MP4`, `M4A`.
    private static func typeName(_ attachment: Attachment) -> String {
        let ext = PathName.lowercasedExtension(of: attachment.file)
        return (ext == "jpg" ? "jpeg" : ext).uppercased()
    }

    private static func sizes(_ attachment: Attachment) -> Sizes {
        let limit = AppleLimits.maxBytes(for: attachment.kind)
        let input = attachment.input
        var extra: [String] = []
        if attachment.kind == .image, let frames = attachment.frames, frames > 1 { extra.append("\(frames) frames") }
        if let duration = attachment.duration { extra.append(NotificationPreview.clock(duration) + " long") }
        let share = ReportFormat.percent(attachment.bytes, of: limit)
        let limitText =
            "\(ReportFormat.bytes(attachment.bytes)) is \(share) of Apple's \(ReportFormat.bytes(limit)) limit for "
            + "\(SizeChart.noun(attachment.kind, 2))"
        return Sizes(
            beforeType: input.type, afterType: typeName(attachment).lowercased(),
            beforeDimensions: ReportFormat.dimensions(input.width, input.height) ?? "–",
            afterDimensions: ReportFormat.dimensions(attachment.width, attachment.height) ?? "–",
            beforeBytes: ReportFormat.bytes(input.bytes), afterBytes: ReportFormat.bytes(attachment.bytes),
            change: change(from: input.bytes, to: attachment.bytes),
            extra: extra.isEmpty ? nil : extra.joined(separator: ", "),
            limitBar: limitBar(bytes: attachment.bytes, limit: limit, label: limitText), limitText: limitText)
    }

    /// A bar of `bytes` against `limit`, linear, as an inline SVG (the input's before size is
    /// not drawn: it may be far over the limit, which is why it was processed).
    static func limitBar(bytes: Int, limit: Int, label: String) -> String {
        let share = limit > 0 ? min(1, max(0, Double(bytes) / Double(limit))) : 0
        // At least a sliver, so a small output is still seen to be there.
        let width = bytes > 0 ? max(0.6, share * 100) : 0
        return """
            <svg class="limit-bar" viewBox="0 0 100 6" preserveAspectRatio="none" role="img" \
            aria-label="\(HTML.escape(label))"><rect class="limit-track" width="100" height="6"/>\
            <rect class="limit-used" width="\(ThumbnailCrop.number(width))" height="6"/></svg>
            """
    }
}

extension ReportPageView.Problem {
    /// A manifest's warning, with its code and words when it is a kind this version writes; a
    /// text it does not know (an older PushPrep's) as it is, without them.
    init(warning: String) {
        guard let code = ProcessingWarning.Code(message: warning) else {
            self.init(code: nil, message: warning, meaning: nil, action: nil)
            return
        }
        let words = Explanation(code)
        self.init(code: code.rawValue, message: warning, meaning: words.meaning, action: words.action)
    }
}
