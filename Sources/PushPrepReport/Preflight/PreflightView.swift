package import PushPrepCore
package import PushPrepPayload

/// A checked payload as the pre-flight pages show it: each platform's view of it (the iOS
/// notification preview, and for a payload that reaches them Android's and the web's, each with
/// the picture the payload gives it), and beside them the findings, grouped by platform (the
/// code's `android_` or `web_` prefix; the rest are iOS's and the payload's) and, for iOS, by
/// the part of the notification their JSON Pointer names (the title, the body, the attachment,
/// or the payload as a whole). `preflight --report` puts one per payload in its page; the
/// console's pre-flight page can use the same fragment.
package struct PreflightView: Sendable {
    /// The part of the notification a finding is about.
    package enum Part: String, Sendable, CaseIterable {
        case title
        case body
        case attachment
        case payload

        /// The heading of the part's findings.
        var heading: String {
            switch self {
            case .title: "Title"
            case .body: "Body and alert"
            case .attachment: "Attachment"
            case .payload: "Whole payload"
            }
        }
    }

    package var report: PreflightReport
    package var preview: NotificationPreview
    /// The pictures the payload gives Android and the web, as pre-flight found them
    /// (``PreflightReport/platformImages``: each dialect's keys).
    package var images: [PreflightPlatformImage]
    /// Android's and the web's previews, for a payload that reaches them (any dialect but APNs,
    /// or one with their images or findings).
    package var platformPreviews: [PlatformPreview]
    private var presentation: PreflightPresentation?

    /// The view of `report`, the check of `payload` with `options` (after `--fix`, the corrected
    /// payload); `imageSource` loads the attachment's picture when the caller has one, and
    /// `picture` holds the ones `--fetch` made (else the preview says why there is none, with
    /// `pictureNote` when given). `platformPictures` load the Android and web images by their
    /// URL in the payload (`--fetch` downloads them for the page), and `platformNotes` say why
    /// one has none.
    package init(
        report: PreflightReport, payload: [UInt8], options: PreflightOptions = PreflightOptions(),
        imageSource: String? = nil, picture: AttachmentPicture? = nil, pictureNote: String? = nil,
        platformPictures: [String: PlatformPreview.Picture] = [:], platformNotes: [String: String] = [:],
        appName: String = NotificationPreview.defaultAppName
    ) {
        self.report = report
        var options = options
        options.dialect = report.dialect ?? options.dialect
        presentation = Preflight.presentation(of: payload, options: options)
        preview = NotificationPreview(
            preflight: report, payload: payload, options: options, imageSource: imageSource, picture: picture,
            pictureNote: pictureNote, appName: appName)
        let images = report.platformImages ?? []
        let (title, body) = (preview.title, preview.body)
        self.images = images
        platformPreviews = Self.platforms(report: report, images: images).compactMap {
            platform -> PlatformPreview? in
            guard platform != .ios else { return nil }
            let image = images.first { $0.role.platform == platform && $0.role != .webIcon }
            let icon = images.first { $0.role == .webIcon && platform == .web }
            let what = platform == .android ? "No picture on Android" : "No image in the browser"
            var note: String?
            if let image, platformPictures[image.url] == nil {
                note = "\(what): \(platformNotes[image.url] ?? "not downloaded; check with --fetch to see it")."
            } else if image == nil {
                note =
                    "\(what): this payload gives \(platform) no image"
                    + (Self.imageKey(platform, report.dialect).map { " (\($0))." } ?? ".")
            }
            return PlatformPreview(
                platform: platform, appName: appName, title: title, body: body,
                picture: image.flatMap { platformPictures[$0.url] }, icon: icon.flatMap { platformPictures[$0.url] },
                note: note)
        }
    }

    /// The platform a finding is about: its code's `android_` or `web_` prefix, else iOS (whose
    /// findings include the payload's as a whole).
    package static func platform(of code: String) -> Platform {
        if code.hasPrefix("android_") { return .android }
        if code.hasPrefix("web_") { return .web }
        return .ios
    }

    /// The platforms a payload's view shows, in order: iOS always; Android for every dialect but
    /// APNs, or when it has an Android image or finding; the web when it has a web image or
    /// finding.
    static func platforms(report: PreflightReport, images: [PreflightPlatformImage]) -> [Platform] {
        let codes = report.outcome.map { platform(of: $0.code.rawValue) }
        return Platform.allCases.filter { platform in
            switch platform {
            case .ios: true
            case .android:
                (report.dialect.map { $0 != .apns } ?? false) || images.contains { $0.role.platform == .android }
                    || codes.contains(.android)
            case .web: images.contains { $0.role.platform == .web } || codes.contains(.web)
            }
        }
    }

    /// Where the dialect puts the platform's image, for the line that says there is none.
    static func imageKey(_ platform: Platform, _ dialect: PushDialect?) -> String? {
        switch (platform, dialect) {
        case (.android, .fcm?): "message.android.notification.image or message.notification.image"
        case (.android, .onesignal?): "big_picture"
        case (.android, .airship?): "notification.android.style.big_picture"
        case (.android, .braze?): "android_push.extra.appboy_image_url"
        case (.web, .fcm?): "message.webpush.notification.image"
        case (.web, .onesignal?): "chrome_web_image"
        case (.web, .airship?): "notification.web.image"
        case (.web, .braze?): "web_push.large_image_url"
        default: nil
        }
    }

    /// The part of the notification `pointer` names.
    package func part(of pointer: String) -> Part {
        Self.part(of: pointer, in: presentation)
    }

    /// The part `pointer` names in a payload presented as `presentation`: the title's or the
    /// body's key (or below it), the alert (the body's group), an attachment's entry, URL or
    /// options, else the payload as a whole.
    package static func part(of pointer: String, in presentation: PreflightPresentation?) -> Part {
        func within(_ root: String?) -> Bool {
            guard let root, !root.isEmpty else { return false }
            return pointer == root || pointer.hasPrefix(root + "/")
        }
        guard let presentation else { return .payload }
        if within(presentation.titlePointer) { return .title }
        if within(presentation.bodyPointer) || within(presentation.alertPointer) { return .body }
        for attachment in presentation.attachments {
            var roots = [attachment.pointer, attachment.optionsPointer]
            // An entry that holds the URL under "url" (PushPrep's attachments[i], Airship's
            // media_attachment): the entry is the attachment.
            let components = attachment.pointer.split(separator: "/", omittingEmptySubsequences: false)
            if let index = components.lastIndex(of: "url"), index > 1 {
                roots.append(components[..<index].joined(separator: "/"))
            }
            if roots.contains(where: within) { return .attachment }
        }
        return .payload
    }

    /// The iOS attachments' URLs and where they are in the payload.
    var attachmentURLs: [(pointer: String, url: String)] {
        presentation?.attachments.map { ($0.pointer, $0.url) } ?? []
    }

    /// The fragment: `<section class="preflight">` with the preview and the findings.
    package var html: String {
        PreflightTemplates.render(PreflightSectionView(self))
    }
}

/// What the pre-flight template reads.
struct PreflightSectionView {
    var file: String
    var dialect: String
    var size: String?
    /// Where `--fix` wrote the corrected payload, which the preview then draws.
    var fixedPayload: String?
    /// The previews: iOS's and the other platforms' (``PlatformPreview/row(ios:others:)``).
    var preview: String
    var clean: Bool
    var totals: String
    /// One part per platform the view shows, each with its pictures and its findings.
    var platforms: [PlatformPart]

    struct PlatformPart {
        var platform: String
        var label: String
        var images: [Image]
        /// What the platform part says when the payload gives it no picture.
        var noImage: String?
        /// No findings for this platform.
        var clean: Bool
        var groups: [Group]
    }

    struct Image {
        var role: String
        var pointer: String
        var url: String
    }

    struct Group {
        var part: String
        var heading: String
        var findings: [Finding]
    }

    /// A finding, or one said of several places (``PreflightFindingGroup``): its message once,
    /// then the places. The code's meaning is the code's `title` (its summary, which the message
    /// says in its own case), so the row does not say the same thing twice; the row's advice is
    /// what to do.
    struct Finding {
        var code: String
        var severity: String
        /// The first place's pointer.
        var pointer: String
        var message: String
        var meaning: String
        var action: String
        /// How many places; more than one lists them.
        var count: Int
        var hasPlaces: Bool
        var places: [Place]
    }

    struct Place {
        var pointer: String
        var url: String?
    }

    init(_ view: PreflightView) {
        let report = view.report
        file = report.file
        dialect = report.dialect?.displayName ?? "not a JSON object"
        size = report.bytes.flatMap { bytes in report.limit.map { "\(bytes) of \($0) bytes" } }
        fixedPayload = report.fixedPayload
        preview = PlatformPreview.row(ios: view.preview.html, others: view.platformPreviews)
        let outcome = report.outcome
        clean = outcome.isEmpty
        totals = PreflightSeverity.allCases.map { severity in
            let count = report.count(severity)
            return "\(count) \(severity.rawValue)\(count == 1 ? "" : "s")"
        }.joined(separator: ", ")
        // iOS's findings by part; Android's and the web's in one group each.
        var byPart: [PreflightView.Part: [Finding]] = [:]
        var byPlatform: [Platform: [Finding]] = [:]
        for group in Preflight.grouped(outcome, urls: Preflight.urls(of: report)) {
            let words = Explanation(group.code)
            let first = group.places[0].pointer
            let row = Finding(
                code: group.code.rawValue, severity: group.severity.rawValue, pointer: Self.display(first),
                message: group.message, meaning: words.meaning, action: words.action, count: group.places.count,
                hasPlaces: group.places.count > 1,
                places: group.places.count > 1
                    ? group.places.map { Place(pointer: Self.display($0.pointer), url: $0.url) } : [])
            let platform = PreflightView.platform(of: group.code.rawValue)
            if platform == .ios {
                byPart[view.part(of: first), default: []].append(row)
            } else {
                byPlatform[platform, default: []].append(row)
            }
        }
        let iosGroups = PreflightView.Part.allCases.compactMap { part -> Group? in
            guard let findings = byPart[part], !findings.isEmpty else { return nil }
            return Group(part: part.rawValue, heading: part.heading, findings: findings)
        }
        let shown = PreflightView.platforms(report: report, images: view.images)
        // A platform's findings are listed under it even when its part would not be shown.
        let listed = Platform.allCases.filter { shown.contains($0) || byPlatform[$0] != nil }
        platforms = listed.map { platform in
            let groups: [Group]
            let images: [Image]
            switch platform {
            case .ios:
                groups = iosGroups
                images = view.attachmentURLs.map { Image(role: "attachment", pointer: $0.pointer, url: $0.url) }
            case .android, .web:
                groups =
                    byPlatform[platform].map {
                        [
                            Group(
                                part: platform.rawValue, heading: "\(PlatformPreview.label(platform)) findings",
                                findings: $0)
                        ]
                    } ?? []
                images = view.images.filter { $0.role.platform == platform }.map {
                    Image(role: $0.role == .webIcon ? "icon" : "image", pointer: $0.pointer, url: $0.url)
                }
            }
            return PlatformPart(
                platform: platform.rawValue, label: PlatformPreview.label(platform), images: images,
                noImage: images.isEmpty
                    ? platform == .ios ? "No attachment in this payload." : "No \(platform) image in this payload."
                    : nil,
                clean: groups.isEmpty, groups: groups)
        }
    }

    /// A pointer as the page writes it: the whole payload's `""` in words.
    private static func display(_ pointer: String) -> String { pointer.isEmpty ? "(payload)" : pointer }
}
