import Crypto
import Foundation
import Synchronization
import SystemPackage

/// Writes files so that a final name only ever holds a complete file: write a temporary file
/// in the same directory, flush it to disk, then rename it over the final name.
package enum AtomicFile {
    /// What ``write(_:to:)`` did.
    package enum Outcome: Equatable {
        /// A new file was written.
        case written
        /// An identical file was already there and was kept.
        case reused

        /// The operation a manifest entry lists for the file `name`.
        package func operation(_ name: String) -> String {
            switch self {
            case .written: "wrote \(name)"
            case .reused: "reused identical existing output \(name)"
            }
        }
    }

    /// Whether files are flushed to disk before they are renamed into place (always, but in a
    /// decoder process: its files are staging, read back by its parent, whose own copies are
    /// flushed; flushing both cost a movie's preview about 4% of its time).
    private static let flushing = Atomic(true)

    /// Stops flushing files to disk before their rename, for the rest of the process's life:
    /// a decoder process's.
    package static func stopFlushing() { flushing.store(false, ordering: .relaxed) }

    /// Flushes `descriptor` to disk unless this process does not (``stopFlushing()``).
    private static func flush(_ descriptor: FileDescriptor) throws(Errno) {
        if flushing.load(ordering: .relaxed) { try descriptor.sync() }
    }

    /// The prefix of temporary files; they are dot-files so no tool mistakes them for outputs.
    package static let temporaryPrefix = ".pushprep-tmp-"

    /// Writes `bytes` to `path` atomically, or keeps an existing identical file.
    @discardableResult
    package static func write(_ bytes: [UInt8], to path: String, reuseIdentical: Bool = true) throws(PushPrepError)
        -> Outcome
    {
        if reuseIdentical, isIdentical(bytes, at: path) { return .reused }
        let temporary = temporaryPath(for: path)
        // Created before the block that removes it on failure: a name that exists already
        // (O_EXCL) is someone else's file, never to be unlinked.
        let file = try systemCall("cannot create \(temporary)") {
            try FileDescriptor.open(
                FilePath(temporary), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
        }
        do throws(PushPrepError) {
            try systemCall("cannot write \(temporary)") {
                try file.closeAfter {
                    _ = try file.writeAll(bytes)
                    try flush(file)
                }
            }
            try renameFile(temporary, to: path)
        } catch {
            unlink(temporary)
            throw error
        }
        return .written
    }

    /// Writes `bytes` to a destination a user named (a manifest, a fixed payload, a report): a
    /// regular file or a new name is replaced atomically as ``write(_:to:reuseIdentical:)`` does;
    /// anything else that exists there (a character device such as `/dev/stdout` or `/dev/null`,
    /// a FIFO a script reads) is opened and written through, never renamed over: a rename would
    /// turn it into a plain file, and as root that replaces `/dev/null` for the whole machine.
    /// A directory is refused.
    package static func writeDestination(_ bytes: [UInt8], to path: String) throws(PushPrepError) {
        let existing: FileType?
        do throws(Errno) {
            existing = try FilePath(path).stat().type
        } catch .noSuchFileOrDirectory {
            existing = nil
        } catch {
            throw PushPrepError("cannot write \(path)", errno: error)
        }
        switch existing {
        case nil, .regular?:
            try write(bytes, to: path, reuseIdentical: false)
        case .directory?:
            throw PushPrepError(.ioError, "cannot write \(path): it is a directory")
        default:
            let file = try systemCall("cannot open \(path)") {
                try FileDescriptor.open(FilePath(path), .writeOnly, options: [.closeOnExec])
            }
            try systemCall("cannot write \(path)") {
                try file.closeAfter { _ = try file.writeAll(bytes) }
            }
        }
    }

    /// A temporary name beside `path` for a writer that produces the file itself (libav's
    /// muxer); pass it to ``commit(_:to:)`` when complete, or remove it.
    package static func temporaryPath(for path: String) -> String {
        let (directory, name) = PathName.directoryAndName(of: path)
        return temporaryPath(in: directory, name: name)
    }

    /// A temporary name in `directory` ending in `name`: a dot-file named after this process,
    /// so that ``removeStaleTemporaries(in:)`` knows whose it is.
    package static func temporaryPath(in directory: String, name: String) -> String {
        "\(directory)/\(temporaryPrefix)\(getpid())-\(UInt64.random(in: 0...UInt64.max))-\(name)"
    }

    /// Moves a complete temporary file to its final name (flushed to disk first), or keeps an
    /// identical file already there and removes the temporary. Returns what it did and the
    /// file's size and hash, read once from the temporary.
    package static func commit(_ temporary: String, to path: String) throws(PushPrepError) -> (Outcome, InputFile) {
        defer { unlink(temporary) }
        let written = try InputFile.read(path: temporary, maxBytes: .max)
        var existing = stat()
        if stat(path, &existing) == 0, Int(existing.st_size) == written.size,
            (try? InputFile.read(path: path, maxBytes: .max))?.sha256 == written.sha256
        {
            return (.reused, written)
        }
        try systemCall("cannot flush \(temporary)") { try flush(written.opened.descriptor) }
        try renameFile(temporary, to: path)
        return (.written, written)
    }

    /// The bytes of a file written by someone this process does not trust (a decoder process),
    /// read once, whole, and checked in that read: a regular file (not followed through a
    /// symbolic link), at most `maxBytes`, and, when `declared` is given, exactly the size and
    /// SHA-256 its writer put in the manifest. What is published is then this process's own copy
    /// of these bytes (``write(_:to:reuseIdentical:)``), never the writer's file, which the writer
    /// may still hold open and change.
    package static func readUntrusted(
        _ path: String, maxBytes: Int, declared: (bytes: Int, sha256: String)?
    ) throws(PushPrepError) -> [UInt8] {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw PushPrepError(.ioError, "\(PathName.directoryAndName(of: path).name) is not a regular file")
        }
        // Not followed through a link either: the writer may swap one in after the lstat, and
        // what it points at (a secret of this process's user) must not be read, nor its size and
        // hash put in a message.
        let written = try InputFile.read(path: path, maxBytes: maxBytes, followingLinks: false) { _ in true }
        if let declared, declared.bytes != written.size || declared.sha256 != written.sha256 {
            throw PushPrepError(
                .ioError,
                "\(PathName.directoryAndName(of: path).name) is \(written.size) bytes with SHA-256 \(written.sha256), not "
                    + "the \(declared.bytes) bytes and SHA-256 \(declared.sha256) declared for it")
        }
        guard let bytes = written.contents else {
            throw PushPrepError(.ioError, "\(PathName.directoryAndName(of: path).name): its bytes were not kept")
        }
        return bytes
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
    /// SIGKILL mid-write), and their temporary directories (a decoder pool's staging). Those of
    /// live processes are left alone.
    package static func removeStaleTemporaries(in directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) {
            let rest = name.dropFirst(temporaryPrefix.count)
            guard let pid = rest.split(separator: "-").first.flatMap({ Int32($0) }) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH && unlink("\(directory)/\(name)") != 0 && errno == EISDIR {
                try? FileManager.default.removeItem(atPath: "\(directory)/\(name)")
            }
        }
    }
}
