import PushPrepCore

/// What the preview template reads: stored properties only (swift-mustache reads values through
/// `Mirror`), every text still raw (the template escapes it), every number already formatted.
struct PreviewView {
    /// `image`, `video`, `audio` or `unknown`, for `data-kind`.
    var kind: String
    /// The icon's accessible name.
    var appName: String
    /// The bold first line: the title, or the app's name when there is none (as iOS does).
    var heading: String
    var body: String
    /// Nil when the thumbnail is hidden: no box at all.
    var thumb: Thumb?
    var expanded: Expanded

    /// The banner's square thumbnail: the cropped picture, or a glyph when there is none.
    struct Thumb {
        var image: ThumbImage?
        var glyph: String?
        /// The box's accessible name.
        var label: String
    }

    /// The picture placed in a `viewBox="0 0 100 100"` square (see ``ThumbnailCrop``).
    struct ThumbImage {
        var source: String
        var x: String
        var y: String
        var width: String
        var height: String
    }

    /// The expanded view: one of a picture (with a play badge for a movie), an audio bar, or a
    /// placeholder.
    struct Expanded {
        var picture: ExpandedPicture?
        var movie: Bool
        var audio: Audio?
        var placeholder: String?
        var caption: String?
    }

    struct ExpandedPicture {
        var source: String
        var width: Int
        var height: Int
        var alt: String
    }

    struct Audio {
        var duration: String
        var label: String
    }

    init(_ preview: NotificationPreview) {
        kind = preview.kind?.rawValue ?? "unknown"
        appName = preview.appName
        heading = preview.title.flatMap { $0.isEmpty ? nil : $0 } ?? preview.appName
        body = preview.body ?? ""
        let what = Self.noun(preview.kind)
        if preview.thumbnailHidden {
            thumb = nil
        } else if let picture = preview.picture, let crop = preview.crop, preview.kind != .audio {
            let place = crop.svgAttributes
            thumb = Thumb(
                image: ThumbImage(
                    source: picture.thumbnailSource ?? picture.source, x: place.x, y: place.y, width: place.width,
                    height: place.height),
                glyph: nil, label: "Thumbnail of the \(what)")
        } else {
            thumb = Thumb(
                image: nil, glyph: Self.glyph(preview.kind), label: "Thumbnail of the \(what), not shown here")
        }
        let duration = preview.duration.map(NotificationPreview.clock)
        if preview.kind == .audio {
            expanded = Expanded(
                picture: nil, movie: false,
                audio: Audio(
                    duration: duration ?? "–:––",
                    label: duration.map { "Sound, \($0) long" } ?? "Sound of unknown length"),
                placeholder: nil, caption: nil)
        } else if let picture = preview.picture {
            expanded = Expanded(
                picture: ExpandedPicture(
                    source: picture.source, width: min(picture.width, NotificationPreview.expandedWidth),
                    height: Self.scaledHeight(picture), alt: picture.caption ?? "The \(what)"),
                movie: preview.kind == .video, audio: nil, placeholder: nil,
                caption: [picture.caption, preview.kind == .video ? duration : nil].compactMap { $0 }
                    .joined(separator: " · ").nonEmpty)
        } else {
            expanded = Expanded(
                picture: nil, movie: preview.kind == .video, audio: nil,
                placeholder: preview.placeholder ?? "No picture of the \(what) to show", caption: nil)
        }
    }

    /// The picture's height at the width it is drawn (the attributes keep its proportions before
    /// the stylesheet loads).
    private static func scaledHeight(_ picture: NotificationPreview.Picture) -> Int {
        guard picture.width > NotificationPreview.expandedWidth, picture.width > 0 else { return picture.height }
        return max(1, picture.height * NotificationPreview.expandedWidth / picture.width)
    }

    private static func noun(_ kind: MediaKind?) -> String {
        switch kind {
        case .image: "image"
        case .video: "movie"
        case .audio: "sound"
        case nil: "attachment"
        }
    }

    private static func glyph(_ kind: MediaKind?) -> String {
        switch kind {
        case .image: "▧"
        case .video: "▶"
        case .audio: "♪"
        case nil: "?"
        }
    }
}

extension String {
    /// Nil for the empty string.
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
