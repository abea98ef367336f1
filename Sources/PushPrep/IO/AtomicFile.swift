import Crypto
import Foundation

/// Writes files so that a final name only ever holds a complete file: write a temporary file
/// in the same directory, flush it to disk, then rename it over the final name.
enum AtomicFile {
    /// What ``write(_:to:)`` did.
    enum Outcome: Equatable {
        /// A new file was written.
        case written
        /// An identical file was already there and was kept.
        case reused
    }

    /// The prefix of temporary files; they are dot-files so no tool mistakes them for outputs.
    static let temporaryPrefix = ".pushprep-tmp-"

    /// Writes `bytes` to `path` atomically, or keeps an existing identical file.
    @discardableResult
    static func write(_ bytes: [UInt8], to path: String, reuseIdentical: Bool = true) throws(PushPrepError) -> Outcome {
        if reuseIdentical, isIdentical(bytes, at: path) { return .reused }
        let temporary = temporaryPath(for: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw PushPrepError(.ioError, "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        var closed = false
        defer {
            if !closed { close(fd) }
        }
        do throws(PushPrepError) {
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw PushPrepError(.ioError, "cannot write \(temporary): \(String(cString: strerror(errno)))")
                }
                offset += count
            }
            guard fsync(fd) == 0 else {
                throw PushPrepError(.ioError, "cannot flush \(temporary): \(String(cString: strerror(errno)))")
            }
            closed = true
            guard close(fd) == 0 else {
                throw PushPrepError(.ioError, "cannot close \(temporary): \(String(cString: strerror(errno)))")
            }
            guard rename(temporary, path) == 0 else {
                throw PushPrepError(.ioError, "cannot rename to \(path): \(String(cString: strerror(errno)))")
            }
        } catch {
            unlink(temporary)
            throw error
        }
        return .written
    }

    /// A temporary name beside `path` for a writer that produces the file itself (libav's
    /// muxer); pass it to ``commit(_:to:)`` when complete, or remove it.
    static func temporaryPath(for path: String) -> String {
        let (directory, name) = PathName.directoryAndName(of: path)
        return "\(directory)/\(temporaryPrefix)\(getpid())-\(UInt64.random(in: 0...UInt64.max))-\(name)"
    }

    /// Moves a complete temporary file to its final name (flushed to disk first), or keeps an
    /// identical file already there and removes the temporary. Returns what it did and the
    /// file's size and hash, read once from the temporary.
    static func commit(_ temporary: String, to path: String) throws(PushPrepError) -> (Outcome, InputFile) {
        defer { unlink(temporary) }
        let written = try InputFile.read(path: temporary, maxBytes: .max)
        var existing = stat()
        if stat(path, &existing) == 0, Int(existing.st_size) == written.size,
            (try? InputFile.read(path: path, maxBytes: .max))?.sha256 == written.sha256
        {
            return (.reused, written)
        }
        let fd = open(temporary, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw PushPrepError(.ioError, "cannot open \(temporary): \(String(cString: strerror(errno)))")
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced else {
            throw PushPrepError(.ioError, "cannot flush \(temporary): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, path) == 0 else {
            throw PushPrepError(.ioError, "cannot rename to \(path): \(String(cString: strerror(errno)))")
        }
        return (.written, written)
    }

    /// Whether `path` already holds exactly `bytes` (same size, same SHA-256).
    static func isIdentical(_ bytes: [UInt8], at path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) == bytes.count else {
            return false
        }
        guard let existing = FileManager.default.contents(atPath: path) else { return false }
        return SHA256.hash(data: existing) == SHA256.hash(data: bytes)
    }

    /// Removes temporary files left in `directory` by processes that no longer run (a crash or
    /// SIGKILL mid-write). Files of live processes are left alone.
    static func removeStaleTemporaries(in directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) {
            let rest = name.dropFirst(temporaryPrefix.count)
            guard let pid = rest.split(separator: "-").first.flatMap({ Int32($0) }) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                unlink("\(directory)/\(name)")
            }
        }
    }
}
