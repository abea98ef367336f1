import Foundation
import PushPrep

/// Writes the manifest atomically: a temporary file beside it, then a rename.
enum ManifestWriter {
    static func write(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw CommandFailure(message: "cannot write the manifest to \(path): \(error.localizedDescription)")
        }
    }
}
