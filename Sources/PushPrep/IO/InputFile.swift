import Crypto
import Foundation

/// What PushPrep learns from one pass over an input file: size, content hash, the first bytes
/// for detection, and (only when asked) the whole content; and the open file itself, which
/// the decoders read again through ``decodePath``.
struct InputFile {
    /// The path read.
    let path: String
    /// Size in bytes.
    let size: Int
    /// Lowercase hex SHA-256 of the content.
    let sha256: String
    /// The first ``MediaDetector/prefixLength`` bytes.
    let prefix: [UInt8]
    /// The whole content, when `keepContents` was set.
    let contents: [UInt8]?
    /// The descriptor that was read (and hashed), kept open for the decoders.
    let opened: OpenFile

    /// A path that opens the very file that was hashed (`/proc/self/fd/N`, the same inode),
    /// for libvips and libav: renaming or replacing `path` after the checks changes nothing.
    var decodePath: String { opened.reopenPath }

    /// Opens a regular file and reads it in chunks, never holding more than one chunk unless
    /// `keepContents` is set. Refuses files larger than `maxBytes` before reading them and,
    /// under `policy`'s root, files the opened descriptor shows to be outside it.
    static func read(
        path: String, maxBytes: Int, keepContents: Bool = false, policy: SourcePolicy = .any
    ) throws(PushPrepError) -> InputFile {
        // Opened first, then checked through the descriptor: what is checked is what is read.
        // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR {
                throw PushPrepError(.notFound, "no such file: \(path)")
            }
            throw PushPrepError(.ioError, "cannot read \(path): \(String(cString: strerror(code)))")
        }
        let opened = OpenFile(fd)
        try policy.checkOpened(fd, path: path)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw PushPrepError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw PushPrepError(.ioError, "not a regular file: \(path)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        let size = Int(info.st_size)
        guard size <= maxBytes else {
            throw PushPrepError(.inputTooLarge, "input is \(size) bytes, over the limit of \(maxBytes) bytes")
        }
        guard size > 0 else {
            throw PushPrepError(.corruptInput, "empty file")
        }

        var hasher = SHA256()
        var prefix: [UInt8] = []
        var contents: [UInt8] = []
        if keepContents { contents.reserveCapacity(size) }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PushPrepError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            total += count
            // The file may grow while it is read; the limit holds for what is actually read.
            guard total <= maxBytes else {
                throw PushPrepError(.inputTooLarge, "input grew past the limit of \(maxBytes) bytes while reading")
            }
            let bytes = chunk[0..<count]
            hasher.update(data: bytes)
            if prefix.count < MediaDetector.prefixLength {
                prefix.append(contentsOf: bytes.prefix(MediaDetector.prefixLength - prefix.count))
            }
            if keepContents { contents.append(contentsOf: bytes) }
        }
        return InputFile(
            path: path,
            size: total,
            sha256: hasher.finalize().hexString,
            prefix: prefix,
            contents: keepContents ? contents : nil,
            opened: opened
        )
    }

    /// The whole content of the file that was hashed, read again from its descriptor (for the
    /// BMP decoder, which works on bytes), within the same limit.
    func readContents(maxBytes: Int) throws(PushPrepError) -> [UInt8] {
        try InputFile.read(path: decodePath, maxBytes: maxBytes, keepContents: true).contents ?? []
    }

    /// Reads only the first bytes (for `inspect`, which must not read whole files).
    static func readPrefix(path: String) throws(PushPrepError) -> (size: Int, prefix: [UInt8]) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw PushPrepError(.notFound, "no such file: \(path)") }
            throw PushPrepError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw PushPrepError(.ioError, "not a regular file: \(path)") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PushPrepError(.ioError, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: MediaDetector.prefixLength)
        var filled = 0
        while filled < buffer.count {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            filled += count
        }
        return (Int(info.st_size), Array(buffer[0..<filled]))
    }
}

/// An open file descriptor, closed when the last copy of its ``InputFile`` goes.
final class OpenFile: Sendable {
    let fd: Int32

    init(_ fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    /// A path naming this descriptor's file: opening it opens the same inode again (Linux's
    /// /proc/self/fd), whatever its original path names by then.
    var reopenPath: String { "/proc/self/fd/\(fd)" }
}
