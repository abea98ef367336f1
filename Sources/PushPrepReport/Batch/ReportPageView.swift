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
        /// The chart's key: which mark is which input.
        var key: [KeyEntry]
        var hasKey: Bool
        /// What the previews show as title and body, for the line that says they stand in.
        var sampleTitle: String
        var sampleBody: String
    }

    /// A line of the chart's key: the mark's number, the input, its kind and size.
    struct KeyEntry {
        var number: Int
        var anchor: String
        var source: String
        var text: String
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
        /// The previews' HTML: iOS's and the other platforms' (``PlatformPreview/row(ios:others:)``);
        /// nil for a failed input, which sends no notification.
        var preview: String?
        var sizes: Sizes?
        var failure: Problem?
        var warnings: [Problem]
        var hasWarnings: Bool
        var operations: [String]
        var hasOperations: Bool
    }

    /// The sizes table: the input's and the output's measures, side by side.
    struct Sizes {
        var before: Measures
        var after: Measures
        var change: String
        var extra: String?
        /// The bar against Apple's limit, an inline SVG.
        var limitBar: String
        var limitText: String
    }

    /// A column of the sizes table: a file's type, dimensions and bytes, as texts.
    struct Measures {
        var type: String
        var dimensions: String
        var bytes: String

        /// The measures of a file of `type`, `width` by `height` pixels (either unknown is `–`
        /// for both), of `bytes` bytes.
        init(type: String, width: Int?, height: Int?, bytes: Int) {
            self.type = type
            dimensions = ReportFormat.dimensions(width, height) ?? "–"
            self.bytes = ReportFormat.bytes(bytes)
        }
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
        // The failed inputs first (what needs a person's attention), each part in the run's order.
        let ordered = report.items.filter { $0.entry.failure != nil } + report.items.filter { $0.entry.failure == nil }
        articles = ordered.enumerated().map { index, item in
            Self.article(item, index: index, report: report)
        }
        let ok = ordered.compactMap(\.entry.attachment)
        var marks: [SizeChart.Mark] = []
        for (index, item) in ordered.enumerated() {
            guard let attachment = item.entry.attachment else { continue }
            marks.append(
                SizeChart.Mark(
                    number: index + 1, source: attachment.source, kind: attachment.kind, bytes: attachment.bytes))
        }
        let before = articles.map(\.bytesBefore).reduce(0, +)
        let after = ok.map(\.bytes).reduce(0, +)
        let okBefore = ok.map(\.input.bytes).reduce(0, +)
        let failed = ordered.count - ok.count
        summary = Summary(
            countOK: ok.count, countFailed: failed, bytesBefore: before, bytesAfter: after,
            bytesBeforeText: ReportFormat.bytes(before), bytesAfterText: ReportFormat.bytes(after),
            change: okBefore > 0 ? Self.change(from: okBefore, to: after) : nil,
            kinds: Self.kinds(ok.map(\.kind), failed: failed),
            time: ReportFormat.seconds(report.seconds), total: ordered.count, chart: SizeChart.svg(marks),
            key: marks.map { mark in
                KeyEntry(
                    number: mark.number, anchor: "input-\(mark.number)", source: mark.source,
                    text: "\(SizeChart.noun(mark.kind, 1)), \(ReportFormat.bytes(mark.bytes))")
            }, hasKey: !marks.isEmpty, sampleTitle: report.sampleTitle, sampleBody: report.sampleBody)
    }

    /// What the inputs came to, after their count in the summary: each kind made, then the
    /// failures (`5 images, 1 movie, 1 sound, 2 failed`), so the parts add up to the count.
    static func kinds(_ kinds: [MediaKind], failed: Int) -> String {
        var parts = MediaKind.allCases.compactMap { kind -> String? in
            let count = kinds.filter { $0 == kind }.count
            return count > 0 ? "\(count) \(SizeChart.noun(kind, count))" : nil
        }
        if failed > 0 { parts.append("\(failed) failed") }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }

    /// `−84 %` (smaller) or `+12 %` (larger).
    static func change(from before: Int, to after: Int) -> String {
        guard before > 0 else { return "–" }
        let share = (Double(after) - Double(before)) / Double(before) * 100
        let rounded = Int(share.rounded())
        return rounded == 0 ? "±0 %" : rounded < 0 ? "−\(-rounded) %" : "+\(rounded) %"
    }

    private static func article(_ item: BatchReport.Item, index: Int, report: BatchReport) -> Article {
        let (app, title, body) = (report.appName, report.sampleTitle, report.sampleBody)
        switch item.entry {
        case .ok(let attachment):
            var preview = NotificationPreview(
                attachment: attachment, imageSource: item.imageSource, thumbnailSource: item.thumbnailSource,
                appName: app, title: title, body: body)
            if preview.picture == nil, let note = item.imageNote, attachment.kind != .audio {
                preview.placeholder = note
            }
            let others = PlatformPreview.previews(
                of: attachment, platforms: report.platforms, pictures: item.renditionPictures,
                notes: item.renditionNotes, appName: app, title: title, body: body)
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
            return Article(
                anchor: "input-\(index + 1)", source: failure.source, status: "failed", statusText: "Failed",
                kind: nil, code: failure.error.code.rawValue, bytesBefore: item.bytesBefore ?? 0, bytesAfter: 0,
                preview: nil, sizes: nil,
                failure: Problem(
                    code: failure.error.code.rawValue, message: failure.error.message, meaning: words.meaning,
                    action: words.action),
                warnings: [], hasWarnings: false, operations: [], hasOperations: false)
        }
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
            before: Measures(type: input.type, width: input.width, height: input.height, bytes: input.bytes),
            after: Measures(
                type: typeName(attachment).lowercased(), width: attachment.width, height: attachment.height,
                bytes: attachment.bytes),
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
    init(warning: AttachmentWarning) {
        guard let code = warning.code else {
            self.init(code: nil, message: warning.message, meaning: nil, action: nil)
            return
        }
        let words = Explanation(code)
        self.init(code: code.rawValue, message: warning.message, meaning: words.meaning, action: words.action)
    }
}
