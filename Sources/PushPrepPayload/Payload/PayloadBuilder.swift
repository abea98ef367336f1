import Foundation
public import PushPrepCore
public import PushPrepJSON
import PushPrepRemote

/// The text and presentation keys `pushprep payload` puts beside the attachments.
public struct PayloadContent: Sendable, Equatable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var category: String?
    public var threadID: String?
    public var sound: String?

    /// Content; at least a title or a body is needed, or the service extension never runs.
    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, category: String? = nil,
        threadID: String? = nil, sound: String? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.category = category
        self.threadID = threadID
        self.sound = sound
    }
}

/// Writes a ready-to-send payload for a provider from processed attachments: the URLs in the
/// provider's documented keys, the service extension's flag, and the type hint and thumbnail
/// options where the provider carries them. Targeting (device tokens, audiences, app ids) is the
/// sender's: add it with `extra`.
///
/// The iOS keys carry the attachment itself; each provider's Android and web keys carry the
/// attachment's renditions for those platforms (``Attachment/renditions``), never the iOS file
/// (``PlatformParts`` chooses them and notes what is left out). A manifest without renditions
/// gives the iOS-only payload it always gave.
///
/// The APNs layout, read by your own service extension (see the README's Swift snippet):
///
/// ```json
/// {"aps": {"alert": {"title": "…", "body": "…"}, "mutable-content": 1},
///  "attachments": [{"id": "img-…", "url": "https://…/img-….jpg", "type": "public.jpeg",
///                   "options": {"UNNotificationAttachmentOptionsTypeHintKey": "public.jpeg"}}]}
/// ```
public enum PayloadBuilder {
    /// The payload, or `invalid_payload` when the attachments or content cannot make one, or
    /// `payload_too_large` when it would exceed the provider's limit.
    public static func build(
        dialect: PushDialect, attachments: [Attachment], content: PayloadContent, extra: JSONObject = [:]
    ) throws(PushPrepError) -> JSONValue {
        try buildWithNotes(dialect: dialect, attachments: attachments, content: content, extra: extra).payload
    }

    /// ``build(dialect:attachments:content:extra:)``'s payload with its notes: one per attachment
    /// and platform whose part of the push shows no picture of it (``PayloadNote``).
    public static func buildWithNotes(
        dialect: PushDialect, attachments: [Attachment], content: PayloadContent, extra: JSONObject = [:]
    ) throws(PushPrepError) -> BuiltPayload {
        guard content.title?.isEmpty == false || content.body?.isEmpty == false else {
            throw PushPrepError(
                .invalidPayload, "an attachment shows only with an alert: give a title or a body")
        }
        guard !attachments.isEmpty else {
            throw PushPrepError(.invalidPayload, "no attachments: the manifest has no ready attachment to send")
        }
        let media = try attachments.map { attachment throws(PushPrepError) in try Media(attachment, dialect: dialect) }
        // ``PayloadSelection`` checks first, naming the caller's option or field; this is for
        // attachments chosen any other way.
        try dialect.checkAttachmentCount(media.map(\.id), choose: nil)
        let parts = try PlatformParts(attachments, dialect: dialect, content: content)
        var payload: JSONObject =
            switch dialect {
            case .apns: apns(media, content)
            case .onesignal: try oneSignal(media, content, parts)
            case .airship: airship(media[0], content, parts)
            case .braze: braze(media[0], content, parts)
            case .fcm: fcm(media[0], content, parts)
            }
        payload = merge(extra, into: payload)
        let value = JSONValue.object(payload)
        try checkSize(value, dialect: dialect)
        return BuiltPayload(payload: value, notes: parts.notes)
    }

    /// One attachment as a provider will carry it: the URL, its extension and type.
    struct Media {
        var id: String
        var url: String
        var fileExtension: String
        var uti: String
        var options: AttachmentOptions

        init(_ attachment: Attachment, dialect: PushDialect) throws(PushPrepError) {
            guard let url = attachment.url else {
                throw PushPrepError(
                    .invalidPayload,
                    "\(attachment.id) has no url: process with --base-url, or give --base-url to payload")
            }
            id = attachment.id
            self.url = url
            fileExtension = PathName.lowercasedExtension(of: attachment.file)
            uti = attachment.uti
            options = attachment.options
            if dialect == .fcm && attachment.kind != .image {
                // FCM's image key takes images only; a movie is represented by its poster frame.
                guard let poster = attachment.poster, let posterURL = attachment.posterURL else {
                    throw PushPrepError(
                        .invalidPayload,
                        "\(attachment.id) is \(attachment.kind.rawValue); Firebase Cloud Messaging carries images only")
                }
                self.url = posterURL
                fileExtension = PathName.lowercasedExtension(of: poster.file)
                uti = MediaType.jpeg.uti
                options = AttachmentOptions(typeHint: uti)
            }
            if let allowed = dialect.acceptedExtensions, !allowed.contains(fileExtension) {
                throw PushPrepError(
                    .invalidPayload,
                    "\(dialect.displayName)'s SDK does not download .\(fileExtension) attachments (\(attachment.id))")
            }
        }

        /// The options as the phone's dictionary.
        var optionsObject: JSONObject {
            var object: JSONObject = [AttachmentOptionKey.typeHint: .string(options.typeHint)]
            if let time = options.thumbnailTime { object[AttachmentOptionKey.thumbnailTime] = JSONValue(time) }
            if let hidden = options.thumbnailHidden { object[AttachmentOptionKey.thumbnailHidden] = .bool(hidden) }
            return object
        }
    }

    // MARK: - Dialects

    private static func apsAlert(_ content: PayloadContent) -> JSONObject {
        var alert = JSONObject()
        alert["title"] = content.title.map(JSONValue.string)
        alert["subtitle"] = content.subtitle.map(JSONValue.string)
        alert["body"] = content.body.map(JSONValue.string)
        return alert
    }

    /// `aps` with the alert, the presentation keys and `mutable-content: 1`.
    private static func aps(_ content: PayloadContent, alert: Bool = true) -> JSONObject {
        var aps = JSONObject()
        if alert { aps["alert"] = .object(apsAlert(content)) }
        aps["sound"] = content.sound.map(JSONValue.string)
        aps["thread-id"] = content.threadID.map(JSONValue.string)
        aps["category"] = content.category.map(JSONValue.string)
        aps["mutable-content"] = JSONValue(1)
        return aps
    }

    private static func apns(_ media: [Media], _ content: PayloadContent) -> JSONObject {
        let attachments = media.map { item -> JSONValue in
            .object([
                "id": .string(item.id), "url": .string(item.url), "type": .string(item.uti),
                "options": .object(item.optionsObject),
            ])
        }
        return ["aps": .object(aps(content)), "attachments": .array(attachments)]
    }

    /// OneSignal's create-message body (push): `ios_attachments` for iOS, `big_picture` (Android's
    /// expanded picture), `chrome_web_image` (the web push's large image) and `chrome_web_icon`
    /// (its icon), each a URL (https://documentation.onesignal.com/reference/push-notification,
    /// https://documentation.onesignal.com/docs/web-push-notification-icons).
    private static func oneSignal(
        _ media: [Media], _ content: PayloadContent, _ parts: PlatformParts
    ) throws(PushPrepError) -> JSONObject {
        guard let body = content.body, !body.isEmpty else {
            throw PushPrepError(.invalidPayload, "OneSignal needs a body (its \"contents\"), not only a title")
        }
        var payload = JSONObject()
        payload["headings"] = content.title.map { .object(["en": .string($0)]) }
        payload["subtitle"] = content.subtitle.map { .object(["en": .string($0)]) }
        payload["contents"] = .object(["en": .string(body)])
        payload["ios_attachments"] = .object(JSONObject(media.map { (key: $0.id, value: JSONValue.string($0.url)) }))
        payload["big_picture"] = parts.android.map { .string($0.url) }
        payload["chrome_web_image"] = parts.web?.image.map(JSONValue.string)
        payload["chrome_web_icon"] = parts.web?.icon.map(JSONValue.string)
        payload["mutable_content"] = .bool(true)
        payload["ios_category"] = content.category.map(JSONValue.string)
        payload["thread_id"] = content.threadID.map(JSONValue.string)
        payload["ios_sound"] = content.sound.map(JSONValue.string)
        return payload
    }

    /// The body is the push's `alert`; the title and subtitle are iOS overrides, so that no text
    /// is sent twice against the 4096 bytes (the title is the Android and web overrides' too).
    /// `device_types` names the platforms the payload has parts for: `android` with the Android
    /// override's `style` of type `big_picture`, `web` with the web override's `icon` and `image`
    /// objects (`{"url": …}`), as Airship's push API documents them
    /// (https://docs.airship.com/developer/rest-api/ua/schemas/platform-overrides/; the shape
    /// Airship's own libraries write: urbanairship/python-library `style()`, `web()`;
    /// urbanairship/java-library `BigPictureStyleSerializer`, `WebDevicePayloadSerializer`).
    private static func airship(_ media: Media, _ content: PayloadContent, _ parts: PlatformParts) -> JSONObject {
        var options = JSONObject()
        options["time"] = media.options.thumbnailTime.map { JSONValue($0) }
        options["hidden"] = media.options.thumbnailHidden.map(JSONValue.bool)
        var attachment: JSONObject = ["url": .string(media.url)]
        if !options.isEmpty { attachment["options"] = .object(options) }

        var ios = JSONObject()
        ios["title"] = content.title.map(JSONValue.string)
        ios["subtitle"] = content.subtitle.map(JSONValue.string)
        ios["mutable_content"] = .bool(true)
        ios["media_attachment"] = .object(attachment)
        ios["category"] = content.category.map(JSONValue.string)
        ios["thread_id"] = content.threadID.map(JSONValue.string)
        ios["sound"] = content.sound.map(JSONValue.string)
        var notification = JSONObject()
        notification["alert"] = content.body.map(JSONValue.string)
        notification["ios"] = .object(ios)
        var deviceTypes: [JSONValue] = [.string(Platform.ios.rawValue)]
        if let picture = parts.android {
            var android = JSONObject()
            android["title"] = content.title.map(JSONValue.string)
            android["style"] = .object(["type": .string("big_picture"), "big_picture": .string(picture.url)])
            notification["android"] = .object(android)
            deviceTypes.append(.string(Platform.android.rawValue))
        } else if parts.textOnly.contains(.android) {
            // A sound: Android phones get the push with its text and no picture.
            var android = JSONObject()
            android["title"] = content.title.map(JSONValue.string)
            if !android.isEmpty { notification["android"] = .object(android) }
            deviceTypes.append(.string(Platform.android.rawValue))
        }
        if let pictures = parts.web {
            var web = JSONObject()
            web["title"] = content.title.map(JSONValue.string)
            web["icon"] = pictures.icon.map { .object(["url": .string($0)]) }
            web["image"] = pictures.image.map { .object(["url": .string($0)]) }
            notification["web"] = .object(web)
            deviceTypes.append(.string(Platform.web.rawValue))
        }
        return ["device_types": .array(deviceTypes), "notification": .object(notification)]
    }

    /// `/messages/send`'s `messages`: `apple_push` for iOS; `android_push` (its required `alert`
    /// and `title`, and the big picture as `extra.appboy_image_url`) and `web_push` (`image_url`,
    /// the square icon, and `large_image_url`, the large image) when there are renditions for them
    /// (https://www.braze.com/docs/api/objects_filters/messaging/android_object,
    /// https://www.braze.com/docs/api/objects_filters/messaging/web_objects).
    private static func braze(_ media: Media, _ content: PayloadContent, _ parts: PlatformParts) -> JSONObject {
        var push = JSONObject()
        push["alert"] = .object(apsAlert(content))
        push["asset_url"] = .string(media.url)
        push["asset_file_type"] = .string(media.fileExtension == "jpeg" ? "jpg" : media.fileExtension)
        push["mutable_content"] = .bool(true)
        push["category"] = content.category.map(JSONValue.string)
        push["sound"] = content.sound.map(JSONValue.string)
        push["notification_group_thread_id"] = content.threadID.map(JSONValue.string)
        var messages: JSONObject = ["apple_push": .object(push)]
        // PlatformParts carries no Android or web picture for Braze without both a title and a body.
        if let picture = parts.android, let title = content.title, let body = content.body {
            messages["android_push"] = .object([
                "alert": .string(body), "title": .string(title),
                "extra": .object(["appboy_image_url": .string(picture.url)]),
            ])
        } else if parts.textOnly.contains(.android), let title = content.title, let body = content.body {
            // A sound: Android phones get the push with its text and no picture.
            messages["android_push"] = .object(["alert": .string(body), "title": .string(title)])
        }
        if let pictures = parts.web, let title = content.title, let body = content.body {
            var web: JSONObject = ["alert": .string(body), "title": .string(title)]
            web["image_url"] = pictures.icon.map(JSONValue.string)
            web["large_image_url"] = pictures.image.map(JSONValue.string)
            messages["web_push"] = .object(web)
        }
        return ["messages": .object(messages)]
    }

    /// HTTP v1's `message`: the common `notification` (title and body, for every platform) and
    /// one picture per platform in that platform's own block, never the common
    /// `notification.image`, which every platform without its own would show (the iOS file on
    /// Android, the Android crop in a browser): `apns.fcm_options.image` with `mutable-content`
    /// (iOS), `android.notification.image` (AndroidNotification.image, which overrides the common
    /// one), `webpush.notification.image` and `.icon` (Web Notification properties)
    /// (https://firebase.google.com/docs/reference/fcm/rest/v1/projects.messages,
    /// https://firebase.google.com/docs/cloud-messaging/android/send-image).
    private static func fcm(_ media: Media, _ content: PayloadContent, _ parts: PlatformParts) -> JSONObject {
        var notification = JSONObject()
        notification["title"] = content.title.map(JSONValue.string)
        notification["body"] = content.body.map(JSONValue.string)
        let apns: JSONObject = [
            "payload": .object(["aps": .object(aps(content, alert: content.subtitle != nil))]),
            "fcm_options": .object(["image": .string(media.url)]),
        ]
        var message: JSONObject = ["notification": .object(notification), "apns": .object(apns)]
        if let picture = parts.android {
            message["android"] = .object(["notification": .object(["image": .string(picture.url)])])
        }
        if let pictures = parts.web {
            var web = JSONObject()
            web["image"] = pictures.image.map(JSONValue.string)
            web["icon"] = pictures.icon.map(JSONValue.string)
            message["webpush"] = .object(["notification": .object(web)])
        }
        return ["message": .object(message)]
    }

    // MARK: - Merging and size

    /// Adds `extra`'s members to `payload`, recursively inside objects both have; where both set
    /// the same key to a non-object, the generated value stays (the attachment keys must hold).
    static func merge(_ extra: JSONObject, into payload: JSONObject) -> JSONObject {
        var result = payload
        for (key, value) in extra {
            switch (result[key], value) {
            case (nil, _): result[key] = value
            case (.object(let mine)?, .object(let theirs)): result[key] = .object(merge(theirs, into: mine))
            default: break
            }
        }
        return result
    }

    private static func checkSize(_ payload: JSONValue, dialect: PushDialect) throws(PushPrepError) {
        let scope = PayloadLayout.resolve(payload, dialect: dialect, pushType: .alert).size
        let bytes = scope.bytes(of: payload)
        guard bytes > scope.limit else { return }
        throw PushPrepError(
            .payloadTooLarge,
            "\(scope.label) would be \(bytes) bytes (compact JSON), over \(dialect.displayName)'s limit of"
                + " \(scope.limit): shorten the text, or send fewer attachments")
    }
}

extension PushDialect {
    /// Whether the provider's keys hold a single attachment.
    public var carriesOneAttachment: Bool {
        switch self {
        case .apns, .onesignal: false
        case .airship, .braze, .fcm: true
        }
    }
}
