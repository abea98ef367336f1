import Foundation
import Testing

@testable import PushPrep

/// `pushprep payload`'s builder: each provider's documented shape, fed back into pre-flight.
@Suite struct PayloadBuilderTests {
    /// A manifest attachment as `process` writes it.
    static func attachment(
        id: String, kind: MediaKind, ext: String, uti: String, url: Bool = true, thumbnailTime: Double? = nil,
        poster: Bool = false
    ) throws -> PushPrep.Attachment {
        let file = "\(id).\(ext)"
        var options: [String: Any] = [AttachmentOptionKey.typeHint: uti]
        if let thumbnailTime { options[AttachmentOptionKey.thumbnailTime] = thumbnailTime }
        var entry: [String: Any] = [
            "id": id, "status": "ok", "source": "in/\(file)", "kind": kind.rawValue, "file": file,
            "url": url ? "https://cdn.example.com/push/\(file)" : NSNull(), "uti": uti, "mime": "x/y", "bytes": 1000,
            "sha256": String(repeating: "0", count: 64), "width": NSNull(), "height": NSNull(), "duration": NSNull(),
            "frames": NSNull(), "options": options,
            "input": ["type": ext, "bytes": 2000, "width": NSNull(), "height": NSNull(), "duration": NSNull()],
            "operations": [String](), "warnings": [String](),
        ]
        if poster { entry["poster"] = ["file": "\(id)-poster.jpg", "width": 720, "height": 406] }
        let data = try JSONSerialization.data(withJSONObject: entry)
        return try JSONDecoder().decode(PushPrep.Attachment.self, from: data)
    }

    static let image = try! attachment(id: "img-1", kind: .image, ext: "jpg", uti: "public.jpeg")
    static let video = try! attachment(
        id: "vid-2", kind: .video, ext: "mp4", uti: "public.mpeg-4", thumbnailTime: 1.5, poster: true)
    static let audio = try! attachment(id: "aud-3", kind: .audio, ext: "m4a", uti: "public.mpeg-4-audio")
    static let content = PayloadContent(
        title: "Spring sale", subtitle: "Today only", body: "Tap to see it", category: "SALE", threadID: "promo",
        sound: "default")

    private func path(_ pointer: String) -> JSONPath { JSONPath(pointer: pointer)! }

    /// Builds, checks the bytes fit, and pre-flights the result with the dialect given and detected.
    private func buildAndCheck(_ dialect: PushDialect, _ attachments: [PushPrep.Attachment]) throws -> JSONValue {
        let payload = try PayloadBuilder.build(dialect: dialect, attachments: attachments, content: Self.content)
        let bytes = Array(payload.serialized().utf8)
        for given in [dialect, nil] {
            var options = PreflightOptions()
            options.dialect = given
            let report = Preflight.check(bytes, file: "-", options: options)
            #expect(report.dialect == dialect)
            let problems = report.findings.filter { $0.severity != .info }
            #expect(problems.isEmpty, "\(dialect) payload should pre-flight clean: \(problems)")
            #expect(report.findings.map(\.code).allSatisfy { $0 == .categoryNoted })
            #expect(report.attachments.count == min(attachments.count, dialect.carriesOneAttachment ? 1 : 99))
        }
        return payload
    }

    @Test("apns: aps with the alert and mutable-content, attachments beside it with type and options")
    func apns() throws {
        let payload = try buildAndCheck(.apns, [Self.image, Self.video, Self.audio])
        #expect(payload[path("/aps/alert/title")]?.stringValue == "Spring sale")
        #expect(payload[path("/aps/alert/subtitle")]?.stringValue == "Today only")
        #expect(payload[path("/aps/alert/body")]?.stringValue == "Tap to see it")
        #expect(payload[path("/aps/mutable-content")] == JSONValue(1))
        #expect(payload[path("/aps/category")]?.stringValue == "SALE")
        #expect(payload[path("/aps/thread-id")]?.stringValue == "promo")
        #expect(payload[path("/aps/sound")]?.stringValue == "default")
        #expect(payload.objectValue?.keys == ["aps", "attachments"])
        let attachments = try #require(payload["attachments"]?.arrayValue)
        #expect(attachments.compactMap { $0["id"]?.stringValue } == ["img-1", "vid-2", "aud-3"])
        #expect(
            attachments.compactMap { $0["type"]?.stringValue } == [
                "public.jpeg", "public.mpeg-4", "public.mpeg-4-audio",
            ])
        #expect(attachments[0]["url"]?.stringValue == "https://cdn.example.com/push/img-1.jpg")
        #expect(attachments[1]["options"]?[AttachmentOptionKey.typeHint]?.stringValue == "public.mpeg-4")
        #expect(attachments[1]["options"]?[AttachmentOptionKey.thumbnailTime]?.doubleValue == 1.5)
    }

    @Test("onesignal: headings, contents, ios_attachments by id, mutable_content")
    func oneSignal() throws {
        let payload = try buildAndCheck(.onesignal, [Self.image, Self.audio])
        #expect(payload[path("/headings/en")]?.stringValue == "Spring sale")
        #expect(payload[path("/subtitle/en")]?.stringValue == "Today only")
        #expect(payload[path("/contents/en")]?.stringValue == "Tap to see it")
        #expect(payload[path("/ios_attachments/img-1")]?.stringValue == "https://cdn.example.com/push/img-1.jpg")
        #expect(payload[path("/ios_attachments/aud-3")]?.stringValue == "https://cdn.example.com/push/aud-3.m4a")
        #expect(payload["mutable_content"] == .bool(true))
        #expect(payload["ios_category"]?.stringValue == "SALE")
        #expect(payload["thread_id"]?.stringValue == "promo")
        #expect(payload["ios_sound"]?.stringValue == "default")
    }

    @Test("airship: notification.ios.media_attachment with options and content")
    func airship() throws {
        let payload = try buildAndCheck(.airship, [Self.video])
        #expect(payload["device_types"] == .array([.string("ios")]))
        #expect(payload[path("/notification/alert")]?.stringValue == "Tap to see it")
        let ios = path("/notification/ios")
        #expect(payload[ios.appending("mutable_content")] == .bool(true))
        #expect(
            payload[ios.appending("media_attachment").appending("url")]?.stringValue
                == "https://cdn.example.com/push/vid-2.mp4")
        #expect(payload[path("/notification/ios/media_attachment/options/time")]?.doubleValue == 1.5)
        #expect(payload[path("/notification/ios/title")]?.stringValue == "Spring sale")
        #expect(payload[path("/notification/ios/subtitle")]?.stringValue == "Today only")
        #expect(payload[path("/notification/ios/category")]?.stringValue == "SALE")
    }

    @Test("braze: messages.apple_push with asset_url, asset_file_type and mutable_content")
    func braze() throws {
        let payload = try buildAndCheck(.braze, [Self.audio])
        let push = path("/messages/apple_push")
        #expect(payload[push.appending("asset_url")]?.stringValue == "https://cdn.example.com/push/aud-3.m4a")
        #expect(payload[push.appending("asset_file_type")]?.stringValue == "m4a")
        #expect(payload[push.appending("mutable_content")] == .bool(true))
        #expect(payload[path("/messages/apple_push/alert/body")]?.stringValue == "Tap to see it")
        #expect(payload[push.appending("notification_group_thread_id")]?.stringValue == "promo")
    }

    @Test("fcm: message.notification and apns.fcm_options.image; a movie is sent as its poster")
    func fcm() throws {
        let payload = try buildAndCheck(.fcm, [Self.image])
        #expect(payload[path("/message/notification/title")]?.stringValue == "Spring sale")
        #expect(payload[path("/message/apns/payload/aps/mutable-content")] == JSONValue(1))
        #expect(payload[path("/message/apns/payload/aps/alert/subtitle")]?.stringValue == "Today only")
        #expect(
            payload[path("/message/apns/fcm_options/image")]?.stringValue == "https://cdn.example.com/push/img-1.jpg")
        let movie = try buildAndCheck(.fcm, [Self.video])
        #expect(
            movie[path("/message/apns/fcm_options/image")]?.stringValue
                == "https://cdn.example.com/push/vid-2-poster.jpg")
    }

    @Test("extra keys are merged in and never replace the attachment keys")
    func merge() throws {
        let extra = try #require(
            try JSONValue.parse(
                Array(
                    #"{"message":{"token":"abc","apns":{"fcm_options":{"image":"https://evil.example/x.jpg"},"headers":{"apns-priority":"10"}}},"validate_only":true}"#
                        .utf8)
            ).value.objectValue)
        let payload = try PayloadBuilder.build(
            dialect: .fcm, attachments: [Self.image], content: Self.content, extra: extra)
        #expect(payload[path("/message/token")]?.stringValue == "abc")
        #expect(payload[path("/message/apns/headers/apns-priority")]?.stringValue == "10")
        #expect(payload["validate_only"] == .bool(true))
        #expect(
            payload[path("/message/apns/fcm_options/image")]?.stringValue == "https://cdn.example.com/push/img-1.jpg")
    }

    @Test(
        "what cannot make a payload fails with invalid_payload",
        arguments: [
            (PushDialect.apns, "no alert"), (.apns, "no url"), (.apns, "none"), (.airship, "two"), (.braze, "two"),
            (.fcm, "two"), (.fcm, "audio"), (.onesignal, "title only"),
        ])
    func invalid(_ dialect: PushDialect, _ problem: String) throws {
        var content = Self.content
        var attachments = [Self.image]
        switch problem {
        case "no alert":
            content.title = nil
            content.body = ""
        case "no url":
            attachments = [try Self.attachment(id: "img-9", kind: .image, ext: "jpg", uti: "public.jpeg", url: false)]
        case "none": attachments = []
        case "two": attachments = [Self.image, Self.audio]
        case "audio": attachments = [Self.audio]
        default: content.body = nil
        }
        #expect {
            _ = try PayloadBuilder.build(dialect: dialect, attachments: attachments, content: content)
        } throws: { error in
            (error as? PushPrepError)?.code == .invalidPayload
        }
    }

    @Test("a payload over the provider's limit fails with payload_too_large", arguments: PushDialect.allCases)
    func tooLarge(_ dialect: PushDialect) throws {
        let limit = dialect == .braze ? 1912 : 4096
        var content = PayloadContent(body: String(repeating: "é", count: limit / 2))
        #expect {
            _ = try PayloadBuilder.build(dialect: dialect, attachments: [Self.image], content: content)
        } throws: { error in
            (error as? PushPrepError)?.code == .payloadTooLarge
                && (error as? PushPrepError)?.message.contains("\(limit)") == true
        }
        content.body = String(repeating: "é", count: limit / 2 - 400)
        let payload = try PayloadBuilder.build(dialect: dialect, attachments: [Self.image], content: content)
        let report = Preflight.check(Array(payload.serialized().utf8), file: "-", options: PreflightOptions())
        #expect(report.findings.isEmpty, "\(report.findings)")
        #expect((report.bytes ?? 0) <= limit)
    }
}
