import PushPrepCore
import PushPrepJSON
import PushPrepRemote

/// Where one dialect keeps what pre-flight checks, resolved against one payload: the `aps`
/// dictionary (if the form has one), the alert, the flags, and every attachment reference.
struct PayloadLayout {
    /// How a flag is written: APNs' number 1, or the providers' JSON `true`.
    enum FlagStyle {
        case number
        case boolean

        var expected: JSONValue { self == .number ? JSONValue(1) : .bool(true) }
        var spelled: String { self == .number ? "1" : "true" }

        func isSet(_ value: JSONValue?) -> Bool {
            switch self {
            case .number: value?.intValue == 1 && value?.boolValue == nil
            case .boolean: value?.boolValue == true
            }
        }
    }

    /// The values of the interruption level as the dialect spells them.
    struct InterruptionLevels {
        var all: [String]
        var critical: String

        func contains(_ level: String) -> Bool { all.contains(level) }

        /// APNs' own spelling (also Airship's and Braze's).
        static let apns = InterruptionLevels(
            all: ["passive", "active", "time-sensitive", "critical"], critical: "critical")
        /// OneSignal's `ios_interruption_level`.
        static let oneSignal = InterruptionLevels(
            all: ["passive", "active", "time_sensitive", "critical"], critical: "critical")
    }

    /// A flag's place and spelling.
    struct Flag {
        var path: JSONPath
        var style: FlagStyle
    }

    /// The bytes that count against a limit: the whole payload, or the listed members.
    struct SizeScope {
        var paths: [JSONPath]
        var limit: Int
        var label: String

        /// The bytes of `payload` that count: the compact JSON of the scope's members.
        func bytes(of payload: JSONValue) -> Int {
            paths.compactMap { payload[$0]?.compactByteCount }.reduce(0, +)
        }
    }

    /// Where a type is declared for an attachment, and how it is spelled.
    struct DeclaredType {
        enum Spelling {
            /// A UTI (`public.jpeg`).
            case uti
            /// A file extension (`jpg`), as Braze spells it.
            case fileExtension
        }

        var value: String
        var path: JSONPath
        var spelling: Spelling

        /// Whether this declaration names `type`.
        func names(_ type: MediaType) -> Bool {
            switch spelling {
            case .uti: value == type.uti
            case .fileExtension: type.knownExtensions.contains(value.lowercased())
            }
        }

        /// How this declaration spells `type`: its UTI, or the extension the provider takes
        /// (Braze's `aif` for AIFF, `jpg` for JPEG).
        func spelling(of type: MediaType, accepted: Set<String>?) -> String {
            switch spelling {
            case .uti: return type.uti
            case .fileExtension:
                guard let accepted, !accepted.contains(type.fileExtension) else { return type.fileExtension }
                return type.knownExtensions.sorted().first(where: accepted.contains) ?? type.fileExtension
            }
        }
    }

    /// Where an attachment's options dictionary is, and whose keys it uses.
    struct OptionsReference: Hashable {
        enum Keys {
            /// `UNNotificationAttachmentOptions…Key`, handed to the phone as they are (PushPrep's
            /// APNs layout).
            case apple
            /// Airship's `crop`, `time` and `hidden`, which its SDK turns into Apple's.
            case airship
        }

        var path: JSONPath
        var keys: Keys
    }

    /// One attachment URL found in the payload.
    struct AttachmentReference {
        /// The attachment's identifier, where the dialect has one.
        var id: String?
        var url: String
        var path: JSONPath
        var declaredTypes: [DeclaredType]
    }

    var dialect: PushDialect
    /// Whether this is the APNs payload the phone receives (`aps` at the top).
    var isDeviceForm: Bool
    var aps: JSONPath?
    /// Places an alert may be; a missing alert is reported at the first.
    var alert: [JSONPath]
    var mutableContent: Flag
    /// True when the provider sets `mutable-content` itself whenever there is an attachment.
    var mutableContentAutomatic = false
    var contentAvailable: Flag
    var interruptionLevel: JSONPath
    var interruptionLevelValues = InterruptionLevels.apns
    var relevanceScore: JSONPath
    var category: JSONPath
    /// The `apns-push-type` the payload itself sets (FCM's `apns.headers`), if any.
    var pushTypeHeader: JSONPath?
    var size: SizeScope
    var attachments: [AttachmentReference] = []
    /// Every attachment options dictionary the payload has, once each (Airship's URLs share one).
    var attachmentOptions: [OptionsReference] = []
    /// Findings from reading the attachment keys (malformed entries).
    var findings: [PreflightFinding] = []
}

extension PayloadLayout {
    /// Resolves `dialect`'s keys against `payload` (an object). `pushType` sets the size limit.
    static func resolve(_ payload: JSONValue, dialect: PushDialect, pushType: PushType) -> PayloadLayout {
        let root = JSONPath.root
        let isDevice = payload["aps"] != nil
        if isDevice || dialect == .apns {
            return deviceForm(payload, dialect: dialect, pushType: pushType)
        }
        switch dialect {
        case .apns:
            return deviceForm(payload, dialect: dialect, pushType: pushType)
        case .onesignal:
            var layout = PayloadLayout(
                provider: dialect, under: root, alert: [root.appending("contents"), root.appending("headings")],
                presentationPrefix: "ios_", interruptionLevelValues: .oneSignal,
                size: SizeScope(paths: [root], limit: pushType.sizeLimit, label: "the request body"))
            layout.readIDMap(payload, at: root.appending("ios_attachments"))
            return layout
        case .airship:
            let ios = root.appending("notification").appending("ios")
            var layout = PayloadLayout(
                provider: dialect, under: ios,
                alert: [
                    ios.appending("alert"), root.appending("notification").appending("alert"), ios.appending("title"),
                ],
                size: SizeScope(paths: [root], limit: pushType.sizeLimit, label: "the push object"))
            layout.readMediaAttachment(payload, at: ios.appending("media_attachment"))
            return layout
        case .braze:
            let push =
                payload["apple_push"] != nil
                ? root.appending("apple_push") : root.appending("messages").appending("apple_push")
            var layout = PayloadLayout(
                provider: dialect, under: push, alert: [push.appending("alert")],
                contentAvailableKey: "content-available",
                size: SizeScope(
                    paths: [push.appending("alert"), push.appending("extra")], limit: 1912,
                    label: "Braze's alert + extra"))
            let declared = payload[push.appending("asset_file_type")]?.stringValue.map {
                DeclaredType(value: $0, path: push.appending("asset_file_type"), spelling: .fileExtension)
            }
            layout.readURLs(payload, at: push.appending("asset_url"), declaredTypes: declared.map { [$0] } ?? [])
            if payload[push.appending("asset_url")] != nil && declared == nil {
                layout.invalid(
                    push.appending("asset_file_type"), "Braze requires asset_file_type (a string) with asset_url")
            }
            return layout
        case .fcm:
            let message = payload["message"] != nil ? root.appending("message") : root
            let aps = message.appending("apns").appending("payload").appending("aps")
            let notification = message.appending("notification")
            var layout = PayloadLayout(
                dialect: dialect, isDeviceForm: false, aps: aps, alert: [notification, aps.appending("alert")],
                size: SizeScope(paths: [root], limit: pushType.sizeLimit, label: "the message"))
            layout.pushTypeHeader = message.appending("apns").appending("headers").appending("apns-push-type")
            layout.readURLs(payload, at: message.appending("apns").appending("fcm_options").appending("image"))
            layout.readURLs(payload, at: notification.appending("image"))
            return layout
        }
    }

    /// A layout whose flags and presentation keys are APNs' own, inside `aps`.
    private init(dialect: PushDialect, isDeviceForm: Bool, aps: JSONPath, alert: [JSONPath], size: SizeScope) {
        self.init(
            dialect: dialect, isDeviceForm: isDeviceForm, aps: aps, alert: alert,
            mutableContent: Flag(path: aps.appending("mutable-content"), style: .number),
            contentAvailable: Flag(path: aps.appending("content-available"), style: .number),
            interruptionLevel: aps.appending("interruption-level"), relevanceScore: aps.appending("relevance-score"),
            category: aps.appending("category"), size: size)
    }

    /// A provider's own request form (OneSignal, Airship, Braze): no `aps`; `mutable_content` and
    /// the content-available flag are booleans under `parent`, the provider setting
    /// `mutable-content` itself whenever there is an attachment; the interruption level, the
    /// relevance score and the category are under `parent` too, their names after `prefix`.
    private init(
        provider dialect: PushDialect, under parent: JSONPath, alert: [JSONPath],
        contentAvailableKey: String = "content_available", presentationPrefix prefix: String = "",
        interruptionLevelValues: InterruptionLevels = .apns, size: SizeScope
    ) {
        self.init(
            dialect: dialect, isDeviceForm: false, aps: nil, alert: alert,
            mutableContent: Flag(path: parent.appending("mutable_content"), style: .boolean),
            mutableContentAutomatic: true,
            contentAvailable: Flag(path: parent.appending(contentAvailableKey), style: .boolean),
            interruptionLevel: parent.appending(prefix + "interruption_level"),
            interruptionLevelValues: interruptionLevelValues,
            relevanceScore: parent.appending(prefix + "relevance_score"),
            category: parent.appending(prefix + "category"), size: size)
    }

    /// The APNs payload as the phone receives it: `aps` on top, the SDK's keys beside it.
    private static func deviceForm(_ payload: JSONValue, dialect: PushDialect, pushType: PushType) -> PayloadLayout {
        let aps = JSONPath.root.appending("aps")
        var layout = PayloadLayout(
            dialect: dialect, isDeviceForm: true, aps: aps, alert: [aps.appending("alert")],
            size: SizeScope(paths: [.root], limit: pushType.sizeLimit, label: "the payload"))
        let root = JSONPath.root
        switch dialect {
        case .apns: layout.readAttachmentArray(payload, at: root.appending("attachments"))
        case .onesignal: layout.readIDMap(payload, at: root.appending("att"))
        case .airship:
            layout.readMediaAttachment(payload, at: root.appending("com.urbanairship.media_attachment"))
        case .braze:
            let att = root.appending("ab").appending("att")
            let declared = payload[att.appending("type")]?.stringValue.map {
                DeclaredType(value: $0, path: att.appending("type"), spelling: .fileExtension)
            }
            layout.readURLs(payload, at: att.appending("url"), declaredTypes: declared.map { [$0] } ?? [])
        case .fcm: layout.readURLs(payload, at: root.appending("fcm_options").appending("image"))
        }
        return layout
    }

    // MARK: - Reading attachment keys

    /// PushPrep's own APNs layout: `attachments: [{id, url, type, options}]`.
    private mutating func readAttachmentArray(_ payload: JSONValue, at path: JSONPath) {
        guard let value = payload[path] else { return }
        guard let entries = value.arrayValue else {
            invalid(path, "attachments must be an array of {id, url, type, options}, got \(value.typeName)")
            return
        }
        for (index, entry) in entries.enumerated() {
            let entryPath = path.appending(index: index)
            guard entry.objectValue != nil else {
                invalid(entryPath, "an attachment must be an object {id, url, type, options}, got \(entry.typeName)")
                continue
            }
            var declared: [DeclaredType] = []
            if let type = entry["type"]?.stringValue {
                declared.append(DeclaredType(value: type, path: entryPath.appending("type"), spelling: .uti))
            }
            let optionsPath = entryPath.appending("options")
            let hintPath = optionsPath.appending(AttachmentOptionKey.typeHint)
            if let hint = payload[hintPath]?.stringValue {
                declared.append(DeclaredType(value: hint, path: hintPath, spelling: .uti))
            }
            if entry["options"] != nil {
                attachmentOptions.append(OptionsReference(path: optionsPath, keys: .apple))
            }
            readURL(entry["url"], at: entryPath.appending("url"), id: entry["id"]?.stringValue, declaredTypes: declared)
        }
    }

    /// A dictionary of identifier to URL (OneSignal's `ios_attachments` and `att`).
    private mutating func readIDMap(_ payload: JSONValue, at path: JSONPath) {
        guard let value = payload[path] else { return }
        guard let map = value.objectValue else {
            invalid(path, "must be an object of attachment id to URL, got \(value.typeName)")
            return
        }
        for (id, url) in map {
            readURL(url, at: path.appending(id), id: id, declaredTypes: [])
        }
    }

    /// Airship's `media_attachment`: an object whose `url` is a string or an array of them.
    private mutating func readMediaAttachment(_ payload: JSONValue, at path: JSONPath) {
        guard let value = payload[path] else { return }
        guard value.objectValue != nil else {
            invalid(path, "media_attachment must be an object {url, options}, got \(value.typeName)")
            return
        }
        let options = path.appending("options")
        if payload[options] != nil {
            attachmentOptions.append(OptionsReference(path: options, keys: .airship))
        }
        guard payload[path.appending("url")] != nil else {
            invalid(path.appending("url"), "the media_attachment has no url")
            return
        }
        readURLs(payload, at: path.appending("url"))
    }

    /// A URL string, or an array of them (Airship's device form).
    private mutating func readURLs(_ payload: JSONValue, at path: JSONPath, declaredTypes: [DeclaredType] = []) {
        guard let value = payload[path] else { return }
        if let urls = value.arrayValue {
            for (index, url) in urls.enumerated() {
                readURL(url, at: path.appending(index: index), id: nil, declaredTypes: declaredTypes)
            }
        } else {
            readURL(value, at: path, id: nil, declaredTypes: declaredTypes)
        }
    }

    private mutating func readURL(_ value: JSONValue?, at path: JSONPath, id: String?, declaredTypes: [DeclaredType]) {
        guard let value else {
            invalid(path, "the attachment has no url")
            return
        }
        guard let url = value.stringValue, !url.isEmpty else {
            invalid(path, "the attachment URL must be a non-empty string, got \(value.typeName)")
            return
        }
        attachments.append(AttachmentReference(id: id, url: url, path: path, declaredTypes: declaredTypes))
    }

    mutating func invalid(_ path: JSONPath, _ message: String) {
        findings.append(PreflightFinding(.error, .invalidAttachment, message, at: path))
    }
}
