import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepJSON
@testable import PushPrepPayload

// MARK: - Fixtures

private let base = "https://cdn.example.com/push"
private let imageID = "img-5c2d0d6c0c3bd0c6f4e8f1d3c7a2b6e1f0a9d8c7"
private let videoID = "vid-0f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e"
private let audioID = "aud-9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b"
private let imageURL = "\(base)/\(imageID).jpg"
private let videoURL = "\(base)/\(videoID).mp4"
private let audioURL = "\(base)/\(audioID).m4a"
private let posterURL = "\(base)/\(videoID)-poster.jpg"
private let hintKey = "UNNotificationAttachmentOptionsTypeHintKey"
private let timeKey = "UNNotificationAttachmentOptionsThumbnailTimeKey"

/// A manifest as `pushprep process --base-url https://cdn.example.com/push` writes it: a JPEG, an
/// MP4 with its poster frame and a thumbnail time, an M4A, and an input that failed. `SETTINGS`
/// stands for the encoded default settings.
private let manifestText = #"""
    {
      "version" : 1,
      "generator" : { "name" : "pushprep", "version" : "0.1.0" },
      "settings" : SETTINGS,
      "attachments" : [
        {
          "id" : "\#(imageID)", "status" : "ok", "source" : "samples/banner.webp", "kind" : "image",
          "file" : "\#(imageID).jpg", "url" : "\#(imageURL)",
          "uti" : "public.jpeg", "mime" : "image/jpeg", "bytes" : 151234,
          "sha256" : "4f0c1e7d9b2a3c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6",
          "width" : 1200, "height" : 1600, "duration" : null, "frames" : 1,
          "options" : { "UNNotificationAttachmentOptionsTypeHintKey" : "public.jpeg" },
          "input" : { "type" : "webp", "bytes" : 402113, "width" : 1200, "height" : 1600, "duration" : null },
          "operations" : [ "decoded webp 1200x1600", "encoded jpeg quality 82" ], "warnings" : [ ]
        },
        {
          "id" : "\#(videoID)", "status" : "ok", "source" : "samples/clip.mov", "kind" : "video",
          "file" : "\#(videoID).mp4", "url" : "\#(videoURL)",
          "uti" : "public.mpeg-4", "mime" : "video/mp4", "bytes" : 2412000,
          "sha256" : "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
          "width" : 720, "height" : 406, "duration" : 8.0, "frames" : 240,
          "options" : { "UNNotificationAttachmentOptionsTypeHintKey" : "public.mpeg-4",
                        "UNNotificationAttachmentOptionsThumbnailTimeKey" : 1.5 },
          "input" : { "type" : "mov", "bytes" : 9120000, "width" : 1920, "height" : 1080, "duration" : 12.5,
                      "videoCodec" : "hevc", "audioCodec" : "aac" },
          "operations" : [ "encoded h264 720x406" ], "warnings" : [ ],
          "poster" : { "file" : "\#(videoID)-poster.jpg", "width" : 720, "height" : 406 }
        },
        {
          "id" : "\#(audioID)", "status" : "ok", "source" : "samples/jingle.wav", "kind" : "audio",
          "file" : "\#(audioID).m4a", "url" : "\#(audioURL)",
          "uti" : "public.mpeg-4-audio", "mime" : "audio/mp4", "bytes" : 480000,
          "sha256" : "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0",
          "width" : null, "height" : null, "duration" : 30.0, "frames" : null,
          "options" : { "UNNotificationAttachmentOptionsTypeHintKey" : "public.mpeg-4-audio" },
          "input" : { "type" : "wav", "bytes" : 5292044, "width" : null, "height" : null, "duration" : 30.0 },
          "operations" : [ "encoded aac 128 kbit/s" ], "warnings" : [ ]
        },
        { "status" : "failed", "source" : "notes.txt",
          "error" : { "code" : "unsupported_type", "message" : "not a recognised image, video or audio file" } }
      ]
    }
    """#

/// The manifest's three ready attachments.
private struct Fixtures {
    var image: PushPrepCore.Attachment
    var video: PushPrepCore.Attachment
    var audio: PushPrepCore.Attachment

    /// The manifest, decoded the way `pushprep payload` reads it.
    static func manifest() throws -> Manifest {
        let settings = String(decoding: try JSONEncoder().encode(ProcessingSettings()), as: UTF8.self)
        let text = manifestText.replacingOccurrences(of: "SETTINGS", with: settings)
        return try JSONDecoder().decode(Manifest.self, from: Data(text.utf8))
    }

    /// Decodes the manifest the way `pushprep payload` reads it.
    static func load() throws -> Fixtures {
        let manifest = try Self.manifest()
        let ready = manifest.attachments.compactMap(\.attachment)
        try #require(ready.count == 3 && manifest.attachments.count == 4)
        return Fixtures(image: ready[0], video: ready[1], audio: ready[2])
    }

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

/// Which of the manifest's attachments a case sends.
enum Pick: Sendable {
    case image
    case video
    case audio
}

/// Every text and presentation key `payload` takes.
private let fullContent = PayloadContent(
    title: "Spring sale", subtitle: "Today only", body: "Tap to see what's new", category: "SALE",
    threadID: "promo", sound: "default")

/// A title and a body only.
private let plainContent = PayloadContent(title: "Spring sale", body: "Tap to see what's new")

/// One payload `payload` must write, exactly, and what pre-flight must say about it.
struct PayloadShape: Sendable, CustomTestStringConvertible {
    let name: String
    let dialect: PushDialect
    let picks: [Pick]
    let content: PayloadContent
    /// The whole payload, compact, in the order it is written.
    let expected: String
    /// Pre-flight's findings on it: at most the category noted.
    let findings: [ExpectedFinding]
    /// The attachment URLs pre-flight finds, in order.
    let urls: [String]

    var testDescription: String { name }
}

/// The APNs attachment entries PushPrep's layout writes for the fixtures.
private let apnsImage =
    #"{"id":"\#(imageID)","url":"\#(imageURL)","type":"public.jpeg","options":{"\#(hintKey)":"public.jpeg"}}"#
private let apnsVideo =
    #"{"id":"\#(videoID)","url":"\#(videoURL)","type":"public.mpeg-4","options":{"\#(hintKey)":"public.mpeg-4","\#(timeKey)":1.5}}"#
private let apnsAudio =
    #"{"id":"\#(audioID)","url":"\#(audioURL)","type":"public.mpeg-4-audio","options":{"\#(hintKey)":"public.mpeg-4-audio"}}"#
private let fullAlert = #"{"title":"Spring sale","subtitle":"Today only","body":"Tap to see what's new"}"#

// MARK: - Tests

/// `pushprep payload`'s builder: each provider's documented shape, exactly, fed back into
/// pre-flight (with the dialect given and detected) and found clean; and what it refuses.
@Suite struct PayloadBuilderTests {
    static let shapes: [PayloadShape] = [
        PayloadShape(
            name: "apns: image, video and audio with every key", dialect: .apns, picks: [.image, .video, .audio],
            content: fullContent,
            expected:
                #"{"aps":{"alert":\#(fullAlert),"sound":"default","thread-id":"promo","category":"SALE","mutable-content":1},"attachments":[\#(apnsImage),\#(apnsVideo),\#(apnsAudio)]}"#,
            findings: [.warning(.attachmentsBeyondFirst, "/attachments/1"), .info(.categoryNoted, "/aps/category")],
            urls: [imageURL, videoURL, audioURL]),
        PayloadShape(
            name: "apns: a body only", dialect: .apns, picks: [.image], content: PayloadContent(body: "Tap"),
            expected: #"{"aps":{"alert":{"body":"Tap"},"mutable-content":1},"attachments":[\#(apnsImage)]}"#,
            findings: [], urls: [imageURL]),
        PayloadShape(
            name: "onesignal: image, video and audio with every key", dialect: .onesignal,
            picks: [.image, .video, .audio], content: fullContent,
            expected:
                #"{"headings":{"en":"Spring sale"},"subtitle":{"en":"Today only"},"contents":{"en":"Tap to see what's new"},"ios_attachments":{"\#(imageID)":"\#(imageURL)","\#(videoID)":"\#(videoURL)","\#(audioID)":"\#(audioURL)"},"mutable_content":true,"ios_category":"SALE","thread_id":"promo","ios_sound":"default"}"#,
            findings: [.info(.categoryNoted, "/ios_category")], urls: [imageURL, videoURL, audioURL]),
        PayloadShape(
            name: "onesignal: a body only", dialect: .onesignal, picks: [.audio], content: PayloadContent(body: "Tap"),
            expected:
                #"{"contents":{"en":"Tap"},"ios_attachments":{"\#(audioID)":"\#(audioURL)"},"mutable_content":true}"#,
            findings: [], urls: [audioURL]),
        PayloadShape(
            name: "airship: a video with its thumbnail time and every key", dialect: .airship, picks: [.video],
            content: fullContent,
            expected:
                #"{"device_types":["ios"],"notification":{"alert":"Tap to see what's new","ios":{"title":"Spring sale","subtitle":"Today only","mutable_content":true,"media_attachment":{"url":"\#(videoURL)","options":{"time":1.5}},"category":"SALE","thread_id":"promo","sound":"default"}}}"#,
            findings: [.info(.categoryNoted, "/notification/ios/category")], urls: [videoURL]),
        PayloadShape(
            name: "airship: an image with a title and a body", dialect: .airship, picks: [.image],
            content: plainContent,
            expected:
                #"{"device_types":["ios"],"notification":{"alert":"Tap to see what's new","ios":{"title":"Spring sale","mutable_content":true,"media_attachment":{"url":"\#(imageURL)"}}}}"#,
            findings: [], urls: [imageURL]),
        PayloadShape(
            name: "airship: a title only", dialect: .airship, picks: [.audio], content: PayloadContent(title: "Hi"),
            expected:
                #"{"device_types":["ios","android"],"notification":{"ios":{"title":"Hi","mutable_content":true,"media_attachment":{"url":"\#(audioURL)"}},"android":{"title":"Hi"}}}"#,
            findings: [], urls: [audioURL]),
        PayloadShape(
            name: "braze: an image with every key", dialect: .braze, picks: [.image], content: fullContent,
            expected:
                #"{"messages":{"apple_push":{"alert":\#(fullAlert),"asset_url":"\#(imageURL)","asset_file_type":"jpg","mutable_content":true,"category":"SALE","sound":"default","notification_group_thread_id":"promo"}}}"#,
            findings: [.info(.categoryNoted, "/messages/apple_push/category")], urls: [imageURL]),
        PayloadShape(
            name: "braze: a video", dialect: .braze, picks: [.video], content: plainContent,
            expected:
                #"{"messages":{"apple_push":{"alert":{"title":"Spring sale","body":"Tap to see what's new"},"asset_url":"\#(videoURL)","asset_file_type":"mp4","mutable_content":true}}}"#,
            findings: [], urls: [videoURL]),
        PayloadShape(
            name: "braze: an audio", dialect: .braze, picks: [.audio], content: plainContent,
            expected:
                #"{"messages":{"apple_push":{"alert":{"title":"Spring sale","body":"Tap to see what's new"},"asset_url":"\#(audioURL)","asset_file_type":"m4a","mutable_content":true},"android_push":{"alert":"Tap to see what's new","title":"Spring sale"}}}"#,
            findings: [], urls: [audioURL]),
        PayloadShape(
            name: "fcm: an image with every key (the subtitle needs an aps alert)", dialect: .fcm, picks: [.image],
            content: fullContent,
            expected:
                #"{"message":{"notification":{"title":"Spring sale","body":"Tap to see what's new"},"apns":{"payload":{"aps":{"alert":\#(fullAlert),"sound":"default","thread-id":"promo","category":"SALE","mutable-content":1}},"fcm_options":{"image":"\#(imageURL)"}}}}"#,
            findings: [.info(.categoryNoted, "/message/apns/payload/aps/category")], urls: [imageURL]),
        PayloadShape(
            name: "fcm: a video is sent as its poster", dialect: .fcm, picks: [.video], content: plainContent,
            expected:
                #"{"message":{"notification":{"title":"Spring sale","body":"Tap to see what's new"},"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(posterURL)"}}}}"#,
            findings: [], urls: [posterURL]),
        PayloadShape(
            name: "fcm: a title only", dialect: .fcm, picks: [.image], content: PayloadContent(title: "Hi"),
            expected:
                #"{"message":{"notification":{"title":"Hi"},"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(imageURL)"}}}}"#,
            findings: [], urls: [imageURL]),
    ]

    @Test(
        "each dialect's payload, exactly, pre-flights clean (bar an APNs push's attachments beyond the first) as given and as detected",
        arguments: shapes)
    func shape(_ shape: PayloadShape) throws {
        let fixtures = try Fixtures.load()
        let payload = try PayloadBuilder.build(
            dialect: shape.dialect, attachments: fixtures.pick(shape.picks), content: shape.content)
        let expected = try JSONValue.parse(Array(shape.expected.utf8)).value
        #expect(payload == expected, "got \(payload.serialized(pretty: true))")
        #expect(payload.serialized() == shape.expected)
        try expectClean(payload, shape.dialect, findings: shape.findings, urls: shape.urls)
    }

    @Test("the keys each provider documents, one by one")
    func documentedKeys() throws {
        let fixtures = try Fixtures.load()
        func build(_ dialect: PushDialect, _ attachments: [PushPrepCore.Attachment]) throws -> JSONValue {
            try PayloadBuilder.build(dialect: dialect, attachments: attachments, content: fullContent)
        }
        func value(_ payload: JSONValue, _ pointer: String) throws -> JSONValue? {
            payload[try #require(JSONPath(pointer: pointer))]
        }

        let apns = try build(.apns, [fixtures.image, fixtures.video])
        #expect(try value(apns, "/aps/alert/title") == .string("Spring sale"))
        #expect(try value(apns, "/aps/alert/subtitle") == .string("Today only"))
        #expect(try value(apns, "/aps/alert/body") == .string("Tap to see what's new"))
        #expect(try value(apns, "/aps/mutable-content") == .number("1"))
        #expect(try value(apns, "/attachments/0/id") == .string(imageID))
        #expect(try value(apns, "/attachments/0/url") == .string(imageURL))
        #expect(try value(apns, "/attachments/0/type") == .string("public.jpeg"))
        #expect(try value(apns, "/attachments/0/options/\(hintKey)") == .string("public.jpeg"))
        #expect(try value(apns, "/attachments/1/options/\(hintKey)") == .string("public.mpeg-4"))
        #expect(try value(apns, "/attachments/1/options/\(timeKey)")?.doubleValue == 1.5)

        let oneSignal = try build(.onesignal, [fixtures.image])
        #expect(try value(oneSignal, "/headings/en") == .string("Spring sale"))
        #expect(try value(oneSignal, "/contents/en") == .string("Tap to see what's new"))
        #expect(try value(oneSignal, "/ios_attachments/\(imageID)") == .string(imageURL))
        #expect(try value(oneSignal, "/mutable_content") == .bool(true))

        let airship = try build(.airship, [fixtures.image])
        #expect(try value(airship, "/device_types") == .array([.string("ios")]))
        #expect(try value(airship, "/notification/ios/media_attachment/url") == .string(imageURL))
        #expect(try value(airship, "/notification/ios/mutable_content") == .bool(true))

        let braze = try build(.braze, [fixtures.image])
        #expect(try value(braze, "/messages/apple_push/asset_url") == .string(imageURL))
        #expect(try value(braze, "/messages/apple_push/asset_file_type") == .string("jpg"))
        #expect(try value(braze, "/messages/apple_push/mutable_content") == .bool(true))

        let fcm = try build(.fcm, [fixtures.image])
        #expect(try value(fcm, "/message/notification/title") == .string("Spring sale"))
        #expect(try value(fcm, "/message/notification/body") == .string("Tap to see what's new"))
        #expect(try value(fcm, "/message/apns/payload/aps/mutable-content") == .number("1"))
        #expect(try value(fcm, "/message/apns/fcm_options/image") == .string(imageURL))
    }

    @Test("FCM sends a movie as its poster frame, a JPEG beside the movie")
    func fcmPoster() throws {
        let fixtures = try Fixtures.load()
        let payload = try PayloadBuilder.build(dialect: .fcm, attachments: [fixtures.video], content: plainContent)
        let image = try #require(payload[JSONPath(pointer: "/message/apns/fcm_options/image")!]?.stringValue)
        let poster = try #require(fixtures.video.poster)
        #expect(image == "\(base)/\(poster.file)")
        #expect(image.hasSuffix(".jpg"))
    }

    /// What cannot make a payload.
    enum Refusal: String, Sendable, CaseIterable {
        case noText = "no title and no body"
        case emptyText = "an empty title and body"
        case noURL = "an attachment without a url"
        case noAttachments = "no attachments"
    }

    @Test(
        "what cannot make a payload fails with invalid_payload in every dialect",
        arguments: PushDialect.allCases, Refusal.allCases)
    func refused(_ dialect: PushDialect, _ refusal: Refusal) throws {
        let fixtures = try Fixtures.load()
        var content = plainContent
        var attachments = [fixtures.image]
        switch refusal {
        case .noText: content = PayloadContent(subtitle: "Today only", category: "SALE")
        case .emptyText: content = PayloadContent(title: "", body: "")
        case .noURL: attachments[0].url = nil
        case .noAttachments: attachments = []
        }
        expectRefused(.invalidPayload, dialect, attachments, content)
    }

    @Test("what a provider cannot carry fails with invalid_payload")
    func providerRefusals() throws {
        let fixtures = try Fixtures.load()
        // Airship, Braze and FCM carry one attachment per push.
        expectRefused(.invalidPayload, .airship, [fixtures.image, fixtures.video], plainContent)
        expectRefused(.invalidPayload, .braze, [fixtures.image, fixtures.audio], plainContent)
        expectRefused(.invalidPayload, .fcm, [fixtures.image, fixtures.video], plainContent)
        // FCM's image key takes images: a sound never, a movie only by its poster.
        expectRefused(.invalidPayload, .fcm, [fixtures.audio], plainContent)
        var posterless = fixtures.video
        posterless.poster = nil
        expectRefused(.invalidPayload, .fcm, [posterless], plainContent)
        // OneSignal's message is its "contents".
        expectRefused(.invalidPayload, .onesignal, [fixtures.image], PayloadContent(title: "Spring sale"))
        // APNs and OneSignal carry several.
        #expect(throws: Never.self) {
            _ = try PayloadBuilder.build(
                dialect: .onesignal, attachments: [fixtures.image, fixtures.video], content: plainContent)
        }
    }

    @Test(
        "the size limit is exact: a body that fills it is sent, one byte more is payload_too_large",
        arguments: PushDialect.allCases)
    func sizeLimit(_ dialect: PushDialect) throws {
        let fixtures = try Fixtures.load()
        let limit = dialect == .braze ? 1912 : 4096
        func content(_ bodyBytes: Int) -> PayloadContent {
            PayloadContent(title: "T", body: String(repeating: "x", count: bodyBytes))
        }
        let small = try PayloadBuilder.build(dialect: dialect, attachments: [fixtures.image], content: content(1))
        // Each letter of the body is one byte, written once: what is left of the limit fills it.
        let fill = 1 + limit - Self.countedBytes(small, dialect)

        let full = try PayloadBuilder.build(dialect: dialect, attachments: [fixtures.image], content: content(fill))
        #expect(Self.countedBytes(full, dialect) == limit)
        try expectClean(full, dialect, findings: [], urls: [imageURL])

        expectRefused(.payloadTooLarge, dialect, [fixtures.image], content(fill + 1), mentioning: "\(limit)")
    }

    @Test("APNs: the attachments count together, and the limit is in UTF-8 bytes")
    func attachmentsCount() throws {
        let fixtures = try Fixtures.load()
        func content(_ body: String) -> PayloadContent { PayloadContent(title: "Spring sale", body: body) }
        let empty = try PayloadBuilder.build(dialect: .apns, attachments: [fixtures.image], content: content(""))
        // Two-byte letters (and one ASCII letter if the room is odd) fill one attachment's payload.
        let room = 4096 - Self.countedBytes(empty, .apns)
        let body = String(repeating: "é", count: room / 2) + String(repeating: "x", count: room % 2)
        let one = try PayloadBuilder.build(dialect: .apns, attachments: [fixtures.image], content: content(body))
        #expect(Self.countedBytes(one, .apns) == 4096)
        try expectClean(one, .apns, findings: [], urls: [imageURL])
        expectRefused(
            .payloadTooLarge, .apns, [fixtures.image, fixtures.audio], content(body), mentioning: "4096")
    }

    @Test("Braze: extra counts with the alert against 1912 bytes")
    func brazeExtra() throws {
        let fixtures = try Fixtures.load()
        let extra = try Self.object(
            #"{"messages":{"apple_push":{"extra":{"story":"\#(String(repeating: "s", count: 1900))"}}}}"#)
        let short = PayloadContent(body: "Tap")
        #expect(throws: Never.self) {
            _ = try PayloadBuilder.build(dialect: .braze, attachments: [fixtures.image], content: short)
        }
        expectRefused(.payloadTooLarge, .braze, [fixtures.image], short, extra: extra, mentioning: "1912")
    }

    /// `--merge` for each dialect: targeting, custom data, and attempts to replace the generated
    /// attachment keys and flags, which must lose.
    static let merges: [(PushDialect, String, [String: String])] = [
        (
            .apns,
            #"{"aps":{"mutable-content":0,"badge":1,"alert":{"title":"Other"}},"attachments":[],"deeplink":"app://sale"}"#,
            [
                "/aps/badge": "1", "/aps/mutable-content": "1", "/aps/alert/title": #""Spring sale""#,
                "/deeplink": #""app://sale""#, "/attachments/0/url": #""\#(imageURL)""#,
                "/attachments/0/type": #""public.jpeg""#,
            ]
        ),
        (
            .onesignal,
            #"{"app_id":"5eb5a37e-b458-11e3-ac11-000c2940e62c","include_subscription_ids":["s1"],"mutable_content":false,"ios_attachments":{"\#(imageID)":"https://evil.example/x.jpg"}}"#,
            [
                "/app_id": #""5eb5a37e-b458-11e3-ac11-000c2940e62c""#, "/include_subscription_ids": #"["s1"]"#,
                "/mutable_content": "true", "/ios_attachments": #"{"\#(imageID)":"\#(imageURL)"}"#,
            ]
        ),
        (
            .airship,
            #"{"audience":{"named_user":"u1"},"notification":{"ios":{"badge":"+1","mutable_content":false,"media_attachment":{"url":"https://evil.example/x.jpg","options":{"crop":{"x":0,"y":0,"width":1,"height":0.5}}}}}}"#,
            [
                "/audience": #"{"named_user":"u1"}"#, "/notification/ios/badge": #""+1""#,
                "/notification/ios/mutable_content": "true",
                "/notification/ios/media_attachment":
                    #"{"url":"\#(imageURL)","options":{"crop":{"x":0,"y":0,"width":1,"height":0.5}}}"#,
            ]
        ),
        (
            .braze,
            #"{"external_user_ids":["u1"],"messages":{"apple_push":{"asset_url":"https://evil.example/x.png","asset_file_type":"png","extra":{"deeplink":"app://sale"}}}}"#,
            [
                "/external_user_ids": #"["u1"]"#, "/messages/apple_push/asset_url": #""\#(imageURL)""#,
                "/messages/apple_push/asset_file_type": #""jpg""#,
                "/messages/apple_push/extra": #"{"deeplink":"app://sale"}"#,
            ]
        ),
        (
            .fcm,
            #"{"message":{"token":"t0k3n","apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"mutable-content":0}},"fcm_options":{"image":"https://evil.example/x.jpg"}}},"validate_only":false}"#,
            [
                "/message/token": #""t0k3n""#, "/message/apns/headers/apns-priority": #""10""#,
                "/message/apns/payload/aps/mutable-content": "1",
                "/message/apns/fcm_options/image": #""\#(imageURL)""#, "/validate_only": "false",
            ]
        ),
    ]

    @Test("--merge adds targeting and custom keys and never replaces the attachment keys", arguments: merges)
    func merge(_ dialect: PushDialect, _ extra: String, _ expected: [String: String]) throws {
        let fixtures = try Fixtures.load()
        let plain = try PayloadBuilder.build(dialect: dialect, attachments: [fixtures.image], content: plainContent)
        let merged = try PayloadBuilder.build(
            dialect: dialect, attachments: [fixtures.image], content: plainContent, extra: try Self.object(extra))
        for (pointer, json) in expected {
            let path = try #require(JSONPath(pointer: pointer))
            #expect(merged[path] == (try JSONValue.parse(Array(json.utf8)).value), "at \(pointer)")
        }
        // The generated members keep their places; the new ones follow them.
        let generated = try #require(plain.objectValue?.keys)
        #expect(merged.objectValue?.keys.prefix(generated.count).elementsEqual(generated) == true)
        try expectClean(merged, dialect, findings: [], urls: [imageURL])
    }

    /// `--merge` keys that land where the provider does not define them (issue 28: FCM's `token`
    /// beside `message`), with the pointer pre-flight must warn at and where it must say the key
    /// belongs (nil when no level of the dialect defines it).
    static let misplacedMerges: [(PushDialect, String, [String: String?])] = [
        (.fcm, #"{"token":"abc"}"#, ["/token": "/message/token"]),
        (
            .fcm, #"{"message":{"image":"https://cdn.example.com/x.jpg","android":{"channel_id":"news","ttl":"60s"}}}"#,
            [
                "/message/image": "/message/notification/image",
                "/message/android/channel_id": "/message/android/notification/channel_id",
            ]
        ),
        (.onesignal, #"{"include_player_id":["p1"],"contents":{"fr":"Salut"}}"#, ["/include_player_id": nil]),
        (
            .airship, #"{"named_user":"u1","notification":{"apns":{"badge":1}}}"#,
            ["/named_user": nil, "/notification/apns": nil]
        ),
        (
            .braze, #"{"segment":"s1","messages":{"apple_push":{"asset_type":"jpg"}}}"#,
            ["/segment": nil, "/messages/apple_push/asset_type": nil]
        ),
        // APNs: custom keys beside aps are the app's own; the alert's members are Apple's.
        (.apns, #"{"token":"abc","aps":{"alert":{"bodyy":"x"}}}"#, ["/aps/alert/bodyy": nil]),
    ]

    @Test(
        "--merge keys where the provider does not define them: pre-flight warns unknown_key and says where they belong",
        arguments: misplacedMerges)
    func misplacedMerge(_ dialect: PushDialect, _ extra: String, _ expected: [String: String?]) throws {
        let fixtures = try Fixtures.load()
        let merged = try PayloadBuilder.build(
            dialect: dialect, attachments: [fixtures.image], content: plainContent, extra: try Self.object(extra))
        for given in [dialect, nil] {
            var options = PreflightOptions()
            options.dialect = given
            let report = Preflight.check(Array(merged.serialized().utf8), file: "payload.json", options: options)
            #expect(report.dialect == dialect)
            let unknown = report.findings.filter { $0.code == .unknownKey }
            #expect(report.findings.count == unknown.count, "only unknown_key: \(report.findings)")
            #expect(Set(unknown.map(\.pointer)) == Set(expected.keys), "\(unknown.map(\.message))")
            #expect(unknown.allSatisfy { $0.severity == .warning })
            #expect(report.exitStatus(strict: false) == 0 && report.exitStatus(strict: true) == 3)
            for finding in unknown {
                let key = try #require(JSONPath(pointer: finding.pointer)?.lastKey)
                #expect(finding.message.hasPrefix("\"\(key)\" is not a key "), "\(finding.message)")
                if let home = expected[finding.pointer] ?? nil {
                    #expect(finding.message.hasSuffix("it belongs in \(home)"), "\(finding.message)")
                } else {
                    #expect(!finding.message.contains("it belongs in"), "\(finding.message)")
                }
            }
        }
    }

    // MARK: - Helpers

    /// A JSON object from its text.
    static func object(_ text: String) throws -> JSONObject {
        try #require(try JSONValue.parse(Array(text.utf8)).value.objectValue)
    }

    /// The bytes a dialect's limit counts, from the payload's compact text: Braze's alert and
    /// extra, the whole payload otherwise.
    static func countedBytes(_ payload: JSONValue, _ dialect: PushDialect) -> Int {
        guard dialect == .braze else { return payload.serialized().utf8.count }
        let push = payload["messages"]?["apple_push"]
        return [push?["alert"], push?["extra"]].compactMap { $0?.serialized().utf8.count }.reduce(0, +)
    }
}

/// Pre-flights a built payload with its dialect given and detected: exactly `findings` (no error
/// or warning), the attachments at `urls`, the bytes counted as ``PayloadBuilderTests/countedBytes(_:_:)``.
func expectClean(
    _ payload: JSONValue, _ dialect: PushDialect, findings: [ExpectedFinding], urls: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let bytes = Array(payload.serialized().utf8)
    for given in [dialect, nil] {
        var options = PreflightOptions()
        options.dialect = given
        let report = Preflight.check(bytes, file: "payload.json", options: options)
        let how = given == nil ? "detected" : "given"
        #expect(report.dialect == dialect, "\(how)", sourceLocation: sourceLocation)
        #expect(
            report.findings.map(ExpectedFinding.init).sorted() == findings.sorted(),
            "\(how): \(report.findings.map(\.message))", sourceLocation: sourceLocation)
        #expect(report.attachments.map(\.url) == urls, "\(how)", sourceLocation: sourceLocation)
        #expect(
            report.bytes == PayloadBuilderTests.countedBytes(payload, dialect), "\(how)", sourceLocation: sourceLocation
        )
        // Strict fails on the warnings expected (attachments_beyond_first), on nothing else.
        let warned = findings.contains { $0.severity == .warning }
        #expect(report.exitStatus(strict: true) == (warned ? 3 : 0), sourceLocation: sourceLocation)
    }
}

/// Expects `build` to fail with `code` (and a message naming `mentioning`, when given).
private func expectRefused(
    _ code: PushPrepError.Code, _ dialect: PushDialect, _ attachments: [PushPrepCore.Attachment],
    _ content: PayloadContent,
    extra: JSONObject = [:], mentioning: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let payload = try PayloadBuilder.build(
            dialect: dialect, attachments: attachments, content: content, extra: extra)
        Issue.record(
            "\(dialect.rawValue): expected \(code), built \(payload.serialized())", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == code, "\(dialect.rawValue): \(error.message)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        if let mentioning {
            #expect(error.message.contains(mentioning), "\(error.message)", sourceLocation: sourceLocation)
        }
    }
}

/// Which attachments a payload carries (issue 28 §1): the first ready one unless ids or all
/// choose more, said in the caller's own words (the CLI's `--id`/`--all`, the API's
/// `ids`/`all`); a provider that carries one lists the ids to choose from; and pre-flight warns
/// `attachments_beyond_first` on an APNs payload with more than one, naming them.
@Suite struct PayloadSelectionTests {
    @Test("by default the first ready attachment, with a note naming it, the others and how to take them")
    func firstByDefault() throws {
        let manifest = try Fixtures.manifest()
        let selection = try PayloadSelection(from: manifest.attachments, dialect: .apns)
        #expect(selection.attachments.map(\.id) == [imageID])
        #expect(selection.leftOut.map(\.id) == [videoID, audioID])
        #expect(selection.skippedFailures == 1)
        #expect(
            selection.note
                == "took \(imageID), the first of 3 ready attachments; the others: \(videoID), \(audioID);"
                + " choose with --id, or send every one with --all")
        let api = try PayloadSelection(from: manifest.attachments, dialect: .apns, spelling: .http)
        #expect(
            api.note
                == "took \(imageID), the first of 3 ready attachments; the others: \(videoID), \(audioID);"
                + " choose with ids, or send every one with all")
        // Braze carries one: no word of all.
        let braze = try PayloadSelection(from: manifest.attachments, dialect: .braze)
        #expect(braze.note?.hasSuffix("choose with --id") == true, "\(braze.note ?? "")")
        // One ready attachment, or a choice made: nothing to say.
        #expect(try PayloadSelection(from: [manifest.attachments[0]]).note == nil)
        #expect(try PayloadSelection(from: manifest.attachments, all: true).note == nil)
        #expect(try PayloadSelection(from: manifest.attachments, ids: [audioID]).note == nil)
    }

    @Test("all takes every ready one, ids those named in order; both at once is refused in the caller's words")
    func allAndIDs() throws {
        let entries = try Fixtures.manifest().attachments
        #expect(try PayloadSelection(from: entries, all: true).attachments.map(\.id) == [imageID, videoID, audioID])
        #expect(
            try PayloadSelection(from: entries, ids: [audioID, imageID]).attachments.map(\.id) == [audioID, imageID])
        for (spelling, words) in [
            (PayloadSelection.Spelling.cli, "give --id (the attachments to send) or --all (every ready one), not both"),
            (.http, "give ids (the attachments to send) or all (every ready one), not both"),
        ] {
            let error = #expect(throws: PushPrepError.self) {
                try PayloadSelection(from: entries, ids: [imageID], all: true, spelling: spelling)
            }
            #expect(
                error?.code == .invalidPayload && error?.message == words, "\(String(describing: error))")
        }
        let error = #expect(throws: PushPrepError.self) {
            try PayloadSelection(from: entries, ids: ["img-nope"], source: "entries", spelling: .http)
        }
        #expect(
            error?.message
                == "no ready attachment img-nope in entries; ready: \(imageID), \(videoID), \(audioID)",
            "\(String(describing: error))")
        // A client's id is repeated shortened and escaped: a request's ids may be as long as its body.
        let hostile = "img-\u{1B}[2J" + String(repeating: "x", count: 100_000)
        let long = #expect(throws: PushPrepError.self) {
            try PayloadSelection(from: entries, ids: [hostile], source: "entries", spelling: .http)
        }
        let message = long?.message ?? ""
        #expect(message.hasPrefix(#"no ready attachment img-\u001b[2Jxxx"#), "\(message.prefix(200))")
        #expect(message.utf8.count < 1000 && !UntrustedText.hasControl(message), "\(message.prefix(200))")
    }

    @Test(
        "a provider that carries one lists the ids chosen and names the caller's way to choose",
        arguments: [PushDialect.airship, .braze, .fcm])
    func oneAttachmentProviders(_ dialect: PushDialect) throws {
        let entries = try Fixtures.manifest().attachments
        for (spelling, choose) in [(PayloadSelection.Spelling.cli, "--id"), (.http, "ids")] {
            let error = #expect(throws: PushPrepError.self) {
                try PayloadSelection(from: entries, all: true, dialect: dialect, spelling: spelling)
            }
            #expect(
                error?.message
                    == "\(dialect.displayName) carries one attachment per push, got 3 (\(imageID), \(videoID),"
                    + " \(audioID)): choose one with \(choose)", "\(String(describing: error))")
        }
        // The builder's own check lists them too, naming no option.
        let fixtures = try Fixtures.load()
        let error = #expect(throws: PushPrepError.self) {
            try PayloadBuilder.build(
                dialect: dialect, attachments: [fixtures.image, fixtures.video], content: plainContent)
        }
        #expect(
            error?.message
                == "\(dialect.displayName) carries one attachment per push, got 2 (\(imageID), \(videoID)): choose one",
            "\(String(describing: error))")
        #expect(try PayloadSelection(from: entries, dialect: dialect).attachments.map(\.id) == [imageID])
    }

    @Test("pre-flight warns attachments_beyond_first on an APNs payload with more than one, naming them")
    func beyondFirst() throws {
        let fixtures = try Fixtures.load()
        let all = try PayloadBuilder.build(
            dialect: .apns, attachments: [fixtures.image, fixtures.video, fixtures.audio], content: plainContent)
        let report = Preflight.check(Array(all.serialized().utf8), file: "p.json", options: PreflightOptions())
        let warnings = report.findings.filter { $0.code == .attachmentsBeyondFirst }
        try #require(warnings.count == 1, "\(report.findings)")
        #expect(warnings[0].severity == .warning && warnings[0].pointer == "/attachments/1")
        #expect(
            warnings[0].message
                == "3 attachments: iOS shows only the first (\(imageID)) without a content extension;"
                + " \(videoID) (/attachments/1), \(audioID) (/attachments/2) reach only a content extension's view")
        #expect(report.exitStatus(strict: true) == 3)
        // Without ids, the pointers name them.
        let anonymous =
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"url":"\#(imageURL)"},{"url":"\#(audioURL)"}]}"#
        let unnamed = Preflight.check(Array(anonymous.utf8), file: "p.json", options: PreflightOptions())
        #expect(
            unnamed.findings.first { $0.code == .attachmentsBeyondFirst }?.message
                == "2 attachments: iOS shows only the first (\(imageURL)) without a content extension;"
                + " /attachments/1 reaches only a content extension's view")
        // One attachment, and OneSignal's map of several: no such warning.
        let one = try PayloadBuilder.build(dialect: .apns, attachments: [fixtures.image], content: plainContent)
        let onesignal = try PayloadBuilder.build(
            dialect: .onesignal, attachments: [fixtures.image, fixtures.video], content: plainContent)
        for payload in [one, onesignal] {
            let checked = Preflight.check(Array(payload.serialized().utf8), file: "p.json", options: PreflightOptions())
            #expect(!checked.findings.contains { $0.code == .attachmentsBeyondFirst }, "\(checked.findings)")
        }
    }
}
