import Foundation
import PushPrep
import PushPrepCore
import PushPrepReport

/// `process --report`: the batch report of a finished run, with thumbnails made from the outputs
/// while they are still on disk (an `s3://` run's private folder is removed after).
enum BatchReportWriter {
    /// Writes the report of `manifest` (outputs in `outputDirectory`) to `path`, making
    /// `concurrency` thumbnails at a time; returns its size.
    static func write(
        _ manifest: Manifest, outputDirectory: String, seconds: Double, concurrency: Int, to path: String
    ) async throws -> Int {
        let thumbnails = ReportThumbnails(policy: .init(count: manifest.attachments.count))
        let outcomes = await thumbnails.make(
            for: manifest, outputDirectory: outputDirectory, concurrency: concurrency, renditions: true)
        let items = zip(manifest.attachments, outcomes).map { entry, outcome in
            var item = BatchReport.Item(entry: entry)
            switch outcome.attachment {
            case .pictures(let expanded, let banner):
                item.imageSource = expanded.dataURL
                item.thumbnailSource = banner.dataURL
            case .note(let note): item.imageNote = note
            case .none: break
            }
            for (key, rendition) in outcome.renditions {
                switch rendition {
                case .pictures(let expanded, let banner):
                    item.renditionPictures[key] = PlatformPreview.Picture(
                        source: expanded.dataURL, width: expanded.width, height: expanded.height,
                        thumbnailSource: banner.dataURL)
                case .note(let note): item.renditionNotes[key] = note.prefix(1).lowercased() + note.dropFirst()
                case .none: break
                }
            }
            if let failure = entry.failure { item.bytesBefore = localSize(failure.source) }
            return item
        }
        let bytes = BatchReport(items: items, seconds: seconds, platforms: manifest.settings.platforms).bytes()
        try ManifestWriter.write(bytes, to: path, what: "the report")
        return bytes.count
    }

    /// The size of a local regular file named by a failed source (the manifest keeps none for a
    /// failure); nil for a URL, a missing file or anything else.
    static func localSize(_ source: String) -> Int? {
        guard !source.contains("://"),
            let attributes = try? FileManager.default.attributesOfItem(atPath: source),
            attributes[.type] as? FileAttributeType == .typeRegular
        else { return nil }
        return (attributes[.size] as? NSNumber)?.intValue
    }
}
