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
