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
        guard content.title?.isEmpty == false || content.body?.isEmpty == false else {
            throw PushPrepError(
                .invalidPayload, "an attachment shows only with an alert: give a title or a body")
        }
        guard !attachments.isEmpty else {
            throw PushPrepError(.invalidPayload, "no attachments: the manifest has no ready attachment to send")
        }
        let media = try attachments.map { attachment throws(PushPrepError) in try Media(attachment, dialect: dialect) }
        if dialect.carriesOneAttachment && media.count > 1 {
            throw PushPrepError(
                .invalidPayload,
                "\(dialect.displayName) carries one attachment per push, got \(media.count): choose one with --id")
        }
        var payload: JSONObject =
            switch dialect {
            case .apns: apns(media, content)
            case .onesignal: try oneSignal(media, content)
            case .airship: airship(media[0], content)
            case .braze: braze(media[0], content)
            case .fcm: fcm(media[0], content)
            }
        payload = merge(extra, into: payload)
        let value = JSONValue.object(payload)
        try checkSize(value, dialect: dialect)
        return value
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

    private static func oneSignal(_ media: [Media], _ content: PayloadContent) throws(PushPrepError) -> JSONObject {
        guard let body = content.body, !body.isEmpty else {
            throw PushPrepError(.invalidPayload, "OneSignal needs a body (its \"contents\"), not only a title")
        }
        var payload = JSONObject()
        payload["headings"] = content.title.map { .object(["en": .string($0)]) }
        payload["subtitle"] = content.subtitle.map { .object(["en": .string($0)]) }
        payload["contents"] = .object(["en": .string(body)])
        payload["ios_attachments"] = .object(JSONObject(media.map { (key: $0.id, value: JSONValue.string($0.url)) }))
        payload["mutable_content"] = .bool(true)
        payload["ios_category"] = content.category.map(JSONValue.string)
        payload["thread_id"] = content.threadID.map(JSONValue.string)
        payload["ios_sound"] = content.sound.map(JSONValue.string)
        return payload
    }

    /// The body is the push's `alert`; the title and subtitle are iOS overrides, so that no text
    /// is sent twice against the 4096 bytes.
    private static func airship(_ media: Media, _ content: PayloadContent) -> JSONObject {
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
        return ["device_types": .array([.string("ios")]), "notification": .object(notification)]
    }

    private static func braze(_ media: Media, _ content: PayloadContent) -> JSONObject {
        var push = JSONObject()
        push["alert"] = .object(apsAlert(content))
        push["asset_url"] = .string(media.url)
        push["asset_file_type"] = .string(media.fileExtension == "jpeg" ? "jpg" : media.fileExtension)
        push["mutable_content"] = .bool(true)
        push["category"] = content.category.map(JSONValue.string)
        push["sound"] = content.sound.map(JSONValue.string)
        push["notification_group_thread_id"] = content.threadID.map(JSONValue.string)
        return ["messages": .object(["apple_push": .object(push)])]
    }

    private static func fcm(_ media: Media, _ content: PayloadContent) -> JSONObject {
        var notification = JSONObject()
        notification["title"] = content.title.map(JSONValue.string)
        notification["body"] = content.body.map(JSONValue.string)
        let apns: JSONObject = [
            "payload": .object(["aps": .object(aps(content, alert: content.subtitle != nil))]),
            "fcm_options": .object(["image": .string(media.url)]),
        ]
        return ["message": .object(["notification": .object(notification), "apns": .object(apns)])]
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
    var carriesOneAttachment: Bool {
        switch self {
        case .apns, .onesignal: false
        case .airship, .braze, .fcm: true
        }
    }
}
