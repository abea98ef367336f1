import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepJSON
@testable import PushPrepPayload

// MARK: - Fixtures

private let base = "https://cdn.example.com/push"
private let imageID = "img-7d1c0e9b2a3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d"
private let videoID = "vid-1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
private let audioID = "aud-0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"
private let imageAndroidID = "and-5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d"
private let imageWebID = "web-6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e"
private let imageIconID = "wic-7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f"
private let videoAndroidID = "and-8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a"
private let imageURL = "\(base)/\(imageID).jpg"
private let videoURL = "\(base)/\(videoID).mp4"
private let audioURL = "\(base)/\(audioID).m4a"
private let posterURL = "\(base)/\(videoID)-poster.jpg"
private let imageAndroidURL = "\(base)/\(imageAndroidID).jpg"
private let imageWebURL = "\(base)/\(imageWebID).jpg"
private let imageIconURL = "\(base)/\(imageIconID).png"
private let videoAndroidURL = "\(base)/\(videoAndroidID).jpg"

/// One rendition as a version 2 manifest writes it.
private func rendition(_ id: String, _ ext: String, _ mime: String, _ width: Int, _ height: Int, crop: String) -> String
{
    #"""
    { "id" : "\#(id)", "file" : "\#(id).\#(ext)", "url" : "\#(base)/\#(id).\#(ext)", "urlExpires" : null,
      "mime" : "\#(mime)", "bytes" : 84213, "sha256" : "\#(String(repeating: "ab", count: 32))",
      "width" : \#(width), "height" : \#(height), "crop" : \#(crop) }
    """#
}

/// A version 2 manifest as `pushprep process --platforms ios,android,web --base-url …` writes
/// it: a JPEG with its Android, web and web icon renditions, an MP4 whose poster frame gave its
/// Android rendition (and no web one), and an M4A, which has none. `SETTINGS` stands for the
/// encoded settings.
private let manifestText = #"""
    {
      "version" : 2,
      "generator" : { "name" : "pushprep", "version" : "0.1.0" },
      "settings" : SETTINGS,
      "attachments" : [
        {
          "id" : "\#(imageID)", "status" : "ok", "source" : "samples/banner.webp", "kind" : "image",
          "file" : "\#(imageID).jpg", "url" : "\#(imageURL)", "urlExpires" : null,
          "uti" : "public.jpeg", "mime" : "image/jpeg", "bytes" : 151234,
          "sha256" : "4f0c1e7d9b2a3c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6",
          "width" : 1200, "height" : 1600, "duration" : null, "frames" : 1,
          "options" : { "UNNotificationAttachmentOptionsTypeHintKey" : "public.jpeg" },
          "input" : { "type" : "webp", "bytes" : 402113, "width" : 1200, "height" : 1600, "duration" : null },
          "operations" : [ "decoded webp 1200x1600" ], "warnings" : [ ],
          "renditions" : {
            "android" : \#(rendition(imageAndroidID, "jpg", "image/jpeg", 1024, 512, crop: #"{ "x" : 0, "y" : 500, "width" : 1200, "height" : 600 }"#)),
            "web" : \#(rendition(imageWebID, "jpg", "image/jpeg", 1200, 600, crop: #"{ "x" : 0, "y" : 500, "width" : 1200, "height" : 600 }"#)),
            "webIcon" : \#(rendition(imageIconID, "png", "image/png", 192, 192, crop: #"{ "x" : 0, "y" : 200, "width" : 1200, "height" : 1200 }"#))
          }
        },
        {
          "id" : "\#(videoID)", "status" : "ok", "source" : "samples/clip.mov", "kind" : "video",
          "file" : "\#(videoID).mp4", "url" : "\#(videoURL)", "urlExpires" : null,
          "uti" : "public.mpeg-4", "mime" : "video/mp4", "bytes" : 2412000,
          "sha256" : "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
          "width" : 720, "height" : 406, "duration" : 8.0, "frames" : 240,
          "options" : { "UNNotificationAttachmentOptionsTypeHintKey" : "public.mpeg-4",
                        "UNNotificationAttachmentOptionsThumbnailTimeKey" : 1.5 },
          "input" : { "type" : "mov", "bytes" : 9120000, "width" : 1920, "height" : 1080, "duration" : 12.5 },
          "operations" : [ "encoded h264 720x406" ], "warnings" : [ ],
          "poster" : { "file" : "\#(videoID)-poster.jpg", "url" : "\#(posterURL)", "urlExpires" : null, "width" : 720, "height" : 406 },
          "renditions" : {
            "android" : \#(rendition(videoAndroidID, "jpg", "image/jpeg", 720, 360, crop: #"{ "x" : 0, "y" : 23, "width" : 720, "height" : 360 }"#))
          }
        },
        {
          "id" : "\#(audioID)", "status" : "ok", "source" : "samples/jingle.wav", "kind" : "audio",
          "file" : "\#(audioID).m4a", "url" : "\#(audioURL)", "urlExpires" : null,
          "uti" : "public.mpeg-4-audio", "mime" : "audio/mp4", "bytes" : 480000,
          "sha256" : "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0",
          "width" : null, "height" : null, "duration" : 30.0, "frames" : null,
          "options" : { "UNNotificationAttachmentOptionsTypeHintKey" : "public.mpeg-4-audio" },
          "input" : { "type" : "wav", "bytes" : 5292044, "width" : null, "height" : null, "duration" : 30.0 },
          "operations" : [ "encoded aac 128 kbit/s" ], "warnings" : [ ]
        }
      ]
    }
    """#

/// The manifest's three attachments, decoded as `pushprep payload` reads them.
private struct Fixtures {
    var image: PushPrepCore.Attachment
    var video: PushPrepCore.Attachment
    var audio: PushPrepCore.Attachment

    static func load() throws -> Fixtures {
        var settings = ProcessingSettings()
        settings.platforms = PlatformSet([.ios, .android, .web])
        let encoded = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
        let text = manifestText.replacingOccurrences(of: "SETTINGS", with: encoded)
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(text.utf8))
        let ready = manifest.attachments.compactMap(\.attachment)
        try #require(ready.count == 3)
        return Fixtures(image: ready[0], video: ready[1], audio: ready[2])
    }

    /// `attachment` as a manifest made with `--platforms ios` (or a version 1 one) has it.
    static func iosOnly(_ attachment: PushPrepCore.Attachment) -> PushPrepCore.Attachment {
        var plain = attachment
        plain.renditions = Renditions()
        return plain
    }
}

private let plainContent = PayloadContent(title: "Spring sale", body: "Tap to see what's new")
private let fullContent = PayloadContent(
    title: "Spring sale", subtitle: "Today only", body: "Tap to see what's new", category: "SALE",
    threadID: "promo", sound: "default")
private let hintKey = "UNNotificationAttachmentOptionsTypeHintKey"
private let fullAlert = #"{"title":"Spring sale","subtitle":"Today only","body":"Tap to see what's new"}"#

/// One payload with renditions, exactly as `payload` must write it.
struct PlatformShape: Sendable, CustomTestStringConvertible {
    let name: String
    let dialect: PushDialect
    let picks: [Pick]
    let content: PayloadContent
    let expected: String
    let findings: [ExpectedFinding]
    let urls: [String]

    var testDescription: String { name }
}

// MARK: - Tests

/// `pushprep payload` for every platform: each dialect's Android and web keys carry the
/// attachment's renditions (never the iOS file), checked exactly, against each provider's
/// documented shape (``ProviderShape``) and by pre-flight; a platform without a rendition gets
/// no picture and a note, in words.
@Suite struct PayloadPlatformTests {
    static let shapes: [PlatformShape] = [
        PlatformShape(
            name: "apns: renditions change nothing (APNs reaches iPhones only)", dialect: .apns, picks: [.image],
            content: plainContent,
            expected:
                #"{"aps":{"alert":{"title":"Spring sale","body":"Tap to see what's new"},"mutable-content":1},"attachments":[{"id":"\#(imageID)","url":"\#(imageURL)","type":"public.jpeg","options":{"\#(hintKey)":"public.jpeg"}}]}"#,
            findings: [], urls: [imageURL]),
        PlatformShape(
            name: "fcm: the iOS file for iOS, the Android rendition for Android, the web pair for browsers",
            dialect: .fcm, picks: [.image], content: plainContent,
            expected:
                #"{"message":{"notification":{"title":"Spring sale","body":"Tap to see what's new"},"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(imageURL)"}},"android":{"notification":{"image":"\#(imageAndroidURL)"}},"webpush":{"notification":{"image":"\#(imageWebURL)","icon":"\#(imageIconURL)"}}}}"#,
            findings: [], urls: [imageURL]),
        PlatformShape(
            name: "fcm: a movie's poster for iOS, its Android rendition for Android", dialect: .fcm, picks: [.video],
            content: fullContent,
            expected:
                #"{"message":{"notification":{"title":"Spring sale","body":"Tap to see what's new"},"apns":{"payload":{"aps":{"alert":\#(fullAlert),"sound":"default","thread-id":"promo","category":"SALE","mutable-content":1}},"fcm_options":{"image":"\#(posterURL)"}},"android":{"notification":{"image":"\#(videoAndroidURL)"}}}}"#,
            findings: [.info(.categoryNoted, "/message/apns/payload/aps/category")], urls: [posterURL]),
        PlatformShape(
            name: "onesignal: big_picture, chrome_web_image and chrome_web_icon beside ios_attachments",
            dialect: .onesignal, picks: [.image], content: fullContent,
            expected:
                #"{"headings":{"en":"Spring sale"},"subtitle":{"en":"Today only"},"contents":{"en":"Tap to see what's new"},"ios_attachments":{"\#(imageID)":"\#(imageURL)"},"big_picture":"\#(imageAndroidURL)","chrome_web_image":"\#(imageWebURL)","chrome_web_icon":"\#(imageIconURL)","mutable_content":true,"ios_category":"SALE","thread_id":"promo","ios_sound":"default"}"#,
            findings: [.info(.categoryNoted, "/ios_category")], urls: [imageURL]),
        PlatformShape(
            name: "airship: device_types ios, android, web with the big_picture style and the web icon and image",
            dialect: .airship, picks: [.image], content: plainContent,
            expected:
                #"{"device_types":["ios","android","web"],"notification":{"alert":"Tap to see what's new","ios":{"title":"Spring sale","mutable_content":true,"media_attachment":{"url":"\#(imageURL)"}},"android":{"title":"Spring sale","style":{"type":"big_picture","big_picture":"\#(imageAndroidURL)"}},"web":{"title":"Spring sale","icon":{"url":"\#(imageIconURL)"},"image":{"url":"\#(imageWebURL)"}}}}"#,
            findings: [], urls: [imageURL]),
        PlatformShape(
            name: "airship: a movie reaches ios and android, not web (it has no web rendition)", dialect: .airship,
            picks: [.video], content: plainContent,
            expected:
                #"{"device_types":["ios","android"],"notification":{"alert":"Tap to see what's new","ios":{"title":"Spring sale","mutable_content":true,"media_attachment":{"url":"\#(videoURL)","options":{"time":1.5}}},"android":{"title":"Spring sale","style":{"type":"big_picture","big_picture":"\#(videoAndroidURL)"}}}}"#,
            findings: [], urls: [videoURL]),
        PlatformShape(
            name: "braze: android_push with appboy_image_url, web_push with image_url and large_image_url",
            dialect: .braze, picks: [.image], content: fullContent,
            expected:
                #"{"messages":{"apple_push":{"alert":\#(fullAlert),"asset_url":"\#(imageURL)","asset_file_type":"jpg","mutable_content":true,"category":"SALE","sound":"default","notification_group_thread_id":"promo"},"android_push":{"alert":"Tap to see what's new","title":"Spring sale","extra":{"appboy_image_url":"\#(imageAndroidURL)"}},"web_push":{"alert":"Tap to see what's new","title":"Spring sale","image_url":"\#(imageIconURL)","large_image_url":"\#(imageWebURL)"}}}"#,
            findings: [.info(.categoryNoted, "/messages/apple_push/category")], urls: [imageURL]),
    ]

    @Test(
        "each dialect's payload with renditions, exactly: the documented shape, clean in pre-flight, no notes",
        arguments: shapes)
    func shape(_ shape: PlatformShape) throws {
        let fixtures = try Fixtures.load()
        let built = try PayloadBuilder.buildWithNotes(
            dialect: shape.dialect, attachments: fixtures.pick(shape.picks), content: shape.content)
        #expect(built.payload.serialized() == shape.expected, "got \(built.payload.serialized(pretty: true))")
        #expect(built.notes.isEmpty, "\(built.notes)")
        #expect(ProviderShape.violations(built.payload, shape.dialect) == [])
        try expectClean(built.payload, shape.dialect, findings: shape.findings, urls: shape.urls)
    }

    @Test(
        "each platform's keys hold that platform's rendition, and the iOS keys the iOS file",
        arguments: PushDialect.allCases)
    func eachPlatformItsOwnFile(_ dialect: PushDialect) throws {
        let fixtures = try Fixtures.load()
        let payload = try PayloadBuilder.build(dialect: dialect, attachments: [fixtures.image], content: plainContent)
        let ios: [String]
        let android: [String]
        let webImage: [String]
        let webIcon: [String]
        switch dialect {
        case .apns: (ios, android, webImage, webIcon) = (["/attachments/0/url"], [], [], [])
        case .fcm:
            (ios, android, webImage, webIcon) = (
                ["/message/apns/fcm_options/image"], ["/message/android/notification/image"],
                ["/message/webpush/notification/image"], ["/message/webpush/notification/icon"]
            )
        case .onesignal:
            (ios, android, webImage, webIcon) = (
                ["/ios_attachments/\(imageID)"], ["/big_picture"], ["/chrome_web_image"], ["/chrome_web_icon"]
            )
        case .airship:
            (ios, android, webImage, webIcon) = (
                ["/notification/ios/media_attachment/url"], ["/notification/android/style/big_picture"],
                ["/notification/web/image/url"], ["/notification/web/icon/url"]
            )
        case .braze:
            (ios, android, webImage, webIcon) = (
                ["/messages/apple_push/asset_url"], ["/messages/android_push/extra/appboy_image_url"],
                ["/messages/web_push/large_image_url"], ["/messages/web_push/image_url"]
            )
        }
        for (pointers, url) in [
            (ios, imageURL), (android, imageAndroidURL), (webImage, imageWebURL), (webIcon, imageIconURL),
        ] {
            for pointer in pointers {
                let path = try #require(JSONPath(pointer: pointer))
                #expect(payload[path] == .string(url), "\(dialect) \(pointer)")
            }
        }
        // Every URL in the payload is one of these, each where it belongs: the iOS file never
        // reaches another platform's keys, and no rendition reaches the iOS keys.
        let all = Self.strings(in: payload).filter { $0.hasPrefix("https://") }
        #expect(all.filter { $0 == imageURL }.count == 1, "\(dialect): \(all)")
        #expect(Set(all).isSubset(of: [imageURL, imageAndroidURL, imageWebURL, imageIconURL]))
        // FCM: never the common notification.image, which every platform without its own shows.
        #expect(payload["message"]?["notification"]?["image"] == nil)
    }

    @Test("a sound: the Android push goes with its text and no picture, in every dialect, and a note in words")
    func sound() throws {
        let fixtures = try Fixtures.load()
        let note = "android: \(audioID) has no Android rendition (a sound); the Android push carries no image"
        let expected: [PushDialect: (payload: String, note: String)] = [
            .onesignal: (
                #"{"headings":{"en":"Spring sale"},"contents":{"en":"Tap to see what's new"},"ios_attachments":{"\#(audioID)":"\#(audioURL)"},"mutable_content":true}"#,
                note
            ),
            .airship: (
                #"{"device_types":["ios","android"],"notification":{"alert":"Tap to see what's new","ios":{"title":"Spring sale","mutable_content":true,"media_attachment":{"url":"\#(audioURL)"}},"android":{"title":"Spring sale"}}}"#,
                note
            ),
            .braze: (
                #"{"messages":{"apple_push":{"alert":{"title":"Spring sale","body":"Tap to see what's new"},"asset_url":"\#(audioURL)","asset_file_type":"m4a","mutable_content":true},"android_push":{"alert":"Tap to see what's new","title":"Spring sale"}}}"#,
                note
            ),
        ]
        for (dialect, want) in expected {
            let built = try PayloadBuilder.buildWithNotes(
                dialect: dialect, attachments: [fixtures.audio], content: plainContent)
            #expect(built.payload.serialized() == want.payload, "\(dialect): \(built.payload.serialized())")
            #expect(built.notes.map(\.description) == [want.note])
            #expect(built.notes.map(\.platform) == [.android])
            #expect(built.notes.map(\.attachmentID) == [audioID])
            #expect(ProviderShape.violations(built.payload, dialect) == [])
            try expectClean(built.payload, dialect, findings: [], urls: [audioURL])
        }
        // APNs reaches iPhones only: nothing to say.
        #expect(
            try PayloadBuilder.buildWithNotes(dialect: .apns, attachments: [fixtures.audio], content: plainContent)
                .notes.isEmpty)
    }

    @Test(
        "a manifest without renditions (--platforms ios, version 1) gives today's payload and a note per attachment",
        arguments: PushDialect.allCases)
    func withoutRenditions(_ dialect: PushDialect) throws {
        let fixtures = try Fixtures.load()
        let image = Fixtures.iosOnly(fixtures.image)
        let built = try PayloadBuilder.buildWithNotes(dialect: dialect, attachments: [image], content: plainContent)
        #expect(built.payload.serialized().contains(imageURL))
        #expect(!built.payload.serialized().contains("\(base)/and-"))
        let consequence: String? =
            switch dialect {
            case .apns: nil
            case .fcm, .onesignal: "the Android push carries no image"
            case .airship: "device_types leaves out android: Android devices get no push from this payload"
            case .braze: "there is no android_push: Android devices get no push from this payload"
            }
        #expect(
            built.notes.map(\.description)
                == consequence.map {
                    [
                        "android: \(imageID) has no Android rendition (processed without android in --platforms,"
                            + " or no rendition could be made); \($0)"
                    ]
                } ?? [])
        if dialect == .airship { #expect(built.payload["device_types"] == .array([.string("ios")])) }
        #expect(ProviderShape.violations(built.payload, dialect) == [])
        try expectClean(built.payload, dialect, findings: [], urls: [imageURL])
    }

    @Test("OneSignal carries one picture per platform: the first attachment's, with a note for each other")
    func oneSignalSeveral() throws {
        let fixtures = try Fixtures.load()
        let built = try PayloadBuilder.buildWithNotes(
            dialect: .onesignal, attachments: [fixtures.audio, fixtures.video, fixtures.image], content: plainContent)
        #expect(built.payload["big_picture"] == .string(videoAndroidURL))
        #expect(built.payload["chrome_web_image"] == .string(imageWebURL))
        #expect(built.payload["chrome_web_icon"] == .string(imageIconURL))
        #expect(
            built.notes.map(\.description) == [
                "android: \(audioID) has no Android rendition (a sound); the Android push shows \(videoID)'s picture",
                "web: \(audioID) has no web rendition (a sound); the web push shows \(imageID)'s picture",
                "web: \(videoID) has no web rendition (processed without web in --platforms, or no rendition could"
                    + " be made); the web push shows \(imageID)'s picture",
                "android: \(imageID)'s Android rendition is not sent: OneSignal carries one Android picture, \(videoID)'s",
            ])
        #expect(ProviderShape.violations(built.payload, .onesignal) == [])
        try expectClean(built.payload, .onesignal, findings: [], urls: [audioURL, videoURL, imageURL])
    }

    @Test("Braze: without both a title and a body there is no android_push or web_push, and the notes say why")
    func brazeNeedsTitleAndBody() throws {
        let fixtures = try Fixtures.load()
        for content in [PayloadContent(body: "Tap"), PayloadContent(title: "Spring sale")] {
            let built = try PayloadBuilder.buildWithNotes(
                dialect: .braze, attachments: [fixtures.image], content: content)
            #expect(built.payload["messages"]?.objectValue?.keys == ["apple_push"])
            #expect(
                built.notes.map(\.description) == [
                    "android: \(imageID)'s Android rendition is not sent: Braze's android_push needs a title and a"
                        + " body, so there is none and Android devices get no push from this payload; give both",
                    "web: \(imageID)'s web rendition is not sent: Braze's web_push needs a title and a body, so"
                        + " there is none and browsers get no push from this payload; give both",
                ])
            try expectClean(built.payload, .braze, findings: [], urls: [imageURL])
        }
    }

    @Test(
        "a rendition the payload carries without a URL is invalid_payload; --base-url gives it one",
        arguments: [
            PushDialect.fcm, .onesignal, .airship, .braze,
        ])
    func renditionWithoutURL(_ dialect: PushDialect) throws {
        let fixtures = try Fixtures.load()
        var image = fixtures.image
        image.renditions.android?.url = nil
        do {
            let payload = try PayloadBuilder.build(dialect: dialect, attachments: [image], content: plainContent)
            Issue.record("built \(payload.serialized())")
        } catch {
            #expect(error.code == .invalidPayload)
            #expect(error.message.contains(imageAndroidID) && error.message.contains("--base-url"), "\(error.message)")
        }
        // As `payload --base-url` reads a manifest written without URLs.
        let entry = ManifestEntry.ok(image)
        let selection = try PayloadSelection(from: [entry], baseURL: "https://media.example.org/p/")
        let payload = try PayloadBuilder.build(
            dialect: dialect, attachments: selection.attachments, content: plainContent)
        #expect(Self.strings(in: payload).contains("https://media.example.org/p/\(imageAndroidID).jpg"))
    }

    @Test("--merge adds to the Android and web parts and never replaces their pictures")
    func mergeKeepsPictures() throws {
        let fixtures = try Fixtures.load()
        let extra = try #require(
            try JSONValue.parse(
                Array(
                    #"{"message":{"token":"t","android":{"priority":"high","notification":{"image":"https://evil.example/x.jpg","channel_id":"sale"}},"webpush":{"notification":{"icon":"https://evil.example/i.png"}}}}"#
                        .utf8)
            ).value.objectValue)
        let payload = try PayloadBuilder.build(
            dialect: .fcm, attachments: [fixtures.image], content: plainContent, extra: extra)
        #expect(payload["message"]?["android"]?["notification"]?["image"] == .string(imageAndroidURL))
        #expect(payload["message"]?["android"]?["notification"]?["channel_id"] == .string("sale"))
        #expect(payload["message"]?["android"]?["priority"] == .string("high"))
        #expect(payload["message"]?["webpush"]?["notification"]?["icon"] == .string(imageIconURL))
        #expect(ProviderShape.violations(payload, .fcm) == [])
    }

    @Test("the shape checker finds keys no provider documents, wrong types, missing required keys")
    func shapeCheckerCatches() throws {
        func parse(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)).value }
        // The Admin SDK's camelCase field in the REST body, a URL as an object, Braze without a title.
        let fcm = try parse(
            #"{"message":{"notification":{"title":"T"},"android":{"notification":{"imageUrl":"https://a/b.jpg"}}}}"#)
        #expect(ProviderShape.violations(fcm, .fcm) == ["/message/android/notification/imageUrl: not documented"])
        let oneSignal = try parse(#"{"contents":{"en":"B"},"big_picture":{"url":"https://a/b.jpg"}}"#)
        #expect(ProviderShape.violations(oneSignal, .onesignal) == ["/big_picture: expected an https URL, got object"])
        let airship = try parse(
            #"{"device_types":["ios","androids"],"notification":{"android":{"style":{"type":"big_picture"}}}}"#)
        #expect(
            ProviderShape.violations(airship, .airship) == [
                "/device_types/1: expected one of android, ios, web (and Airship's others), got \"androids\"",
                "/notification/android/style: missing big_picture",
            ])
        let braze = try parse(
            #"{"messages":{"android_push":{"alert":"B","extra":{"appboy_image_url":"https://a/b"}}}}"#)
        #expect(ProviderShape.violations(braze, .braze) == ["/messages/android_push: missing title"])
    }

    // MARK: - Helpers

    /// Every string in `value`, depth first.
    static func strings(in value: JSONValue) -> [String] {
        switch value {
        case .string(let text): [text]
        case .array(let items): items.flatMap(strings(in:))
        case .object(let object): object.flatMap { strings(in: $0.value) }
        default: []
        }
    }
}

extension Fixtures {
    func pick(_ picks: [Pick]) -> [PushPrepCore.Attachment] {
        picks.map { pick in
            switch pick {
            case .image: image
            case .video: video
            case .audio: audio
            }
        }
    }
}

// MARK: - Providers' documented shapes

/// Each provider's request body as its API reference documents it, for the members PushPrep
/// writes and the ones a sender adds around them: every key a payload has must be documented at
/// its place with its type, and the keys a provider requires must be there. Written from:
/// - FCM HTTP v1 `projects.messages` (Message, Notification, AndroidConfig, AndroidNotification,
///   WebpushConfig, ApnsConfig): https://firebase.google.com/docs/reference/fcm/rest/v1/projects.messages;
///   `webpush.notification` takes the Web Notification API's options
///   (https://developer.mozilla.org/en-US/docs/Web/API/Notification/Notification).
/// - OneSignal push notification (create message): https://documentation.onesignal.com/reference/push-notification.
/// - Airship push object and platform overrides (`device_types`, `notification.ios/android/web`,
///   the Android `style` object): https://docs.airship.com/developer/rest-api/ua/schemas/push/,
///   https://docs.airship.com/developer/rest-api/ua/schemas/platform-overrides/.
/// - Braze `/messages/send` messaging objects: https://www.braze.com/docs/api/objects_filters/messaging/apple_object,
///   .../android_object (`alert` and `title` required; the big picture is `extra.appboy_image_url`),
///   .../web_objects.
enum ProviderShape {
    /// A JSON shape.
    indirect enum Shape: Sendable {
        case string
        case https
        case bool
        case number
        case any
        case oneOf(Set<String>, described: String)
        case array(Shape)
        case map(Shape)
        case object([String: Shape], required: Set<String> = [])
    }

    static let aps: Shape = .object([
        "alert": .any, "badge": .number, "sound": .any, "thread-id": .string, "category": .string,
        "content-available": .number, "mutable-content": .number, "interruption-level": .string,
        "relevance-score": .number, "target-content-id": .string,
    ])

    static let fcm: Shape = .object([
        "validate_only": .bool,
        "message": .object([
            "name": .string, "data": .map(.string), "token": .string, "topic": .string, "condition": .string,
            "fcm_options": .object(["analytics_label": .string]),
            "notification": .object(["title": .string, "body": .string, "image": .https]),
            "android": .object([
                "collapse_key": .string, "priority": .oneOf(["normal", "high"], described: "normal, high"),
                "ttl": .string, "restricted_package_name": .string, "data": .map(.string), "direct_boot_ok": .bool,
                "fcm_options": .object(["analytics_label": .string]),
                "notification": .object([
                    "title": .string, "body": .string, "icon": .string, "color": .string, "sound": .string,
                    "tag": .string, "click_action": .string, "body_loc_key": .string, "body_loc_args": .array(.string),
                    "title_loc_key": .string, "title_loc_args": .array(.string), "channel_id": .string,
                    "ticker": .string, "sticky": .bool, "event_time": .string, "local_only": .bool,
                    "notification_priority": .string, "default_sound": .bool, "default_vibrate_timings": .bool,
                    "default_light_settings": .bool, "vibrate_timings": .array(.string), "visibility": .string,
                    "notification_count": .number, "light_settings": .any, "image": .https,
                ]),
            ]),
            "webpush": .object([
                "headers": .map(.string), "data": .map(.string), "fcm_options": .object(["link": .string]),
                "notification": .object([
                    "title": .string, "body": .string, "icon": .https, "image": .https, "badge": .https,
                    "dir": .string, "lang": .string, "tag": .string, "data": .any, "requireInteraction": .bool,
                    "renotify": .bool, "silent": .bool, "actions": .any, "timestamp": .number, "vibrate": .any,
                ]),
            ]),
            "apns": .object([
                "headers": .map(.string),
                "payload": .object(["aps": aps]),
                "fcm_options": .object(["analytics_label": .string, "image": .https]),
            ]),
        ]),
    ])

    static let oneSignal: Shape = .object(
        [
            "app_id": .string, "include_subscription_ids": .array(.string), "included_segments": .array(.string),
            "excluded_segments": .array(.string), "include_aliases": .any, "target_channel": .string,
            "headings": .map(.string), "subtitle": .map(.string), "contents": .map(.string),
            "ios_attachments": .map(.https), "mutable_content": .bool, "ios_category": .string,
            "thread_id": .string, "ios_sound": .string, "big_picture": .https, "chrome_web_image": .https,
            "chrome_web_icon": .https, "chrome_web_badge": .https, "large_icon": .string, "data": .any,
            "url": .string, "ios_badgeType": .string, "ios_badgeCount": .number, "content_available": .bool,
            "ios_interruption_level": .string, "ios_relevance_score": .number, "send_after": .string, "ttl": .number,
        ], required: ["contents"])

    static let airshipDeviceTypes: Set<String> = ["ios", "android", "web", "amazon", "email", "sms", "open"]

    static let airship: Shape = .object([
        "audience": .any, "options": .any, "campaigns": .any, "message": .any,
        "device_types": .array(.oneOf(airshipDeviceTypes, described: "android, ios, web (and Airship's others)")),
        "notification": .object([
            "alert": .string,
            "actions": .any,
            "ios": .object([
                "alert": .any, "title": .string, "subtitle": .string, "badge": .any, "sound": .any,
                "content_available": .bool, "mutable_content": .bool, "category": .string, "thread_id": .string,
                "interruption_level": .string, "relevance_score": .number, "extra": .map(.string),
                "media_attachment": .object(
                    [
                        "url": .https, "content": .any,
                        "options": .object(["time": .number, "hidden": .bool, "crop": .any]),
                    ], required: ["url"]),
            ]),
            "android": .object([
                "alert": .string, "title": .string, "summary": .string, "extra": .map(.string), "icon": .string,
                "icon_color": .string, "category": .string, "priority": .number, "notification_channel": .string,
                "delivery_priority": .string, "collapse_key": .string, "time_to_live": .any,
                "style": .object(
                    [
                        "type": .oneOf(["big_picture"], described: "big_picture (the style PushPrep writes)"),
                        "big_picture": .https, "title": .string, "summary": .string,
                    ], required: ["type", "big_picture"]),
            ]),
            "web": .object([
                "alert": .string, "title": .string, "extra": .map(.string), "require_interaction": .bool,
                "time_to_live": .any, "actions": .any, "buttons": .any,
                "icon": .object(["url": .https], required: ["url"]),
                "image": .object(["url": .https], required: ["url"]),
            ]),
        ]),
    ])

    static let braze: Shape = .object([
        "external_user_ids": .array(.string), "user_aliases": .any, "segment_id": .string, "audience": .any,
        "campaign_id": .string, "send_id": .string, "broadcast": .bool, "override_frequency_capping": .bool,
        "recipient_subscription_state": .string,
        "messages": .object([
            "apple_push": .object([
                "alert": .any, "badge": .number, "sound": .string, "extra": .any, "content-available": .bool,
                "interruption_level": .string, "relevance_score": .number, "category": .string,
                "asset_url": .https, "asset_file_type": .string, "mutable_content": .bool,
                "notification_group_thread_id": .string, "custom_uri": .string,
            ]),
            "android_push": .object(
                [
                    "alert": .string, "title": .string, "custom_uri": .string, "summary_text": .string,
                    "notification_channel_id": .string, "priority": .number, "android_priority": .string,
                    "push_icon_image_url": .https, "collapse_key": .string, "sound": .string,
                    "extra": .object(["appboy_image_url": .https]),
                ], required: ["alert", "title"]),
            "web_push": .object(
                [
                    "alert": .string, "title": .string, "extra": .any, "custom_uri": .string, "image_url": .https,
                    "large_image_url": .https, "require_interaction": .bool, "time_to_live": .number,
                ], required: ["alert", "title"]),
        ]),
    ])

    static let apns: Shape = .object([
        "aps": aps,
        "attachments": .array(
            .object(
                ["id": .string, "url": .https, "type": .string, "options": .map(.any)],
                required: ["id", "url", "type", "options"])),
        "deeplink": .any,
    ])

    /// Where `payload` departs from `dialect`'s documented shape, one line each (empty when it
    /// does not).
    static func violations(_ payload: JSONValue, _ dialect: PushDialect) -> [String] {
        let shape: Shape =
            switch dialect {
            case .apns: apns
            case .fcm: fcm
            case .onesignal: oneSignal
            case .airship: airship
            case .braze: braze
            }
        var found: [String] = []
        check(payload, shape, at: "", into: &found)
        return found
    }

    private static func check(_ value: JSONValue, _ shape: Shape, at pointer: String, into found: inout [String]) {
        func expect(_ ok: Bool, _ what: String) {
            if !ok { found.append("\(pointer.isEmpty ? "/" : pointer): expected \(what), got \(value.typeName)") }
        }
        switch shape {
        case .any: break
        case .string: expect(value.stringValue != nil, "a string")
        case .https: expect(value.stringValue?.hasPrefix("https://") == true, "an https URL")
        case .bool: expect(value.boolValue != nil, "a boolean")
        case .number: expect(value.doubleValue != nil, "a number")
        case .oneOf(let allowed, let described):
            if let text = value.stringValue, !allowed.contains(text) {
                found.append("\(pointer): expected one of \(described), got \"\(text)\"")
            } else {
                expect(value.stringValue != nil, "one of \(described)")
            }
        case .array(let item):
            guard let items = value.arrayValue else { return expect(false, "an array") }
            for (index, element) in items.enumerated() { check(element, item, at: "\(pointer)/\(index)", into: &found) }
        case .map(let item):
            guard let object = value.objectValue else { return expect(false, "an object") }
            for (key, member) in object { check(member, item, at: "\(pointer)/\(key)", into: &found) }
        case .object(let members, let required):
            guard let object = value.objectValue else { return expect(false, "an object") }
            for (key, member) in object {
                guard let memberShape = members[key] else {
                    found.append("\(pointer)/\(key): not documented")
                    continue
                }
                check(member, memberShape, at: "\(pointer)/\(key)", into: &found)
            }
            for key in required.sorted() where object[key] == nil {
                found.append("\(pointer.isEmpty ? "/" : pointer): missing \(key)")
            }
        }
    }
}
