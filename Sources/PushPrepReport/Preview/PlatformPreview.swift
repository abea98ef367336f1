package import PushPrepCore

/// One attachment as another platform shows it, drawn with plain HTML and CSS (the classes of
/// ``ReportStyle/css``) beside the iOS ``NotificationPreview``:
/// - Android (FCM): the collapsed notification (app, title, body, and at the right the large
///   icon FCM sets from the same picture, cropped square) and the expanded `BigPictureStyle`
///   (the big picture under the text, at 2:1 with `object-fit: cover`, cut as Android cuts it);
/// - the web (Chrome): the icon at the left of the title and body, the large image under them
///   at 2:1.
///
/// A picture that cannot be shown leaves the notification drawn without one and a line that
/// says why (a sound, a run without the platform, a spent budget).
package struct PlatformPreview: Sendable, Equatable {
    /// A picture the preview shows: the iOS preview's kind of picture (what `src` loads, a
    /// `data:` URL in the self-contained report or a same-origin path in the console, its pixel
    /// size and a smaller copy for a small box such as the Android large icon); the platforms
    /// draw no caption.
    package typealias Picture = NotificationPreview.Picture

    /// `android` or `web` (an iOS preview is a ``NotificationPreview``).
    package var platform: Platform
    /// The app's name (Android's header), or the site's origin (a web notification's).
    package var appName: String = NotificationPreview.defaultAppName
    package var title: String?
    package var body: String?
    /// Android's big picture, or the web push image; nil when there is none to show.
    package var picture: Picture?
    /// The web push icon; nil without one (Android draws its app icon instead).
    package var icon: Picture?
    /// Why there is no picture, in one line.
    package var note: String?
    /// What the picture is (type, size, bytes against the platform's cap, the crop), or nil.
    package var caption: String?

    /// The largest width the expanded picture is drawn at, in CSS pixels (as the iOS preview's).
    package static let expandedWidth = NotificationPreview.expandedWidth

    /// The picture's shape on screen: Android's `BigPictureStyle` and Chrome's image are 2:1.
    package static let aspectRatio = AndroidRules.aspectRatio

    /// The preview's HTML fragment: `<div class="platform-notification">` with the platform's
    /// views.
    package var html: String { PreviewTemplates.render(PlatformPreviewView(self)) }

    /// The previews side by side, as the pages put them in their `<div class="preview">` (a row
    /// that wraps): the iOS preview's HTML (``NotificationPreview/html``) under its label, then
    /// `others`.
    package static func row(ios: String, others: [PlatformPreview]) -> String {
        "<div class=\"platform-column\" data-platform=\"ios\"><p class=\"platform-label\">\(label(.ios))</p>"
            + ios + "</div>" + others.map(\.html).joined()
    }

    /// What a platform is called above its preview.
    package static func label(_ platform: Platform) -> String {
        switch platform {
        case .ios: "iPhone"
        case .android: "Android"
        case .web: "Web (Chrome)"
        }
    }
}

/// What the platform preview template reads: stored properties only (swift-mustache reads
/// through `Mirror`), texts raw (the template escapes them).
struct PlatformPreviewView {
    var platform: String
    var label: String
    /// `true` or `false`, for `data-has-picture`.
    var hasPicture: String
    var appName: String
    var title: String
    var body: String
    var android: Bool
    var web: Bool
    var picture: PictureView?
    var icon: PictureView?
    var note: String?
    var caption: String?

    struct PictureView {
        var source: String
        var thumbnailSource: String
        /// The `width` and `height` attributes: the drawn size at 2:1 (the stylesheet's
        /// `aspect-ratio` decides; these keep the box before it loads).
        var width: Int
        var height: Int
        var alt: String
    }

    init(_ preview: PlatformPreview) {
        platform = preview.platform.rawValue
        label = PlatformPreview.label(preview.platform)
        hasPicture = preview.picture != nil ? "true" : "false"
        appName = preview.appName
        title = preview.title ?? ""
        body = preview.body ?? ""
        android = preview.platform == .android
        web = preview.platform == .web
        picture = preview.picture.map { picture in
            let width = min(max(1, picture.width), PlatformPreview.expandedWidth)
            return PictureView(
                source: picture.source, thumbnailSource: picture.thumbnailSource ?? picture.source, width: width,
                height: max(1, Int((Double(width) / PlatformPreview.aspectRatio).rounded())),
                alt: preview.platform == .android
                    ? "Big picture, cropped to 2:1 as Android shows it" : "Image, cropped to 2:1 as Chrome shows it")
        }
        icon = preview.icon.map { icon in
            PictureView(
                source: icon.source, thumbnailSource: icon.thumbnailSource ?? icon.source, width: 40, height: 40,
                alt: "Icon")
        }
        note = preview.note
        caption = preview.caption
    }
}
