import Foundation
import PushPrepCore

/// Writes the manifest (or a report) atomically (``AtomicFile``: a temporary file beside it,
/// flushed, then a rename), creating its directory first; a device or a pipe given as the path
/// is written through instead (`--manifest /dev/stdout`).
enum ManifestWriter {
    /// Writes `data` to `path`; a failure names `what` was being written.
    static func write(_ data: Data, to path: String, what: String = "the manifest") throws {
        try write([UInt8](data), to: path, what: what)
    }

    /// Writes `bytes` to `path` as they are: a report's page (megabytes of `data:` URLs) is not
    /// copied again on its way to the file.
    static func write(_ bytes: [UInt8], to path: String, what: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        do {
            try AtomicFile.writeDestination(bytes, to: path)
        } catch {
            throw CommandFailure(message: "cannot write \(what) to \(path): \(error.message)")
        }
    }
}
