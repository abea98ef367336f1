package import PushPrepCore

/// One attachment as the phone shows it in a notification, drawn with plain HTML and CSS (the
/// classes of ``ReportStyle/css``) after iOS 17 and 18: the collapsed banner (the app's icon at
/// the left, the title in bold, or the app's name when there is no title, the body and, at the
/// right, the square thumbnail cropped as iOS crops it) and the expanded view (the image, a
/// movie's poster with a play badge, or an audio bar with the duration, on top of the card that
/// holds the text below it).
///
/// A value of what is known; ``html`` draws it. Image sources are strings the page can load: a
/// `data:` URL in the self-contained report, a same-origin path in the console.
package struct NotificationPreview: Sendable, Equatable {
    /// A picture the preview shows: the output image, a movie's poster, or a frame of an
    /// animation, with its pixel size (the thumbnail crop needs its proportions).
    package struct Picture: Sendable, Equatable {
        /// What `src` loads: a `data:` URL or a same-origin path.
        package var source: String
        package var width: Int
        package var height: Int
        /// What the picture is, when that needs saying (a poster's frame, say).
        package var caption: String?
        /// A smaller copy of the same picture (same proportions) for the banner's thumbnail box;
        /// nil to draw the box from `source`.
        package var thumbnailSource: String?

        package init(
            source: String, width: Int, height: Int, caption: String? = nil, thumbnailSource: String? = nil
        ) {
            self.source = source
            self.width = width
            self.height = height
            self.caption = caption
            self.thumbnailSource = thumbnailSource
        }
    }

    /// The app's name: the icon's accessible name, and the bold first line when there is no title
    /// (iOS 17 shows no separate app-name line).
    package var appName: String
    package var title: String?
    package var body: String?
    /// The attachment's kind; nil when it is not known (a payload checked without `--fetch`).
    package var kind: MediaKind?
    /// The picture to show; nil when there is none (audio, or nothing downloaded).
    package var picture: Picture?
    /// `ThumbnailClippingRect`: the part of the picture the thumbnail shows.
    package var clip: ClippingRect?
    /// `ThumbnailTime`: seconds into a movie, or a frame number of an animated image.
    package var thumbnailTime: Double?
    /// `ThumbnailHidden`: no thumbnail in the banner.
    package var thumbnailHidden: Bool
    /// A movie's or a sound's length in seconds.
    package var duration: Double?
    /// Shown instead of the picture when there is none to show (a movie without a poster, an
    /// attachment not downloaded): says why.
    package var placeholder: String?

    /// Every field; only the app's name is required.
    package init(
        appName: String = NotificationPreview.defaultAppName, title: String? = nil, body: String? = nil,
        kind: MediaKind? = nil, picture: Picture? = nil, clip: ClippingRect? = nil, thumbnailTime: Double? = nil,
        thumbnailHidden: Bool = false, duration: Double? = nil, placeholder: String? = nil
    ) {
        self.appName = appName
        self.title = title
        self.body = body
        self.kind = kind
        self.picture = picture
        self.clip = clip
        self.thumbnailTime = thumbnailTime
        self.thumbnailHidden = thumbnailHidden
        self.duration = duration
        self.placeholder = placeholder
    }

    /// The app name a preview shows when the caller knows none.
    package static let defaultAppName = "Your App"

    /// The side of the banner's thumbnail box in CSS pixels (``ReportStyle/css`` draws it so);
    /// thumbnails are made at most twice this (a 2x screen).
    package static let thumbnailSide = 38
    /// The width of the expanded view's picture in CSS pixels, at most.
    package static let expandedWidth = 320

    /// The preview's HTML fragment: `<div class="notification">` with the banner and the
    /// expanded view.
    package var html: String { PreviewTemplates.render(PreviewView(self)) }

    /// The thumbnail crop of ``picture``: aspect fill of the clipping rectangle, or of the whole
    /// picture.
    package var crop: ThumbnailCrop? {
        picture.flatMap { ThumbnailCrop(imageWidth: $0.width, imageHeight: $0.height, clip: clip) }
    }

    /// A length as the phone's player writes it: `m:ss` (minutes past 59 stay minutes).
    package static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds > 0 else { return "0:00" }
        let total = Int(seconds.rounded())
        let secs = total % 60
        return "\(total / 60):\(secs < 10 ? "0" : "")\(secs)"
    }
}
