import Foundation
public import Logging
public import PushPrepCore
import PushPrepJSON
public import PushPrepRemote

/// Pre-flight with the network: every attachment is downloaded through ``RemoteFetcher`` (the
/// address policy, byte caps and deadlines of remote sources apply) and its bytes are checked,
/// and ``fix(_:file:writeTo:processing:)`` writes a corrected payload. Call ``shutdown()`` when done.
public final class PreflightSession: Sendable {
    let options: PreflightOptions
    let budget: FetchBudget
    let fetcher: RemoteFetcher
    let scratch: String
    let images: any ImageInspecting

    /// How much one payload's check downloads at most: a payload can name thousands of URLs.
    public struct FetchBudget: Sendable, Equatable {
        /// Distinct attachment URLs downloaded, in payload order; the rest are `fetch_skipped`.
        public var maxURLs: Int
        /// Once the downloads total this many bytes no further one starts (those running
        /// finish, each within its kind's cap).
        public var maxBytes: Int

        public static let urlRange = 1...1000
        public static let byteRange = 1_000_000...10_000_000_000

        public init(maxURLs: Int = 20, maxBytes: Int = 200_000_000) {
            self.maxURLs = maxURLs
            self.maxBytes = maxBytes
        }

        public func validate() throws(PushPrepError) {
            guard Self.urlRange.contains(maxURLs) else {
                throw PushPrepError(.invalidSettings, "--fetch-max-urls must be in 1...1000, got \(maxURLs)")
            }
            guard Self.byteRange.contains(maxBytes) else {
                throw PushPrepError(
                    .invalidSettings, "--fetch-max-bytes must be in 1000000...10000000000, got \(maxBytes)")
            }
        }

        /// The budget a client asks for (`fetch_max_urls`, `fetch_max_bytes` of `POST
        /// /v1/preflight`) under the budget a server grants at most (`ceiling`): each one not
        /// asked for is the ceiling's; one below its range or above the ceiling is refused with
        /// `invalid_settings` naming the field and the most allowed (never clamped, so a client
        /// is never silently checked with less than it asked for).
        public static func requested(
            maxURLs: Int?, maxBytes: Int?, within ceiling: FetchBudget
        ) throws(PushPrepError) -> FetchBudget {
            let budget = FetchBudget(maxURLs: maxURLs ?? ceiling.maxURLs, maxBytes: maxBytes ?? ceiling.maxBytes)
            guard budget.maxURLs >= urlRange.lowerBound, budget.maxURLs <= ceiling.maxURLs else {
                throw PushPrepError(
                    .invalidSettings,
                    "fetch_max_urls must be in \(urlRange.lowerBound)...\(ceiling.maxURLs) on this server, got \(budget.maxURLs)"
                )
            }
            guard budget.maxBytes >= byteRange.lowerBound, budget.maxBytes <= ceiling.maxBytes else {
                throw PushPrepError(
                    .invalidSettings,
                    "fetch_max_bytes must be in \(byteRange.lowerBound)...\(ceiling.maxBytes) on this server, got \(budget.maxBytes)"
                )
            }
            return budget
        }
    }

    /// Downloads running at once for one payload (the fetcher's own limits apply as well).
    static let window = 4

    /// A session whose downloads go to a private temporary directory; GIFs are read with
    /// `images` (PushPrep's `LibvipsImageInspector` unless a caller brings its own).
    public init(
        options: PreflightOptions, remote: RemoteSettings, budget: FetchBudget = FetchBudget(),
        images: any ImageInspecting, logger: Logger
    ) throws(PushPrepError) {
        try remote.validate()
        try budget.validate()
        self.options = options
        self.budget = budget
        self.images = images
        self.fetcher = RemoteFetcher(settings: remote, logger: logger)
        self.scratch = try Directories.scratch("preflight")
    }

    /// Closes connections and removes the downloads.
    public func shutdown() async {
        await fetcher.shutdown()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// Checks a payload and the bytes of the attachments it names, within the budget; each
    /// download is deleted as soon as it is checked.
    public func check(_ bytes: [UInt8], file: String) async -> PreflightReport {
        await checkWithDownloads(bytes, file: file, keep: false).analysis.report
    }

    /// ``check(_:file:)`` for a page that previews the notification: the attachment the preview
    /// shows (the payload's first), when its download is an image iOS accepts within Apple's
    /// limit, is also pictured by `picturing` before the download is deleted.
    public func check(
        _ bytes: [UInt8], file: String, picturing: any AttachmentPicturing
    ) async -> (report: PreflightReport, picture: AttachmentPicture?) {
        let checked = await checkWithDownloads(bytes, file: file, keep: false, picturing: picturing)
        return (checked.analysis.report, checked.picture)
    }

    /// A downloaded attachment, kept for `--fix`.
    struct Downloaded: Sendable {
        var download: RemoteFetcher.Download
        var type: MediaType?
        var seconds: Double
        /// A GIF's frames, read by the session's ``ImageInspecting``.
        var gif: ImageFrames?
        /// An Android or web image's size and frames, read by the session's ``ImageInspecting``
        /// (nil for an attachment only iPhones download, and when unreadable).
        var image: ImageFrames? = nil

        func remove() { unlink(download.path) }

        /// What the report says of this download (its size and frames are the caller's to add
        /// where it reads them); `slowLinkSeconds` is its time over the link the check assumes.
        func fetched(slowLinkSeconds: Double) -> FetchedAttachment {
            FetchedAttachment(
                finalURL: download.finalURL, status: download.status, bytes: download.size,
                contentType: download.contentType, type: type?.rawValue, kind: type?.kind, seconds: seconds,
                slowLinkSeconds: slowLinkSeconds)
        }

        /// The type of a download a preview may draw: an image iOS accepts, within Apple's
        /// limit (the phone shows nothing of one over it); nil for anything else.
        var picturable: MediaType? {
            guard let type, type.acceptedByApple, type.kind == .image,
                download.size <= AppleLimits.maxBytes(for: .image)
            else { return nil }
            return type
        }
    }

    /// Which download a report's preview pictures, and how.
    struct PictureRequest: Sendable {
        var picturing: any AttachmentPicturing
        /// The URL of the attachment the preview shows, and the JSON Pointer of that URL.
        var url: String
        var pointer: String
        /// Its `ThumbnailTime` as a frame of an animation.
        var frame: Int

        /// The request for the first attachment of `bytes` (the one the preview shows), or nil
        /// when there is none.
        init?(_ picturing: (any AttachmentPicturing)?, bytes: [UInt8], options: PreflightOptions) {
            guard let picturing, let shown = Preflight.presentation(of: bytes, options: options)?.attachments.first
            else { return nil }
            self.picturing = picturing
            url = shown.url
            pointer = shown.pointer
            frame = shown.thumbnailFrame
        }

        /// The picture of `result` when it is the shown attachment's download and picturable.
        func picture(of url: String, _ result: Result<Downloaded, PushPrepError>) async -> AttachmentPicture? {
            guard url == self.url, case .success(let downloaded) = result, let type = downloaded.picturable else {
                return nil
            }
            return await picture(ofImageAt: downloaded.download.path, type: type)
        }

        /// The picture of the image file at `path`, of `type`.
        func picture(ofImageAt path: String, type: MediaType) async -> AttachmentPicture? {
            await picturing.picture(ofImageAt: path, type: type, frame: frame)
        }
    }

    /// The static analysis plus the fetch findings. With `keep`, the downloads (by URL) are
    /// returned for the caller to remove; without, each is deleted once checked. With
    /// `picturing`, the shown attachment's download is pictured (``PictureRequest``) first.
    func checkWithDownloads(
        _ bytes: [UInt8], file: String, keep: Bool, picturing: (any AttachmentPicturing)? = nil
    ) async -> (analysis: Preflight.Analysis, downloads: [String: Downloaded], picture: AttachmentPicture?) {
        var analysis = Preflight.analyze(bytes, file: file, options: options)
        guard let layout = analysis.layout else { return (analysis, [:], nil) }
        let request = PictureRequest(picturing, bytes: bytes, options: options)
        var picture: AttachmentPicture? = nil
        let invalid = Set(analysis.report.findings.filter { $0.code == .invalidURL }.map(\.pointer))
        // Each URL once, in payload order, with the attachments and the Android and web images
        // that name it.
        var urls: [String] = []
        var attachmentsOf: [String: [Int]] = [:]
        var imagesOf: [String: [Int]] = [:]
        for (index, attachment) in layout.attachments.enumerated() where !invalid.contains(attachment.path.pointer) {
            if attachmentsOf[attachment.url] == nil { urls.append(attachment.url) }
            attachmentsOf[attachment.url, default: []].append(index)
        }
        for (index, image) in analysis.platformImages.enumerated()
        where (try? RemoteURL(image.url)) != nil && !invalid.contains(image.path.pointer) {
            if attachmentsOf[image.url] == nil && imagesOf[image.url] == nil { urls.append(image.url) }
            imagesOf[image.url, default: []].append(index)
        }

        var downloads: [String: Downloaded] = [:]
        var findings = analysis.report.findings
        var fetched = 0
        var total = 0
        var skipReason: String? = nil
        await withTaskGroup(of: (String, Result<Downloaded, PushPrepError>, AttachmentPicture?).self) { group in
            var next = 0
            /// Starts the next download when the budget allows; false when none was started.
            func startNext() -> Bool {
                guard next < urls.count else { return false }
                guard fetched < budget.maxURLs else {
                    skipReason = "over the budget of \(budget.maxURLs) URLs per payload (--fetch-max-urls)"
                    return false
                }
                guard total < budget.maxBytes else {
                    skipReason =
                        "the downloads reached \(total) bytes, the budget (--fetch-max-bytes \(budget.maxBytes))"
                    return false
                }
                let url = urls[next]
                next += 1
                fetched += 1
                let probe = imagesOf[url] != nil
                group.addTask {
                    let result = await self.fetch(url, probe: probe)
                    return (url, result, await request?.picture(of: url, result))
                }
                return true
            }
            for _ in 0..<Self.window where !startNext() { break }
            for await (url, result, pictured) in group {
                if let pictured { picture = pictured }
                for index in attachmentsOf[url] ?? [] {
                    let attachment = layout.attachments[index]
                    switch result {
                    case .success(let downloaded):
                        let (info, found) = BytesCheck(options: options, dialect: layout.dialect)
                            .check(attachment, downloaded)
                        analysis.report.attachments[index].fetched = info
                        findings += found
                    case .failure(let error):
                        findings.append(Self.fetchFinding(error, url: attachment.url, at: attachment.path))
                    }
                }
                for index in imagesOf[url] ?? [] {
                    let image = analysis.platformImages[index]
                    switch result {
                    case .success(let downloaded):
                        let (info, found) = PlatformImageCheck(options: options).check(image, downloaded)
                        analysis.report.platformImages?[index].fetched = info
                        findings += found
                    case .failure(let error):
                        // Once per URL: an attachment with the same URL has reported it already.
                        if attachmentsOf[url] == nil {
                            findings.append(Self.fetchFinding(error, url: image.url, at: image.path))
                        }
                    }
                }
                if case .success(let downloaded) = result {
                    total += downloaded.download.size
                    if keep { downloads[url] = downloaded } else { downloaded.remove() }
                }
                _ = startNext()
            }
            // What the budget left out, named attachment by attachment.
            for url in urls[next...] {
                let paths =
                    (attachmentsOf[url] ?? []).map { layout.attachments[$0].path }
                    + (attachmentsOf[url] == nil ? (imagesOf[url] ?? []).map { analysis.platformImages[$0].path } : [])
                for path in paths {
                    findings.append(
                        PreflightFinding(
                            .warning, .fetchSkipped, "\(url) was not downloaded: \(skipReason ?? "over the budget")",
                            at: path))
                }
                if findings.count >= 4 * Preflight.maximumFindings { findings = Preflight.sorted(findings) }
            }
        }
        analysis.report.findings = Preflight.sorted(findings)
        return (analysis, downloads, picture)
    }

    private static func fetchFinding(_ error: PushPrepError, url: String, at path: JSONPath) -> PreflightFinding {
        if error.code == .inputTooLarge {
            return PreflightFinding(.error, .contentTooLarge, error.message, at: path)
        }
        return PreflightFinding(
            .error, .fetchFailed, "cannot download \(url): \(error.code): \(error.message)", at: path)
    }

    /// Downloads `url`; with `probe` (an Android or web image), an image's header is read too.
    private func fetch(_ url: String, probe: Bool = false) async -> Result<Downloaded, PushPrepError> {
        let started = ContinuousClock.now
        do throws(PushPrepError) {
            guard case .downloaded(let download) = try await fetcher.fetch(url, into: scratch) else {
                throw PushPrepError(.fetchFailed, "HTTP 304 to an unconditional request")
            }
            let seconds = (ContinuousClock.now - started).seconds
            let type = MediaDetector.detect(download.prefix)
            let gif = type == .gif ? await images.frames(ofImageAt: download.path, type: .gif) : nil
            var image: ImageFrames? = nil
            if probe, let type, type.kind == .image {
                image = type == .gif ? gif : await images.frames(ofImageAt: download.path, type: type)
            }
            return .success(Downloaded(download: download, type: type, seconds: seconds, gif: gif, image: image))
        } catch {
            return .failure(error)
        }
    }
}

/// The checks of an attachment's downloaded bytes.
struct BytesCheck {
    let options: PreflightOptions
    let dialect: PushDialect

    func check(
        _ attachment: PayloadLayout.AttachmentReference, _ downloaded: PreflightSession.Downloaded
    ) -> (FetchedAttachment, [PreflightFinding]) {
        let download = downloaded.download
        var info = downloaded.fetched(slowLinkSeconds: Double(download.size) * 8 / (options.slowLinkKbps * 1000))
        var findings: [PreflightFinding] = []
        func add(_ severity: PreflightSeverity, _ code: PreflightCode, _ message: String, at path: JSONPath? = nil) {
            findings.append(PreflightFinding(severity, code, message, at: path ?? attachment.path))
        }
        checkRedirect(attachment, download, add: add)
        checkTiming(info, add: add)
        guard let type = downloaded.type else {
            let name = MediaDetector.unsupportedFormatName(download.prefix).map { " (\($0))" } ?? ""
            add(
                .error, .contentNotAccepted,
                "the \(download.size) bytes are not an image, movie or sound iOS accepts\(name)")
            return (info, findings)
        }
        if !type.acceptedByApple {
            add(
                .error, .contentNotAccepted,
                "the bytes are \(type.rawValue), which iOS does not accept as an attachment")
        }
        let limit = AppleLimits.maxBytes(for: type.kind)
        if download.size > limit {
            add(
                .error, .contentTooLarge,
                "\(download.size) bytes is over Apple's \(limit)-byte limit for \(type.kind.rawValue) (error 102)")
        }
        let ext = (try? RemoteURL(attachment.url))?.pathExtension ?? ""
        if !ext.isEmpty, AcceptedTypes.extensions[ext] != nil, !type.knownExtensions.contains(ext) {
            add(
                .error, .extensionMismatch,
                "the URL ends in .\(ext) but the bytes are \(type.rawValue): the phone rejects the file (error 101)")
        }
        for declared in attachment.declaredTypes where !declared.names(type) {
            add(
                .error, .typeHintMismatch,
                "the declared type \(declared.value) disagrees with the bytes, which are \(type.rawValue)",
                at: declared.path)
        }
        if let mismatch = ContentTypeCheck.mismatch(contentType: download.contentType, detected: type) {
            add(.warning, .contentTypeMismatch, mismatch.description)
        }
        if type == .gif, let gif = downloaded.gif { checkGIF(gif, info: &info, add: add) }
        return (info, findings)
    }

    private func checkRedirect(
        _ attachment: PayloadLayout.AttachmentReference, _ download: RemoteFetcher.Download,
        add: (PreflightSeverity, PreflightCode, String, JSONPath?) -> Void
    ) {
        guard download.finalURL != attachment.url else { return }
        if download.finalURL.lowercased().hasPrefix("http://") && attachment.url.lowercased().hasPrefix("https://") {
            add(
                .error, .insecureRedirect,
                "the URL redirects to \(download.finalURL), which App Transport Security blocks", nil)
        } else {
            add(
                .info, .redirected,
                "the URL redirects to \(download.finalURL); the phone pays a round trip per hop", nil)
        }
    }

    private func checkTiming(
        _ info: FetchedAttachment, add: (PreflightSeverity, PreflightCode, String, JSONPath?) -> Void
    ) {
        let budget = options.timeBudget
        if info.seconds > budget {
            add(
                .error, .slowServer,
                String(
                    format: "the server took %.1f s to deliver the file here; the service extension has about %g s",
                    info.seconds, budget), nil)
        }
        if info.slowLinkSeconds > budget {
            add(
                .warning, .slowDownload,
                String(
                    format: "%d bytes take about %.1f s at %g kbit/s; the service extension has about %g s",
                    info.bytes, info.slowLinkSeconds, options.slowLinkKbps, budget), nil)
        }
    }

    /// An animated GIF is decoded whole by most image code in an extension (see
    /// ``AppleLimits/decodedBytes(width:height:frames:)``).
    private func checkGIF(
        _ gif: ImageFrames, info: inout FetchedAttachment,
        add: (PreflightSeverity, PreflightCode, String, JSONPath?) -> Void
    ) {
        let frames = gif.frames
        info.width = gif.width
        info.height = gif.height
        info.frames = frames
        guard frames > 1 else { return }
        let decoded = AppleLimits.decodedBytes(width: gif.width, height: gif.height, frames: frames)
        let message =
            "the \(frames)-frame \(gif.width)x\(gif.height) GIF decodes to \(decoded / 1_000_000) MB;"
            + " the service extension is killed above about 24 MB (12 MB on older iOS)"
        if decoded > options.gifMemoryErrorBytes {
            add(.error, .gifMemory, message, nil)
        } else if decoded > options.gifMemoryWarningBytes {
            add(.warning, .gifMemory, message, nil)
        }
    }
}
