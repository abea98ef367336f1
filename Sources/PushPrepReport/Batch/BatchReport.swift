import Crypto
package import Foundation
package import PushPrepCore

/// The batch report of `pushprep process … --report`: one self-contained HTML page (no request
/// leaves it: thumbnails are `data:` URLs, the stylesheet is inline under a hash in a strict
/// Content-Security-Policy, no script) with a summary at the top and, for each input (the failed
/// ones first), its notification preview (iOS, and beside it Android and, for a run made for it,
/// the web, drawn from the renditions; none for a failed input, which sends nothing), before →
/// after, and its warnings or failure in plain words.
///
/// The DOM follows the contract the browser tests select: `main#report`, `section#summary` with
/// `data-count-ok`, `data-count-failed`, `data-bytes-before`, `data-bytes-after`,
/// `svg#size-chart`, and one `article.input` per input with `data-source`, `data-status`,
/// `data-kind` (successes), `data-code` (failures), `data-bytes-before`, `data-bytes-after`.
package struct BatchReport: Sendable {
    /// One input: its manifest entry and what the page shows of it beyond the manifest.
    package struct Item: Sendable {
        package var entry: ManifestEntry
        /// The preview's picture (a `data:` URL of a small JPEG), or nil.
        package var imageSource: String?
        /// A smaller copy for the banner's thumbnail box, or nil to use `imageSource`.
        package var thumbnailSource: String?
        /// Why there is no picture when there could be one (the thumbnail budget was spent).
        package var imageNote: String?
        /// A failed input's size on disk, when it could be read (the manifest has none).
        package var bytesBefore: Int?
        /// The pictures of the attachment's renditions (small `data:` URL copies of the files),
        /// which the Android and web previews draw.
        package var renditionPictures: [Renditions.Key: PlatformPreview.Picture]
        /// Why a rendition has no picture (the thumbnail budget was spent, the file unreadable).
        package var renditionNotes: [Renditions.Key: String]

        package init(
            entry: ManifestEntry, imageSource: String? = nil, thumbnailSource: String? = nil, imageNote: String? = nil,
            bytesBefore: Int? = nil, renditionPictures: [Renditions.Key: PlatformPreview.Picture] = [:],
            renditionNotes: [Renditions.Key: String] = [:]
        ) {
            self.entry = entry
            self.imageSource = imageSource
            self.thumbnailSource = thumbnailSource
            self.imageNote = imageNote
            self.bytesBefore = bytesBefore
            self.renditionPictures = renditionPictures
            self.renditionNotes = renditionNotes
        }
    }

    package var items: [Item]
    /// The run's wall time, in seconds.
    package var seconds: Double
    /// When the run finished; written in the page as UTC.
    package var finished: Date
    /// The app name the previews show.
    package var appName: String = NotificationPreview.defaultAppName
    /// The platforms the run was made for (the manifest's settings): what the Android and web
    /// previews say when an attachment has no rendition; nil when not known.
    package var platforms: PlatformSet?
    /// What the previews show as the notification's title and body. A batch has no payload (the
    /// title and body come with `pushprep payload --title … --body …`), so these stand in, and
    /// the page says so; never the file's name, which a phone would not show.
    package var sampleTitle: String = BatchReport.defaultSampleTitle
    package var sampleBody: String = BatchReport.defaultSampleBody

    /// The stand-in title when the caller gives none.
    package static let defaultSampleTitle = "Your title"
    /// The stand-in body when the caller gives none.
    package static let defaultSampleBody = "Your message: the payload's body shows here."

    package init(items: [Item], seconds: Double, finished: Date = Date(), platforms: PlatformSet? = nil) {
        self.items = items
        self.seconds = seconds
        self.finished = finished
        self.platforms = platforms
    }

    /// The Content-Security-Policy of a page whose only inline content is a stylesheet with
    /// this text: nothing loads but `data:` images and that stylesheet (by its SHA-256).
    package static func contentSecurityPolicy(style: String) -> String {
        "default-src 'none'; img-src data:; style-src '\(styleHash(style))'; base-uri 'none'; form-action 'none'"
    }

    /// `sha256-<base64>` of a stylesheet's text, as CSP spells a hash source.
    package static func styleHash(_ style: String) -> String {
        "sha256-" + Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString()
    }

    /// The page.
    package func html() -> String {
        ReportTemplates.render(page: ReportPageView(self), style: ReportStyle.css)
    }

    /// The page as UTF-8 bytes, for writing.
    package func bytes() -> [UInt8] { Array(html().utf8) }
}
