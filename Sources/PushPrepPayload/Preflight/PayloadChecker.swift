import Foundation
import PushPrepCore
import PushPrepJSON
import PushPrepRemote

/// The checks of a payload's own keys and of its attachments' URLs.
struct PayloadChecker {
    let payload: JSONValue
    let layout: PayloadLayout
    let options: PreflightOptions
    private(set) var findings: [PreflightFinding] = []
    private(set) var measuredBytes = 0

    init(payload: JSONValue, layout: PayloadLayout, options: PreflightOptions) {
        self.payload = payload
        self.layout = layout
        self.options = options
    }

    /// The keys Apple documents inside `aps` (notifications and Live Activities).
    static let apsKeys: Set<String> = [
        "alert", "badge", "sound", "thread-id", "category", "content-available", "mutable-content",
        "target-content-id", "interruption-level", "relevance-score", "filter-criteria", "stale-date",
        "content-state", "timestamp", "event", "dismissal-date", "attributes-type", "attributes",
        "input-push-channel", "input-push-token",
    ]

    /// `interruption-level` values.
    static let interruptionLevels: Set<String> = ["passive", "active", "time-sensitive", "critical"]

    mutating func add(_ severity: PreflightSeverity, _ code: PreflightCode, _ message: String, at path: JSONPath) {
        findings.append(PreflightFinding(severity, code, message, at: path))
        compactIfLarge()
    }

    /// Keeps memory bounded on hostile payloads (thousands of attachments, each with findings):
    /// past a few times the listed maximum, the findings are cut to it (the rest counted).
    private mutating func compactIfLarge() {
        if findings.count >= 4 * Preflight.maximumFindings { findings = Preflight.sorted(findings) }
    }

    mutating func run() {
        checkAPS()
        checkKnownKeys()
        checkSize()
        findings += layout.findings
        compactIfLarge()
        checkDelivery()
        checkBeyondFirst()
        checkPresentation()
        for attachment in layout.attachments {
            checkURL(attachment)
        }
        checkOptions()
        findings = Preflight.sorted(findings)
    }

    // MARK: - aps

    private mutating func checkAPS() {
        guard let apsPath = layout.aps else { return }
        guard let aps = payload[apsPath] else {
            if layout.isDeviceForm {
                add(.error, .missingAPS, "the payload has no \"aps\" dictionary: APNs needs one", at: apsPath)
            }
            return
        }
        guard let members = aps.objectValue else {
            add(.error, .apsNotObject, "\"aps\" must be a dictionary, got \(aps.typeName)", at: apsPath)
            return
        }
        for (key, value) in members {
            let path = apsPath.appending(key)
            if !Self.apsKeys.contains(key) {
                add(
                    .warning, .unknownAPSKey,
                    "\"\(key)\" is not an aps key Apple defines; custom keys belong beside \"aps\", not inside it",
                    at: path)
                continue
            }
            if let expected = Self.apsTypes[key], !expected.contains(value.typeName) {
                add(
                    .error, .invalidValue,
                    "\"\(key)\" must be \(expected.sorted().joined(separator: " or ")), got \(value.typeName)",
                    at: path)
            }
        }
    }

    // MARK: - Keys the dialect does not define

    /// Every member of a fixed-member level (``KnownKeys``) that the dialect does not define
    /// there: `unknown_key`, naming where the key belongs when another level defines it (FCM's
    /// `token` beside `message` belongs in `/message/token`).
    private mutating func checkKnownKeys() {
        let levels = KnownKeys.levels(of: payload, dialect: layout.dialect, layout: layout)
        for level in levels {
            guard let members = payload[level.path]?.objectValue else { continue }
            for (key, _) in members where !level.defines(key) {
                let home = levels.first { $0.path != level.path && $0.defines(key) }
                let listed =
                    level.keys.count <= 12 ? " (it defines \(level.keys.sorted().joined(separator: ", ")))" : ""
                add(
                    .warning, .unknownKey,
                    "\"\(key)\" is not a key \(level.name) defines\(listed); "
                        + (level.ignoredBy ?? "\(layout.dialect.displayName) ignores it or refuses the request")
                        + (home.map { "; it belongs in \($0.path.appending(key).pointer)" } ?? ""),
                    at: level.path.appending(key))
            }
        }
    }

    /// The JSON types of the `aps` keys whose type is fixed.
    private static let apsTypes: [String: Set<String>] = [
        "alert": ["string", "object"], "badge": ["number"], "sound": ["string", "object"], "thread-id": ["string"],
        "category": ["string"], "content-available": ["number"], "target-content-id": ["string"],
        "filter-criteria": ["string"],
    ]

    // MARK: - Size

    private mutating func checkSize() {
        let scope = layout.size
        measuredBytes = scope.bytes(of: payload)
        guard measuredBytes > scope.limit else { return }
        let at = scope.paths.count == 1 ? scope.paths[0] : (scope.paths[0].parent ?? .root)
        add(
            .error, .payloadTooLarge,
            "\(scope.label) is \(measuredBytes) bytes (compact JSON), over the limit of \(scope.limit)"
                + " for \(layout.dialect.displayName)"
                + (options.pushType == .voip ? " VoIP pushes" : "") + "; the push would be refused",
            at: at)
    }

    // MARK: - Alert, flags and push type

    /// Whether the phone will run the service extension for this push.
    private mutating func checkDelivery() {
        guard !layout.attachments.isEmpty else {
            if layout.findings.isEmpty {
                add(
                    .info, .noAttachments,
                    "no attachment URL in \(layout.dialect.displayName)'s keys; nothing to download", at: .root)
            }
            return
        }
        if !hasAlert {
            if layout.contentAvailable.style.isSet(payload[layout.contentAvailable.path]) {
                add(
                    .error, .silentPush,
                    "a silent push (content-available without an alert) never runs the service extension,"
                        + " so the attachment is never downloaded", at: layout.contentAvailable.path)
            } else {
                add(
                    .error, .missingAlert,
                    "the push has attachments but no alert: the service extension runs only for pushes that"
                        + " show an alert", at: layout.alert[0])
            }
        }
        let flag = layout.mutableContent
        switch payload[flag.path] {
        case nil where layout.mutableContentAutomatic:
            break
        case nil:
            add(
                .error, .missingMutableContent,
                "\(flag.path.lastKey ?? "mutable-content") must be \(flag.style.spelled) for the service extension"
                    + " to run and download the attachment", at: flag.path)
        case let value? where !flag.style.isSet(value):
            add(
                .error, .invalidMutableContent,
                "\(flag.path.lastKey ?? "mutable-content") must be \(flag.style.spelled), got \(value.serialized())",
                at: flag.path)
        default:
            break
        }
        checkPushType()
    }

    /// iOS shows an APNs push's first attachment in the banner and the expanded view; the others
    /// reach only a content extension, which draws its own view. One warning, at the second
    /// attachment, naming every one after the first by id (or by pointer, without an id).
    private mutating func checkBeyondFirst() {
        guard layout.dialect == .apns, layout.attachments.count > 1, let first = layout.attachments.first else {
            return
        }
        let beyond = layout.attachments.dropFirst()
        let named = beyond.map { attachment in
            let entry = attachment.path.parent ?? attachment.path
            return attachment.id.map { "\($0) (\(entry.pointer))" } ?? entry.pointer
        }
        let shown = named.prefix(PushDialect.listedIDs).joined(separator: ", ")
        let rest = named.count > PushDialect.listedIDs ? " and \(named.count - PushDialect.listedIDs) more" : ""
        add(
            .warning, .attachmentsBeyondFirst,
            "\(layout.attachments.count) attachments: iOS shows only the first (\(first.id ?? first.url)) without a"
                + " content extension; \(shown)\(rest) \(named.count == 1 ? "reaches" : "reach") only a content"
                + " extension's view",
            at: beyond.first.map { $0.path.parent ?? $0.path } ?? .root)
    }

    private mutating func checkPushType() {
        if let header = layout.pushTypeHeader, let value = payload[header]?.stringValue,
            value == "background" || value == "voip"
        {
            add(
                .error, .pushTypeWithoutExtension,
                "apns-push-type \(value) never runs the service extension; attachments need an alert push",
                at: header)
        } else if options.pushType != .alert {
            add(
                .error, .pushTypeWithoutExtension,
                "a \(options.pushType.rawValue) push never runs the service extension; attachments need an alert push",
                at: .root)
        }
    }

    /// Whether any of the alert's places holds text.
    private var hasAlert: Bool {
        layout.alert.contains { path in payload[path].map(Self.hasText) ?? false }
    }

    private static func hasText(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): !text.isEmpty
        case .object(let members): members.contains { $0.key != "image" && hasText($0.value) }
        default: false
        }
    }

    // MARK: - Interruption level, relevance, category

    private mutating func checkPresentation() {
        if let value = payload[layout.interruptionLevel] {
            let levels = layout.interruptionLevelValues
            if let level = value.stringValue, levels.contains(level) {
                if level == levels.critical {
                    add(
                        .info, .criticalNeedsEntitlement,
                        "critical alerts need Apple's critical-alerts entitlement; without it iOS delivers the"
                            + " push as active", at: layout.interruptionLevel)
                }
            } else {
                add(
                    .error, .invalidInterruptionLevel,
                    "the interruption level must be one of \(levels.all.joined(separator: ", ")), got"
                        + " \(value.serialized())", at: layout.interruptionLevel)
            }
        }
        if let value = payload[layout.relevanceScore] {
            if !(value.doubleValue.map { (0...1).contains($0) } ?? false) {
                add(
                    .error, .invalidRelevanceScore,
                    "the relevance score must be a number from 0 to 1, got \(value.serialized())",
                    at: layout.relevanceScore)
            }
        }
        if let value = payload[layout.category] {
            if let category = value.stringValue {
                add(
                    .info, .categoryNoted,
                    "category \"\(category)\": the app must register it (UNNotificationCategory) for its actions"
                        + " or its content extension to apply", at: layout.category)
            } else if layout.aps.map({ !layout.category.pointer.hasPrefix($0.pointer) }) ?? true {
                add(.error, .invalidValue, "the category must be a string, got \(value.typeName)", at: layout.category)
            }
        }
    }

    // MARK: - Attachment URLs

    private mutating func checkURL(_ attachment: PayloadLayout.AttachmentReference) {
        let path = attachment.path
        let url: RemoteURL
        do {
            url = try RemoteURL(attachment.url)
        } catch {
            add(.error, .invalidURL, "not an attachment URL the phone can download: \(error.message)", at: path)
            return
        }
        if url.scheme == "http" {
            add(
                options.allowHTTP ? .warning : .error, .insecureURL,
                "\(attachment.url) is http://: App Transport Security blocks it unless the app has an exception;"
                    + " serve it over https://", at: path)
        }
        if let unreachable = PreflightFinding.unreachable(url, at: path) {
            add(unreachable.severity, unreachable.code, unreachable.message, at: path)
        }
        checkExpiry(attachment)
        let ext = url.pathExtension
        guard !ext.isEmpty else {
            add(
                .error, .missingExtension,
                "the URL's path has no file extension: the phone infers the type from it (error 101)", at: path)
            return
        }
        guard let accepted = AcceptedTypes.extensions[ext] else {
            let named = MediaType.allCases.first { $0.knownExtensions.contains(ext) }
            add(
                .error, .unsupportedExtension,
                named.map { ".\(ext) is \($0.rawValue), which iOS does not accept as an attachment; convert it" }
                    ?? ".\(ext) is not an extension of a type iOS accepts as an attachment", at: path)
            return
        }
        if let allowed = layout.dialect.acceptedExtensions, !allowed.contains(ext) {
            add(
                .error, .providerExtension,
                "\(layout.dialect.displayName)'s SDK does not download .\(ext) attachments (it takes"
                    + " \(allowed.sorted().joined(separator: " ")))", at: path)
        }
        for declared in attachment.declaredTypes {
            checkDeclared(declared, against: accepted.uti, ext: ext)
        }
    }

    /// A signed URL must outlive the push: APNs holds a notification for an offline phone, and the
    /// phone downloads the attachment only when it arrives.
    private mutating func checkExpiry(_ attachment: PayloadLayout.AttachmentReference) {
        guard let concern = SignedURLExpiry.concern(about: attachment.url, now: options.now ?? Date()) else { return }
        if case .expired = concern {
            add(.error, .urlExpired, concern.message, at: attachment.path)
        } else {
            add(.warning, .urlExpiresSoon, concern.message, at: attachment.path)
        }
    }

    private mutating func checkDeclared(_ declared: PayloadLayout.DeclaredType, against uti: String, ext: String) {
        let declaredUTI: String?
        switch declared.spelling {
        case .uti: declaredUTI = AcceptedTypes.utis.contains(declared.value) ? declared.value : nil
        case .fileExtension: declaredUTI = AcceptedTypes.uti(forExtension: declared.value)
        }
        if declared.spelling == .fileExtension, let allowed = layout.dialect.acceptedExtensions,
            !allowed.contains(declared.value)
        {
            add(
                .error, .providerExtension,
                "\(layout.dialect.displayName) takes the file type as one of"
                    + " \(allowed.sorted().joined(separator: " ")), got \"\(declared.value)\"", at: declared.path)
        }
        guard let declaredUTI else {
            add(
                .warning, .unknownTypeHint,
                "\"\(declared.value)\" is not a type iOS accepts as an attachment", at: declared.path)
            return
        }
        if declaredUTI != uti {
            add(
                .error, .typeMismatch,
                "the declared type \(declared.value) disagrees with the URL's extension .\(ext) (\(uti))",
                at: declared.path)
        }
    }
}

extension PreflightFinding {
    /// `unreachable_url` when `url`'s host is one a phone cannot reach (``PhoneReachability``:
    /// loopback, private, link-local, a bare IP, `localhost`, `.local`), else nil. The iOS
    /// attachment and the Android and web images are judged by this one check.
    static func unreachable(_ url: RemoteURL, at path: JSONPath) -> PreflightFinding? {
        guard let reason = PhoneReachability.reason(host: url.host) else { return nil }
        return PreflightFinding(
            .error, .unreachableURL,
            "the host \(url.host) is \(reason): a phone on the mobile network cannot download from it;"
                + " put the file on a public host name (serve --public-url, process --base-url)", at: path)
    }
}
