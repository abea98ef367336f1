import Foundation

/// The directories PushPrep makes: out directories and their bookkeeping folders, and scratch
/// folders for downloads that are removed once checked.
package enum Directories {
    /// Creates `path` and its parents when missing; `name` says what it is in the error
    /// ("the out directory /srv/out").
    package static func create(_ path: String, name: String? = nil) throws(PushPrepError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw PushPrepError(.ioError, "cannot create \(name ?? path): \(error.localizedDescription)")
        }
    }

    /// A new, empty folder under the system's temporary directory, named for `purpose`
    /// (`pushprep-inspect-<uuid>`); the caller removes it.
    package static func scratch(_ purpose: String) throws(PushPrepError) -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("pushprep-\(purpose)-\(UUID().uuidString.lowercased())").path
        try create(path)
        return path
    }
}
