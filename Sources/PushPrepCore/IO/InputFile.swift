import Crypto
import Foundation
import SystemPackage

/// What PushPrep learns from one pass over an input file: size, content hash, the first bytes
/// for detection, and (only when asked) the whole content; and the open file itself, which
/// the decoders read again through ``decodePath``.
package struct InputFile {
    /// The path read.
    let path: String
    /// Size in bytes.
    package let size: Int
    /// Lowercase hex SHA-256 of the content.
    package let sha256: String
    /// The first ``MediaDetector/prefixLength`` bytes.
    package let prefix: [UInt8]
    /// The whole content, when `keepContents` was set.
    package let contents: [UInt8]?
    /// The descriptor that was read (and hashed), kept open for the decoders.
    let opened: OpenFile

    /// A path that opens the very file that was hashed (`/proc/self/fd/N`, the same inode),
    /// for libav: renaming or replacing `path` after the checks changes nothing.
    package var decodePath: String { opened.reopenPath }

    /// The descriptor that was read and hashed, for a decoder that reads through it without
    /// opening the file again (libvips duplicates it). Valid while this value lives; reading
    /// through it moves the offset every duplicate shares.
    package var descriptor: Int32 { opened.fd }

    /// Opens a regular file and reads it in chunks, never holding more than one chunk unless
    /// `keepContents` says so: it decides from the first bytes whether to keep the whole content
    /// too (a BMP, which PushPrep decodes from bytes, is then read once). Refuses files larger
    /// than `maxBytes` before reading them and, under `policy`'s root, files the opened
    /// descriptor shows to be outside it.
    package static func read(
        path: String, maxBytes: Int, policy: SourcePolicy = .any, followingLinks: Bool = true,
        keepContents: (_ prefix: [UInt8]) -> Bool = { _ in false }
    ) throws(PushPrepError) -> InputFile {
        // Opened first, then checked through the descriptor: what is checked is what is read.
        let descriptor = try open(path, followingLinks: followingLinks)
        let opened = OpenFile(descriptor)
        let fd = descriptor.rawValue
        try policy.checkOpened(fd, path: path)
        let info = try systemCall("cannot read \(path)") { try descriptor.stat() }
        guard info.type == .regular else {
            throw PushPrepError(.ioError, "not a regular file: \(path)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        let size = Int(info.size)
        guard size <= maxBytes else {
            throw PushPrepError(.inputTooLarge, "input is \(size) bytes, over the limit of \(maxBytes) bytes")
        }
        guard size > 0 else {
            throw PushPrepError(.corruptInput, "empty file")
        }

        var hasher = SHA256()
        var prefix: [UInt8] = []
        var contents: [UInt8] = []
        /// Whether the content is kept: nil until the first bytes are in.
        var keeping: Bool?
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        /// Asks `keepContents` once the first bytes are in; what was read before them is all in
        /// `prefix`.
        func decide(readBefore: Int) {
            keeping = keepContents(prefix)
            if keeping == true {
                contents.reserveCapacity(size)
                contents.append(contentsOf: prefix[0..<readBefore])
            }
        }
        while true {
            let count = try systemCall("cannot read \(path)") {
                try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
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
            if keeping == nil && prefix.count >= MediaDetector.prefixLength { decide(readBefore: total - count) }
            if keeping == true { contents.append(contentsOf: bytes) }
        }
        if keeping == nil { decide(readBefore: total) }
        return InputFile(
            path: path,
            size: total,
            sha256: hasher.finalize().hexString,
            prefix: prefix,
            contents: keeping == true ? contents : nil,
            opened: opened
        )
    }

    /// The input a parent already opened, checked and hashed (``read(path:maxBytes:policy:keepContents:)``)
    /// and passed to a decoder process as `descriptor` (which this value now owns and closes),
    /// with its `size` and `sha256`: nothing is hashed again. The first bytes (and, when
    /// `keepContents` says so, the whole content) are read with pread, at offsets of their own,
    /// so the offset the descriptor shares with its parent's copy does not matter. `path` is the
    /// input's path in the parent, for messages and the extension check only.
    package static func adopting(
        descriptor: Int32, path: String, size: Int, sha256: String,
        keepContents: (_ prefix: [UInt8]) -> Bool = { _ in false }
    ) throws(PushPrepError) -> InputFile {
        let opened = OpenFile(FileDescriptor(rawValue: descriptor))
        guard size > 0 else { throw PushPrepError(.corruptInput, "empty file") }
        /// `count` bytes from `offset`, or fewer at the end of the file.
        func bytes(_ count: Int, from offset: Int) throws(PushPrepError) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: count)
            var filled = 0
            while filled < count {
                let got = buffer.withUnsafeMutableBytes { raw in
                    pread(descriptor, raw.baseAddress! + filled, count - filled, off_t(offset + filled))
                }
                if got < 0 && errno == EINTR { continue }
                guard got >= 0 else { throw PushPrepError("cannot read \(path)", errno: Errno(rawValue: errno)) }
                if got == 0 { break }
                filled += got
            }
            return Array(buffer[0..<filled])
        }
        let prefix = try bytes(min(size, MediaDetector.prefixLength), from: 0)
        let contents = keepContents(prefix) ? try bytes(size, from: 0) : nil
        if let contents, contents.count != size {
            throw PushPrepError(.ioError, "\(path) changed while it was processed")
        }
        return InputFile(path: path, size: size, sha256: sha256, prefix: prefix, contents: contents, opened: opened)
    }

    /// Reads only the first bytes (for `inspect`, which must not read whole files).
    package static func readPrefix(path: String) throws(PushPrepError) -> (size: Int, prefix: [UInt8]) {
        let (file, size) = try openRegular(path: path)
        var buffer = [UInt8](repeating: 0, count: MediaDetector.prefixLength)
        var filled = 0
        while filled < buffer.count {
            let count =
                (try? buffer.withUnsafeMutableBytes { try file.descriptor.read(into: .init(rebasing: $0[filled...])) })
                ?? 0
            if count <= 0 { break }
            filled += count
        }
        return (size, Array(buffer[0..<filled]))
    }

    /// Opens a regular file (refusing anything else before reading it) and tells its size.
    package static func openRegular(path: String) throws(PushPrepError) -> (file: OpenFile, size: Int) {
        let file = OpenFile(try open(path))
        let info = try systemCall("cannot read \(path)") { try file.descriptor.stat() }
        guard info.type == .regular else { throw PushPrepError(.ioError, "not a regular file: \(path)") }
        return (file, Int(info.size))
    }

    /// Opens an input for reading. O_NONBLOCK: opening a FIFO must not wait for a writer (the
    /// callers refuse anything but a regular file, whose reads it does not change).
    /// Without `followingLinks`, a symbolic link in the last component is refused (O_NOFOLLOW).
    private static func open(_ path: String, followingLinks: Bool = true) throws(PushPrepError) -> FileDescriptor {
        do {
            var options: FileDescriptor.OpenOptions = [
                .closeOnExec, .nonBlocking, FileDescriptor.OpenOptions(rawValue: O_NOCTTY),
            ]
            if !followingLinks { options.insert(.noFollow) }
            return try FileDescriptor.open(FilePath(path), .readOnly, options: options)
        } catch let error as Errno {
            if error == .noSuchFileOrDirectory || error == .notDirectory {
                throw PushPrepError(.notFound, "no such file: \(path)")
            }
            throw PushPrepError("cannot read \(path)", errno: error)
        } catch {
            throw PushPrepError(.ioError, "cannot read \(path): \(error)")
        }
    }
}

/// An open file descriptor, closed when the last copy of its ``InputFile`` goes.
package final class OpenFile: Sendable {
    let descriptor: FileDescriptor
    package var fd: Int32 { descriptor.rawValue }

    init(_ descriptor: FileDescriptor) { self.descriptor = descriptor }

    deinit { try? descriptor.close() }

    /// A path naming this descriptor's file: opening it opens the same inode again (Linux's
    /// /proc/self/fd), whatever its original path names by then.
    var reopenPath: String { "/proc/self/fd/\(fd)" }
}
