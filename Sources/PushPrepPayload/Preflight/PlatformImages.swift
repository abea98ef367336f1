public import Foundation
public import PushPrepCore
import PushPrepJSON
import PushPrepRemote

/// What an image another platform's push shows is for: Android's big picture, a browser's
/// large image, or a browser's icon.
public enum PlatformImageRole: String, Sendable, Codable, CaseIterable {
    /// Android's `BigPictureStyle` picture (FCM `image`, OneSignal `big_picture`, ...).
    case androidImage = "android_image"
    /// A web push's large image (2:1 on Chrome and Edge).
    case webImage = "web_image"
    /// A web push's icon (at least 192 px square).
    case webIcon = "web_icon"

    /// The platform whose push shows it.
    public var platform: Platform {
        switch self {
        case .androidImage: .android
        case .webImage, .webIcon: .web
        }
    }

    /// The manifest rendition that is made for it (`--fix` points the payload at its URL).
    public var renditionKey: Renditions.Key {
        switch self {
        case .androidImage: .android
        case .webImage: .web
        case .webIcon: .webIcon
        }
    }

    /// How a message names it.
    var label: String {
        switch self {
        case .androidImage: "the Android image"
        case .webImage: "the web image"
        case .webIcon: "the web icon"
        }
    }
}

/// One Android or web image a payload names, and what its download showed (`--fetch`).
public struct PreflightPlatformImage: Sendable, Codable, Equatable {
    /// The JSON Pointer of its URL.
    public var pointer: String
    public var url: String
    public var role: PlatformImageRole
    /// What the download showed, when fetched.
    public var fetched: FetchedAttachment?

    public init(pointer: String, url: String, role: PlatformImageRole, fetched: FetchedAttachment? = nil) {
        self.pointer = pointer
        self.url = url
        self.role = role
        self.fetched = fetched
    }
}

/// A download speed, in bits per second (`--assume-bandwidth`): how long the Android image
/// takes to arrive is estimated at it, against FCM's 5 s (``AndroidRules/downloadTimeout``).
public struct Bandwidth: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Bits per second.
    public let bitsPerSecond: Double

    /// The speeds accepted: 1 kbit/s to 10 Gbit/s.
    public static let range: ClosedRange<Double> = 1_000...10_000_000_000

    /// 1 Mbit/s: a slow mobile connection (the default).
    public static let `default` = Bandwidth(checked: 1_000_000)

    private init(checked bitsPerSecond: Double) { self.bitsPerSecond = bitsPerSecond }

    /// A speed within ``range``, or nil.
    public init?(bitsPerSecond: Double) {
        guard bitsPerSecond.isFinite, Self.range.contains(bitsPerSecond) else { return nil }
        self.bitsPerSecond = bitsPerSecond
    }

    /// Reads `1mbit`, `500kbit`, `2.5Mbit/s`, `64kbps`, `1gbit`, or bits per second (`750000`); nil for
    /// anything else or a speed outside ``range``.
    public init?(text: String) {
        var rest = text.trimmingCharacters(in: .whitespaces).lowercased()
        if rest.hasSuffix("/s") {
            rest.removeLast(2)
        } else if rest.hasSuffix("bps") {
            rest.removeLast(3)
            rest += "bit"
        }
        var scale = 1.0
        for (unit, factor) in [("kbit", 1e3), ("mbit", 1e6), ("gbit", 1e9), ("bit", 1.0)] where rest.hasSuffix(unit) {
            rest.removeLast(unit.count)
            scale = factor
            break
        }
        rest = rest.trimmingCharacters(in: .whitespaces)
        guard !rest.isEmpty, rest.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(rest) else {
            return nil
        }
        self.init(bitsPerSecond: value * scale)
    }

    /// The seconds `bytes` take at this speed.
    public func seconds(for bytes: Int) -> Double { Double(bytes) * 8 / bitsPerSecond }

    /// `1 Mbit/s`, `500 kbit/s`, `750000 bit/s`.
    public var description: String {
        for (unit, factor) in [("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)] where bitsPerSecond >= factor {
            return "\(Self.format(bitsPerSecond / factor)) \(unit)"
        }
        return "\(Self.format(bitsPerSecond)) bit/s"
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }

    /// The message for a speed that ``init(text:)`` refuses, naming `what` (the option or field).
    public static func invalid(_ text: String, what: String) -> PushPrepError {
        PushPrepError(
            .invalidSettings,
            "\(what) must be a speed from 1kbit to 10gbit (e.g. 1mbit, 500kbit, or bits per second), got \(text)")
    }
}

/// What the images of a manifest say about their URLs: a payload's image that a manifest
/// made is judged by the manifest's numbers without downloading it (`--manifest`).
public struct ManifestImages: Sendable, Equatable {
    /// What the manifest says of one output.
    public struct Known: Sendable, Equatable {
        public var bytes: Int
        public var mime: String
        /// The picture's size; nil for a sound.
        public var width: Int?
        public var height: Int?
        /// The output's own file name, for messages.
        public var file: String
    }

    /// Each output by its URL: the attachments, their posters and their renditions.
    public private(set) var byURL: [String: Known] = [:]
    /// Each attachment's renditions, by the attachment's URL and by its source.
    public private(set) var renditions: [String: Renditions] = [:]

    /// The outputs of `manifest` that have URLs.
    public init(_ manifest: Manifest) {
        for case .ok(let output) in manifest.attachments {
            if let url = output.url {
                byURL[url] = Known(
                    bytes: output.bytes, mime: output.mime, width: output.width, height: output.height,
                    file: output.file)
                if !output.renditions.isEmpty { renditions[url] = output.renditions }
            }
            if !output.renditions.isEmpty { renditions[output.source] = output.renditions }
            for (_, rendition) in output.renditions.all {
                guard let url = rendition.url else { continue }
                byURL[url] = Known(
                    bytes: rendition.bytes, mime: rendition.mime, width: rendition.width, height: rendition.height,
                    file: rendition.file)
            }
        }
    }
}

/// Where each dialect keeps its Android and web images (each verified against the provider's
/// API reference; `docs/platforms.md`):
/// - FCM v1: `message.android.notification.image`, else `message.notification.image`, which
///   Android shows when the Android one is absent; `message.webpush.notification.image` and `.icon`.
/// - OneSignal: `big_picture`; `chrome_web_image`, `chrome_web_icon`.
/// - Airship: `notification.android.style.big_picture` (style `type` `big_picture`);
///   `notification.web.image.url`, `notification.web.icon.url` (or the bare URL strings).
/// - Braze: `android_push.extra.appboy_image_url` (Braze's documented key for a big picture);
///   `web_push.large_image_url` (image) and `web_push.image_url` (icon).
/// - APNs, and every payload in the form the phone receives: none (that is an iPhone's).
enum PlatformImageKeys {
    /// One image found in a payload.
    struct Reference {
        var role: PlatformImageRole
        var url: String
        var path: JSONPath
    }

    /// The images of `payload` read as `dialect`, in a fixed order (Android, web image, web icon).
    static func resolve(_ payload: JSONValue, dialect: PushDialect) -> [Reference] {
        guard payload["aps"] == nil else { return [] }
        let root = JSONPath.root
        var found: [Reference] = []
        func read(_ path: JSONPath, _ role: PlatformImageRole) {
            guard let url = payload[path]?.stringValue, !url.isEmpty else { return }
            found.append(Reference(role: role, url: url, path: path))
        }
        switch dialect {
        case .apns:
            break
        case .fcm:
            let message = payload["message"] != nil ? root.appending("message") : root
            let android = message.appending("android").appending("notification").appending("image")
            read(
                payload[android] != nil ? android : message.appending("notification").appending("image"), .androidImage)
            let web = message.appending("webpush").appending("notification")
            read(web.appending("image"), .webImage)
            read(web.appending("icon"), .webIcon)
        case .onesignal:
            read(root.appending("big_picture"), .androidImage)
            read(root.appending("chrome_web_image"), .webImage)
            read(root.appending("chrome_web_icon"), .webIcon)
        case .airship:
            let notification = root.appending("notification")
            let style = notification.appending("android").appending("style")
            if payload[style.appending("type")]?.stringValue == "big_picture" {
                read(style.appending("big_picture"), .androidImage)
            }
            // `{"url": ...}` in Airship's reference; a bare string in some of its examples.
            let web = notification.appending("web")
            for (key, role) in [("image", PlatformImageRole.webImage), ("icon", .webIcon)] {
                let member = web.appending(key)
                read(payload[member]?.stringValue != nil ? member : member.appending("url"), role)
            }
        case .braze:
            let messages = payload["messages"] != nil ? root.appending("messages") : root
            read(messages.appending("android_push").appending("extra").appending("appboy_image_url"), .androidImage)
            let web = messages.appending("web_push")
            read(web.appending("large_image_url"), .webImage)
            read(web.appending("image_url"), .webIcon)
        }
        return found
    }

    /// Where `--fix` writes the rendition for `image`: its own key, except FCM's shared
    /// `notification.image` (which the iPhone reads too), whose Android rendition goes to
    /// `android.notification.image`, the key Android prefers.
    static func fixPath(for image: Reference, in payload: JSONValue, dialect: PushDialect) -> JSONPath {
        guard dialect == .fcm, image.role == .androidImage, let notification = image.path.parent,
            notification.lastKey == "notification", let message = notification.parent,
            message.lastKey != "android"
        else { return image.path }
        return message.appending("android").appending("notification").appending("image")
    }
}

/// The checks of Android and web images against each platform's rules (``AndroidRules``,
/// ``WebRules``): from the URL, from a manifest that made the image, and from the download.
struct PlatformImageCheck {
    let options: PreflightOptions

    /// How far from 2:1 a picture may be before the phone's crop is worth a warning: a
    /// width / height ratio outside 2 ± this.
    static let aspectTolerance = 0.25

    /// The findings the URL and the manifest give, without the network. `checkedURLs` are
    /// pointers whose URL the iOS checks already judged (FCM's shared `notification.image`).
    func check(_ image: PlatformImageKeys.Reference, checkedURLs: Set<String>) -> [PreflightFinding] {
        var findings: [PreflightFinding] = []
        let url: RemoteURL
        do {
            url = try RemoteURL(image.url)
        } catch {
            if !checkedURLs.contains(image.path.pointer) {
                findings.append(
                    PreflightFinding(
                        .error, .invalidURL, "not an image URL \(image.role.platform) can download: \(error.message)",
                        at: image.path))
            }
            return findings
        }
        if !checkedURLs.contains(image.path.pointer),
            let unreachable = PreflightFinding.unreachable(url, at: image.path)
        {
            findings.append(unreachable)
        }
        if image.role == .androidImage, url.scheme == "http" {
            findings.append(
                PreflightFinding(
                    options.allowHTTP ? .warning : .error, .androidImageInsecure,
                    "\(image.url) is http://: Android 9 and later refuse cleartext downloads unless the app's"
                        + " network security config allows them; serve it over https://", at: image.path))
        }
        if image.role == .androidImage,
            let type = MediaType.allCases.first(where: {
                $0.knownExtensions.contains(url.pathExtension)
            })
        {
            findings += typeFindings(type, at: image.path, from: "the URL's extension .\(url.pathExtension)")
        }
        if let known = options.manifestImages?.byURL[image.url] {
            findings += manifestFindings(known, image)
        }
        return findings
    }

    /// What BitmapFactory does with `type` (Android only).
    func typeFindings(_ type: MediaType, at path: JSONPath, from source: String) -> [PreflightFinding] {
        if type == .gif {
            return [
                PreflightFinding(
                    .warning, .androidImageType,
                    "\(source) is a GIF: Android shows its first frame only, still", at: path)
            ]
        }
        if type.kind != .image {
            return [
                PreflightFinding(
                    .error, .androidImageType,
                    "\(source) is a \(type.kind.rawValue) (\(type.rawValue)): Android's BitmapFactory decodes"
                        + " images only, so the notification arrives without its picture", at: path)
            ]
        }
        if !AndroidRules.decodableMIMETypes.contains(type.mime) {
            return [
                PreflightFinding(
                    .error, .androidImageType,
                    "\(source) is \(type.rawValue), which Android's BitmapFactory does not decode on every"
                        + " phone (it takes JPEG, PNG, WebP, BMP, GIF)", at: path)
            ]
        }
        return []
    }

    private func manifestFindings(_ known: ManifestImages.Known, _ image: PlatformImageKeys.Reference)
        -> [PreflightFinding]
    {
        var findings: [PreflightFinding] = []
        let source = "the manifest's \(known.file)"
        if image.role == .androidImage {
            if let type = MediaType.allCases.first(where: { $0.mime == known.mime }) {
                findings += typeFindings(type, at: image.path, from: source)
            }
            findings += sizeFindings(bytes: known.bytes, at: image.path, from: source)
        }
        if let width = known.width, let height = known.height {
            findings += shapeFindings(width: width, height: height, image, from: source)
        }
        return findings
    }

    /// Android's 1 MiB cap, and the 5 s download at the assumed bandwidth.
    func sizeFindings(bytes: Int, at path: JSONPath, from source: String) -> [PreflightFinding] {
        var findings: [PreflightFinding] = []
        if bytes > AndroidRules.maxBytes {
            findings.append(
                PreflightFinding(
                    .error, .androidImageTooLarge,
                    "\(source) is \(bytes) bytes, over the Firebase SDK's cap of \(AndroidRules.maxBytes)"
                        + " (1 MiB): the notification arrives without its picture", at: path))
        }
        let seconds = options.assumedBandwidth.seconds(for: bytes)
        if seconds > AndroidRules.downloadTimeout {
            findings.append(
                PreflightFinding(
                    .warning, .androidImageSlow,
                    String(
                        format: "%@ is %d bytes: about %.1f s at %@, over the Firebase SDK's %g s timeout",
                        source, bytes, seconds, options.assumedBandwidth.description, AndroidRules.downloadTimeout),
                    at: path))
        }
        return findings
    }

    /// The 2:1 shape of Android's and the browsers' large image, and the web icon's size.
    func shapeFindings(width: Int, height: Int, _ image: PlatformImageKeys.Reference, from source: String)
        -> [PreflightFinding]
    {
        guard width > 0, height > 0 else { return [] }
        switch image.role {
        case .webIcon:
            guard width < WebRules.iconSize || height < WebRules.iconSize else { return [] }
            return [
                PreflightFinding(
                    .warning, .webIconTooSmall,
                    "\(source) is \(width)x\(height): a web push icon should be at least"
                        + " \(WebRules.iconSize)x\(WebRules.iconSize), or the browser shows it blurred", at: image.path)
            ]
        case .androidImage, .webImage:
            let ratio = Double(width) / Double(height)
            let target = image.role == .androidImage ? AndroidRules.aspectRatio : WebRules.aspectRatio
            guard abs(ratio - target) > Self.aspectTolerance else { return [] }
            // The share of the picture a centred 2:1 crop leaves out.
            let kept = ratio > target ? target / ratio : ratio / target
            let where_ = image.role == .androidImage ? "the phone" : "the browser"
            return [
                PreflightFinding(
                    .warning, image.role == .androidImage ? .androidImageAspect : .webImageAspect,
                    String(
                        format: "%@ is %dx%d (%.2f:1): %@ shows it at 2:1 and crops about %d%% of it away",
                        source, width, height, ratio, where_, Int(((1 - kept) * 100).rounded())), at: image.path)
            ]
        }
    }

    /// The checks of a downloaded image: its real size and type, its `Content-Length`, the
    /// download time at the assumed bandwidth, and its shape (when its header could be read).
    func check(
        _ image: PlatformImageKeys.Reference, _ downloaded: PreflightSession.Downloaded
    ) -> (FetchedAttachment, [PreflightFinding]) {
        let download = downloaded.download
        var info = downloaded.fetched(slowLinkSeconds: options.assumedBandwidth.seconds(for: download.size))
        info.contentLength = download.contentLength
        if let frames = downloaded.image {
            info.width = frames.width
            info.height = frames.height
            info.frames = frames.frames
        }
        var findings: [PreflightFinding] = []
        let source = "the download"
        if image.role == .androidImage {
            if let type = downloaded.type {
                // What the URL's extension already said is not said twice.
                let ext = (try? RemoteURL(image.url))?.pathExtension ?? ""
                if !type.knownExtensions.contains(ext) {
                    findings += typeFindings(type, at: image.path, from: "\(source) (\(download.size) bytes)")
                }
            } else {
                let name = MediaDetector.unsupportedFormatName(download.prefix).map { " (\($0))" } ?? ""
                findings.append(
                    PreflightFinding(
                        .error, .androidImageType,
                        "the \(download.size) bytes are not an image Android's BitmapFactory decodes\(name)",
                        at: image.path))
            }
            let declared = download.contentLength
            if declared == nil {
                findings.append(
                    PreflightFinding(
                        .warning, .androidImageNoContentLength,
                        "the server sent no Content-Length: the Firebase SDK cannot check the 1 MiB cap before"
                            + " downloading, and gives up only after reading \(AndroidRules.maxBytes + 1) bytes",
                        at: image.path))
            }
            let bytes = max(declared ?? 0, download.size)
            findings += sizeFindings(
                bytes: bytes, at: image.path,
                from: declared.map { "\(source) (Content-Length \($0))" } ?? "\(source) (\(download.size) bytes)")
        }
        if let frames = downloaded.image {
            findings += shapeFindings(width: frames.width, height: frames.height, image, from: source)
        }
        return (info, findings)
    }
}
