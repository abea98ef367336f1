import Foundation
import Logging
import PushPrepCore
import PushPrepRemote
import PushPrepTestSupport
import Synchronization
import Testing

@testable import PushPrep
@testable import PushPrepJSON
@testable import PushPrepPayload

/// `preflight --fetch` and `--fix` against a real HTTP server on 127.0.0.1 (opted in with the
/// allowed host), serving real files made with `vips` and `ffmpeg`.
@Suite(
    .enabled(if: TestTools.programAvailable("vips"), "needs the vips program (make deps installs libvips-tools)"),
    .enabled(if: TestTools.programAvailable("ffmpeg"), "needs the ffmpeg program"),
    .timeLimit(.minutes(3)))
final class PreflightFetchTests {
    let directory: URL

    init() throws {
        directory = try TestTools.temporaryDirectory()
    }

    deinit {
        TestTools.removeDirectory(directory)
    }

    /// The served files, made once for the whole suite (they take a few `vips` and `ffmpeg` runs).
    private static let fixtures: Result<[String: [UInt8]], FixtureFailure> = Result {
        try makeFixtures()
    }.mapError { FixtureFailure(description: "cannot make the fixtures: \($0)") }

    struct FixtureFailure: Error, CustomStringConvertible {
        let description: String
    }

    private static func makeFixtures() throws -> [String: [UInt8]] {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        func file(_ name: String, _ make: (String) throws -> Void) throws -> [UInt8] {
            let path = directory.appendingPathComponent(name).path
            try make(path)
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        /// An animated GIF of `frames` 640x480 frames: 1.2 MB a frame decoded.
        func gif(_ name: String, frames: Int) throws -> [UInt8] {
            try file(name) {
                try TestTools.ffmpeg("-f", "lavfi", "-i", "testsrc=size=640x480:rate=10", "-frames:v", "\(frames)", $0)
            }
        }
        let jpeg = try file("photo.jpg") { try TestTools.vips("gaussnoise", $0, "200", "150") }
        // A 2:1 JPEG, as Android shows it; padded with bytes decoders ignore past its end to
        // 1.1 MB (over the SDK's 1 MiB) and to 0.7 MB (under it, but 5.6 s at 1 Mbit/s).
        let wide = try file("wide.jpg") { try TestTools.vips("gaussnoise", $0, "400", "200") }
        let webp = try file("banner.webp") { try TestTools.vips("gaussnoise", $0, "64", "48") }
        return [
            "photo.jpg": jpeg,
            "banner.webp": webp,
            // The WebP under a .jpg name, and PNG bytes under another.
            "banner.jpg": webp,
            "mislabelled.jpg": try file("real.png") { try TestTools.vips("gaussnoise", $0, "64", "48") },
            "heavy.gif": try gif("heavy.gif", frames: 20),
            "medium.gif": try gif("medium.gif", frames: 12),
            // A JPEG followed by 10 MB that decoders ignore: over Apple's image limit.
            "huge.jpg": jpeg + [UInt8](repeating: 0, count: 10_000_000),
            "wide.jpg": wide,
            "clip.jpg": try file("clip-as-jpg.mp4") {
                try TestTools.ffmpeg(
                    "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10:duration=1", "-pix_fmt", "yuv420p", $0)
            },
            "wide-big.jpg": wide + [UInt8](repeating: 0, count: 1_100_000 - wide.count),
            "wide-slow.jpg": wide + [UInt8](repeating: 0, count: 700_000 - wide.count),
            "icon.png": try file("icon.png") { try TestTools.vips("gaussnoise", $0, "64", "64") },
            "clip.mp4": try file("clip.mp4") {
                try TestTools.ffmpeg(
                    "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10:duration=2", "-pix_fmt", "yuv420p", $0)
            },
        ]
    }

    private func withServer(_ body: (TestServer<SourceFixtures>) async throws -> Void) async throws {
        try await TestServer.with(files: try Self.fixtures.get(), body)
    }

    /// A session that allows http:// and, unless `allowHost` is false, the server's host.
    private func session(
        _ configure: (inout PreflightOptions) -> Void = { _ in }, allowHost: Bool = true,
        remote configureRemote: (inout RemoteSettings) -> Void = { _ in }
    ) throws -> PreflightSession {
        var options = PreflightOptions()
        options.allowHTTP = true
        configure(&options)
        var remote = RemoteSettings()
        if allowHost { remote.allowedHosts = ["127.0.0.1"] }
        remote.totalTimeout = .seconds(30)
        remote.maxTries = 1
        configureRemote(&remote)
        return try PreflightSession(options: options, remote: remote, logger: .quiet)
    }

    /// An APNs payload with one attachment (and its declared type, if any).
    private func payload(_ url: String, type: String? = nil) -> [UInt8] {
        let typeMember = type.map { #","type":"\#($0)""# } ?? ""
        return Array(
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"\#(url)"\#(typeMember)}]}"#.utf8)
    }

    /// The report's findings as `severity code pointer`, sorted, without the `unreachable_url`
    /// that every URL of the test server carries (it is on 127.0.0.1, which no phone reaches).
    /// That finding is required here, once, at every attachment and Android or web image the
    /// report lists on 127.0.0.1, so every test below checks it too.
    private func codes(_ report: PreflightReport, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        let all = report.findings.map { "\($0.severity.rawValue) \($0.code.rawValue) \($0.pointer)" }
        let served =
            report.attachments.filter { $0.url.hasPrefix("http://127.0.0.1:") }.map(\.pointer)
            + (report.platformImages ?? []).filter { $0.url.hasPrefix("http://127.0.0.1:") }.map(\.pointer)
        let unreachable = all.filter { $0.hasPrefix("error unreachable_url ") }
        #expect(
            unreachable.sorted() == Set(served).map { "error unreachable_url \($0)" }.sorted(),
            "every URL on 127.0.0.1 is unreachable_url, once", sourceLocation: sourceLocation)
        return all.filter { !$0.hasPrefix("error unreachable_url ") }.sorted()
    }

    /// The first finding that is not the test server's `unreachable_url` (see ``codes(_:sourceLocation:)``).
    private func firstOwn(_ findings: [PreflightFinding]?) -> PreflightFinding? {
        findings?.first { $0.code != .unreachableURL }
    }

    private func check(
        _ url: String, type: String? = nil, _ configure: (inout PreflightOptions) -> Void = { _ in }
    ) async throws -> PreflightReport {
        let session = try session(configure)
        let report = await session.check(payload(url, type: type), file: "payload.json")
        await session.shutdown()
        return report
    }

    private let insecure = "warning insecure_url /attachments/0/url"

    @Test("a good JPEG: only the http warning, and what the download showed")
    func clean() async throws {
        try await withServer { server in
            let report = try await check(server.url("/files/photo.jpg"), type: "public.jpeg")
            #expect(codes(report) == [insecure])
            let fetched = try #require(report.attachments.first?.fetched)
            let served = try #require(try Self.fixtures.get()["photo.jpg"])
            #expect(fetched.type == "jpeg" && fetched.kind == .image && fetched.status == 200)
            #expect(fetched.finalURL == server.url("/files/photo.jpg") && fetched.contentType == "image/jpeg")
            #expect(fetched.bytes == served.count)
            #expect(fetched.slowLinkSeconds == Double(served.count) * 8 / 1_600_000)
            #expect(fetched.frames == nil, "only GIFs are decoded")
        }
    }

    @Test("a WebP: not accepted, whether its URL says .webp or .jpg")
    func webp() async throws {
        try await withServer { server in
            let named = try await check(server.url("/files/banner.webp"))
            #expect(
                codes(named) == [
                    "error content_not_accepted /attachments/0/url", "error unsupported_extension /attachments/0/url",
                    insecure,
                ])
            let disguised = try await check(server.url("/files/banner.jpg"), type: "public.jpeg")
            #expect(
                codes(disguised)
                    == [
                        "error content_not_accepted /attachments/0/url", "error extension_mismatch /attachments/0/url",
                        "error type_hint_mismatch /attachments/0/type", insecure,
                        "warning content_type_mismatch /attachments/0/url",
                    ].sorted())
            #expect(disguised.attachments.first?.fetched?.type == "webp")
        }
    }

    @Test("a mislabelled file: PNG bytes behind a .jpg URL")
    func mislabelled() async throws {
        try await withServer { server in
            let report = try await check(server.url("/files/mislabelled.jpg"), type: "public.jpeg")
            #expect(
                codes(report)
                    == [
                        "error extension_mismatch /attachments/0/url", "error type_hint_mismatch /attachments/0/type",
                        insecure, "warning content_type_mismatch /attachments/0/url",
                    ].sorted())
        }
    }

    @Test("animated GIFs: an error above 24 MB decoded, a warning above 12 MB")
    func gifMemory() async throws {
        try await withServer { server in
            let heavy = try await check(server.url("/files/heavy.gif"))
            #expect(codes(heavy) == ["error gif_memory /attachments/0/url", insecure])
            let fetched = try #require(heavy.attachments.first?.fetched)
            #expect(fetched.frames == 20 && fetched.width == 640 && fetched.height == 480)
            let medium = try await check(server.url("/files/medium.gif"))
            #expect(codes(medium) == [insecure, "warning gif_memory /attachments/0/url"].sorted())
        }
    }

    /// Records what it is asked and answers as the real one did for `answer`'s frames.
    private final class RecordingInspector: ImageInspecting {
        let asked = Mutex<[(path: String, type: MediaType)]>([])
        let answer: ImageFrames?
        init(answer: ImageFrames?) { self.answer = answer }

        func frames(ofImageAt path: String, type: MediaType) async -> ImageFrames? {
            asked.withLock { $0.append((path, type)) }
            return answer
        }
    }

    @Test("pre-flight reads GIFs through the image inspector it is given, once per download, GIFs only")
    func gifsGoThroughTheGivenInspector() async throws {
        try await withServer { server in
            let inspector = RecordingInspector(answer: ImageFrames(width: 2000, height: 2000, frames: 3))
            var remote = RemoteSettings()
            remote.allowedHosts = ["127.0.0.1"]
            var options = PreflightOptions()
            options.allowHTTP = true
            let session = try PreflightSession(options: options, remote: remote, images: inspector, logger: .quiet)
            // medium.gif is 12 frames of 640x480 (a warning); the inspector says 3 of 2000x2000 (48 MB: an error).
            let gif = await session.check(payload(server.url("/files/medium.gif")), file: "p.json")
            let jpeg = await session.check(payload(server.url("/files/photo.jpg")), file: "p.json")
            await session.shutdown()
            #expect(codes(gif) == ["error gif_memory /attachments/0/url", insecure])
            #expect(gif.attachments.first?.fetched?.frames == 3)
            #expect(codes(jpeg) == [insecure])
            let asked = inspector.asked.withLock { $0 }
            #expect(asked.count == 1 && asked.first?.type == .gif, "\(asked)")
        }
    }

    /// Records what it is asked to picture (and whether the file was still there) and answers
    /// with a made-up picture.
    private final class RecordingPicturer: AttachmentPicturing {
        let asked = Mutex<[(type: MediaType, frame: Int, bytes: Int?)]>([])

        func picture(ofImageAt path: String, type: MediaType, frame: Int) async -> AttachmentPicture? {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int
            asked.withLock { $0.append((type, frame, size)) }
            return AttachmentPicture(width: 4, height: 3, expanded: "data:e", banner: "data:b", bytes: 2)
        }
    }

    @Test("--report's pictures: only the shown attachment, only an image iOS accepts, while its download exists")
    func picturesOfTheShownAttachment() async throws {
        try await withServer { server in
            let picturer = RecordingPicturer()
            let session = try session()
            func attachments(_ entries: [(String, String)]) -> [UInt8] {
                let list = entries.map { name, options in
                    #"{"id":"\#(name)","url":"\#(server.url("/files/" + name))","options":{\#(options)}}"#
                }
                return Array(
                    #"{"aps":{"alert":"B","mutable-content":1},"attachments":[\#(list.joined(separator: ","))]}"#.utf8)
            }
            let time = #""UNNotificationAttachmentOptionsThumbnailTimeKey":"#
            // The photo is shown; the GIF after it is downloaded but never pictured.
            let photo = await session.check(
                attachments([("photo.jpg", ""), ("medium.gif", "")]), file: "p.json", picturing: picturer)
            // The shown GIF's ThumbnailTime is its frame; a time no Int holds is frame 0.
            let gif = await session.check(
                attachments([("medium.gif", time + "3.7")]), file: "p.json", picturing: picturer)
            let hostile = await session.check(
                attachments([("medium.gif", time + "1e300")]), file: "p.json", picturing: picturer)
            // Not pictured: a WebP (iOS refuses it), a movie, a JPEG over Apple's limit.
            var none: [AttachmentPicture?] = []
            for name in ["banner.webp", "clip.mp4", "huge.jpg"] {
                none.append(await session.check(attachments([(name, "")]), file: "p.json", picturing: picturer).picture)
            }
            await session.shutdown()

            #expect(photo.picture?.expanded == "data:e" && gif.picture != nil && hostile.picture != nil)
            #expect(none == [nil, nil, nil])
            #expect(photo.report.attachments.map { $0.fetched?.type } == ["jpeg", "gif"], "both downloaded")
            let asked = picturer.asked.withLock { $0 }
            let served = try Self.fixtures.get()
            #expect(asked.map(\.type) == [.jpeg, .gif, .gif], "\(asked)")
            #expect(asked.map(\.frame) == [0, 3, 0])
            #expect(
                asked.map(\.bytes) == [
                    served["photo.jpg"]?.count, served["medium.gif"]?.count, served["medium.gif"]?.count,
                ],
                "each picture is made while the download is on disk, whole")
        }
    }

    @Test("an inspector's extreme numbers are an error finding, never an overflow trap")
    func extremeImageFramesDoNotTrap() async throws {
        #expect(AppleLimits.decodedBytes(width: .max, height: 3, frames: 2) == .max)
        #expect(AppleLimits.decodedBytes(width: -640, height: 480, frames: 12) == 0)
        try await withServer { server in
            var remote = RemoteSettings()
            remote.allowedHosts = ["127.0.0.1"]
            var options = PreflightOptions()
            options.allowHTTP = true
            let inspector = RecordingInspector(answer: ImageFrames(width: .max, height: .max, frames: .max))
            let session = try PreflightSession(options: options, remote: remote, images: inspector, logger: .quiet)
            let report = await session.check(payload(server.url("/files/medium.gif")), file: "p.json")
            await session.shutdown()
            #expect(codes(report) == ["error gif_memory /attachments/0/url", insecure])
        }
    }

    @Test("over Apple's limit: too large, and too slow on a slow connection")
    func tooLarge() async throws {
        try await withServer { server in
            let report = try await check(server.url("/files/huge.jpg"))
            #expect(
                codes(report)
                    == [
                        "error content_too_large /attachments/0/url", insecure,
                        "warning slow_download /attachments/0/url",
                    ].sorted())
            let photo = try #require(try Self.fixtures.get()["photo.jpg"])
            #expect(report.attachments.first?.fetched?.bytes == photo.count + 10_000_000)

            // Over the download cap, the fetch stops early: still too large, nothing fetched.
            let session = try session(remote: { $0.maxDownloadBytes = 1_000 })
            let capped = await session.check(payload(server.url("/files/photo.jpg")), file: "p.json")
            await session.shutdown()
            #expect(codes(capped) == ["error content_too_large /attachments/0/url", insecure])
            #expect(capped.attachments.first?.fetched == nil)
        }
    }

    @Test("a slow server misses the budget; a slow link is estimated from the size")
    func slow() async throws {
        try await withServer { server in
            let slowServer = try await check(server.url("/slow-first-byte/1500/photo.jpg")) { $0.timeBudget = 1 }
            #expect(codes(slowServer) == ["error slow_server /attachments/0/url", insecure])
            #expect((slowServer.attachments.first?.fetched?.seconds ?? 0) >= 1.4)
            let slowLink = try await check(server.url("/files/photo.jpg")) { $0.slowLinkKbps = 1 }
            #expect(codes(slowLink) == [insecure, "warning slow_download /attachments/0/url"].sorted())
        }
    }

    @Test("Content-Type, redirects and HTTP errors")
    func server() async throws {
        try await withServer { server in
            let wrongType = try await check(server.url("/wrong-type/photo.jpg"))
            #expect(codes(wrongType) == [insecure, "warning content_type_mismatch /attachments/0/url"].sorted())
            let redirected = try await check(server.url("/redirect/2/photo.jpg"))
            #expect(codes(redirected) == ["info redirected /attachments/0/url", insecure])
            #expect(redirected.attachments.first?.fetched?.finalURL == server.url("/files/photo.jpg"))
            let missing = try await check(server.url("/files/gone.jpg"))
            #expect(codes(missing) == ["error fetch_failed /attachments/0/url", insecure])
            #expect(firstOwn(missing.findings)?.message.contains("404") == true)
        }
    }

    @Test("without --allow-host, loopback is refused like any private address")
    func blockedByDefault() async throws {
        try await withServer { server in
            let session = try session(allowHost: false)
            let report = await session.check(payload(server.url("/files/photo.jpg")), file: "p.json")
            await session.shutdown()
            #expect(codes(report) == ["error fetch_failed /attachments/0/url", insecure])
            #expect(firstOwn(report.findings)?.message.contains("blocked_address") == true)
            #expect(server.hits("/files/photo.jpg") == 0)
        }
    }

    // MARK: - Android and web images

    /// An FCM message whose Android image is `android` and whose web push has `webImage` and `webIcon`.
    private func fcmPlatforms(android: String? = nil, webImage: String? = nil, webIcon: String? = nil) -> [UInt8] {
        var members = [#""token":"t","notification":{"title":"T","body":"B"}"#]
        if let android { members.append(#""android":{"notification":{"image":"\#(android)"}}"#) }
        var web: [String] = []
        if let webImage { web.append(#""image":"\#(webImage)""#) }
        if let webIcon { web.append(#""icon":"\#(webIcon)""#) }
        if !web.isEmpty { members.append(#""webpush":{"notification":{\#(web.joined(separator: ","))}}"#) }
        return Array(#"{"message":{\#(members.joined(separator: ","))}}"#.utf8)
    }

    private let androidImage = "/message/android/notification/image"
    /// What every Android image served here has: http:// (a warning, as the session allows http).
    private var androidHTTP: String { "warning android_image_insecure \(androidImage)" }

    private func checkPlatforms(
        _ bytes: [UInt8], _ configure: (inout PreflightOptions) -> Void = { _ in }
    ) async throws -> PreflightReport {
        let session = try session(configure)
        let report = await session.check(bytes, file: "fcm.json")
        await session.shutdown()
        return report
    }

    /// The findings other than the payload's lack of an iPhone attachment.
    private func platformCodes(_ report: PreflightReport) -> [String] {
        codes(report).filter { $0 != "info no_attachments " }
    }

    @Test("Android: a 2:1 JPEG under 1 MiB with a Content-Length is fine; what the download showed")
    func androidClean() async throws {
        try await withServer { server in
            let report = try await checkPlatforms(fcmPlatforms(android: server.url("/files/wide.jpg")))
            #expect(platformCodes(report) == [androidHTTP])
            let image = try #require(report.platformImages?.first)
            let served = try #require(try Self.fixtures.get()["wide.jpg"])
            #expect(image.role == .androidImage && image.pointer == androidImage)
            #expect(image.fetched?.contentLength == served.count && image.fetched?.bytes == served.count)
            #expect(image.fetched?.width == 400 && image.fetched?.height == 200)
            #expect(image.fetched?.slowLinkSeconds == Double(served.count) * 8 / 1_000_000)
            #expect(report.attachments.isEmpty, "an Android image is not an iPhone attachment")
        }
    }

    @Test("Android: over 1 MiB by Content-Length is an error (and slow at 1 Mbit/s)")
    func androidTooLarge() async throws {
        try await withServer { server in
            let report = try await checkPlatforms(fcmPlatforms(android: server.url("/files/wide-big.jpg")))
            #expect(
                platformCodes(report)
                    == [
                        "error android_image_too_large \(androidImage)", androidHTTP,
                        "warning android_image_slow \(androidImage)",
                    ].sorted())
            #expect(firstOwn(report.findings)?.message.contains("Content-Length 1100000") == true)
        }
    }

    @Test("Android: a chunked response without Content-Length is a warning")
    func androidNoContentLength() async throws {
        try await withServer { server in
            let report = try await checkPlatforms(fcmPlatforms(android: server.url("/chunked/wide.jpg")))
            #expect(platformCodes(report) == [androidHTTP, "warning android_image_no_content_length \(androidImage)"])
            #expect(report.platformImages?.first?.fetched?.contentLength == nil)
            // Chunked and over 1 MiB: too large by the bytes read.
            let big = try await checkPlatforms(fcmPlatforms(android: server.url("/chunked/wide-big.jpg")))
            #expect(platformCodes(big).contains("error android_image_too_large \(androidImage)"))
        }
    }

    @Test("Android: the download time at --assume-bandwidth against FCM's 5 s")
    func androidSlow() async throws {
        try await withServer { server in
            let url = server.url("/files/wide-slow.jpg")
            // 700,000 bytes: 5.6 s at the default 1 Mbit/s, 0.56 s at 10 Mbit/s.
            let slow = try await checkPlatforms(fcmPlatforms(android: url))
            #expect(platformCodes(slow) == [androidHTTP, "warning android_image_slow \(androidImage)"])
            #expect(slow.findings.contains { $0.message.contains("5.6 s at 1 Mbit/s") })
            let fast = try await checkPlatforms(fcmPlatforms(android: url)) {
                $0.assumedBandwidth = try! #require(Bandwidth(text: "10mbit"))
            }
            #expect(platformCodes(fast) == [androidHTTP])
        }
    }

    @Test("Android: a GIF shows its first frame (warning), a movie nothing (error), a 4:3 picture is cropped")
    func androidTypesAndShape() async throws {
        try await withServer { server in
            let gif = try await checkPlatforms(fcmPlatforms(android: server.url("/files/medium.gif")))
            // 640x480: 4:3, so also cropped.
            #expect(
                platformCodes(gif)
                    == [
                        "warning android_image_aspect \(androidImage)", androidHTTP,
                        "warning android_image_type \(androidImage)",
                    ].sorted())
            let movie = try await checkPlatforms(fcmPlatforms(android: server.url("/files/clip.mp4")))
            #expect(platformCodes(movie) == ["error android_image_type \(androidImage)", androidHTTP])
            // MP4 bytes behind a .jpg name: the bytes tell.
            let disguised = try await checkPlatforms(fcmPlatforms(android: server.url("/files/clip.jpg")))
            #expect(platformCodes(disguised) == ["error android_image_type \(androidImage)", androidHTTP])
            // A JPEG of 200x150.
            let photo = try await checkPlatforms(fcmPlatforms(android: server.url("/files/photo.jpg")))
            #expect(platformCodes(photo) == ["warning android_image_aspect \(androidImage)", androidHTTP].sorted())
        }
    }

    @Test("Android and web images count against --fetch-max-urls like attachments; the rest are fetch_skipped")
    func platformImagesInTheBudget() async throws {
        try await withServer { server in
            var options = PreflightOptions()
            options.allowHTTP = true
            var remote = RemoteSettings()
            remote.allowedHosts = ["127.0.0.1"]
            let session = try PreflightSession(
                options: options, remote: remote, budget: PreflightSession.FetchBudget(maxURLs: 1), logger: .quiet)
            let report = await session.check(
                fcmPlatforms(android: server.url("/files/wide.jpg"), webIcon: server.url("/files/icon.png")),
                file: "fcm.json")
            await session.shutdown()
            #expect(
                platformCodes(report) == [
                    androidHTTP, "warning fetch_skipped /message/webpush/notification/icon",
                ])
            #expect(server.hits("/files/wide.jpg") == 1 && server.hits("/files/icon.png") == 0)
            #expect(report.findings.contains { $0.message.contains("only Android or web images") })
        }
    }

    @Test("web: a 64 px icon is too small; a 4:3 image is cropped; a 2:1 one is fine")
    func webImages() async throws {
        try await withServer { server in
            let report = try await checkPlatforms(
                fcmPlatforms(webImage: server.url("/files/photo.jpg"), webIcon: server.url("/files/icon.png")))
            #expect(
                platformCodes(report)
                    == [
                        "warning web_icon_too_small /message/webpush/notification/icon",
                        "warning web_image_aspect /message/webpush/notification/image",
                    ])
            #expect(report.platformImages?.map(\.role) == [.webImage, .webIcon])
            let wide = try await checkPlatforms(fcmPlatforms(webImage: server.url("/files/wide.jpg")))
            #expect(platformCodes(wide) == [])
        }
    }

    // MARK: - --fix

    private func fix(
        _ bytes: [UInt8], baseURL: String?, _ configure: (inout ProcessingSettings) -> Void = { _ in }
    ) async throws -> (PreflightReport, JSONValue, URL) {
        let out = directory.appendingPathComponent("out-\(UUID().uuidString)")
        let fixed = directory.appendingPathComponent("fixed-\(UUID().uuidString).json")
        var settings = ProcessingSettings()
        settings.jobs = 1
        settings.baseURL = baseURL
        configure(&settings)
        var remote = RemoteSettings()
        remote.allowedHosts = ["127.0.0.1"]
        let processor = Processor(settings: settings, outputDirectory: out.path, logger: .quiet, remote: remote)
        let session = try session()
        let report = try await session.fix(bytes, file: "p.json", writeTo: fixed.path, processing: processor)
        await session.shutdown()
        #expect(report.fixedPayload == fixed.path)
        let written = try JSONValue.parse(Array(try Data(contentsOf: fixed))).value
        return (report, written, out)
    }

    private func path(_ pointer: String) -> JSONPath { JSONPath(pointer: pointer)! }

    @Test("--fix: a WebP is processed and re-hosted, its type follows, mutable-content is added")
    func fixWebP() async throws {
        try await withServer { server in
            let source = server.url("/files/banner.webp")
            let bytes = Array(
                #"{"aps":{"alert":"B"},"attachments":[{"id":"a","url":"\#(source)","type":"com.compuserve.gif","options":{"UNNotificationAttachmentOptionsTypeHintKey":"com.compuserve.gif"}}]}"#
                    .utf8)
            let (report, written, out) = try await fix(bytes, baseURL: "https://cdn.example.com/push")
            let url = try #require(written[path("/attachments/0/url")]?.stringValue)
            #expect(url.hasPrefix("https://cdn.example.com/push/img-") && url.hasSuffix(".jpg"))
            let output = out.appendingPathComponent(String(url.split(separator: "/").last!))
            let data = try Data(contentsOf: output)
            #expect(Array(data.prefix(3)) == [0xFF, 0xD8, 0xFF], "the processed file is a JPEG")
            #expect(written[path("/attachments/0/type")]?.stringValue == "public.jpeg")
            #expect(
                written[path("/attachments/0/options/UNNotificationAttachmentOptionsTypeHintKey")]?.stringValue
                    == "public.jpeg")
            #expect(written[path("/aps/mutable-content")] == JSONValue(1))
            #expect(
                Set(report.changes?.map(\.pointer) ?? []) == [
                    "/attachments/0/url", "/attachments/0/type",
                    "/attachments/0/options/UNNotificationAttachmentOptionsTypeHintKey", "/aps/mutable-content",
                ])
            #expect(report.findings.contains { $0.code == .contentNotAccepted }, "the findings are the original's")
            #expect(report.remaining == [], "\(report.remaining ?? [])")
            #expect(report.exitStatus(strict: true) == 0)
        }
    }

    @Test(
        "--fix for a report: the corrected payload's bytes, and the picture of the processed file that replaced the WebP"
    )
    func fixedForAReport() async throws {
        try await withServer { server in
            let source = server.url("/files/banner.webp")
            let bytes = Array(#"{"aps":{"alert":"B"},"attachments":[{"id":"a","url":"\#(source)"}]}"#.utf8)
            let out = directory.appendingPathComponent("out-report")
            let written = directory.appendingPathComponent("fixed-report.json")
            var settings = ProcessingSettings()
            settings.jobs = 1
            settings.baseURL = "https://cdn.example.com/push"
            var remote = RemoteSettings()
            remote.allowedHosts = ["127.0.0.1"]
            let processor = Processor(settings: settings, outputDirectory: out.path, logger: .quiet, remote: remote)
            let picturer = RecordingPicturer()
            let session = try session()
            let fixed = try await session.fixed(
                bytes, file: "p.json", writeTo: written.path, processing: processor, picturing: picturer)
            await session.shutdown()
            #expect(fixed.payload == Array(try Data(contentsOf: written)))
            #expect(fixed.report.remaining == [])
            let payload = try JSONValue.parse(fixed.payload).value
            #expect(payload[path("/aps/mutable-content")] == JSONValue(1))
            let url = try #require(payload[path("/attachments/0/url")]?.stringValue)
            let file = out.appendingPathComponent(String(url.split(separator: "/").last ?? ""))
            let asked = picturer.asked.withLock { $0 }
            let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
            #expect(asked.count == 1 && asked.first?.type == .jpeg && asked.first?.bytes == size, "\(asked)")
            #expect(fixed.picture != nil)
        }
    }

    @Test("--fix: a GIF too heavy for the extension's memory is shrunk until its frames fit, and re-checked clean")
    func fixHeavyGIF() async throws {
        try await withServer { server in
            let source = server.url("/files/heavy.gif")
            let (report, written, out) = try await fix(
                payload(source, type: "com.compuserve.gif"), baseURL: "https://cdn.example.com/push")
            #expect(report.findings.contains { $0.code == .gifMemory && $0.severity == .error })
            let url = try #require(written[path("/attachments/0/url")]?.stringValue)
            #expect(url.hasSuffix(".gif"), "still an animation: \(url)")
            let probe = try ImageProbe.probe(
                out.appendingPathComponent(String(url.split(separator: "/").last ?? "")), allPages: true)
            #expect(probe.pages == 20, "every frame kept")
            #expect(probe.width * probe.pageHeight * 4 * probe.pages <= 12_000_000, "\(probe.fields)")
            #expect(report.remaining == [], "\(report.remaining ?? [])")
        }
    }

    @Test("--fix for FCM, which carries images only: a movie becomes its poster frame, an animation stays a GIF")
    func fixFCM() async throws {
        try await withServer { server in
            func fcm(_ url: String) -> [UInt8] {
                Array(
                    #"{"message":{"token":"t","notification":{"title":"T","body":"B"},"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(url)"}}}}"#
                        .utf8)
            }
            let image = path("/message/apns/fcm_options/image")
            let (movie, movieWritten, out) = try await fix(
                fcm(server.url("/files/clip.mp4")), baseURL: "https://cdn.example.com/push")
            #expect(movie.findings.contains { $0.code == .providerExtension && $0.pointer == image.pointer })
            let poster = try #require(movieWritten[image]?.stringValue)
            #expect(poster.hasPrefix("https://cdn.example.com/push/vid-") && poster.hasSuffix("-poster.jpg"))
            let name = String(poster.split(separator: "/").last ?? "")
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(name).path))
            #expect(movie.remaining == [], "\(movie.remaining ?? [])")

            // A 2 MB budget: shrinking alone would make a movie of the animation (as for APNs);
            // for FCM it keeps every other frame instead.
            let (gif, gifWritten, _) = try await fix(
                fcm(server.url("/files/heavy.gif")), baseURL: "https://cdn.example.com/push"
            ) { $0.gifMaxMemory = 2_000_000 }
            let url = try #require(gifWritten[image]?.stringValue)
            #expect(url.hasPrefix("https://cdn.example.com/push/img-") && url.hasSuffix(".gif"), "\(gif.changes ?? [])")
            #expect(gif.remaining == [], "\(gif.remaining ?? [])")
        }
    }

    @Test("--fix without a base URL processes the file but cannot point the payload at it")
    func fixWithoutBaseURL() async throws {
        try await withServer { server in
            let source = server.url("/files/banner.webp")
            let (report, written, out) = try await fix(payload(source), baseURL: nil)
            #expect(written[path("/attachments/0/url")]?.stringValue == source)
            let change = try #require(report.changes?.first)
            #expect(report.changes?.count == 1)
            #expect(change.pointer == "/attachments/0/url")
            #expect(change.message.contains("the URL is unchanged") && change.message.contains("--base-url"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).contains { $0.hasSuffix(".jpg") })
            // Still wrong: the payload names the WebP, whose bytes were checked before the fix.
            #expect(
                (report.remaining ?? []).map { "\($0.severity.rawValue) \($0.code.rawValue) \($0.pointer)" }.sorted()
                    == [
                        "error content_not_accepted /attachments/0/url",
                        "error unreachable_url /attachments/0/url",
                        "error unsupported_extension /attachments/0/url", insecure,
                    ])
            #expect(report.exitStatus(strict: false) == 1)
        }
    }

    @Test("--fix removes invalid attachment options and keeps the valid ones and unknown ones")
    func fixOptions() async throws {
        try await withServer { server in
            let source = server.url("/files/photo.jpg")
            let options = "/attachments/0/options/UNNotificationAttachmentOptions"
            let bytes = Array(
                #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"\#(source)","options":{"UNNotificationAttachmentOptionsTypeHintKey":"public.jpeg","UNNotificationAttachmentOptionsThumbnailTimeKey":-2,"UNNotificationAttachmentOptionsThumbnailClippingRectKey":{"X":0.5,"Y":0,"Width":0.75,"Height":2},"UNNotificationAttachmentOptionsThumbnailHiddenKey":false,"AppKey":1}}]}"#
                    .utf8)
            let (report, written, out) = try await fix(bytes, baseURL: "https://cdn.example.com/push")
            #expect(
                report.findings.filter { $0.code == .invalidAttachmentOption }.map(\.pointer).sorted() == [
                    options + "ThumbnailClippingRectKey/Height", options + "ThumbnailTimeKey",
                ])
            // The http:// URL is re-hosted too; the options are edited in place.
            #expect(
                Set(report.changes?.map(\.pointer) ?? []) == [
                    "/attachments/0/url", options + "ThumbnailClippingRectKey", options + "ThumbnailTimeKey",
                ])
            #expect(written[path(options + "ThumbnailClippingRectKey")] == nil)
            #expect(written[path(options + "ThumbnailTimeKey")] == nil)
            #expect(written[path(options + "TypeHintKey")]?.stringValue == "public.jpeg")
            #expect(written[path(options + "ThumbnailHiddenKey")] == .bool(false))
            let url = try #require(written[path("/attachments/0/url")]?.stringValue)
            #expect(url.hasPrefix("https://cdn.example.com/push/img-") && url.hasSuffix(".jpg"))
            let name = String(url.split(separator: "/").last ?? "")
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(name).path))
            #expect(
                (report.remaining ?? []).map { "\($0.severity.rawValue) \($0.code.rawValue) \($0.pointer)" }
                    == ["warning unknown_attachment_option /attachments/0/options/AppKey"])
        }
    }

    @Test("--fix on a Braze payload updates asset_url and asset_file_type")
    func fixBraze() async throws {
        try await withServer { server in
            let source = server.url("/files/mislabelled.jpg")
            let bytes = Array(
                #"{"messages":{"apple_push":{"alert":"B","asset_url":"\#(source)","asset_file_type":"png","mutable_content":true}}}"#
                    .utf8)
            let (report, written, _) = try await fix(bytes, baseURL: "https://cdn.example.com/push")
            // The PNG has no alpha channel, so it is published as a JPEG.
            let url = try #require(written[path("/messages/apple_push/asset_url")]?.stringValue)
            #expect(url.hasPrefix("https://cdn.example.com/push/img-") && url.hasSuffix(".jpg"))
            #expect(written[path("/messages/apple_push/asset_file_type")]?.stringValue == "jpg")
            #expect(
                Set(report.changes?.map(\.pointer) ?? []) == [
                    "/messages/apple_push/asset_url", "/messages/apple_push/asset_file_type",
                ])
            #expect(report.remaining == [], "\(report.remaining ?? [])")
        }
    }

    // MARK: - --fix for Android and web images

    /// A real JPEG made from `image` with `vips thumbnail` (a centred crop to `width`x`height`),
    /// written to `directory` and described as the manifest describes a rendition of `key`.
    private static func rendition(
        _ key: Renditions.Key, of image: String, width: Int, height: Int, in directory: String, baseURL: String
    ) throws -> Rendition {
        let name = "\(key.idPrefix)-\(UUID().uuidString.prefix(8).lowercased())-\(width)x\(height).jpg"
        let path = directory + "/" + name
        try TestTools.vips("thumbnail", image, path, "\(width)", "--height", "\(height)", "--crop", "centre")
        let file = try InputFile.read(path: path, maxBytes: 50_000_000)
        return Rendition(
            id: String(name.dropLast(4)), file: name, url: "\(baseURL)/\(name)", mime: "image/jpeg", bytes: file.size,
            sha256: file.sha256, width: width, height: height,
            crop: CropRectangle(x: 0, y: 0, width: width, height: height))
    }

    /// The real processor, followed by an Android rendition cut from each processed image with
    /// `vips thumbnail` (what the processing's own renditions will be once they land).
    private struct ProcessingWithRenditions: AttachmentProcessing {
        let processor: Processor
        let baseURL: String
        var outputDirectory: String { processor.outputDirectory }

        func process(_ items: [InputItem], animationsAsMovies: Bool) async throws(PushPrepError) -> Manifest {
            var manifest = try await processor.process(items, animationsAsMovies: animationsAsMovies)
            for (index, entry) in manifest.attachments.enumerated() {
                guard case .ok(var attachment) = entry else { continue }
                do {
                    attachment.renditions.android = try PreflightFetchTests.rendition(
                        .android, of: outputDirectory + "/" + attachment.file, width: 720, height: 360,
                        in: outputDirectory, baseURL: baseURL)
                } catch {
                    throw PushPrepError(.invalidSettings, "cannot make the test's rendition: \(error)")
                }
                manifest.attachments[index] = .ok(attachment)
            }
            return manifest
        }
    }

    private let baseURL = "https://cdn.example.com/push"

    @Test("--fix --manifest: an Android image over 1 MiB is replaced by the manifest's android rendition")
    func fixAndroidFromManifest() async throws {
        try await withServer { server in
            let source = server.url("/files/wide-big.jpg")
            // The manifest of a real run on the 2:1 photo, whose source is the URL the payload names.
            let local = directory.appendingPathComponent("wide.jpg")
            try Data(try #require(try Self.fixtures.get()["wide.jpg"])).write(to: local)
            let out = directory.appendingPathComponent("manifest-out")
            var settings = ProcessingSettings()
            settings.jobs = 1
            settings.baseURL = baseURL
            let processor = Processor(settings: settings, outputDirectory: out.path, logger: .quiet)
            var manifest = try await processor.process(
                [InputItem(source: local.path, path: local.path)], animationsAsMovies: true)
            guard case .ok(var attachment) = try #require(manifest.attachments.first) else {
                Issue.record("the photo did not process")
                return
            }
            attachment.source = source
            let android = try Self.rendition(
                .android, of: local.path, width: 720, height: 360, in: out.path, baseURL: baseURL)
            attachment.renditions.android = android
            manifest.attachments[0] = .ok(attachment)

            let fixed = directory.appendingPathComponent("fixed-android.json")
            let session = try session { $0.manifestImages = ManifestImages(manifest) }
            let report = try await session.fix(
                fcmPlatforms(android: source), file: "fcm.json", writeTo: fixed.path, processing: processor)
            await session.shutdown()
            let written = try JSONValue.parse(Array(try Data(contentsOf: fixed))).value
            #expect(written[path(androidImage)]?.stringValue == android.url)
            #expect(report.findings.contains { $0.code == .androidImageTooLarge })
            let change = try #require(report.changes?.first { $0.pointer == androidImage })
            #expect(change.message.contains("replaced by the manifest's android rendition \(android.url!)"))
            #expect(change.message.contains("720x360, \(android.bytes) bytes"))
            #expect(
                (report.remaining ?? []).filter { $0.code != .noAttachments } == [],
                "the rendition is https, 2:1 and under 1 MiB by the manifest: \(report.remaining ?? [])")
        }
    }

    @Test("--fix: FCM's shared notification.image keeps the iPhone's attachment, Android gets its rendition")
    func fixSharedFCMImage() async throws {
        try await withServer { server in
            let source = server.url("/files/wide-big.jpg")
            let bytes = Array(
                #"{"message":{"token":"t","notification":{"title":"T","body":"B","image":"\#(source)"},"apns":{"payload":{"aps":{"mutable-content":1}}}}}"#
                    .utf8)
            let out = directory.appendingPathComponent("out-shared")
            var settings = ProcessingSettings()
            settings.jobs = 1
            settings.baseURL = baseURL
            var remote = RemoteSettings()
            remote.allowedHosts = ["127.0.0.1"]
            let processing = ProcessingWithRenditions(
                processor: Processor(settings: settings, outputDirectory: out.path, logger: .quiet, remote: remote),
                baseURL: baseURL)
            let fixed = directory.appendingPathComponent("fixed-shared.json")
            let session = try session()
            let report = try await session.fix(bytes, file: "fcm.json", writeTo: fixed.path, processing: processing)
            await session.shutdown()
            let written = try JSONValue.parse(Array(try Data(contentsOf: fixed))).value
            let shared = "/message/notification/image"
            #expect(
                codes(report).contains("error android_image_too_large \(shared)"), "\(codes(report))")
            let ios = try #require(written[path(shared)]?.stringValue)
            #expect(ios.hasPrefix("\(baseURL)/img-"), "the iPhone's attachment, processed: \(ios)")
            let android = try #require(written[path(androidImage)]?.stringValue)
            #expect(android.hasPrefix("\(baseURL)/and-") && android.hasSuffix("-720x360.jpg"))
            let file = out.appendingPathComponent(String(android.split(separator: "/").last ?? ""))
            #expect(FileManager.default.fileExists(atPath: file.path))
            let change = try #require(report.changes?.first { $0.pointer == androidImage })
            #expect(change.message.contains("stays the iPhone's"), "\(change.message)")
            #expect(report.remaining == [], "\(report.remaining ?? [])")
        }
    }
}
