public import PushPrepCore
public import PushPrepJSON

/// What a payload leaves out for one platform, about one attachment: a platform it has no
/// rendition for (a sound on Android, a manifest made with `--platforms ios`), or a rendition
/// the provider's keys have no room for. `pushprep payload` prints each on standard error and
/// `POST /v1/payload` sends each as a `PushPrep-Note` header.
public struct PayloadNote: Sendable, Equatable, CustomStringConvertible {
    /// The platform whose part of the push this is about.
    public var platform: Platform
    /// The attachment it is about.
    public var attachmentID: String
    /// What is left out and what the push does without it, in words.
    public var message: String

    /// `android: aud-… has no Android rendition (a sound); the Android push carries no image`.
    public var description: String { "\(platform): \(message)" }
}

/// A payload, with the notes on what it leaves out for each platform.
public struct BuiltPayload: Sendable, Equatable {
    /// The provider's payload (its server form).
    public var payload: JSONValue
    /// One note per attachment and platform whose part carries no picture of it, in the order of
    /// the attachments, Android before web.
    public var notes: [PayloadNote]

    /// A payload and its notes.
    public init(payload: JSONValue, notes: [PayloadNote]) {
        self.payload = payload
        self.notes = notes
    }
}

/// The Android and web parts of a payload: which attachment's renditions each platform's keys
/// carry (the first one that has them: every provider's Android and web keys hold one picture),
/// and a note for every attachment a platform shows no picture of. The one place that decides
/// this for every dialect, so that the keys and the notes cannot disagree.
///
/// The platforms it considers: Android always (every provider PushPrep writes for, APNs aside,
/// pushes to Android phones), web when one of the attachments has a web rendition. APNs reaches
/// iPhones only: it has no other parts and no notes.
struct PlatformParts {
    /// The Android part's picture: a rendition's URL and whose it is.
    struct Android {
        var attachmentID: String
        var url: String
    }

    /// The web part's pictures: the 2:1 image and the square icon (either may be missing).
    struct Web {
        var attachmentID: String
        var image: String?
        var icon: String?
    }

    /// The Android picture, or nil when the payload carries none.
    var android: Android?
    /// The web pictures, or nil when the payload carries none.
    var web: Web?
    /// What the payload leaves out, one note per attachment and platform.
    var notes: [PayloadNote] = []
    /// Platforms whose part goes without a picture because the attachment is one they cannot
    /// show (a sound on Android): their push still goes, with its text, in the dialects that
    /// otherwise leave a platform without a picture out (Airship's `device_types`, Braze's objects).
    var textOnly: Set<Platform> = []

    /// The parts of `dialect`'s payload for `attachments` with `content`; `invalid_payload` when a
    /// rendition the payload carries has no URL.
    init(_ attachments: [Attachment], dialect: PushDialect, content: PayloadContent) throws(PushPrepError) {
        guard dialect != .apns else { return }
        let carriesText = content.title?.isEmpty == false && content.body?.isEmpty == false
        var considered: [Platform] = [.android]
        if attachments.contains(where: { $0.renditions.has(.web) }) { considered.append(.web) }
        var carriers: [Platform: Attachment] = [:]
        for platform in considered {
            guard let carrier = attachments.first(where: { $0.renditions.has(platform) }) else { continue }
            // Braze's android_push and web_push require both a title and an alert.
            // https://www.braze.com/docs/api/objects_filters/messaging/android_object
            // https://www.braze.com/docs/api/objects_filters/messaging/web_objects
            if dialect == .braze && !carriesText {
                notes.append(
                    PayloadNote(
                        platform: platform, attachmentID: carrier.id,
                        message:
                            "\(carrier.id)'s \(platform.renditionName) is not sent: Braze's \(platform.brazeObject) needs"
                            + " a title and a body, so there is none and \(platform.devices) get no push from this"
                            + " payload; give both"))
                continue
            }
            carriers[platform] = carrier
            switch platform {
            case .android:
                android = Android(attachmentID: carrier.id, url: try Self.url(of: .android, in: carrier))
            case .web:
                web = Web(
                    attachmentID: carrier.id,
                    image: carrier.renditions.web == nil ? nil : try Self.url(of: .web, in: carrier),
                    icon: carrier.renditions.webIcon == nil ? nil : try Self.url(of: .webIcon, in: carrier))
            case .ios: break
            }
        }
        if carriers[.android] == nil, attachments.first?.kind == .audio, dialect != .braze || carriesText {
            textOnly.insert(.android)
        }
        for attachment in attachments {
            for platform in considered {
                let carrier = carriers[platform]
                if carrier?.id == attachment.id { continue }
                if notes.contains(where: { $0.platform == platform && $0.attachmentID == attachment.id }) { continue }
                notes.append(
                    PayloadNote(
                        platform: platform, attachmentID: attachment.id,
                        message: Self.message(
                            attachment, platform, carrier: carrier, dialect: dialect, carriesText: carriesText)))
            }
        }
    }

    /// The URL of `attachment`'s rendition `key`; `invalid_payload` when it has none.
    private static func url(of key: Renditions.Key, in attachment: Attachment) throws(PushPrepError) -> String {
        guard let rendition = attachment.renditions[key], let url = rendition.url else {
            let id = attachment.renditions[key]?.id ?? key.rawValue
            throw PushPrepError(
                .invalidPayload,
                "\(id) (\(attachment.id)'s \(key.platform.renditionName)) has no url: process with --base-url,"
                    + " or give --base-url to payload")
        }
        return url
    }

    /// Why `attachment` shows no picture on `platform`, and what the push does without it.
    private static func message(
        _ attachment: Attachment, _ platform: Platform, carrier: Attachment?, dialect: PushDialect, carriesText: Bool
    ) -> String {
        if attachment.renditions.has(platform), let carrier {
            return "\(attachment.id)'s \(platform.renditionName) is not sent: \(dialect.displayName) carries one"
                + " \(platform.displayName) picture, \(carrier.id)'s"
        }
        let reason =
            attachment.kind == .audio
            ? "a sound" : "processed without \(platform) in --platforms, or no rendition could be made"
        let missing = "\(attachment.id) has no \(platform.renditionName) (\(reason))"
        if let carrier { return "\(missing); the \(platform.displayName) push shows \(carrier.id)'s picture" }
        if attachment.kind == .audio && (dialect != .braze || carriesText) {
            return "\(missing); the \(platform.displayName) push carries no image"
        }
        switch dialect {
        case .airship:
            return "\(missing); device_types leaves out \(platform): \(platform.devices) get no push from this payload"
        case .braze:
            return "\(missing); there is no \(platform.brazeObject): \(platform.devices) get no push from this payload"
        case .apns, .onesignal, .fcm:
            return "\(missing); the \(platform.displayName) push carries no image"
        }
    }
}

extension Platform {
    /// `Android`, `web`: the platform in a sentence.
    var displayName: String {
        switch self {
        case .ios: "iOS"
        case .android: "Android"
        case .web: "web"
        }
    }

    /// `Android rendition`, `web rendition`.
    var renditionName: String { "\(displayName) rendition" }

    /// Who receives this platform's push: `Android devices`, `browsers`.
    var devices: String {
        switch self {
        case .ios: "iPhones"
        case .android: "Android devices"
        case .web: "browsers"
        }
    }

    /// Braze's messaging object for this platform.
    var brazeObject: String {
        switch self {
        case .ios: "apple_push"
        case .android: "android_push"
        case .web: "web_push"
        }
    }
}
