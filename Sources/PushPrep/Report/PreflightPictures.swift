public import PushPrepCore
public import PushPrepPayload

/// The pictures of `preflight --fetch --report`: the same two small `data:` URL JPEGs per
/// attachment as the batch report (``ReportThumbnails``, its sizes and quality), made from a
/// downloaded image while pre-flight still holds it. libvips reads the file from disk (shrink
/// on load), so nothing holds the download whole.
///
/// Images above `maxPixels` (the pipeline's `--max-pixels`) get none: a small file can decode
/// to a vast image, and a preview is not worth that.
public struct PreflightPictures: AttachmentPicturing {
    let thumbnails: ReportThumbnails
    let maxPixels: Int

    /// Pictures for a report of `payloads` payloads (the batch report's policy for that many inputs).
    public init(payloads: Int, maxPixels: Int) {
        thumbnails = ReportThumbnails(policy: .init(count: payloads))
        self.maxPixels = maxPixels
    }

    /// JPEG bytes all of a report's pictures may take together; once spent, the rest get none.
    public var budgetBytes: Int { thumbnails.policy.budgetBytes }

    /// What a preview says instead of a picture once ``budgetBytes`` are spent.
    public var budgetNote: String {
        "picture left out: the report's \(ReportThumbnails.megabytes(budgetBytes)) of thumbnails are spent"
    }

    /// Both copies of the image at `path`, at its frame `frame` (clamped to its frames).
    public func picture(ofImageAt path: String, type: MediaType, frame: Int) async -> AttachmentPicture? {
        guard let header = await LibvipsImageInspector().frames(ofImageAt: path, type: type),
            header.width > 0, header.height > 0
        else { return nil }
        let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
        guard !overflow, pixels <= maxPixels else { return nil }
        let page = min(max(0, header.frames - 1), max(0, frame))
        let name = PathName.directoryAndName(of: path).name
        guard
            case .pictures(let expanded, let banner) = await thumbnails.thumbnails(
                ofImageAt: path, width: header.width, height: header.height, page: page, name: name)
        else { return nil }
        return AttachmentPicture(
            width: header.width, height: header.height, expanded: expanded.dataURL, banner: banner.dataURL,
            bytes: expanded.bytes + banner.bytes, frames: max(1, header.frames))
    }
}
