public import Foundation
public import PushPrepCore
import PushPrepJSON
import PushPrepRemote

/// How pre-flight reads a payload and how strict it is about the network.
public struct PreflightOptions: Sendable, Equatable {
    /// The dialect, or nil to detect it from the payload's keys.
    public var dialect: PushDialect?
    /// The `apns-push-type` the payload will be sent with.
    public var pushType: PushType = .alert
    /// The app has an App Transport Security exception: `http://` URLs are a warning, not an error.
    public var allowHTTP = false
    /// Seconds the service extension has to download and finish (`--time-budget`).
    public var timeBudget: Double = 30
    /// The slow connection download times are estimated on, in kbit/s (`--slow-link-kbps`):
    /// 1600 is Lighthouse's "slow 4G" / fast 3G.
    public var slowLinkKbps: Double = 1600
    /// The time signed URLs' expiry is checked against; nil for the time of the check.
    public var now: Date?
    /// Decoded GIF frames above this many bytes are a warning (older iOS: 12 MB budget).
    public var gifMemoryWarningBytes = AppleLimits.olderExtensionMemoryBytes
    /// Decoded GIF frames above this many bytes are an error (the ~24 MB budget).
    public var gifMemoryErrorBytes = AppleLimits.extensionMemoryBytes
    /// The speed the Android image's download time is estimated at, against FCM's 5 s
    /// (`--assume-bandwidth`, default 1 Mbit/s).
    public var assumedBandwidth = Bandwidth.default
    /// The outputs of a manifest (`--manifest`): an Android or web image the manifest made is
    /// judged by its numbers (bytes, type, size) without downloading it.
    public var manifestImages: ManifestImages?

    /// The defaults.
    public init() {}
}

/// One attachment pre-flight found, and what its download showed (`--fetch`).
public struct PreflightAttachment: Sendable, Codable, Equatable {
    /// The JSON Pointer of its URL.
    public var pointer: String
    public var url: String
    /// Its identifier, where the dialect has one.
    public var id: String?
    /// What the download showed, when fetched.
    public var fetched: FetchedAttachment?

    public init(pointer: String, url: String, id: String? = nil, fetched: FetchedAttachment? = nil) {
        self.pointer = pointer
        self.url = url
        self.id = id
        self.fetched = fetched
    }
}

/// What downloading an attachment showed.
public struct FetchedAttachment: Sendable, Codable, Equatable {
    /// The URL after redirects.
    public var finalURL: String
    public var status: Int
    public var bytes: Int
    /// The server's `Content-Type`.
    public var contentType: String?
    /// The type detected from the bytes, nil when unrecognised.
    public var type: String?
    public var kind: MediaKind?
    public var width: Int?
    public var height: Int?
    public var frames: Int?
    /// How long the download took here, in seconds.
    public var seconds: Double
    /// The estimated download time on the slow connection, in seconds (for an Android or web
    /// image: at the assumed bandwidth, `--assume-bandwidth`).
    public var slowLinkSeconds: Double
    /// The server's `Content-Length`, when it sent one (Android and web images only).
    public var contentLength: Int?
}

/// A change `--fix` made to a payload.
public struct PreflightChange: Sendable, Codable, Equatable {
    /// The JSON Pointer of the changed key.
    public var pointer: String
    public var message: String
}

/// The outcome of checking one payload.
public struct PreflightReport: Sendable, Codable, Equatable {
    /// The payload's file (or `-`).
    public var file: String
    /// The dialect the payload was read as: the one asked for, else the one its keys show;
    /// nil when none was asked for and the payload is not a JSON object.
    public var dialect: PushDialect?
    /// The bytes that count against the limit (compact JSON), and the limit.
    public var bytes: Int?
    public var limit: Int?
    public var attachments: [PreflightAttachment] = []
    /// The Android and web images the payload names (absent when none).
    public var platformImages: [PreflightPlatformImage]?
    /// Errors first, then warnings, then infos; in payload order within each.
    public var findings: [PreflightFinding] = []
    /// What `--fix` changed (nil without `--fix`).
    public var changes: [PreflightChange]?
    /// Where `--fix` wrote the corrected payload.
    public var fixedPayload: String?
    /// What is still wrong after `--fix` (nil without `--fix`).
    public var remaining: [PreflightFinding]?

    /// A report with no findings yet.
    public init(file: String) {
        self.file = file
    }

    /// The findings that decide the outcome: ``remaining`` after `--fix`, else ``findings``.
    public var outcome: [PreflightFinding] { remaining ?? findings }

    /// Findings of a severity in ``outcome``.
    public func count(_ severity: PreflightSeverity) -> Int { outcome.filter { $0.severity == severity }.count }

    /// The exit status the CLI reports: 1 on any error, 3 on warnings when `strict`, else 0.
    public func exitStatus(strict: Bool) -> Int32 {
        if count(.error) > 0 { return 1 }
        if strict && count(.warning) > 0 { return 3 }
        return 0
    }
}

/// Checks push payloads before they are sent: the payload's shape and flags, and every
/// attachment it names (see the README's table of finding codes). ``check(_:file:options:)``
/// reads the payload only; ``PreflightSession`` also downloads the attachments.
public enum Preflight {
    /// Checks a payload without touching the network.
    public static func check(_ bytes: [UInt8], file: String, options: PreflightOptions) -> PreflightReport {
        analyze(bytes, file: file, options: options).report
    }

    /// The parsed payload, its layout and the report so far.
    struct Analysis {
        var report: PreflightReport
        var payload: JSONValue?
        var layout: PayloadLayout?
        /// The Android and web images, in payload order.
        var platformImages: [PlatformImageKeys.Reference] = []
    }

    static func analyze(_ bytes: [UInt8], file: String, options: PreflightOptions) -> Analysis {
        var report = PreflightReport(file: file)
        report.dialect = options.dialect
        let document: JSONDocument
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            report.findings = [PreflightFinding(.error, .invalidJSON, "not valid JSON: \(error)", at: .root)]
            return Analysis(report: report)
        }
        guard document.value.objectValue != nil else {
            report.findings = [
                PreflightFinding(
                    .error, .notAnObject, "the payload must be a JSON object, got \(document.value.typeName)",
                    at: .root)
            ]
            return Analysis(report: report)
        }
        let payload = document.value
        let dialect = options.dialect ?? PushDialect.detect(payload)
        let layout = PayloadLayout.resolve(payload, dialect: dialect, pushType: options.pushType)
        report.dialect = dialect
        var checker = PayloadChecker(payload: payload, layout: layout, options: options)
        for path in document.duplicateKeys {
            checker.add(
                .warning, .duplicateKey,
                "the key \"\(path.lastKey ?? "")\" appears more than once in its object; servers keep either one",
                at: path)
        }
        if document.duplicateKeyCount > document.duplicateKeys.count {
            checker.add(
                .warning, .duplicateKey,
                "and \(document.duplicateKeyCount - document.duplicateKeys.count) more repeated keys, not listed",
                at: .root)
        }
        checker.run()
        report.bytes = checker.measuredBytes
        report.limit = layout.size.limit
        report.attachments = layout.attachments.map {
            PreflightAttachment(pointer: $0.path.pointer, url: $0.url, id: $0.id)
        }
        let images = PlatformImageKeys.resolve(payload, dialect: dialect)
        if !images.isEmpty {
            report.platformImages = images.map {
                PreflightPlatformImage(pointer: $0.path.pointer, url: $0.url, role: $0.role)
            }
        }
        var own = checker.findings
        if !images.isEmpty {
            // The push still carries pictures, for the other platforms.
            for index in own.indices where own[index].code == .noAttachments {
                own[index].message =
                    "no iPhone attachment URL in \(dialect.displayName)'s keys; only Android or web images"
            }
        }
        let iosURLs = Set(layout.attachments.map(\.path.pointer))
        let imageCheck = PlatformImageCheck(options: options)
        report.findings = Preflight.sorted(own + images.flatMap { imageCheck.check($0, checkedURLs: iosURLs) })
        return Analysis(report: report, payload: payload, layout: layout, platformImages: images)
    }

    /// How two JSON Pointers (RFC 6901) compare: token by token, a token of digits against
    /// another as a number (so `/2` comes before `/10`), any other pair as text; a pointer
    /// before the longer ones it starts (`/aps` before `/aps/alert`).
    package static func pointerOrder(_ a: String, _ b: String) -> ComparisonResult {
        let left = a.split(separator: "/", omittingEmptySubsequences: false)
        let right = b.split(separator: "/", omittingEmptySubsequences: false)
        for (x, y) in zip(left, right) where x != y {
            let xDigits = !x.isEmpty && x.allSatisfy { $0.isASCII && $0.isNumber }
            let yDigits = !y.isEmpty && y.allSatisfy { $0.isASCII && $0.isNumber }
            if xDigits && yDigits {
                // Numbers of any length: fewer digits (leading zeros aside) is smaller.
                let xs = x.drop { $0 == "0" }
                let ys = y.drop { $0 == "0" }
                if xs.count != ys.count { return xs.count < ys.count ? .orderedAscending : .orderedDescending }
                if xs != ys { return xs < ys ? .orderedAscending : .orderedDescending }
                continue
            }
            if xDigits != yDigits { return xDigits ? .orderedAscending : .orderedDescending }
            return x < y ? .orderedAscending : .orderedDescending
        }
        if left.count != right.count { return left.count < right.count ? .orderedAscending : .orderedDescending }
        return .orderedSame
    }

    /// Findings a report lists at most; the last of them then counts the rest.
    public static let maximumFindings = 1000

    /// The one order of findings, which the text, the JSON, the pages and the HTTP API all show:
    /// by severity (errors, warnings, infos), then by JSON Pointer with its array indices compared
    /// as numbers (`/attachments/2` before `/attachments/10`, the whole payload's `""` first),
    /// stable for findings at the same pointer; a `findings_truncated` last of its severity. At
    /// most ``maximumFindings``, the last one a `findings_truncated` that counts the others and
    /// has the severity of the worst of them (so the report's outcome does not change).
    ///
    /// Every path that makes or merges findings (the static check, `--fetch`'s downloads, which
    /// finish in any order, `--fix`'s recheck) ends here, so none can list them otherwise.
    package static func sorted(_ findings: [PreflightFinding]) -> [PreflightFinding] {
        let ordered = findings.enumerated().sorted { left, right in
            let (a, b) = (left.element, right.element)
            if a.severity != b.severity { return a.severity < b.severity }
            let (aLast, bLast) = (a.code == .findingsTruncated, b.code == .findingsTruncated)
            if aLast != bLast { return bLast }
            switch pointerOrder(a.pointer, b.pointer) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: return left.offset < right.offset
            }
        }.map(\.element)
        guard ordered.count > maximumFindings else { return ordered }
        var kept = Array(ordered.prefix(maximumFindings - 1))
        let dropped = ordered.dropFirst(maximumFindings - 1)
        // A report already capped counts what its earlier cap dropped too.
        let counted = dropped.reduce(0) { total, finding in
            total + (finding.code == .findingsTruncated ? finding.omitted ?? 1 : 1)
        }
        let counts = PreflightSeverity.allCases.compactMap { severity -> String? in
            let count = dropped.filter { $0.severity == severity && $0.code != .findingsTruncated }.count
            return count > 0 ? "\(count) \(severity.rawValue)\(count == 1 ? "" : "s")" : nil
        }
        kept.append(
            PreflightFinding(
                dropped.map(\.severity).min() ?? .info, .findingsTruncated,
                "and \(counted) more findings, not listed (\(counts.joined(separator: ", ")))", at: .root,
                omitted: counted))
        return kept
    }
}

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
