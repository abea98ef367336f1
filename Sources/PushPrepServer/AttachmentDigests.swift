import Crypto
import Foundation
import NIOCore
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

    /// The modification time (`Last-Modified`).
    var modified: Date {
        Date(timeIntervalSince1970: TimeInterval(modifiedSeconds) + TimeInterval(modifiedNanoseconds) / 1e9)
    }

    /// The identity of the file open as `descriptor` (its `fstat`), or nil when it is not a
    /// regular file. Runs on a thread-pool thread.
    static func ofRegularFile(_ descriptor: SystemPackage.FileDescriptor) throws -> FileIdentity? {
        FileIdentity(regularFile: try descriptor.stat())
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

    /// A digest known, or being computed by a task that concurrent callers share.
    private enum Digest {
        case known(String)
        case computing(Task<String, any Error>)
    }

    private struct State {
        var digests: [FileIdentity: Digest] = [:]
        /// Identities in the order they were added, as a ring of `capacity` slots.
        var order: [FileIdentity] = []
        var next = 0
    }

    init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
        state = Mutex(State())
    }

    /// The digest already known for `identity`, if any (never waits for one being computed).
    func known(_ identity: FileIdentity) -> String? {
        state.withLock { state in
            guard case .known(let digest) = state.digests[identity] else { return nil }
            return digest
        }
    }

    /// The lowercase hex SHA-256 of the file whose identity is `identity`, from `compute` (run
    /// once for concurrent callers, and only when the digest is not known yet), which must keep
    /// what it reads open until it returns.
    func digest(
        of identity: FileIdentity, compute: @escaping @Sendable () async throws -> String
    ) async throws -> String {
        let task = state.withLock { state -> Task<String, any Error> in
            switch state.digests[identity] {
            case .known(let digest): return Task { digest }
            case .computing(let task): return task
            case nil:
                let task = Task { try await compute() }
                Self.remember(identity, .computing(task), in: &state, capacity: capacity)
                return task
            }
        }
        do {
            let digest = try await task.value
            state.withLock { state in
                if case .computing(let running) = state.digests[identity], running == task {
                    state.digests[identity] = .known(digest)
                }
            }
            return digest
        } catch {
            // Not remembered: the next request tries again.
            state.withLock { state in
                if case .computing(let running) = state.digests[identity], running == task {
                    state.digests[identity] = nil
                }
            }
            throw error
        }
    }

    /// Records a digest computed by the caller (of bytes it had read anyway).
    func remember(_ identity: FileIdentity, digest: String) {
        state.withLock { state in
            if state.digests[identity] == nil {
                Self.remember(identity, .known(digest), in: &state, capacity: capacity)
            }
        }
    }

    private static func remember(_ identity: FileIdentity, _ digest: Digest, in state: inout State, capacity: Int) {
        if state.order.count < capacity {
            state.order.append(identity)
        } else {
            state.digests[state.order[state.next]] = nil
            state.order[state.next] = identity
            state.next = (state.next + 1) % capacity
        }
        state.digests[identity] = digest
    }

    /// The lowercase hex SHA-256 of `bytes`.
    static func hash(_ bytes: ByteBuffer) -> String {
        var hasher = SHA256()
        bytes.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        return hasher.finalize().hexString
    }

    /// Reads `size` bytes of `descriptor` from the start (pread, so a shared offset does not
    /// matter) and hashes them; runs on a thread-pool thread.
    static func hash(_ descriptor: SystemPackage.FileDescriptor, size: Int64) throws -> String {
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
