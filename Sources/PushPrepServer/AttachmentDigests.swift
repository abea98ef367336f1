import Crypto
import Foundation
import NIOFileSystem
import PushPrepCore
import Synchronization
import SystemPackage

/// What identifies a file's content without reading it: device, inode, size and modification
/// time. Published files are content-named and never rewritten in place (a new output is a new
/// inode, renamed into the directory), so the same identity means the same bytes.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    /// The identity of the file open as `descriptor` (its `fstat`), or nil when it is not a
    /// regular file. Runs on a thread-pool thread.
    static func ofRegularFile(_ descriptor: FileDescriptor) throws -> FileIdentity? {
        let status = try descriptor.stat()
        guard status.type == .regular else { return nil }
        return FileIdentity(
            device: UInt64(status.deviceID.rawValue), inode: UInt64(status.inode.rawValue), size: status.size,
            modifiedSeconds: Int(status.st_mtim.tv_sec), modifiedNanoseconds: Int(status.st_mtim.tv_nsec))
    }
}

/// The SHA-256 of each published file, its `ETag`: computed once per file (concurrent first
/// requests share one computation) on NIO's thread pool, never on an event loop or the
/// cooperative pool, and kept for at most ``capacity`` files (the oldest entry goes first).
final class AttachmentDigests: Sendable {
    /// Files remembered; beyond it the earliest remembered is forgotten (and hashed again if
    /// asked for). Ten thousand entries are about a megabyte.
    let capacity: Int
    private let state: Mutex<State>

    private struct State {
        var digests: [FileIdentity: Task<String, any Error>] = [:]
        /// Identities in the order they were added, as a ring of `capacity` slots.
        var order: [FileIdentity] = []
        var next = 0
    }

    init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
        state = Mutex(State())
    }

    /// The lowercase hex SHA-256 of the open file `handle`, whose identity is `identity`.
    func digest(of handle: ReadFileHandle, identity: FileIdentity) async throws -> String {
        let task = state.withLock { state -> Task<String, any Error> in
            if let known = state.digests[identity] { return known }
            let task = Task { try await handle.withUnsafeDescriptor { try Self.hash($0, size: identity.size) } }
            if state.order.count < capacity {
                state.order.append(identity)
            } else {
                state.digests[state.order[state.next]] = nil
                state.order[state.next] = identity
                state.next = (state.next + 1) % capacity
            }
            state.digests[identity] = task
            return task
        }
        // The caller that started the task holds `handle` open until it ends: awaiting a task's
        // value returns only once the task has finished.
        do {
            return try await task.value
        } catch {
            // Not remembered: the next request tries again.
            state.withLock { state in
                if state.digests[identity] == task { state.digests[identity] = nil }
            }
            throw error
        }
    }

    /// Reads `size` bytes of `descriptor` from the start (pread, so a shared offset does not
    /// matter) and hashes them; runs on a thread-pool thread.
    private static func hash(_ descriptor: FileDescriptor, size: Int64) throws -> String {
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while offset < size {
            let count = try buffer.withUnsafeMutableBytes {
                try descriptor.read(fromAbsoluteOffset: offset, into: $0, retryOnInterrupt: true)
            }
            if count == 0 { break }
            hasher.update(data: buffer[0..<count])
            offset += Int64(count)
        }
        guard offset == size else {
            throw PushPrepError(.ioError, "the file changed size while it was hashed")
        }
        return hasher.finalize().hexString
    }
}
