import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrep
@testable import PushPrepReport

/// The report page from manifests made here (no processing): counts, escaping, the policy's
/// hash, and the page's size for a big batch.
@Suite struct BatchReportTests {
    static func image(_ index: Int, source: String, bytes: Int = 40_000) -> ManifestEntry {
        .ok(
            PushPrepCore.Attachment(
                id: "img-\(index)", source: source, kind: .image, file: "img-\(index).jpg", uti: "public.jpeg",
                mime: "image/jpeg", bytes: bytes, sha256: "00", width: 1200, height: 800, frames: 1,
                options: AttachmentOptions(typeHint: "public.jpeg"),
                input: InputInfo(type: "png", bytes: bytes * 5, width: 2400, height: 1600, duration: nil),
                operations: ["resized"], warnings: [AttachmentWarning(message: "a warning with <b>markup</b>")]))
    }

    static func failed(_ source: String, message: String) -> ManifestEntry {
        .failed(Failure(source: source, error: PushPrepError(.unsupportedType, message)))
    }

    @Test func countsBytesAndEscaping() throws {
        let items = [
            BatchReport.Item(entry: Self.image(1, source: "in/a.png"), imageSource: "data:image/jpeg;base64,AA"),
            BatchReport.Item(entry: Self.image(2, source: "in/<b>&.png", bytes: 9_000)),
            BatchReport.Item(
                entry: Self.failed("notes<script>.txt", message: "<img src=x onerror=alert(1)>"), bytesBefore: 17),
        ]
        let html = BatchReport(items: items, seconds: 2.5).html()
        let page = try ParsedHTML.parse(html)
        #expect(page.mismatched.isEmpty && page.unclosed.isEmpty, "\(page.mismatched) \(page.unclosed)")
        #expect(
            !html.contains("<script") && !html.contains("<img src=x") && !html.contains("<b>markup")
                && !html.contains("<b>&"))
        let summary = try page.one("section", attribute: ("id", "summary"))
        #expect(page[summary].attrs["data-count-ok"] == "2" && page[summary].attrs["data-count-failed"] == "1")
        #expect(page[summary].attrs["data-bytes-before"] == "\(200_000 + 45_000 + 17)")
        #expect(page[summary].attrs["data-bytes-after"] == "49000")
        #expect(page[summary].text.contains("2.5 s"))
        let articles = page.select("article", classes: ["input"])
        // The failure first.
        #expect(articles.map { page[$0].attrs["data-source"] } == ["notes<script>.txt", "in/a.png", "in/<b>&.png"])
        #expect(page[articles[0]].text.contains("<img src=x onerror=alert(1)>"))
        #expect(page[articles[1]].text.contains("a warning with <b>markup</b>"))
        // The second image has no picture: a glyph in the box and a placeholder, no <img>.
        #expect(page.select("img", within: articles[2]).isEmpty)
        #expect(page.select("img", within: articles[1]).count == 1)
        let hash = try #require(page[try page.one("style")].hash)
        #expect(BatchReport.styleHash(ReportStyle.css) == hash)
        // The chart: one tick per output.
        let chart = try page.one("svg", attribute: ("id", "size-chart"))
        #expect(page.select("rect", classes: ["chart-tick"], within: chart).count == 2)
    }

    @Test func aBigBatchStaysSmallWithoutPictures() {
        let items = (0..<2000).map { BatchReport.Item(entry: Self.image($0, source: "uploads/photo-\($0).png")) }
        let bytes = BatchReport(items: items, seconds: 60).bytes().count
        // Each input's article is a few kilobytes of HTML; the pictures are bounded apart
        // (ReportThumbnails' budget).
        #expect(bytes < 2000 * 5_000, "\(bytes) bytes")
    }

    @Test func formats() {
        #expect(ReportFormat.bytes(1) == "1 byte" && ReportFormat.bytes(999) == "999 bytes")
        #expect(ReportFormat.bytes(45_300) == "45.3 kB" && ReportFormat.bytes(2_410_000) == "2.41 MB")
        #expect(ReportFormat.bytes(10_000_000) == "10 MB" && ReportFormat.bytes(812_000) == "812 kB")
        #expect(ReportFormat.percent(30_000, of: 10_000_000) == "0.3 %")
        #expect(ReportFormat.percent(5_000_000, of: 10_000_000) == "50 %")
        #expect(ReportFormat.percent(17_000, of: 50_000_000) == "< 0.1 %" && ReportFormat.percent(0, of: 5) == "0 %")
        #expect(ReportFormat.seconds(125) == "2 min 05 s" && ReportFormat.seconds(0.42) == "0.42 s")
        #expect(ReportPageView.change(from: 1000, to: 160) == "−84 %")
    }

    /// A number that rounds up to the next unit is written in that unit (Apple's MB is 10^6).
    @Test func formatsAtUnitBoundaries() {
        #expect(ReportFormat.bytes(999_999) == "1 MB")
        #expect(ReportFormat.bytes(999_600) == "1 MB")
        #expect(ReportFormat.bytes(999_499) == "999 kB")
        #expect(ReportFormat.bytes(999_999_999) == "1 GB")
        #expect(ReportFormat.bytes(99_999) == "100 kB")
        #expect(ReportFormat.seconds(59.999) == "1 min 00 s")
        #expect(ReportFormat.seconds(59.9) == "59.9 s")
        #expect(ReportPageView.change(from: 1000, to: 1120) == "+12 %")
    }

    @Test func chartScaleIsLogarithmicFromOneKilobyteToTheLimit() {
        #expect(SizeChart.position(10, limit: 10_000_000) == SizeChart.plotLeft)
        #expect(SizeChart.position(10_000_000, limit: 10_000_000) == SizeChart.plotRight)
        let middle = SizeChart.position(100_000, limit: 10_000_000)
        #expect(abs(middle - (SizeChart.plotLeft + SizeChart.plotRight) / 2) < 0.001)
        #expect(SizeChart.position(99_000_000, limit: 50_000_000) == SizeChart.plotRight)
    }

    @Test func limitBarIsLinearAndNeverEmptyForAnOutput() {
        #expect(ReportPageView.limitBar(bytes: 5_000_000, limit: 10_000_000, label: "x").contains(#"width="50""#))
        #expect(ReportPageView.limitBar(bytes: 10, limit: 10_000_000, label: "x").contains(#"width="0.6""#))
    }
}

/// The report's thumbnails, made with libvips from files made here.
@Suite(
    .serialized,
    .enabled(if: TestTools.programAvailable("vips") && TestTools.programAvailable("ffmpeg"), "needs vips and ffmpeg"))
final class ReportThumbnailsTests {
    let directory: URL

    init() throws { directory = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(directory) }

    @Test func bannerBoxGivesTheShortSideTwiceTheBox() {
        #expect(ReportThumbnails.bannerBox(width: 1200, height: 800, shortSide: 76) == (114, 76))
        #expect(ReportThumbnails.bannerBox(width: 600, height: 1800, shortSide: 76) == (76, 228))
        #expect(ReportThumbnails.bannerBox(width: 4000, height: 100, shortSide: 76) == (304, 76))
        #expect(ReportThumbnails.bannerBox(width: 60, height: 40, shortSide: 76) == (60, 40))
    }

    private func attachment(_ file: String, frames: Int = 1, time: Double? = nil) -> PushPrepCore.Attachment {
        PushPrepCore.Attachment(
            id: file, source: file, kind: .image, file: file, uti: "public.jpeg", mime: "image/jpeg", bytes: 1,
            sha256: "00", width: 900, height: 600, frames: frames,
            options: AttachmentOptions(typeHint: "public.jpeg", thumbnailTime: time),
            input: InputInfo(type: "jpeg", bytes: 1, width: 900, height: 600, duration: nil), operations: [],
            warnings: [])
    }

    private func manifest(_ attachments: [PushPrepCore.Attachment]) -> Manifest {
        Manifest(settings: ProcessingSettings(), attachments: attachments.map { .ok($0) })
    }

    @Test func picturesFitTheirBoxesAndTheBudgetIsKept() async throws {
        for name in ["a", "b", "c"] {
            try TestTools.vips("gaussnoise", directory.appendingPathComponent("\(name).jpg").path, "900", "600")
        }
        let thumbnails = ReportThumbnails(policy: .init(side: 320, budgetBytes: 1))
        let outcomes = await thumbnails.make(
            for: manifest(["a.jpg", "b.jpg", "c.jpg"].map { attachment($0) }), outputDirectory: directory.path)
        try #require(outcomes.count == 3)
        guard case .pictures(let expanded, let banner) = outcomes[0] else {
            Issue.record("no pictures for the first: \(String(describing: outcomes[0]))")
            return
        }
        #expect(expanded.width == 320 && expanded.height == 213)
        #expect(banner.width == 114 && banner.height == 76)
        #expect(expanded.dataURL.hasPrefix("data:image/jpeg;base64,/9j/"))
        // The budget (1 byte) is spent by the first: the others say so.
        for outcome in outcomes.dropFirst() {
            guard case .note(let note) = outcome else {
                Issue.record("expected a note, got \(String(describing: outcome))")
                continue
            }
            #expect(note.contains("left out"))
        }
        // Two at a time: both of the first pair are made and counted, in order; the third is left out.
        let paired = await thumbnails.make(
            for: manifest(["a.jpg", "b.jpg", "c.jpg"].map { attachment($0) }), outputDirectory: directory.path,
            concurrency: 2)
        #expect(paired[0] == outcomes[0])
        if case .pictures = paired[1] {
        } else {
            Issue.record("the second of the pair: \(String(describing: paired[1]))")
        }
        #expect(paired[2] == outcomes[2])
    }

    /// The report's Android previews drawn from rendition files made here: the photo's big
    /// picture and large icon are small copies of its rendition (2:1), the sound's card and the
    /// photo without a rendition say why they have none, and the web card appears only for a run
    /// made for the web.
    @Test func androidPreviewIsDrawnFromTheRendition() async throws {
        try TestTools.vips("gaussnoise", directory.appendingPathComponent("photo.jpg").path, "900", "600")
        try TestTools.vips("gaussnoise", directory.appendingPathComponent("and-1.jpg").path, "1024", "512")
        var photo = attachment("photo.jpg")
        photo.renditions.android = Rendition(
            id: "and-1", file: "and-1.jpg", mime: "image/jpeg", bytes: 4000, sha256: "00", width: 1024, height: 512,
            crop: CropRectangle(x: 0, y: 75, width: 900, height: 450))
        let bare = attachment("photo.jpg")
        let sound = PushPrepCore.Attachment(
            id: "aud-1", source: "tone.m4a", kind: .audio, file: "aud-1.m4a", uti: "public.mpeg-4-audio",
            mime: "audio/mp4", bytes: 1, sha256: "00", duration: 2,
            options: AttachmentOptions(typeHint: "public.mpeg-4-audio"),
            input: InputInfo(type: "wav", bytes: 1, width: nil, height: nil, duration: 2), operations: [], warnings: [])
        var made = manifest([photo, bare, sound])
        made.settings.platforms = PlatformSet([.ios])
        let outcomes = await ReportThumbnails(policy: .init(side: 320, budgetBytes: 10_000_000)).make(
            for: made, outputDirectory: directory.path, renditions: true)
        try #require(outcomes.count == 3)
        guard case .pictures(let expanded, let banner) = outcomes[0].renditions[.android] else {
            Issue.record("no Android pictures: \(outcomes[0])")
            return
        }
        #expect(expanded.width == 320 && expanded.height == 160 && banner.width == 152 && banner.height == 76)
        #expect(outcomes[1].renditions.isEmpty && outcomes[2].renditions.isEmpty)
        let items = [
            BatchReport.Item(
                entry: .ok(photo),
                renditionPictures: [
                    .android: PlatformPreview.Picture(
                        source: expanded.dataURL, width: expanded.width, height: expanded.height,
                        thumbnailSource: banner.dataURL)
                ]),
            BatchReport.Item(entry: .ok(bare)),
            BatchReport.Item(entry: .ok(sound)),
        ]
        for platforms in [PlatformSet([.ios]), PlatformSet([.ios, .android, .web])] {
            let page = try ParsedHTML.parse(BatchReport(items: items, seconds: 1, platforms: platforms).html())
            #expect(page.mismatched.isEmpty && page.unclosed.isEmpty, "\(page.mismatched) \(page.unclosed)")
            let articles = page.select("article", classes: ["input"])
            try #require(articles.count == 3)
            let cards = articles.map { try? page.one("div", classes: ["android-notification"], within: $0) }
            try #require(cards.allSatisfy { $0 != nil })
            let android = cards.map { $0! }
            #expect(android.map { page[$0].attrs["data-has-picture"] } == ["true", "false", "false"])
            let big = try page.one("img", classes: ["android-big-picture"], within: android[0])
            #expect(page[big].attrs["src"] == expanded.dataURL)
            #expect(page[big].attrs["width"] == "320" && page[big].attrs["height"] == "160")
            let icon = try page.one("img", classes: ["android-large-icon"], within: android[0])
            #expect(page[icon].attrs["src"] == banner.dataURL)
            #expect(page[android[0]].text.contains("JPEG 1024×512, 4 kB of FCM's 1.05 MB cap"))
            #expect(page[android[0]].text.contains("cropped from 900×450 at 0,75"))
            #expect(page.select("img", within: android[1]).isEmpty && page.select("img", within: android[2]).isEmpty)
            let soundNote = try page.one("p", classes: ["platform-no-picture"], within: android[2])
            #expect(page[soundNote].text.contains("a sound has no Android rendition"))
            let bareNote = try page.one("p", classes: ["platform-no-picture"], within: android[1])
            if platforms.contains(.android) {
                #expect(page[bareNote].text.contains("no android rendition could be made"))
                #expect(page.select("div", classes: ["web-notification"]).count == 3)
            } else {
                #expect(page[bareNote].text.contains("this run was not made for android (--platforms ios)"))
                #expect(page.select("div", classes: ["web-notification"]).isEmpty)
            }
        }
    }

    @Test func animationTakesItsThumbnailTimeFrame() async throws {
        let gif = directory.appendingPathComponent("anim.gif").path
        try TestTools.ffmpeg("-f", "lavfi", "-i", "testsrc=size=320x240:rate=2", "-frames:v", "8", gif)
        let thumbnails = ReportThumbnails(policy: .init(side: 160, budgetBytes: 10_000_000))
        // 1e300 and infinity (a hand-edited manifest) must not trap the conversion to a frame.
        let times: [Double?] = [nil, 5, 7, 99, 1e300, .infinity]
        let outcomes = await thumbnails.make(
            for: manifest(times.map { attachment("anim.gif", frames: 8, time: $0) }), outputDirectory: directory.path)
        let urls = outcomes.map { outcome -> String? in
            if case .pictures(_, let banner) = outcome { return banner.dataURL }
            return nil
        }
        try #require(urls.allSatisfy { $0 != nil }, "\(outcomes)")
        #expect(urls[0] != urls[1], "frame 5 is not frame 0")
        #expect(urls[2] == urls[3], "a time past the last frame takes the last frame")
        #expect(urls[4] == urls[3], "a huge time takes the last frame")
        #expect(urls[5] == urls[0], "a time that is no number takes the first")
    }
}
