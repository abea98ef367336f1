import Foundation
public import PushPrepCore
import PushPrepJSON
import PushPrepRemote

extension PreflightSession {
    /// Checks a payload (downloading its attachments), then writes a corrected copy to `path`:
    /// attachments with findings are processed by `processing` and their URLs replaced by the
    /// processed ones (when the processing has a base URL), declared types follow the bytes, the
    /// service extension's flag is set, and an out-of-range relevance score is clamped. The
    /// report's ``PreflightReport/changes`` say what changed and ``PreflightReport/remaining``
    /// what is still wrong.
    public func fix(
        _ bytes: [UInt8], file: String, writeTo path: String, processing: any AttachmentProcessing
    ) async throws(PushPrepError) -> PreflightReport {
        try await fixed(bytes, file: file, writeTo: path, processing: processing).report
    }

    /// What ``fixed(_:file:writeTo:processing:picturing:)`` did: the report, the corrected
    /// payload's bytes as written, and the picture of the attachment its preview shows.
    public struct Fixed: Sendable {
        public var report: PreflightReport
        /// The corrected payload, as written to the report's ``PreflightReport/fixedPayload``.
        public var payload: [UInt8]
        /// With `picturing`: the picture of the corrected payload's first attachment (its
        /// download when the URL is unchanged, else the processed file that replaced it).
        public var picture: AttachmentPicture?
    }

    /// ``fix(_:file:writeTo:processing:)`` for a page that previews the corrected payload.
    public func fixed(
        _ bytes: [UInt8], file: String, writeTo path: String, processing: any AttachmentProcessing,
        picturing: (any AttachmentPicturing)? = nil
    ) async throws(PushPrepError) -> Fixed {
        let (analysis, downloads, _) = await checkWithDownloads(bytes, file: file, keep: true)
        defer { for download in downloads.values { download.remove() } }
        var report = analysis.report
        guard var payload = analysis.payload, let layout = analysis.layout else {
            throw PushPrepError(
                .invalidPayload, "\(file) cannot be fixed: \(report.findings.first?.message ?? "not a payload")")
        }
        var fixer = PayloadFixer(payload: payload, layout: layout, findings: report.findings)
        await fixer.replaceAttachments(downloads: downloads, processing: processing)
        await fixer.replacePlatformImages(
            analysis.platformImages, downloads: downloads, processing: processing, manifest: options.manifestImages)
        fixer.fixFlags()
        payload = fixer.payload

        let serialized = Array((payload.serialized(pretty: true) + "\n").utf8)
        try AtomicFile.writeDestination(serialized, to: path)
        report.changes = fixer.changes
        report.fixedPayload = path
        report.remaining = remainingFindings(
            of: serialized, file: path, fetchFindings: fixer.unreplacedFetchFindings)
        var picture: AttachmentPicture? = nil
        if let request = PictureRequest(picturing, bytes: serialized, options: options) {
            if let download = downloads[request.url], let type = download.picturable {
                picture = await request.picture(ofImageAt: download.download.path, type: type)
            } else if let output = fixer.replacements[request.pointer], output.type.kind == .image {
                let directory = processing.outputDirectory
                picture = await request.picture(
                    ofImageAt: directory.hasSuffix("/") ? directory + output.file : directory + "/" + output.file,
                    type: output.type)
            }
        }
        return Fixed(report: report, payload: serialized, picture: picture)
    }

    /// The fixed payload's own findings, plus the byte findings of attachments left as they were.
    private func remainingFindings(
        of bytes: [UInt8], file: String, fetchFindings: [PreflightFinding]
    ) -> [PreflightFinding] {
        let recheck = Preflight.check(bytes, file: file, options: options)
        // A download finding the re-check also makes from the URL or the manifest counts once.
        var seen = Set(recheck.findings)
        return Preflight.sorted(recheck.findings + fetchFindings.filter { seen.insert($0).inserted })
    }
}

/// Edits a payload to clear its findings.
struct PayloadFixer {
    private(set) var payload: JSONValue
    let layout: PayloadLayout
    let findings: [PreflightFinding]
    private(set) var changes: [PreflightChange] = []
    /// Byte findings of attachments that were not replaced: they still hold after the fix.
    private(set) var unreplacedFetchFindings: [PreflightFinding] = []
    /// The processed file (in the processing's output directory) and its type that each
    /// replaced attachment's URL (by JSON Pointer) now names.
    private(set) var replacements: [String: (file: String, type: MediaType)] = [:]

    init(payload: JSONValue, layout: PayloadLayout, findings: [PreflightFinding]) {
        self.payload = payload
        self.layout = layout
        self.findings = findings
    }

    /// Findings that processing the file clears (a converted, resized, re-hosted copy). An
    /// `unreachable_url` is one: the copy goes to `--base-url`, a host the phone reaches, and this
    /// machine could download the original.
    static let processingFixes: Set<PreflightCode> = [
        .insecureURL, .unreachableURL, .missingExtension, .unsupportedExtension, .providerExtension,
        .contentNotAccepted,
        .contentTooLarge, .extensionMismatch, .typeHintMismatch, .contentTypeMismatch, .insecureRedirect, .gifMemory,
        .slowDownload, .slowServer,
    ]

    /// Codes found from the bytes, which a re-check of the payload alone cannot see.
    private static let byteCodes: Set<PreflightCode> = [
        .fetchFailed, .contentNotAccepted, .contentTooLarge, .extensionMismatch, .typeHintMismatch,
        .contentTypeMismatch, .redirected, .insecureRedirect, .gifMemory, .slowDownload, .slowServer,
    ]

    private func findings(of attachment: PayloadLayout.AttachmentReference) -> [PreflightFinding] {
        let pointers = Set([attachment.path.pointer] + attachment.declaredTypes.map(\.path.pointer))
        return findings.filter { pointers.contains($0.pointer) }
    }

    private mutating func change(_ path: JSONPath, _ message: String) {
        changes.append(PreflightChange(pointer: path.pointer, message: message))
    }

    // MARK: - Attachments

    /// Processes every downloaded attachment that has a finding processing clears, in one run.
    mutating func replaceAttachments(
        downloads: [String: PreflightSession.Downloaded], processing: any AttachmentProcessing
    ) async {
        var toProcess: [PayloadLayout.AttachmentReference] = []
        for attachment in layout.attachments {
            let own = findings(of: attachment)
            let needsProcessing = own.contains {
                $0.severity != .info && Self.processingFixes.contains($0.code)
            }
            if needsProcessing, downloads[attachment.url] != nil {
                toProcess.append(attachment)
            } else {
                unreplacedFetchFindings += own.filter { Self.byteCodes.contains($0.code) }
                if let type = downloads[attachment.url]?.type, type.acceptedByApple {
                    setDeclaredTypes(of: attachment, to: type)
                }
            }
        }
        guard !toProcess.isEmpty else { return }
        let items = toProcess.map { InputItem(source: $0.url, path: downloads[$0.url]!.download.path) }
        let manifest: Manifest
        do {
            // A provider that carries no movie (FCM) gets animations as GIFs or stills, never as MP4s.
            let movies = layout.dialect.acceptedExtensions?.contains("mp4") ?? true
            manifest = try await processing.process(items, animationsAsMovies: movies)
        } catch {
            for attachment in toProcess {
                unreplacedFetchFindings += findings(of: attachment).filter { Self.byteCodes.contains($0.code) }
                change(attachment.path, "not fixed: \(error.code): \(error.message)")
            }
            return
        }
        for (attachment, entry) in zip(toProcess, manifest.attachments) {
            apply(entry, to: attachment, outputDirectory: processing.outputDirectory)
        }
    }

    private mutating func apply(
        _ entry: ManifestEntry, to attachment: PayloadLayout.AttachmentReference, outputDirectory: String
    ) {
        switch entry {
        case .failed(let failure):
            unreplacedFetchFindings += findings(of: attachment).filter { Self.byteCodes.contains($0.code) }
            change(attachment.path, "not fixed: processing failed with \(failure.error.code): \(failure.error.message)")
        case .ok(let output):
            let ext = PathName.lowercasedExtension(of: output.file)
            if let allowed = layout.dialect.acceptedExtensions, !allowed.contains(ext) {
                if let posterURL = output.posterURL, let poster = output.poster,
                    allowed.contains(PathName.lowercasedExtension(of: poster.file))
                {
                    // As `payload` does for a provider that carries images only: the movie's poster.
                    payload[attachment.path] = .string(posterURL)
                    replacements[attachment.path.pointer] = (poster.file, .jpeg)
                    change(
                        attachment.path,
                        "processed \(output.input.type) into \(output.file); \(layout.dialect.displayName) carries"
                            + " images only, so the URL is replaced by its poster frame \(posterURL)")
                    setDeclaredTypes(of: attachment, to: .jpeg)
                    return
                }
                unreplacedFetchFindings += findings(of: attachment).filter { Self.byteCodes.contains($0.code) }
                change(
                    attachment.path,
                    "not fixed: processed into \(output.file), but \(layout.dialect.displayName) does not carry .\(ext)"
                )
                return
            }
            let summary =
                "processed \(output.input.type) (\(output.input.bytes) bytes) into \(output.file)"
                + " (\(output.bytes) bytes)"
            guard let url = output.url else {
                unreplacedFetchFindings += findings(of: attachment).filter { Self.byteCodes.contains($0.code) }
                change(
                    attachment.path,
                    "\(summary) in \(outputDirectory); the URL is unchanged: give --base-url to point the payload at it"
                )
                return
            }
            payload[attachment.path] = .string(url)
            change(attachment.path, "\(summary); URL replaced by \(url)")
            if let type = MediaType.allCases.first(where: { $0.uti == output.uti }) {
                setDeclaredTypes(of: attachment, to: type)
                replacements[attachment.path.pointer] = (output.file, type)
            }
        }
    }

    /// Makes every declared type of an attachment name `type`.
    private mutating func setDeclaredTypes(of attachment: PayloadLayout.AttachmentReference, to type: MediaType) {
        let accepted = layout.dialect.acceptedExtensions
        for declared in attachment.declaredTypes {
            if declared.names(type) && accepted.map({ $0.contains(declared.value) }) ?? true { continue }
            let value = declared.spelling(of: type, accepted: accepted)
            guard declared.value != value else { continue }
            payload[declared.path] = .string(value)
            change(declared.path, "declared type \(declared.value) replaced by \(value)")
        }
    }

    /// Moves keys Apple does not define out of `aps` to beside it, where the app reads custom
    /// keys, unless a key of that name is already there.
    private mutating func moveCustomKeysOutOfAPS() {
        guard let aps = layout.aps, let container = aps.parent else { return }
        for finding in findings where finding.code == .unknownAPSKey {
            guard let from = JSONPath(pointer: finding.pointer), let key = from.lastKey,
                let value = payload[from]
            else { continue }
            let to = container.appending(key)
            guard payload[to] == nil else {
                change(from, "not moved: \(to.pointer) already exists")
                continue
            }
            payload[from] = nil
            payload[to] = value
            change(from, "moved to \(to.pointer), beside aps")
        }
    }

    /// Removes attachment options whose value the phone cannot use: without them the phone
    /// shows its default thumbnail instead of failing or clipping wrongly.
    private mutating func removeInvalidOptions() {
        let dictionaries = layout.attachmentOptions.map(\.path)
        for finding in findings where finding.code == .invalidAttachmentOption {
            guard let path = JSONPath(pointer: finding.pointer),
                let dictionary = dictionaries.first(where: { path.components.starts(with: $0.components) })
            else { continue }
            // The option itself: a finding inside a clipping rectangle removes the whole rectangle,
            // and options that are not a dictionary go whole.
            let option = JSONPath(Array(path.components.prefix(dictionary.components.count + 1)))
            guard payload[option] != nil else { continue }
            payload[option] = nil
            change(option, "invalid attachment option removed (the phone then uses its default)")
        }
    }

    // MARK: - Android and web images

    /// Findings a platform's rendition clears: a 2:1 JPEG or PNG under the caps, served over https.
    static let platformFixes: Set<PreflightCode> = [
        .androidImageInsecure, .androidImageType, .androidImageTooLarge, .androidImageSlow, .androidImageAspect,
        .webImageAspect, .webIconTooSmall,
    ]

    /// Codes of Android and web images a re-check of the payload alone cannot see (found from the bytes).
    private static let platformByteCodes: Set<PreflightCode> =
        platformFixes.union([.androidImageNoContentLength, .fetchFailed, .contentTooLarge])

    /// Replaces each Android or web image that has a finding a rendition clears by the rendition
    /// for its role (`renditions.android`, `.web`, `.webIcon`): the one `manifest` has for that URL
    /// (a manifest output, or its source), else the one `processing` makes from the download.
    /// FCM's shared `notification.image` stays the iPhone's: Android's rendition goes to
    /// `android.notification.image`, which Android prefers.
    mutating func replacePlatformImages(
        _ images: [PlatformImageKeys.Reference], downloads: [String: PreflightSession.Downloaded],
        processing: any AttachmentProcessing, manifest: ManifestImages?
    ) async {
        var pending: [PlatformImageKeys.Reference] = []
        for image in images {
            let own = findings.filter { $0.pointer == image.path.pointer }
            let fixable = own.contains { $0.severity != .info && Self.platformFixes.contains($0.code) }
            if fixable, let renditions = manifest?.renditions[image.url] {
                replace(image, with: renditions[image.role.renditionKey], from: "the manifest's")
            } else if fixable, downloads[image.url] != nil {
                pending.append(image)
            } else {
                unreplacedFetchFindings += own.filter { Self.platformByteCodes.contains($0.code) }
            }
        }
        guard !pending.isEmpty else { return }
        var sources: [String] = []
        for image in pending where !sources.contains(image.url) { sources.append(image.url) }
        let items = sources.map { InputItem(source: $0, path: downloads[$0]!.download.path) }
        let processed: Manifest
        do {
            processed = try await processing.process(items, animationsAsMovies: false)
        } catch {
            for image in pending {
                unreplacedFetchFindings += findings.filter {
                    $0.pointer == image.path.pointer && Self.platformByteCodes.contains($0.code)
                }
                change(image.path, "not fixed: \(error.code): \(error.message)")
            }
            return
        }
        let entries = Dictionary(zip(sources, processed.attachments), uniquingKeysWith: { first, _ in first })
        for image in pending {
            switch entries[image.url] {
            case .ok(let output)?:
                replace(image, with: output.renditions[image.role.renditionKey], from: "the processed")
            case .failed(let failure)?:
                unreplaced(image, "processing failed with \(failure.error.code): \(failure.error.message)")
            case nil:
                unreplaced(image, "processing returned no entry for it")
            }
        }
    }

    /// Points `image` at `rendition`'s URL, or says why not.
    private mutating func replace(
        _ image: PlatformImageKeys.Reference, with rendition: Rendition?, from origin: String
    ) {
        let name = image.role.renditionKey.rawValue
        guard let rendition else {
            unreplaced(
                image,
                "\(origin) attachment has no \(name) rendition (process with --platforms including"
                    + " \(image.role.platform))")
            return
        }
        guard let url = rendition.url else {
            unreplaced(
                image,
                "\(origin) \(name) rendition \(rendition.file) has no URL: give --base-url to point the payload at it")
            return
        }
        let target = PlatformImageKeys.fixPath(for: image, in: payload, dialect: layout.dialect)
        payload[target] = .string(url)
        let detail =
            "\(origin) \(name) rendition \(url) (\(rendition.width)x\(rendition.height), \(rendition.bytes) bytes,"
            + " \(rendition.mime))"
        change(
            target,
            target == image.path
                ? "\(image.role.label) \(image.url) replaced by \(detail)"
                : "\(image.role.label) set to \(detail); \(image.path.pointer) stays the iPhone's \(image.url)")
    }

    private mutating func unreplaced(_ image: PlatformImageKeys.Reference, _ why: String) {
        unreplacedFetchFindings += findings.filter {
            $0.pointer == image.path.pointer && Self.platformByteCodes.contains($0.code)
        }
        change(image.path, "not fixed: \(why)")
    }

    // MARK: - Flags

    /// Sets the service extension's flag when there are attachments, and clamps the relevance score.
    mutating func fixFlags() {
        let codes = Set(findings.map(\.code))
        if codes.contains(.missingMutableContent) || codes.contains(.invalidMutableContent) {
            let flag = layout.mutableContent
            payload[flag.path] = flag.style.expected
            change(flag.path, "\(flag.path.lastKey ?? "mutable-content") set to \(flag.style.spelled)")
        }
        if codes.contains(.invalidRelevanceScore), let score = payload[layout.relevanceScore]?.doubleValue,
            score.isFinite
        {
            let clamped = min(max(score, 0), 1)
            payload[layout.relevanceScore] = JSONValue(clamped)
            change(layout.relevanceScore, "relevance score \(score) clamped to \(JSONValue(clamped).serialized())")
        }
        if codes.contains(.invalidInterruptionLevel) {
            payload[layout.interruptionLevel] = nil
            change(layout.interruptionLevel, "invalid interruption level removed (iOS then uses active)")
        }
        moveCustomKeysOutOfAPS()
        removeInvalidOptions()
        for finding in findings where [.missingAlert, .silentPush].contains(finding.code) {
            changes.append(
                PreflightChange(
                    pointer: finding.pointer, message: "not fixed: an alert's text is the sender's to write"))
        }
    }
}
