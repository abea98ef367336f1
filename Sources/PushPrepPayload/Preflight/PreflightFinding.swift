import PushPrepCore
public import PushPrepJSON
import PushPrepRemote

/// How bad a finding is. Errors mean the attachment will not show (or the push is refused);
/// warnings mean it may not; infos are things the sender should know.
public enum PreflightSeverity: String, Sendable, Codable, CaseIterable, Comparable {
    case error
    case warning
    case info

    private var rank: Int {
        switch self {
        case .error: 0
        case .warning: 1
        case .info: 2
        }
    }

    /// Errors sort first.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}

/// A stable pre-flight finding code. The raw value is what reports print and what scripts match;
/// it never changes meaning between releases.
public enum PreflightCode: String, Sendable, Codable, CaseIterable {
    // The payload itself.
    case invalidJSON = "invalid_json"
    case notAnObject = "not_an_object"
    case duplicateKey = "duplicate_key"
    case missingAPS = "missing_aps"
    case apsNotObject = "aps_not_object"
    case payloadTooLarge = "payload_too_large"
    case missingAlert = "missing_alert"
    case silentPush = "silent_push"
    case missingMutableContent = "missing_mutable_content"
    case invalidMutableContent = "invalid_mutable_content"
    case pushTypeWithoutExtension = "push_type_without_extension"
    case invalidInterruptionLevel = "invalid_interruption_level"
    case criticalNeedsEntitlement = "critical_needs_entitlement"
    case invalidRelevanceScore = "invalid_relevance_score"
    case invalidValue = "invalid_value"
    case unknownAPSKey = "unknown_aps_key"
    case unknownKey = "unknown_key"
    case categoryNoted = "category_noted"
    case noAttachments = "no_attachments"
    case attachmentsBeyondFirst = "attachments_beyond_first"
    // Each attachment, from its URL and declared type.
    case invalidAttachment = "invalid_attachment"
    case invalidURL = "invalid_url"
    case insecureURL = "insecure_url"
    case unreachableURL = "unreachable_url"
    case urlExpired = "url_expired"
    case urlExpiresSoon = "url_expires_soon"
    case missingExtension = "missing_extension"
    case unsupportedExtension = "unsupported_extension"
    case providerExtension = "provider_extension"
    case typeMismatch = "type_mismatch"
    case unknownTypeHint = "unknown_type_hint"
    case invalidAttachmentOption = "invalid_attachment_option"
    case unknownAttachmentOption = "unknown_attachment_option"
    // Each attachment, from its bytes (`--fetch`).
    case fetchFailed = "fetch_failed"
    case contentNotAccepted = "content_not_accepted"
    case contentTooLarge = "content_too_large"
    case extensionMismatch = "extension_mismatch"
    case typeHintMismatch = "type_hint_mismatch"
    case contentTypeMismatch = "content_type_mismatch"
    case redirected = "redirected"
    case insecureRedirect = "insecure_redirect"
    case gifMemory = "gif_memory"
    case slowDownload = "slow_download"
    case slowServer = "slow_server"
    // Android and web images (`docs/platforms.md`): from the URL, a manifest, or the download.
    case androidImageInsecure = "android_image_insecure"
    case androidImageType = "android_image_type"
    case androidImageTooLarge = "android_image_too_large"
    case androidImageNoContentLength = "android_image_no_content_length"
    case androidImageSlow = "android_image_slow"
    case androidImageAspect = "android_image_aspect"
    case webImageAspect = "web_image_aspect"
    case webIconTooSmall = "web_icon_too_small"
    // The report itself.
    case fetchSkipped = "fetch_skipped"
    case findingsTruncated = "findings_truncated"

    /// What the finding means, for the README's table and `--help`.
    public var summary: String {
        switch self {
        case .invalidJSON: "The file is not well-formed JSON."
        case .notAnObject: "The payload is JSON but not an object."
        case .duplicateKey: "A key appears twice in one object; which one a server keeps is undefined."
        case .missingAPS: "An APNs payload without an `aps` dictionary."
        case .apsNotObject: "`aps` is not a dictionary."
        case .payloadTooLarge: "Over APNs' 4096 bytes (5120 for VoIP), or Braze's 1912 for alert + extra."
        case .missingAlert: "Attachments but no alert: the service extension runs only for alerts."
        case .silentPush: "Attachments on a silent push (`content-available` without an alert)."
        case .missingMutableContent: "Attachments without `mutable-content` (or the provider's flag)."
        case .invalidMutableContent: "`mutable-content` is there but not 1 (or the provider's flag is not true)."
        case .pushTypeWithoutExtension: "A background or VoIP push never runs the service extension."
        case .invalidInterruptionLevel: "Not one of passive, active, time-sensitive, critical."
        case .criticalNeedsEntitlement: "`critical` needs Apple's critical-alerts entitlement."
        case .invalidRelevanceScore: "Not a number from 0 to 1."
        case .invalidValue: "A known key with a value of the wrong type."
        case .unknownAPSKey: "A key inside `aps` that Apple does not define (custom keys go beside `aps`)."
        case .unknownKey:
            "A key the dialect's request does not define where it sits (FCM's `token` beside `message`); the provider ignores it or refuses the request."
        case .categoryNoted: "A category: the app must register it for its actions or content extension."
        case .noAttachments: "No attachment URL in the dialect's keys."
        case .attachmentsBeyondFirst:
            "More than one attachment in an APNs payload: iOS shows only the first without a content extension."
        case .invalidAttachment: "An attachment entry without a usable URL string."
        case .invalidURL: "Not an absolute http(s) URL with a host."
        case .insecureURL: "`http://`: App Transport Security blocks it unless the app has an exception."
        case .unreachableURL:
            "A URL whose host a phone cannot reach: loopback, private, link-local, a bare IP, `localhost` or `.local`."
        case .urlExpired: "A signed URL (S3, GCS, Azure, CloudFront) whose expiry has passed: the download is refused."
        case .urlExpiresSoon: "A signed URL that expires within a day: a push held for an offline phone may outlive it."
        case .missingExtension: "No file extension in the URL's path: the phone infers the type from it."
        case .unsupportedExtension: "An extension of a type iOS does not accept (webp, heic, ...) or none it knows."
        case .providerExtension: "An extension iOS accepts but the provider's SDK does not download."
        case .typeMismatch: "The declared type (type hint, asset type) disagrees with the URL's extension."
        case .unknownTypeHint: "A type hint that is not a type iOS accepts."
        case .invalidAttachmentOption:
            "An attachment option of the wrong type or out of range (thumbnail time, hidden, clipping rectangle)."
        case .unknownAttachmentOption: "An attachment option iOS (or Airship) does not define; it is ignored."
        case .fetchFailed: "The attachment could not be downloaded."
        case .contentNotAccepted: "The bytes are of a type iOS does not accept, or of none."
        case .contentTooLarge: "Larger than Apple's limit for its kind (10/50/5 MB)."
        case .extensionMismatch: "The URL's extension disagrees with the bytes (phone error 101)."
        case .typeHintMismatch: "The declared type disagrees with the bytes."
        case .contentTypeMismatch: "The server's Content-Type disagrees with the bytes."
        case .redirected: "The URL redirects; the phone follows, at the cost of a round trip."
        case .insecureRedirect: "A redirect to `http://`, which App Transport Security blocks."
        case .gifMemory: "An animated GIF whose decoded frames strain the extension's memory."
        case .slowDownload: "The download would not finish within the budget on a slow connection."
        case .slowServer: "The server took longer than the budget to deliver the file here."
        case .androidImageInsecure:
            "The Android image is `http://`: Android 9+ refuses cleartext unless the app's network security config allows it."
        case .androidImageType:
            "The Android image is not a still BitmapFactory decodes (a GIF shows its first frame only; a movie or sound, nothing)."
        case .androidImageTooLarge:
            "The Android image is over the Firebase SDK's 1 MiB (1,048,576 bytes): it arrives without its picture."
        case .androidImageNoContentLength:
            "The Android image's server sends no `Content-Length`, which the Firebase SDK's size check reads first."
        case .androidImageSlow:
            "The Android image would take longer than FCM's 5 s timeout at the assumed bandwidth (`--assume-bandwidth`)."
        case .androidImageAspect: "The Android image is far from 2:1: the phone crops it to 2:1."
        case .webImageAspect: "The web push image is far from 2:1: Chrome and Edge crop it to 2:1."
        case .webIconTooSmall: "The web push icon is smaller than 192x192: the browser shows it blurred."
        case .fetchSkipped: "Attachments not downloaded: over `--fetch-max-urls` or `--fetch-max-bytes`."
        case .findingsTruncated: "More findings than a report lists (1,000); this one counts the rest."
        }
    }
}

/// One thing pre-flight found: how bad, a stable code, a message for people, and a JSON Pointer
/// (RFC 6901) to the key at fault (`""` for the whole payload).
public struct PreflightFinding: Sendable, Codable, Equatable, Hashable {
    public var severity: PreflightSeverity
    public var code: PreflightCode
    public var message: String
    public var pointer: String
    /// For `findings_truncated`: how many findings it stands for (absent on every other code).
    public var omitted: Int?

    /// A finding at `path`.
    public init(
        _ severity: PreflightSeverity, _ code: PreflightCode, _ message: String, at path: JSONPath,
        omitted: Int? = nil
    ) {
        self.severity = severity
        self.code = code
        self.message = message
        self.pointer = path.pointer
        self.omitted = omitted
    }
}
