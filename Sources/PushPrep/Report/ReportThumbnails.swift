import Foundation
import NIOPosix
package import PushPrepCore
import PushPrepMedia
import PushPrepPayload

/// The small JPEGs the batch report inlines as `data:` URLs, made with libvips from what the
/// run wrote: an image's output (an animation's frame at its `ThumbnailTime`), a movie's poster
/// (taken at its `ThumbnailTime`); sounds have none.
///
/// Two per picture, so that neither is drawn from a copy much larger than it is shown:
/// - the banner's: its short side twice the 38-pixel box (a 2x screen; the crop then cuts the
///   long side), at most four times that on the long side;
/// - the expanded view's: fitting a square of ``Policy/side`` pixels (320, the view's CSS width,
///   for batches up to 200 inputs; 160 above).
///
/// Both at JPEG quality 70, made `--jobs` at a time. Once ``Policy/budgetBytes`` of JPEG are spent, the remaining inputs
/// get a note instead, which bounds the report whatever the batch.
package struct ReportThumbnails: Sendable {
    /// The sizes and the budget of a batch.
    package struct Policy: Sendable, Equatable {
        /// The square the expanded view's copy fits in, in pixels.
        package var side: Int
        /// The banner copy's short side, in pixels.
        package var thumbnailSide: Int = 76
        /// JPEG bytes all thumbnails may take together (their `data:` URLs are 4/3 of it).
        package var budgetBytes: Int
        package var quality: Int = 70
    }

    /// A JPEG as a `data:` URL, with its size.
    package struct Picture: Sendable, Equatable {
        package var dataURL: String
        package var width: Int
        package var height: Int
        /// The JPEG's bytes (the URL holds 4/3 of them).
        package var bytes: Int
    }

    /// One entry's thumbnails, or why it has none.
    package enum Outcome: Sendable, Equatable {
        /// The expanded view's copy and the banner's.
        case pictures(expanded: Picture, banner: Picture)
        /// No thumbnail, and why (budget spent, file unreadable).
        case note(String)
        /// Nothing to draw (a sound, a failed input, a movie without a poster).
        case none
    }

    package var policy: Policy

    package init(policy: Policy) { self.policy = policy }

    /// One entry's thumbnails: its own (the iOS preview's) and its renditions'.
    package struct EntryOutcome: Sendable, Equatable {
        /// The attachment's thumbnails.
        package var attachment: Outcome
        /// Each rendition's (Android's big picture, the web image and icon); a rendition without
        /// an entry here was not pictured (``make(for:outputDirectory:concurrency:renditions:)``
        /// was not asked for them).
        package var renditions: [Renditions.Key: Outcome]
    }

    /// The thumbnails of `manifest`'s entries (one outcome per entry, in order), from the files in
    /// `outputDirectory`. Runs libvips on the shared thread pool, `concurrency` files at a time,
    /// in batches whose results are counted against the budget in input order (so which inputs
    /// get pictures does not depend on timing; a batch may overrun the budget by its own size).
    package func make(for manifest: Manifest, outputDirectory: String, concurrency: Int = 1) async -> [Outcome] {
        await make(for: manifest, outputDirectory: outputDirectory, concurrency: concurrency, renditions: false)
            .map(\.attachment)
    }

    /// ``make(for:outputDirectory:concurrency:)`` with, when `renditions` is set, the thumbnails
    /// of each entry's renditions too: made from the rendition files, right after their
    /// attachment's and under the same budget (a rendition past it gets a note).
    package func make(
        for manifest: Manifest, outputDirectory: String, concurrency: Int = 1, renditions: Bool
    ) async -> [EntryOutcome] {
        let entries = manifest.attachments
        var outcomes = [EntryOutcome](repeating: EntryOutcome(attachment: .none, renditions: [:]), count: entries.count)
        // Every picture to make, in input order: an entry's own (key nil), then its renditions'.
        let wanted: [(index: Int, key: Renditions.Key?, source: Source)] = entries.enumerated().flatMap {
            index, entry -> [(index: Int, key: Renditions.Key?, source: Source)] in
            guard let attachment = entry.attachment else { return [] }
            var list: [(index: Int, key: Renditions.Key?, source: Source)] = []
            if let own = Self.picture(of: attachment) { list.append((index, nil, own)) }
            if renditions {
                for (key, rendition) in attachment.renditions.all {
                    list.append((index, key, (rendition.file, rendition.width, rendition.height, 0)))
                }
            }
            return list
        }
        func record(_ outcome: Outcome, at position: Int) {
            let (index, key, _) = wanted[position]
            if let key { outcomes[index].renditions[key] = outcome } else { outcomes[index].attachment = outcome }
        }
        var spent = 0
        var next = 0
        while next < wanted.count {
            guard spent < policy.budgetBytes else {
                for position in next..<wanted.count {
                    record(
                        .note(
                            "Thumbnail left out: the report's \(Self.megabytes(policy.budgetBytes)) of thumbnails are spent"
                        ), at: position)
                }
                break
            }
            let batch = next..<min(wanted.count, next + max(1, concurrency))
            next = batch.upperBound
            let made = await withTaskGroup(of: (Int, Outcome).self) { group in
                for position in batch {
                    let source = wanted[position].source
                    group.addTask { (position, await self.thumbnails(of: source, in: outputDirectory)) }
                }
                var made: [Int: Outcome] = [:]
                for await (position, outcome) in group { made[position] = outcome }
                return made
            }
            for position in batch {
                guard let outcome = made[position] else { continue }
                record(outcome, at: position)
                if case .pictures(let expanded, let banner) = outcome { spent += expanded.bytes + banner.bytes }
            }
        }
        return outcomes
    }

    /// A file to picture: its name in the out directory, its size as shown and the page to take.
    typealias Source = (file: String, width: Int, height: Int, page: Int)

    /// Both copies of one file, made on the thread pool.
    private func thumbnails(
        of source: (file: String, width: Int, height: Int, page: Int), in outputDirectory: String
    ) async -> Outcome {
        let path = outputDirectory.hasSuffix("/") ? outputDirectory + source.file : outputDirectory + "/" + source.file
        return await thumbnails(
            ofImageAt: path, width: source.width, height: source.height, page: source.page, name: source.file)
    }

    /// Both copies of the image at `path` (`width` × `height` as shown, page `page` within its
    /// pages), made on the thread pool; `name` is what a note calls the file.
    package func thumbnails(
        ofImageAt path: String, width: Int, height: Int, page: Int, name: String
    ) async -> Outcome {
        let policy = policy
        let banner = Self.bannerBox(width: width, height: height, shortSide: policy.thumbnailSide)
        do {
            let (large, small) = try await NIOThreadPool.singleton.runIfActive {
                let large = try PreviewThumbnail.jpeg(
                    ofImageAt: path, width: policy.side, height: policy.side, page: page, quality: policy.quality)
                let small = try PreviewThumbnail.jpeg(
                    ofImageAt: path, width: banner.width, height: banner.height, page: page, quality: policy.quality)
                return (large, small)
            }
            return .pictures(expanded: Self.picture(large), banner: Self.picture(small))
        } catch {
            let code = (error as? PushPrepError)?.code.rawValue ?? "io_error"
            return .note("No thumbnail: \(name) could not be read (\(code))")
        }
    }

    /// The box the banner's copy fits in: the picture scaled so that its short side is
    /// `shortSide` (never enlarged), the long side at most four times that.
    static func bannerBox(width: Int, height: Int, shortSide: Int) -> (width: Int, height: Int) {
        let short = max(1, min(width, height))
        guard short > shortSide else { return (max(1, width), max(1, height)) }
        let scale = Double(shortSide) / Double(short)
        let cap = shortSide * 4
        return (
            min(cap, Int((Double(width) * scale).rounded())), min(cap, Int((Double(height) * scale).rounded()))
        )
    }

    /// The file that pictures `attachment`, its size and the page to take: an image's output (an
    /// animation's `ThumbnailTime` frame, within its frames), a movie's poster; nil for a sound
    /// or a movie without a poster.
    static func picture(of attachment: Attachment) -> (file: String, width: Int, height: Int, page: Int)? {
        switch attachment.kind {
        case .image:
            guard let width = attachment.width, let height = attachment.height else { return nil }
            return (attachment.file, width, height, attachment.thumbnailFrame)
        case .video:
            return attachment.poster.map { ($0.file, $0.width, $0.height, 0) }
        case .audio:
            return nil
        }
    }

    private static func picture(_ output: PreviewThumbnail.Output) -> Picture {
        Picture(
            dataURL: "data:image/jpeg;base64," + Data(output.jpeg).base64EncodedString(), width: output.width,
            height: output.height, bytes: output.jpeg.count)
    }

    /// `6 MB`.
    static func megabytes(_ bytes: Int) -> String {
        bytes % 1_000_000 == 0 ? "\(bytes / 1_000_000) MB" : String(format: "%.1f MB", Double(bytes) / 1e6)
    }
}

extension ReportThumbnails.Policy {
    /// The policy for a batch of `count` inputs.
    package init(count: Int) {
        self.init(side: count <= 200 ? 320 : 160, budgetBytes: 6_000_000)
    }
}
