import Crypto
import Foundation
import PushPrepCore
import PushPrepMedia
import PushPrepPayload
import PushPrepRemote

/// What every producer (image, movie, sound) does to put one output into the out directory and
/// describe it: a temporary file beside the output that is removed unless it is committed, the
/// commit (or the reuse of an identical file) recorded in the operations, and the manifest
/// entry, whose name, URL, UTI, MIME type and type hint follow from the output's type.
struct AttachmentBuilder {
    let id: String
    let kind: MediaKind
    let item: InputItem
    let outputDirectory: String
    let baseURL: String?
    /// What was done, in order; the commit adds its line.
    var operations: [String] = []

    /// An output written in the out directory.
    struct Output {
        let type: MediaType
        let name: String
        let size: Int
        let sha256: String
    }

    /// The attachment's dimensions as shown: nil for a sound.
    struct Picture {
        var width: Int?
        var height: Int?
        var frames: Int?

        static let none = Picture()
    }

    init(id: String, kind: MediaKind, item: InputItem, outputDirectory: String, settings: ProcessingSettings) {
        self.id = id
        self.kind = kind
        self.item = item
        self.outputDirectory = outputDirectory
        self.baseURL = settings.baseURL
    }

    /// Runs `write` with a temporary path in the out directory, for a writer that makes the file
    /// itself (libav's muxer), and returns its result and the path to ``commit(_:as:)``. The
    /// temporary is removed when `write` throws (a failure or a stop), so nothing half-written
    /// stays.
    func withTemporary<T>(_ write: (String) throws(PushPrepError) -> T) throws(PushPrepError) -> (T, String) {
        let temporary = AtomicFile.temporaryPath(for: "\(outputDirectory)/\(id)")
        do throws(PushPrepError) {
            return (try write(temporary), temporary)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Moves a finished temporary to `<id>.<extension of type>`, or keeps an identical file
    /// already there, and hashes it.
    mutating func commit(_ temporary: String, as type: MediaType) throws(PushPrepError) -> Output {
        let name = "\(id).\(type.fileExtension)"
        let (outcome, file) = try AtomicFile.commit(temporary, to: "\(outputDirectory)/\(name)")
        record(outcome, name)
        return Output(type: type, name: name, size: file.size, sha256: file.sha256)
    }

    /// Writes `bytes` as `<id>.<extension of type>` atomically, or keeps an identical file.
    mutating func write(_ bytes: [UInt8], as type: MediaType) throws(PushPrepError) -> Output {
        let name = "\(id).\(type.fileExtension)"
        record(try AtomicFile.write(bytes, to: "\(outputDirectory)/\(name)"), name)
        return Output(type: type, name: name, size: bytes.count, sha256: SHA256.hash(data: bytes).hexString)
    }

    /// Writes a movie's poster JPEG beside it.
    func writePoster(_ jpeg: [UInt8], width: Int, height: Int) throws(PushPrepError) -> Attachment.Poster {
        let name = "\(id)-poster.jpg"
        try AtomicFile.write(jpeg, to: "\(outputDirectory)/\(name)")
        return Attachment.Poster(file: name, width: width, height: height)
    }

    /// Writes the platforms' renditions beside the attachment, each `<id>.<ext>` with its own
    /// content-addressed id: the source's bytes and `fingerprint` (the attachment's, which the
    /// rendition's own settings extend). `poster` is the size of the picture the renditions were
    /// made from when it is not the source (a movie's poster) and `source` the source's: their
    /// crops are scaled to the source's pixels.
    mutating func writeRenditions(
        _ outcome: RenditionOutcome, sourceSHA256: String, fingerprint: String, settings: ProcessingSettings,
        poster: (width: Int, height: Int)? = nil, source: (width: Int, height: Int)? = nil
    ) throws(PushPrepError) -> Renditions {
        var renditions = Renditions()
        for made in outcome.rendered {
            let id = AttachmentID.make(
                rendition: made.key, sourceSHA256: sourceSHA256,
                fingerprint: settings.renditionFingerprint(made.key, source: fingerprint))
            let type = made.format.mediaType
            let name = "\(id).\(type.fileExtension)"
            operations.append(made.operation)
            record(try AtomicFile.write(made.bytes, to: "\(outputDirectory)/\(name)"), name)
            renditions[made.key] = Rendition(
                id: id, file: name, mime: type.mime, bytes: made.bytes.count,
                sha256: SHA256.hash(data: made.bytes).hexString, width: made.width, height: made.height,
                crop: scaled(made.crop, from: poster, to: source))
        }
        return renditions
    }

    /// `crop`, taken in a picture of size `picture`, in the pixels of `source`.
    private func scaled(
        _ crop: CropRectangle, from picture: (width: Int, height: Int)?, to source: (width: Int, height: Int)?
    ) -> CropRectangle {
        guard let picture, let source, picture.width > 0 else { return crop }
        return crop.scaled(by: Double(source.width) / Double(picture.width), within: source)
    }

    /// The manifest entry for `output`.
    func attachment(
        _ output: Output, picture: Picture, duration: Double?, input: InputInfo, warnings: [ProcessingWarning],
        thumbnailTime: Double? = nil, poster: Attachment.Poster? = nil, renditions: Renditions = Renditions()
    ) -> Attachment {
        var attachment = Attachment(
            id: id,
            source: item.source,
            kind: kind,
            file: output.name,
            uti: output.type.uti,
            mime: output.type.mime,
            bytes: output.size,
            sha256: output.sha256,
            width: picture.width,
            height: picture.height,
            duration: duration,
            frames: picture.frames,
            options: AttachmentOptions(typeHint: output.type.uti, thumbnailTime: thumbnailTime),
            input: input,
            operations: operations,
            warnings: warnings.map(AttachmentWarning.init),
            poster: poster
        )
        attachment.renditions = renditions
        attachment.setURLs(baseURL: baseURL)
        return attachment
    }

    private mutating func record(_ outcome: AtomicFile.Outcome, _ name: String) {
        operations.append(outcome.operation(name))
    }
}
