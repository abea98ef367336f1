import Foundation
import PushPrepCore
import PushPrepPayload
import Testing

@testable import PushPrepReport

/// What issue 28 asked of the pages: the batch report's failed inputs first and counted, no
/// notification for them, a keyed size chart; the pre-flight page's findings in order, a
/// finding of several attachments shown once, and no explanation that repeats its message; the
/// notification as iOS 17/18 draws it.
@Suite struct ReportLayoutTests {
    private static func report(_ entries: [ManifestEntry]) -> BatchReport {
        BatchReport(items: entries.map { BatchReport.Item(entry: $0) }, seconds: 1)
    }

    private static func movie(_ source: String) -> ManifestEntry {
        .ok(
            PushPrepCore.Attachment(
                id: "vid-1", source: source, kind: .video, file: "vid-1.mp4", uti: "public.mpeg-4",
                mime: "video/mp4", bytes: 900_000, sha256: "00", width: 640, height: 360, duration: 2,
                options: AttachmentOptions(typeHint: "public.mpeg-4"),
                input: InputInfo(type: "mov", bytes: 4_000_000, width: 640, height: 360, duration: 2),
                operations: [], warnings: []))
    }

    private static func sound(_ source: String) -> ManifestEntry {
        .ok(
            PushPrepCore.Attachment(
                id: "snd-1", source: source, kind: .audio, file: "snd-1.m4a", uti: "public.mpeg-4-audio",
                mime: "audio/mp4", bytes: 50_000, sha256: "00", duration: 3,
                options: AttachmentOptions(typeHint: "public.mpeg-4-audio"),
                input: InputInfo(type: "wav", bytes: 500_000, width: nil, height: nil, duration: 3),
                operations: [], warnings: []))
    }

    /// 9 inputs as the issue saw them: 5 images, a movie, a sound and 2 failures among them.
    private static let nine: [ManifestEntry] = [
        BatchReportTests.image(1, source: "in/1.png"),
        BatchReportTests.failed("in/broken.jpg", message: "cannot decode"),
        BatchReportTests.image(2, source: "in/2.png"),
        movie("in/clip.mov"),
        BatchReportTests.image(3, source: "in/3.png"),
        sound("in/tone.wav"),
        BatchReportTests.failed("in/notes.txt", message: "not a picture"),
        BatchReportTests.image(4, source: "in/4.png"),
        BatchReportTests.image(5, source: "in/5.png"),
    ]

    @Test func failedInputsComeFirstAndAreCountedInTheSummaryLine() throws {
        let page = try ParsedHTML.parse(Self.report(Self.nine).html())
        let articles = page.select("article", classes: ["input"])
        #expect(
            articles.map { page[$0].attrs["data-source"] ?? "" } == [
                "in/broken.jpg", "in/notes.txt", "in/1.png", "in/2.png", "in/clip.mov", "in/3.png", "in/tone.wav",
                "in/4.png", "in/5.png",
            ])
        #expect(articles.map { page[$0].attrs["id"] ?? "" } == (1...9).map { "input-\($0)" })
        let summary = try page.one("section", attribute: ("id", "summary"))
        let lines = page.select("li", within: summary).map { page[$0].text }
        #expect(lines.contains("9 inputs: 5 images, 1 movie, 1 sound, 2 failed"), "\(lines)")
    }

    @Test func aFailedInputHasNoNotification() throws {
        let page = try ParsedHTML.parse(Self.report(Self.nine).html())
        for article in page.select("article", classes: ["input"]) {
            let previews = page.select("div", classes: ["notification"], within: article)
            let failed = page[article].attrs["data-status"] == "failed"
            #expect(previews.count == (failed ? 0 : 1), "\(page[article].attrs["data-source"] ?? "")")
        }
        // The stand-in title and body, said to be stand-ins; not the file's name.
        let title = try #require(page.select(classes: ["banner-title"]).first)
        #expect(page[title].text == BatchReport.defaultSampleTitle)
        #expect(!page.select(classes: ["banner-title"]).contains { page[$0].text.contains(".png") })
        #expect(page.nodes.contains { $0.tag == "p" && $0.text.contains("stand in for yours") })
    }

    @Test func everyChartMarkIsKeyedToItsInput() throws {
        let page = try ParsedHTML.parse(Self.report(Self.nine).html())
        let chart = try page.one("svg", attribute: ("id", "size-chart"))
        let marks = page.select("rect", classes: ["chart-tick"], within: chart)
        #expect(marks.count == 7)
        let key = page.select("li", classes: ["chart-key-entry"])
        // The key lists the marks in the page's order (the chart's lanes go by kind).
        #expect(key.map { page[$0].attrs["data-key"] ?? "" } == (3...9).map(String.init))
        #expect(Set(marks.map { page[$0].attrs["data-key"] ?? "" }) == Set((3...9).map(String.init)))
        let articles = page.select("article", classes: ["input"])
        for mark in marks {
            let number = try #require(page[mark].attrs["data-key"])
            let entry = try #require(key.first { page[$0].attrs["data-key"] == number })
            let source = try #require(page[entry].attrs["data-source"])
            // The hover title names the input, and the number is its article's.
            let title = try page.one("title", within: mark)
            #expect(page[title].text.hasPrefix("\(number). \(source): "))
            let article = try #require(articles.first { page[$0].attrs["id"] == "input-\(number)" })
            #expect(page[article].attrs["data-source"] == source)
        }
        // The smallest label (11 units) is at least 11 px on a 390 px phone, whose summary box
        // is 342 px wide.
        #expect(SizeChart.width <= 342)
    }

    /// Seven `http://` attachments give one row with seven places; no row's explanation says its
    /// message again (the code's summary is the code's title).
    @Test func preflightPageGroupsAFindingOfSeveralAttachments() throws {
        let entries = (0..<7).map { #"{"id":"a\#($0)","url":"http://cdn.example.com/push/p\#($0).jpg"}"# }
        let payload = Array(
            (#"{"aps":{"alert":{"title":"T","body":"B"}},"attachments":["# + entries.joined(separator: ",") + "]}")
                .utf8)
        let report = Preflight.check(payload, file: "p.json", options: PreflightOptions())
        let page = try ParsedHTML.parse(
            PreflightReportPage(views: [PreflightView(report: report, payload: payload)]).html())
        #expect(page.mismatched.isEmpty && page.unclosed.isEmpty, "\(page.mismatched) \(page.unclosed)")
        let rows = page.select("li", classes: ["finding"])
        let insecure = rows.filter { page[$0].attrs["data-code"] == "insecure_url" }
        #expect(insecure.count == 1)
        let row = try #require(insecure.first)
        #expect(page[row].attrs["data-count"] == "7")
        let places = page.select("li", classes: ["finding-place"], within: row)
        #expect(places.map { page[$0].attrs["data-pointer"] ?? "" } == (0..<7).map { "/attachments/\($0)/url" })
        for row in rows {
            #expect(page.select(classes: ["meaning"], within: row).isEmpty)
            let code = try page.one("code", classes: ["problem-code"], within: row)
            let meaning = Explanation(try #require(PreflightCode(rawValue: page[row].attrs["data-code"] ?? "")))
                .meaning
            #expect(page[code].attrs["title"] == meaning)
            #expect(!page[row].text.contains(meaning))
        }
        // Errors, then warnings, then infos, down each part of the page (the attachment's
        // findings, the whole payload's): seven attachments also bring attachments_beyond_first.
        let parts = page.select("div", classes: ["findings-part"])
        #expect(parts.count == 2)
        for part in parts {
            let order = page.select("li", classes: ["finding"], within: part).map {
                page[$0].attrs["data-severity"] ?? ""
            }
            let ranks = order.map { ["error": 0, "warning": 1, "info": 2][$0] ?? 3 }
            #expect(ranks == ranks.sorted(), "\(order)")
        }
        #expect(rows.contains { page[$0].attrs["data-code"] == "attachments_beyond_first" })
    }

    /// iOS 17/18: the icon at the left, no app-name line, the app's name as the heading only
    /// when there is no title; the expanded card holds the media first and the text below.
    @Test func theNotificationIsDrawnAsIOS17() throws {
        let entry = BatchReportTests.image(1, source: "in/a.png")
        let attachment = try #require(entry.attachment)
        let titled = NotificationPreview(
            attachment: attachment, imageSource: "data:image/jpeg;base64,AA", appName: "Shop", title: "Sale",
            body: "Today only"
        ).html
        #expect(!titled.contains("banner-app") && !titled.contains(">Shop<"))
        let page = try ParsedHTML.parse(titled)
        let banner = try page.one("div", classes: ["banner"])
        let children = page.nodes.indices.filter { page[$0].parent == banner }
        #expect(children.map { page[$0].classes.first ?? "" } == ["banner-icon", "banner-text", "banner-thumb"])
        #expect(page[children[0]].attrs["aria-label"] == "Shop")
        #expect(page[try page.one(classes: ["banner-title"])].text == "Sale")
        let expanded = try page.one("div", classes: ["expanded"])
        let parts = page.nodes.indices.filter { page[$0].parent == expanded }.map { page[$0].classes }
        #expect(parts.first?.contains("expanded-media") == true && parts.last?.contains("expanded-text") == true)
        #expect(page[try page.one(classes: ["expanded-title"])].text == "Sale")

        let untitled = try ParsedHTML.parse(
            NotificationPreview(attachment: attachment, imageSource: nil, appName: "Shop", body: "Hi").html)
        #expect(untitled[try untitled.one(classes: ["banner-title"])].text == "Shop")
    }
}
