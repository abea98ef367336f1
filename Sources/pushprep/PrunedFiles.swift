import Foundation
import PushPrepCore
import PushPrepQueue

#if canImport(Glibc)
    import Glibc
#endif

/// `jobs prune --delete-files`: the uploads and outputs of the pruned jobs, deleted when nothing
/// still needs them, and only inside the directories given.
///
/// - An upload (a pruned job's source) goes when its directory is the uploads root and no
///   queued or running job still names it (the same upload may feed a newer job).
/// - An output (a succeeded job's `file` and its poster's) goes when no job left in the queue
///   names it in its result: outputs are named by content, so two jobs may share one.
///
/// A name is only ever looked up as a single component (no `/`, not `.` or `..`) directly in
/// the resolved root, with `lstat`, and only regular files are deleted: a symbolic link, a
/// directory or a path outside the roots is never followed nor removed.
struct PrunedFiles {
    /// What was deleted, and what was kept because something still needs it.
    struct Outcome: Encodable, Equatable {
        var uploadsDeleted = 0
        var outputsDeleted = 0
        var bytesDeleted = 0
        var keptInUse = 0

        enum CodingKeys: String, CodingKey {
            case uploadsDeleted = "uploads_deleted"
            case outputsDeleted = "outputs_deleted"
            case bytesDeleted = "bytes_deleted"
            case keptInUse = "kept_in_use"
        }
    }

    /// `--uploads`, resolved; nil when it does not exist.
    let uploads: String?
    /// `--out`, resolved; nil when it does not exist (outputs in a bucket are left alone).
    let out: String?

    init(uploads: String, out: String) {
        self.uploads = Self.resolved(uploads)
        self.out = Self.resolved(out)
    }

    /// The real path of a directory, or nil.
    static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        var info = stat()
        let text = String(cString: real)
        guard stat(text, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        return text
    }

    /// Deletes what `pruned` named that no job in `queue` still needs.
    func delete(_ pruned: [PrunedJob], queue: any JobQueueAdmin) async throws(PushPrepError) -> Outcome {
        var outcome = Outcome()
        if let uploads {
            var candidates: [String: String] = [:]
            for job in pruned {
                let (directory, name) = PathName.directoryAndName(of: job.source)
                guard Self.isName(name), Self.resolved(directory.isEmpty ? "." : directory) == uploads else { continue }
                candidates[job.source] = name
            }
            if !candidates.isEmpty {
                var needed: Set<String> = []
                for prefix in Set(candidates.keys.map { PathName.directoryAndName(of: $0).0 + "/" }) {
                    needed.formUnion(try await queue.unfinishedSources(withPrefix: prefix))
                }
                for (source, name) in candidates {
                    if needed.contains(source) {
                        outcome.keptInUse += 1
                    } else if let bytes = Self.unlinkRegularFile(
                        name, in: uploads, writtenBefore: Date(timeIntervalSinceNow: -Self.uploadGrace))
                    {
                        outcome.uploadsDeleted += 1
                        outcome.bytesDeleted += bytes
                    }
                }
            }
        }
        if let out {
            let names = Set(pruned.flatMap { Self.outputNames(in: $0.result) })
            if !names.isEmpty {
                // Quoted as JSON writes a string, so `a.jpg` is not found inside `xa.jpg`.
                let named = try await queue.namedInResults(names.map { "\"\($0)\"" })
                for name in names.sorted() {
                    if named.contains("\"\(name)\"") {
                        outcome.keptInUse += 1
                    } else if let bytes = Self.unlinkRegularFile(name, in: out) {
                        outcome.outputsDeleted += 1
                        outcome.bytesDeleted += bytes
                    }
                }
            }
        }
        return outcome
    }

    /// The output files a result names: its `file`, its poster's and its renditions'.
    static func outputNames(in result: String?) -> [String] {
        guard let result, let object = try? JSONSerialization.jsonObject(with: Data(result.utf8)) as? [String: Any]
        else { return [] }
        var names: [String] = []
        if let file = object["file"] as? String { names.append(file) }
        if let poster = object["poster"] as? [String: Any], let file = poster["file"] as? String {
            names.append(file)
        }
        if let renditions = object["renditions"] as? [String: Any] {
            for case let rendition as [String: Any] in renditions.values {
                if let file = rendition["file"] as? String { names.append(file) }
            }
        }
        return names.filter(isName)
    }

    /// One path component that names an entry of the directory itself.
    static func isName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
            && name.utf8.count <= 255
    }

    /// Deletes `root/name` when it is a regular file (not followed if a link); its size, or nil.
    static func unlinkRegularFile(_ name: String, in root: String, writtenBefore cutoff: Date? = nil) -> Int? {
        let path = "\(root)/\(name)"
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        // A file written since the cutoff may just have been handed to a new job (uploads are named
        // by their bytes, so an upload of the same bytes reuses the file and renews its time).
        if let cutoff, Double(info.st_mtim.tv_sec) >= cutoff.timeIntervalSince1970 { return nil }
        guard unlink(path) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// How recently written an upload is left alone: `serve --keep-uploads`' default.
    static let uploadGrace: TimeInterval = 60
}
