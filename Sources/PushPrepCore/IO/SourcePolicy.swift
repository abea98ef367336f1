import Foundation

/// Which sources a process reads. `process` reads whatever its own user names; a queue worker
/// reads what strangers queued, so it says what it accepts (`worker --sources`,
/// `--source-root`): a job naming anything else fails with `source_not_allowed`.
public struct SourcePolicy: Sendable, Equatable {
    /// The kinds of source read.
    public enum Kinds: String, Sendable, CaseIterable {
        /// Local paths and URLs.
        case any
        /// Local paths only.
        case local
        /// URLs only (fetched under the remote settings' address policy).
        case remote
    }

    /// The kinds of source read.
    public let kinds: Kinds
    /// When set, a local path must resolve (symbolic links followed, checked on the opened
    /// file) to a file under this directory. Canonical: absolute, no symbolic links, no
    /// trailing slash.
    public let root: String?

    /// Every local path and every URL: what `process` does for its own user.
    public static let any = SourcePolicy(kinds: .any, canonicalRoot: nil)

    private init(kinds: Kinds, canonicalRoot: String?) {
        self.kinds = kinds
        self.root = canonicalRoot
    }

    /// A policy reading `kinds`, local paths only under `root` when given (resolved now with
    /// realpath; it must be a directory). A root with `.remote` is a contradiction.
    public init(kinds: Kinds, root: String?) throws(PushPrepError) {
        guard let root else {
            self.init(kinds: kinds, canonicalRoot: nil)
            return
        }
        guard kinds != .remote else {
            throw PushPrepError(.invalidSettings, "a source root is for local paths, which --sources remote refuses")
        }
        guard let resolved = realpath(root, nil) else {
            throw PushPrepError.system("the source root \(root) cannot be resolved", code: .invalidSettings)
        }
        defer { free(resolved) }
        let canonical = String(cString: resolved)
        var info = stat()
        guard stat(canonical, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw PushPrepError(.invalidSettings, "the source root \(root) is not a directory")
        }
        self.init(kinds: kinds, canonicalRoot: canonical)
    }

    /// Refuses a source of a kind this policy does not read.
    public func admit(_ item: InputItem) throws(PushPrepError) {
        switch (kinds, item.isRemote) {
        case (.local, true):
            throw PushPrepError(.sourceNotAllowed, "this worker reads only local files (--sources local), not URLs")
        case (.remote, false):
            throw PushPrepError(.sourceNotAllowed, "this worker reads only URLs (--sources remote), not local files")
        default:
            return
        }
    }

    /// Refuses the opened file `fd` (opened from `path`) when it is not under ``root``. The
    /// check reads where the descriptor itself leads, so a symbolic link or a directory swapped
    /// in while the path was being opened cannot lead it outside.
    func checkOpened(_ fd: Int32, path: String) throws(PushPrepError) {
        guard let root else { return }
        let resolved = Self.resolvedPath(of: fd)
        let prefix = root == "/" ? "/" : root + "/"
        guard let resolved, resolved.hasPrefix(prefix) else {
            throw PushPrepError(
                .sourceNotAllowed, "\(path) is outside the source root \(root) (--source-root)")
        }
    }

    /// Where an open descriptor leads, from /proc/self/fd (nil when it cannot be told).
    static func resolvedPath(of fd: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
