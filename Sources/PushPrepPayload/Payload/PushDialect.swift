import PushPrepCore
public import PushPrepJSON
import PushPrepRemote

/// The payload formats PushPrep writes and checks: APNs itself (your own service extension) and
/// the providers whose SDKs download attachments on the phone.
///
/// Each provider has two forms: the server form (the body of its REST API) and the device form
/// (the APNs payload the phone receives, with `aps` and the SDK's own keys). Pre-flight reads
/// both; `payload` writes the server form.
public enum PushDialect: String, Sendable, Codable, CaseIterable {
    case apns
    case onesignal
    case airship
    case braze
    case fcm

    /// The provider's name, for messages.
    public var displayName: String {
        switch self {
        case .apns: "APNs"
        case .onesignal: "OneSignal"
        case .airship: "Airship"
        case .braze: "Braze"
        case .fcm: "Firebase Cloud Messaging"
        }
    }

    /// The attachment extensions the provider's SDK downloads (lowercase), or nil when it takes
    /// every extension iOS accepts.
    public var acceptedExtensions: Set<String>? {
        switch self {
        case .apns, .airship: nil
        case .onesignal:
            ["aiff", "wav", "mp3", "mp4", "jpg", "jpeg", "png", "gif", "mpeg", "mpg", "avi", "m4a", "m4v"]
        case .braze: ["aif", "gif", "jpg", "m4a", "mp3", "mp4", "png", "wav"]
        case .fcm: ["jpg", "jpeg", "png", "gif"]
        }
    }

    /// Guesses the dialect from the keys of a payload: the provider's REST keys, or the keys its
    /// SDK reads beside `aps`. A payload that matches no provider is plain APNs.
    public static func detect(_ payload: JSONValue) -> PushDialect {
        guard let root = payload.objectValue else { return .apns }
        func has(_ key: String) -> Bool { root[key] != nil }
        if has("apple_push") || root["messages"]?["apple_push"] != nil || (has("aps") && root["ab"] != nil) {
            return .braze
        }
        if root["notification"]?["ios"] != nil || has("device_types") || has("audience")
            || has("com.urbanairship.media_attachment")
        {
            return .airship
        }
        if has("ios_attachments") || has("app_id") || has("contents") || has("headings")
            || (has("aps") && (has("att") || root["custom"]?["i"] != nil))
        {
            return .onesignal
        }
        if root["message"]?["apns"] != nil || root["message"]?["token"] != nil || root["message"]?["topic"] != nil
            || (has("apns") && !has("aps")) || (has("aps") && has("fcm_options"))
        {
            return .fcm
        }
        return .apns
    }
}

/// The kind of push, as sent in the `apns-push-type` header: it decides the size limit and
/// whether the service extension can run at all.
public enum PushType: String, Sendable, Codable, CaseIterable {
    case alert
    case voip
    case background

    /// APNs' payload limit for this push type, in bytes.
    public var sizeLimit: Int { self == .voip ? 5120 : 4096 }
}
