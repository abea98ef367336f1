import Foundation
import PushPrep
import PushPrepCore
import PushPrepQueue
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

    /// The banner's body writes the output's size as the batch report does: decimal kB and MB
    /// (Apple's limits are 10^6 bytes a MB), rounded, not truncated, into the next unit.
    @Test func sizesUseTheReportsUnits() throws {
        let source = "https://cdn.example.com/shop/photo.png?sig=abc"
        let small = try #require(
            ConsolePreview.html(for: Self.resource(bytes: 212_345, source: source), publicURL: nil))
        #expect(small.contains(#"<div class="banner-body">image/jpeg, 1200×800, 212 kB</div>"#), "\(small)")
        let large = try #require(
            ConsolePreview.html(for: Self.resource(bytes: 999_999, source: source), publicURL: nil))
        #expect(large.contains(#"<div class="banner-body">image/jpeg, 1200×800, 1 MB</div>"#), "\(large)")
        #expect(small.contains(#"<div class="banner-title">photo.png</div>"#), "titled by the source's name")
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
}

/// The job page's warnings: a kind this version writes with its code and advice, an older text
/// as it is.
struct ConsoleWarningTests {
    @Test func aKnownWarningHasItsCodeAndAdvice() {
        let message = ProcessingWarning.audioDropped(reason: "no decoder").message
        let row = ConsoleJobView.warningRow(message)
        #expect(row["message"] as? String == message)
        #expect(row["warningCode"] as? String == "audio_dropped")
        #expect(row["warningAdvice"] as? String == ConsoleAdvice.text(for: ProcessingWarning.Code.audioDropped))
        let old = ConsoleJobView.warningRow("an older PushPrep's warning")
        #expect(old["warningCode"] == nil && old["warningAdvice"] == nil)
        #expect(old["message"] as? String == "an older PushPrep's warning")
    }
}
