import Foundation
import PushPrepCore
import PushPrepQueue
import PushPrepReport
import Testing

@testable import PushPrepServer

/// The job page's notification preview, built in process from a succeeded job's manifest entry.
struct ConsolePreviewTests {
    static func resource(bytes: Int, source: String, url: String? = nil) -> JobResource {
        let now = Date()
        let record = JobRecord(
            id: 7, state: .succeeded, source: source, payload: "{}", dedupKey: nil, priority: 0, attempt: 1,
            maxAttempts: 3, timeoutSeconds: nil, runAt: now, createdAt: now, updatedAt: now, finishedAt: now,
            leaseOwner: nil, leaseToken: 1, leaseExpiresAt: nil, cancelRequested: false, errorCode: nil,
            errorMessage: nil, result: nil)
        var resource = JobResource(record)
        let options = AttachmentOptions(typeHint: "public.jpeg")
        resource.attachment = .ok(
            PushPrepCore.Attachment(
                id: "img-1", source: source, kind: .image, file: "img-1.jpg", url: url, uti: options.typeHint,
                mime: "image/jpeg", bytes: bytes, sha256: "00", width: 1200, height: 800, duration: nil, frames: 1,
                options: options,
                input: InputInfo(type: "png", bytes: 5_000_000, width: 1200, height: 800, duration: nil),
                operations: [], warnings: [], poster: nil))
        return resource
    }

    /// The note under the preview writes the output's size as the batch report does: decimal kB
    /// and MB (Apple's limits are 10^6 bytes a MB), rounded, not truncated, into the next unit.
    /// The notification's title and body are the batch report's stand-ins, never the file's name
    /// (issue 28: a job has no payload; iOS shows the payload's title and body).
    @Test func sizesUseTheReportsUnits() throws {
        let source = "https://cdn.example.com/shop/photo.png?sig=abc"
        let small = try #require(
            ConsolePreview.html(for: Self.resource(bytes: 212_345, source: source), publicURL: nil))
        #expect(small.contains("Output: image/jpeg, 1200×800, 212 kB."), "\(small)")
        let large = try #require(
            ConsolePreview.html(for: Self.resource(bytes: 999_999, source: source), publicURL: nil))
        #expect(large.contains("Output: image/jpeg, 1200×800, 1 MB."), "\(large)")
        #expect(
            small.contains(#"<span class="banner-title">\#(BatchReport.defaultSampleTitle)</span>"#),
            "titled by the stand-in")
        #expect(!small.contains(#"<span class="banner-title">photo.png</span>"#), "not by the file's name")
    }

    /// Outputs published under `--base-url` on another origin (a CDN) are drawn from there, as
    /// the pages' CSP allows that origin; a URL elsewhere (a presigned bucket URL) is not.
    @Test func picturesFromTheBaseURLsOrigin() throws {
        let cdn = try #require(ImageOrigin(baseURL: "https://CDN.example.com:8443/push/"))
        #expect(cdn.origin == "https://cdn.example.com:8443")
        let published = Self.resource(
            bytes: 1000, source: "a.png", url: "https://cdn.example.com:8443/push/img-1.jpg")
        let drawn = try #require(ConsolePreview.html(for: published, publicURL: nil, pictureOrigin: cdn.origin))
        #expect(drawn.contains(#"src="https://cdn.example.com:8443/push/img-1.jpg""#), "\(drawn)")
        let withoutOrigin = try #require(ConsolePreview.html(for: published, publicURL: nil))
        #expect(!withoutOrigin.contains("cdn.example.com"), "no picture from an origin the CSP refuses")
        let elsewhere = Self.resource(
            bytes: 1000, source: "a.png", url: "https://cdn.example.com.evil.test/push/img-1.jpg")
        let refused = try #require(ConsolePreview.html(for: elsewhere, publicURL: nil, pictureOrigin: cdn.origin))
        #expect(!refused.contains("evil.test"))
        // Only http(s) hosts a CSP header can carry.
        #expect(ImageOrigin(baseURL: "ftp://cdn.example.com/") == nil)
        #expect(ImageOrigin(baseURL: "https://a;b.example/") == nil)
        #expect(ImageOrigin(baseURL: "/relative") == nil)
        #expect(ImageOrigin(baseURL: "http://[::1]:8080/x")?.origin == "http://[::1]:8080")
    }

    /// The outputs' URLs keep `--base-url` as written, while the origin the CSP names is
    /// lowercased: a base with capitals still draws its pictures, and the origin's end still
    /// holds whatever the case (no `@` or longer host after it).
    @Test func picturesFromABaseURLWrittenWithCapitals() throws {
        let base = "https://CDN.Example.com/push"
        let origin = try #require(ImageOrigin(baseURL: base)?.origin)
        let url = URLJoin.join(base, "img-1.jpg")
        let published = Self.resource(bytes: 1000, source: "a.png", url: url)
        let drawn = try #require(ConsolePreview.html(for: published, publicURL: nil, pictureOrigin: origin))
        #expect(drawn.contains(#"src="https://CDN.Example.com/push/img-1.jpg""#), "\(drawn)")
        for hostile in [
            "HTTPS://CDN.Example.com@evil.test/img-1.jpg", "https://cdn.example.com.evil.test/img-1.jpg",
            "https://cdn.example.co/", "https://cdn.example.com", "javascript:https://cdn.example.com/",
        ] {
            #expect(ConsolePreview.fromOrigin(hostile, origin) == nil, "\(hostile)")
        }
    }

    /// The Android preview draws the Android rendition from its own URL (a path of this server
    /// here), never the attachment's; a rendition published elsewhere is drawn without its
    /// picture, and a job without one says why.
    @Test func androidPreviewLoadsTheRenditionFromThisServer() throws {
        let server = "http://127.0.0.1:8080"
        var resource = Self.resource(bytes: 1000, source: "a.png", url: "\(server)/v1/attachments/img-1.jpg")
        var attachment = try #require(resource.attachment?.attachment)
        attachment.renditions.android = Rendition(
            id: "and-1", file: "and-1.jpg", url: "\(server)/v1/attachments/and-1.jpg?expires=9&signature=ab",
            mime: "image/jpeg", bytes: 900, sha256: "00", width: 1024, height: 512,
            crop: CropRectangle(x: 0, y: 100, width: 1200, height: 600))
        resource.attachment = .ok(attachment)
        let html = try #require(ConsolePreview.html(for: resource, publicURL: server))
        #expect(
            html.contains(
                #"<img class="android-big-picture platform-picture" src="/v1/attachments/and-1.jpg?expires=9&amp;signature=ab""#
            ), "\(html)")
        #expect(
            html.contains(#"class="android-large-icon" src="/v1/attachments/and-1.jpg?expires=9&amp;signature=ab""#))
        #expect(html.contains(#"data-platform="android" data-has-picture="true""#))

        attachment.renditions.android?.url = "https://bucket.s3.example.com/and-1.jpg?X-Amz-Signature=1"
        resource.attachment = .ok(attachment)
        let elsewhere = try #require(ConsolePreview.html(for: resource, publicURL: server))
        #expect(!elsewhere.contains("bucket.s3.example.com"), "no picture from an origin the CSP refuses")
        #expect(elsewhere.contains(#"data-platform="android" data-has-picture="false""#))
        #expect(elsewhere.contains("and-1.jpg is not on this server"))

        let without = try #require(
            ConsolePreview.html(for: Self.resource(bytes: 1000, source: "a.png"), publicURL: server))
        #expect(without.contains(#"data-platform="android" data-has-picture="false""#))
        #expect(without.contains("this attachment has no android rendition"))
        #expect(!without.contains("web-notification"), "no web card without a web rendition")
    }
}

/// `--sign-attachments` signs every URL of a job's attachment that this server serves: the
/// file's, and its renditions' (a rendition left unsigned is a 403, to phones and to the console).
struct AttachmentSigningTests {
    @Test func renditionsAreSignedLikeTheFile() throws {
        let signer = try AttachmentURLSigner(key: Array(repeating: 7, count: 32), ttlSeconds: 3600)
        let base = "http://127.0.0.1:8080/v1/attachments"
        let resource = ConsolePreviewTests.resource(bytes: 1000, source: "a.png", url: "\(base)/img-1.jpg")
        var attachment = try #require(resource.attachment?.attachment)
        func rendition(_ id: String, url: String) -> Rendition {
            Rendition(
                id: id, file: "\(id).jpg", url: url, mime: "image/jpeg", bytes: 9, sha256: "00", width: 2, height: 1,
                crop: CropRectangle(x: 0, y: 0, width: 2, height: 1))
        }
        attachment.renditions.android = rendition("and-1", url: "\(base)/and-1.jpg")
        attachment.renditions.web = rendition("web-1", url: "\(base)/web-1.jpg")
        // Published elsewhere (a job's own base URL): not this server's to sign.
        attachment.renditions.webIcon = rendition("wic-1", url: "https://cdn.example.com/wic-1.jpg")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        signer.sign(&attachment, under: base, now: now)
        #expect(attachment.url == signer.sign("\(base)/img-1.jpg", now: now))
        for key in [Renditions.Key.android, .web] {
            let rendition = try #require(attachment.renditions[key])
            #expect(rendition.url == signer.sign("\(base)/\(rendition.file)", now: now), "\(key)")
            #expect(rendition.url?.contains("?expires=") == true && rendition.url?.contains("&signature=") == true)
            #expect(rendition.urlExpires == attachment.urlExpires && rendition.urlExpires != nil, "\(key)")
        }
        #expect(attachment.renditions.webIcon?.url == "https://cdn.example.com/wic-1.jpg")
        #expect(attachment.renditions.webIcon?.urlExpires == nil)
    }
}

/// The job page's warnings: a kind this version writes with its code and advice, an older text
/// as it is.
struct ConsoleWarningTests {
    @Test func aKnownWarningHasItsCodeAndAdvice() {
        let message = ProcessingWarning.audioDropped(reason: "no decoder").message
        let row = ConsoleJobView.warningRow(AttachmentWarning(message: message))
        #expect(row.message == message)
        #expect(row.warningCode == "audio_dropped")
        #expect(row.warningAdvice == ConsoleAdvice.text(for: ProcessingWarning.Code.audioDropped))
        let old = ConsoleJobView.warningRow(AttachmentWarning(message: "an older PushPrep's warning"))
        #expect(old.warningCode == nil && old.warningAdvice == nil)
        #expect(old.message == "an older PushPrep's warning")
    }
}
