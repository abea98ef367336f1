import Foundation
import PushPrep

/// Writes the manifest atomically (``AtomicFile``: a temporary file beside it, flushed, then a
/// rename), creating its directory first.
enum ManifestWriter {
    static func write(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        do {
            try AtomicFile.write([UInt8](data), to: path, reuseIdentical: false)
        } catch {
            throw CommandFailure(message: "cannot write the manifest to \(path): \(error.message)")
        }
    }
}
