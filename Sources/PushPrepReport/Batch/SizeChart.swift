import Foundation
import PushPrepCore

/// The summary's chart: one lane per kind of output, each output a mark at its size on a log
/// scale from 1 kB to Apple's limit for the kind, the limit drawn as a line at the right end.
/// A strip per kind stays the same height for ten inputs or ten thousand. Each mark carries its
/// input's number (the article's, `#input-N`) and name in a `<title>` (what a pointer hovering
/// it shows), and the page lists the same numbers under the chart (``ReportPageView/KeyEntry``).
/// Drawn with SVG attributes and the stylesheet's classes only (no inline style: the CSP
/// refuses it).
///
/// The drawing is ``width`` units wide and the page scales it to its box, at most
/// ``ReportStyle``'s `max-width`; on a 390 px phone the box is about 342 px (the page's and the
/// summary's paddings), so a unit is drawn at least 342 / 340 px and the smallest label (11
/// units, `.chart-scale`) stays at least 11 px.
enum SizeChart {
    static let width = 340
    static let laneHeight = 64
    static let plotLeft = 86.0
    static let plotRight = 326.0
    /// The scale's start: sizes below it sit at the left edge.
    static let floorBytes = 1000.0

    /// One output on the chart: its input's number in the page, its source, kind and size.
    struct Mark {
        var number: Int
        var source: String
        var kind: MediaKind
        var bytes: Int
    }

    /// The `<svg id="size-chart">` for `marks`.
    static func svg(_ marks: [Mark]) -> String {
        let kinds = MediaKind.allCases
        let height = laneHeight * kinds.count + 12
        let summary = kinds.map { kind in
            let list = marks.filter { $0.kind == kind }.map(\.bytes)
            let largest = list.max().map { ", the largest \(ReportFormat.bytes($0))" } ?? ""
            return
                "\(list.count) \(noun(kind, list.count))\(largest) of \(ReportFormat.bytes(AppleLimits.maxBytes(for: kind)))"
        }.joined(separator: "; ")
        var out = """
            <svg id="size-chart" viewBox="0 0 \(width) \(height)" width="\(width)" height="\(height)" \
            role="img" aria-labelledby="size-chart-title size-chart-desc">\
            <title id="size-chart-title">Output sizes against Apple's limits</title>\
            <desc id="size-chart-desc">\(HTML.escape(summary)); the list below the chart names each mark</desc>
            """
        for (lane, kind) in kinds.enumerated() {
            out += self.lane(kind, marks.filter { $0.kind == kind }, top: Double(lane * laneHeight + 12))
        }
        return out + "</svg>"
    }

    private static func lane(_ kind: MediaKind, _ marks: [Mark], top: Double) -> String {
        let limit = AppleLimits.maxBytes(for: kind)
        let middle = top + 22
        var out = "<g class=\"chart-lane chart-\(kind.rawValue)\">"
        out += "<text x=\"0\" y=\"\(n(middle + 4))\">\(title(kind)) (\(marks.count))</text>"
        out += "<rect class=\"chart-track\" x=\"\(n(plotLeft))\" y=\"\(n(top + 8))\" "
        out += "width=\"\(n(plotRight - plotLeft))\" height=\"28\"/>"
        // Decades from 1 kB to the limit, labelled below the track.
        var mark = floorBytes
        while mark < Double(limit) {
            let x = position(mark, limit: limit)
            out +=
                "<line class=\"chart-grid\" x1=\"\(n(x))\" x2=\"\(n(x))\" y1=\"\(n(top + 8))\" y2=\"\(n(top + 36))\"/>"
            out += "<text class=\"chart-scale\" x=\"\(n(x))\" y=\"\(n(top + 50))\" text-anchor=\"middle\">"
            out += "\(ReportFormat.bytes(Int(mark)))</text>"
            mark *= 10
        }
        for mark in marks {
            let x = position(Double(mark.bytes), limit: limit)
            out += "<rect class=\"chart-tick\" data-key=\"\(mark.number)\" x=\"\(n(x - 1.5))\" y=\"\(n(top + 10))\" "
            out += "width=\"3\" height=\"24\"><title>\(mark.number). \(HTML.escape(mark.source)): "
            out += "\(ReportFormat.bytes(mark.bytes))</title></rect>"
        }
        out += "<line class=\"chart-limit\" x1=\"\(n(plotRight))\" x2=\"\(n(plotRight))\" y1=\"\(n(top + 6))\" "
        out += "y2=\"\(n(top + 40))\"/>"
        // Above the track, right-aligned: below it, it would run into the last decade's label.
        out += "<text class=\"chart-scale\" x=\"\(n(plotRight))\" y=\"\(n(top + 2))\" text-anchor=\"end\">"
        out += "limit \(ReportFormat.bytes(limit))</text></g>"
        return out
    }

    /// Where `bytes` sits on the log scale from ``floorBytes`` to `limit`.
    static func position(_ bytes: Double, limit: Int) -> Double {
        let span = log10(Double(limit)) - log10(floorBytes)
        let share = (log10(max(bytes, floorBytes)) - log10(floorBytes)) / span
        return plotLeft + min(1, max(0, share)) * (plotRight - plotLeft)
    }

    private static func n(_ value: Double) -> String { ThumbnailCrop.number(value) }

    private static func title(_ kind: MediaKind) -> String {
        switch kind {
        case .image: "Images"
        case .video: "Movies"
        case .audio: "Sounds"
        }
    }

    static func noun(_ kind: MediaKind, _ count: Int) -> String {
        let one =
            switch kind {
            case .image: "image"
            case .video: "movie"
            case .audio: "sound"
            }
        return count == 1 ? one : one + "s"
    }
}
