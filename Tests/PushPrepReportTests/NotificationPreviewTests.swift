import Foundation
import PushPrepCore
import PushPrepPayload
import Testing

@testable import PushPrepReport

@Suite struct ThumbnailCropTests {
    @Test func landscapeFillsTheHeightAndCentres() throws {
        // 400×200 into a square: the height fills it, the width is twice the side, half a side
        // cut off at the left.
        let crop = try #require(ThumbnailCrop(imageWidth: 400, imageHeight: 200))
        #expect(crop == ThumbnailCrop(width: 200, height: 100, left: -50, top: 0))
    }

    @Test func portraitFillsTheWidthAndCentres() throws {
        let crop = try #require(ThumbnailCrop(imageWidth: 300, imageHeight: 600))
        #expect(crop == ThumbnailCrop(width: 100, height: 200, left: 0, top: -50))
    }

    @Test func squareIsUncropped() throws {
        let crop = try #require(ThumbnailCrop(imageWidth: 512, imageHeight: 512))
        #expect(crop == ThumbnailCrop(width: 100, height: 100, left: 0, top: 0))
    }

    @Test func clippingRectCentreIsShownAtFourTimesTheScale() throws {
        // Apple's example: origin (0.25, 0.25), size (0.5, 0.5) shows the centre.
        let clip = ClippingRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5)
        let crop = try #require(ThumbnailCrop(imageWidth: 1000, imageHeight: 1000, clip: clip))
        #expect(crop == ThumbnailCrop(width: 200, height: 200, left: -50, top: -50))
    }

    @Test func clippingRectInACornerOfALandscapeImage() throws {
        // 800×400; region x 0.5...1, y 0...0.5 → 400×200 pixels at (400, 0). Its height (200)
        // is the side: the image is 400 % × 200 %; the region's centre (600, 100) sits at 50 %.
        let clip = ClippingRect(x: 0.5, y: 0, width: 0.5, height: 0.5)
        let crop = try #require(ThumbnailCrop(imageWidth: 800, imageHeight: 400, clip: clip))
        #expect(crop == ThumbnailCrop(width: 400, height: 200, left: 50 - 300, top: 0))
        #expect(crop.svgAttributes == ("-250", "0", "400", "200"))
    }

    @Test func clippingRectOutsideTheImageIsClampedOrIgnored() throws {
        let overhanging = ClippingRect(x: 0.5, y: 0.5, width: 1, height: 1)
        #expect(overhanging.clamped == ClippingRect(x: 0.5, y: 0.5, width: 0.5, height: 0.5))
        #expect(ClippingRect(x: 2, y: 0, width: 1, height: 1).clamped == nil)
        #expect(ClippingRect(x: 0, y: 0, width: .nan, height: 1).clamped == nil)
        // An unusable rectangle shows the whole image, as the phone does.
        let crop = try #require(
            ThumbnailCrop(imageWidth: 400, imageHeight: 200, clip: ClippingRect(x: 0, y: 0, width: 0, height: 0)))
        #expect(crop == ThumbnailCrop(imageWidth: 400, imageHeight: 200))
    }

    @Test func thirdsRoundToTwoDecimals() throws {
        let crop = try #require(ThumbnailCrop(imageWidth: 300, imageHeight: 100))
        #expect(crop.svgAttributes == ("-100", "0", "300", "100"))
        let odd = try #require(
            ThumbnailCrop(imageWidth: 100, imageHeight: 300, clip: ClippingRect(x: 0, y: 0, width: 1, height: 0.3)))
        // Region 100×90: side 90; image 111.11 % × 333.33 %; centre (50, 45) → 50 − 55.56, 0.
        #expect(odd.svgAttributes == ("-5.56", "0", "111.11", "333.33"))
    }

    @Test func noPixelsNoCrop() {
        #expect(ThumbnailCrop(imageWidth: 0, imageHeight: 10) == nil)
    }
}

@Suite struct NotificationPreviewTests {
    static func attachment(
        kind: MediaKind, width: Int? = 1200, height: Int? = 800, frames: Int? = 1, duration: Double? = nil,
        options: AttachmentOptions = AttachmentOptions(typeHint: "public.jpeg"),
        poster: PushPrepCore.Attachment.Poster? = nil
    ) -> PushPrepCore.Attachment {
        PushPrepCore.Attachment(
            id: "img-1", source: "in/photo.png", kind: kind, file: "img-1.jpg", uti: options.typeHint,
            mime: "image/jpeg", bytes: 1000, sha256: "00", width: width, height: height, duration: duration,
            frames: frames, options: options,
            input: InputInfo(type: "png", bytes: 5000, width: width, height: height, duration: duration),
            operations: [], warnings: [], poster: poster)
    }

    @Test func imageBannerHasAppTitleBodyAndCroppedThumbAtTheRight() throws {
        let preview = NotificationPreview(
            attachment: Self.attachment(kind: .image), imageSource: "data:image/jpeg;base64,AAAA",
            clip: ClippingRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5), appName: "Shop", title: "Sale",
            body: "Today only")
        let html = preview.html
        #expect(html.hasPrefix(#"<div class="notification" data-kind="image">"#))
        #expect(html.contains(#"<span class="banner-icon" role="img" aria-label="Shop"></span>"#))
        #expect(html.contains(#"<span class="banner-title">Sale</span>"#))
        #expect(html.contains(#"<div class="banner-body">Today only</div>"#))
        // The thumb comes after the text inside the banner (the right, in a row).
        let banner = try #require(html.range(of: #"<div class="banner">"#))
        let text = try #require(html.range(of: #"<div class="banner-text">"#))
        let thumb = try #require(html.range(of: #"<div class="banner-thumb""#))
        let expanded = try #require(html.range(of: #"<div class="expanded">"#))
        #expect(banner.lowerBound < text.lowerBound && text.lowerBound < thumb.lowerBound)
        #expect(thumb.lowerBound < expanded.lowerBound)
        // 1200×800, centre half: region 600×400 → side 400; 300 % × 200 %, centre (600, 400).
        #expect(
            html.contains(
                #"<image href="data:image/jpeg;base64,AAAA" x="-100" y="-50" width="300" height="200""#))
        #expect(html.contains(#"<img src="data:image/jpeg;base64,AAAA" width="320" height="213""#))
        #expect(!html.contains("play-badge") && !html.contains("audio-bar"))
        #expect(!html.contains("style="))
    }

    @Test func hiddenThumbnailHasNoBox() {
        let options = AttachmentOptions(typeHint: "public.jpeg", thumbnailHidden: true)
        let html = NotificationPreview(
            attachment: Self.attachment(kind: .image, options: options), imageSource: "x.jpg"
        )
        .html
        #expect(!html.contains("banner-thumb"))
        #expect(html.contains(#"<img src="x.jpg""#))
    }

    @Test func movieShowsItsPosterFrameWithAPlayBadge() {
        let options = AttachmentOptions(typeHint: "public.mpeg-4", thumbnailTime: 1.5)
        let movie = Self.attachment(
            kind: .video, width: 640, height: 360, frames: nil, duration: 62.4, options: options,
            poster: PushPrepCore.Attachment.Poster(file: "vid-1.jpg", width: 640, height: 360))
        let preview = NotificationPreview(attachment: movie, imageSource: "/poster.jpg")
        let html = preview.html
        #expect(preview.picture?.caption == "Poster: the frame at 1.5 s (ThumbnailTime)")
        #expect(html.contains(#"data-kind="video""#))
        #expect(html.contains(#"class="play-badge""#))
        #expect(html.contains("Poster: the frame at 1.5 s (ThumbnailTime) · 1:02"))
        #expect(html.contains(#"<image href="/poster.jpg""#))
    }

    @Test func movieWithoutPosterSaysSo() {
        let movie = Self.attachment(kind: .video, duration: 3, options: AttachmentOptions(typeHint: "public.mpeg-4"))
        let html = NotificationPreview(attachment: movie, imageSource: nil).html
        #expect(html.contains("No poster frame for this movie"))
        #expect(html.contains("play-badge"))
        #expect(html.contains(#"class="thumb-glyph""#))
    }

    @Test func audioHasABarWithTheDuration() {
        let sound = Self.attachment(
            kind: .audio, width: nil, height: nil, frames: nil, duration: 125.6,
            options: AttachmentOptions(typeHint: "public.mpeg-4-audio"))
        let html = NotificationPreview(attachment: sound, imageSource: nil).html
        #expect(html.contains(#"<div class="audio-bar" role="img" aria-label="Sound, 2:06 long">"#))
        #expect(html.contains(#"<span class="audio-duration">2:06</span>"#))
        #expect(!html.contains("<img"))
    }

    @Test func animatedImageNamesItsThumbnailFrame() {
        let options = AttachmentOptions(typeHint: "com.compuserve.gif", thumbnailTime: 3)
        let gif = Self.attachment(kind: .image, frames: 12, options: options)
        let preview = NotificationPreview(attachment: gif, imageSource: "g.jpg")
        #expect(preview.picture?.caption == "Animated, 12 frames; the thumbnail is frame 3 (ThumbnailTime)")
    }

    /// A processed animation's caption names the frame its picture is made of
    /// (``ReportThumbnails`` takes the same page): a time past the end is the last frame, and
    /// 1e300, NaN or a frame count near `Int.max` from a hand-edited manifest do not trap.
    @Test(arguments: [
        (12, 99.0, "11"), (12, 1e300, "11"), (12, .nan, "0"), (12, -.infinity, "0"), (Int.max, 1e300, "1000000000"),
        (Int.max, 2.5, "2"),
    ])
    func animatedImagesCaptionIsClampedToItsFrames(frames: Int, time: Double, frame: String) {
        let options = AttachmentOptions(typeHint: "com.compuserve.gif", thumbnailTime: time)
        let gif = Self.attachment(kind: .image, frames: frames, options: options)
        let preview = NotificationPreview(attachment: gif, imageSource: "g.jpg")
        #expect(
            preview.picture?.caption == "Animated, \(frames) frames; the thumbnail is frame \(frame) (ThumbnailTime)")
    }

    @Test func textIsEscaped() {
        let preview = NotificationPreview(
            appName: "<b>App</b>", title: #""><script>alert(1)</script>"#, body: "a & b", kind: .image,
            picture: .init(source: #"x" onerror="alert(1)"#, width: 10, height: 10))
        let html = preview.html
        #expect(!html.contains("<script>") && !html.contains("<b>"))
        #expect(html.contains("&lt;b&gt;App&lt;/b&gt;"))
        #expect(html.contains("a &amp; b"))
        #expect(html.contains(#"href="x&quot; onerror=&quot;alert(1)""#))
    }

    @Test func clock() {
        #expect(NotificationPreview.clock(0) == "0:00")
        #expect(NotificationPreview.clock(9.4) == "0:09")
        #expect(NotificationPreview.clock(59.6) == "1:00")
        #expect(NotificationPreview.clock(3725) == "62:05")
        #expect(NotificationPreview.clock(.nan) == "0:00")
    }
}

@Suite struct PreflightPreviewTests {
    @Test func apnsAlertAndClippingRectFromThePayload() {
        let payload = Array(
            #"""
            {"aps": {"alert": {"title": "Hi", "body": "There"}, "mutable-content": 1},
             "attachments": [{"id": "a", "url": "https://cdn.example.com/a.jpg",
               "options": {"UNNotificationAttachmentOptionsThumbnailClippingRectKey":
                 {"X": 0.1, "Y": 0.2, "Width": 0.5, "Height": 0.4},
                 "UNNotificationAttachmentOptionsThumbnailTimeKey": 2}}]}
            """#.utf8)
        let report = Preflight.check(payload, file: "p.json", options: PreflightOptions())
        let preview = NotificationPreview(preflight: report, payload: payload)
        #expect(preview.title == "Hi" && preview.body == "There")
        #expect(preview.kind == .image)
        #expect(preview.clip == ClippingRect(x: 0.1, y: 0.2, width: 0.5, height: 0.4))
        #expect(preview.thumbnailTime == 2)
        #expect(preview.placeholder == "Not downloaded: check with --fetch to see the attachment")
        let presentation = Preflight.presentation(of: payload, options: PreflightOptions())
        #expect(presentation?.titlePointer == "/aps/alert/title")
        #expect(presentation?.bodyPointer == "/aps/alert/body")
        #expect(presentation?.attachments.first?.optionsPointer == "/attachments/0/options")
    }

    @Test func fetchedPictureFillsTheBannerAndTheExpandedView() {
        let payload = Array(
            #"""
            {"aps": {"alert": "There", "mutable-content": 1},
             "attachments": [{"id": "a", "url": "https://cdn.example.com/a.jpg"}]}
            """#.utf8)
        let report = Preflight.check(payload, file: "p.json", options: PreflightOptions())
        let picture = AttachmentPicture(
            width: 1200, height: 800, expanded: "data:image/jpeg;base64,RQ==", banner: "data:image/jpeg;base64,Qg==",
            bytes: 2)
        let preview = NotificationPreview(preflight: report, payload: payload, picture: picture)
        #expect(preview.picture?.width == 1200 && preview.picture?.height == 800 && preview.placeholder == nil)
        let html = preview.html
        #expect(html.contains(#"<image href="data:image/jpeg;base64,Qg==""#), "the banner's copy in the box")
        #expect(html.contains(#"<img src="data:image/jpeg;base64,RQ==" width="320" height="213""#), "\(html)")
    }

    /// A fetched animated GIF's preview names the frame its picture was made of: the payload's
    /// `ThumbnailTime` clamped to the frames there are, and a time no `Int` holds as frame 0
    /// (it trapped in the conversion before).
    @Test(arguments: [("1e300", "0"), ("7.9", "2"), ("1.5", "1"), ("-4", "0")])
    func fetchedAnimationsCaptionNamesThePicturedFrame(time: String, frame: String) throws {
        let payload = Array(
            #"""
            {"aps": {"alert": "There", "mutable-content": 1},
             "attachments": [{"id": "a", "url": "https://cdn.example.com/a.gif",
                              "options": {"UNNotificationAttachmentOptionsThumbnailTimeKey": \#(time)}}]}
            """#.utf8)
        var report = Preflight.check(payload, file: "p.json", options: PreflightOptions())
        report.attachments[0].fetched = try JSONDecoder().decode(
            FetchedAttachment.self,
            from: Data(
                #"""
                {"finalURL": "https://cdn.example.com/a.gif", "status": 200, "bytes": 900, "type": "gif",
                 "kind": "image", "width": 40, "height": 30, "frames": 3, "seconds": 0.1, "slowLinkSeconds": 0.2}
                """#.utf8))
        let picture = AttachmentPicture(
            width: 40, height: 30, expanded: "data:image/jpeg;base64,RQ==", banner: "data:image/jpeg;base64,Qg==",
            bytes: 2, frames: 3)
        let preview = NotificationPreview(preflight: report, payload: payload, picture: picture)
        #expect(preview.picture?.caption == "Animated, 3 frames; the thumbnail is frame \(frame) (ThumbnailTime)")
    }

    /// After `--fix` for a provider that carries images only, the payload names the movie's
    /// poster while the report still describes the MP4 downloaded: the preview draws the poster
    /// as the image it is (no play badge), and an animation made a still gets no frame caption.
    @Test(arguments: [("video", "mp4", "null"), ("image", "webp", "20")])
    func fixedPictureIsDrawnAsTheImageItIs(kind: String, type: String, frames: String) throws {
        let payload = Array(
            #"""
            {"message": {"token": "t", "notification": {"title": "There", "image": "https://cdn.example.com/push/poster.jpg"}}}
            """#.utf8)
        var report = Preflight.check(payload, file: "p.json", options: PreflightOptions())
        try #require(report.attachments.count == 1, "\(report)")
        report.attachments[0].fetched = try JSONDecoder().decode(
            FetchedAttachment.self,
            from: Data(
                #"""
                {"finalURL": "https://cdn.example.com/a", "status": 200, "bytes": 900000, "type": "\#(type)",
                 "kind": "\#(kind)", "width": 640, "height": 360, "frames": \#(frames), "seconds": 0.1,
                 "slowLinkSeconds": 0.2}
                """#.utf8))
        let picture = AttachmentPicture(
            width: 640, height: 360, expanded: "data:image/jpeg;base64,RQ==", banner: "data:image/jpeg;base64,Qg==",
            bytes: 2)
        let preview = NotificationPreview(preflight: report, payload: payload, picture: picture)
        #expect(preview.kind == .image)
        #expect(preview.picture?.caption == nil)
        #expect(!preview.html.contains("play-badge"), "\(preview.html)")
    }

    @Test func airshipCropAndOneSignalHeadings() {
        let airship = Array(
            #"""
            {"audience": "all", "notification": {"ios": {"alert": "Body", "title": "Title",
              "media_attachment": {"url": "https://x.example/m.mp4", "options": {"crop": {"x": 0, "y": 0, "width": 0.5,
              "height": 1}, "hidden": true}}}}}
            """#.utf8)
        let report = Preflight.check(airship, file: "a.json", options: PreflightOptions())
        let preview = NotificationPreview(preflight: report, payload: airship)
        #expect(preview.title == "Title" && preview.body == "Body")
        #expect(preview.kind == .video)
        #expect(preview.thumbnailHidden)
        #expect(preview.clip == ClippingRect(x: 0, y: 0, width: 0.5, height: 1))
        #expect(!preview.html.contains("banner-thumb"))

        let oneSignal = Array(
            #"{"app_id": "x", "headings": {"de": "Hallo", "en": "Hello"}, "contents": {"en": "World"}}"#.utf8)
        let signal = NotificationPreview(
            preflight: Preflight.check(oneSignal, file: "o.json", options: PreflightOptions()), payload: oneSignal)
        #expect(signal.title == "Hello" && signal.body == "World")
        #expect(signal.placeholder == "No attachment in this payload")
    }
}

@Suite struct ExplanationTests {
    @Test func everyFailureCodeHasWords() {
        #expect(Set(FailureTopic.allCases.map(\.rawValue)) == Set(PushPrepError.Code.all.map(\.rawValue)))
        #expect(FailureTopic.allCases.count == PushPrepError.Code.all.count)
        for code in PushPrepError.Code.all {
            let words = Explanation(code)
            #expect(!words.meaning.isEmpty && !words.action.isEmpty && !words.meaning.contains("does not describe"))
        }
    }

    @Test func everyPreflightCodeHasWords() {
        let actions = PreflightCode.allCases.map { Explanation($0).action }
        #expect(actions.allSatisfy { !$0.isEmpty })
        #expect(Explanation(.contentTooLarge).meaning == PreflightCode.contentTooLarge.summary)
        #expect(Explanation(.insecureURL).meaning.hasPrefix("http://: App Transport Security"))
    }

    @Test func unknownFailureCodeGetsGenericWords() throws {
        let code = try JSONDecoder().decode(PushPrepError.Code.self, from: Data(#""brand_new""#.utf8))
        #expect(Explanation(code).meaning.contains("brand_new"))
    }
}
