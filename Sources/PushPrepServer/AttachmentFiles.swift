import NIOCore
import PushPrepCore
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The out directory, held open as one descriptor for the server's life so that each request
/// opens its file with a single `openat` relative to it instead of opening the directory again.
/// The path is looked at again at most every ``recheckInterval``: a directory replaced under
/// the same path (removed and created again) is opened anew. Blocking calls: thread pool only.
final class OutDirectory: Sendable {
    let path: String
    /// How long a descriptor is used before the path is checked to still name its directory.
    static let recheckInterval: UInt64 = 1_000_000_000

    /// An open directory; closed when the last request using it lets go of it, so a request
    /// never `openat`s a descriptor that was closed (or reused) under it.
    final class Handle: Sendable {
        let descriptor: SystemPackage.FileDescriptor
        let device: UInt64
        let inode: UInt64

        init(descriptor: SystemPackage.FileDescriptor, device: UInt64, inode: UInt64) {
            self.descriptor = descriptor
            self.device = device
            self.inode = inode
        }

        deinit { try? descriptor.close() }
    }

    private let state = Mutex<(handle: Handle?, checkedAt: UInt64)>((nil, 0))

    init(path: String) {
        self.path = path
    }

    /// The open directory, opened (again) when there is none or the path names another one.
    func handle(now: UInt64) throws -> Handle {
        let held = state.withLock { state -> Handle? in
            guard let handle = state.handle, now &- state.checkedAt < Self.recheckInterval else { return nil }
            return handle
        }
        if let held { return held }
        let current = state.withLock { $0.handle }
        let status = try Stat(FilePath(path), followTargetSymlink: true)
        if let current, current.device == UInt64(status.deviceID.rawValue),
            current.inode == UInt64(status.inode.rawValue)
        {
            state.withLock { $0.checkedAt = now }
            return current
        }
        let descriptor = try SystemPackage.FileDescriptor.open(
            FilePath(path), .readOnly, options: [.directory, .closeOnExec], retryOnInterrupt: true)
        let opened: Stat
        do {
            opened = try descriptor.stat()
        } catch {
            try? descriptor.close()
            throw error
        }
        let handle = Handle(
            descriptor: descriptor, device: UInt64(opened.deviceID.rawValue), inode: UInt64(opened.inode.rawValue))
        state.withLock { $0 = (handle, now) }
        return handle
    }
}

/// A published file open for one request: the descriptor is closed when the last reference
/// goes, whether the body was streamed to its end or the response was dropped unsent.
final class OpenedAttachment: Sendable {
    let descriptor: SystemPackage.FileDescriptor
    let identity: FileIdentity
    /// The directory it was opened in, kept open as long as the file is.
    private let directory: OutDirectory.Handle

    init(descriptor: SystemPackage.FileDescriptor, identity: FileIdentity, directory: OutDirectory.Handle) {
        self.descriptor = descriptor
        self.identity = identity
        self.directory = directory
    }

    deinit { try? descriptor.close() }

    /// Opens `name` in `directory` with `openat`: never following a symbolic link
    /// (`O_NOFOLLOW`), non-blocking (a FIFO planted there cannot hang the thread) and
    /// close-on-exec; nil when it is not a regular file (checked on the opened descriptor).
    /// swift-system has no `openat`, hence the C call. Blocking: thread pool only.
    static func open(_ name: String, in directory: OutDirectory.Handle) throws -> OpenedAttachment? {
        let raw = name.withCString {
            openat(directory.descriptor.rawValue, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        }
        guard raw >= 0 else { throw Errno(rawValue: errno) }
        let descriptor = SystemPackage.FileDescriptor(rawValue: raw)
        let identity: FileIdentity?
        do {
            identity = FileIdentity(regularFile: try descriptor.stat())
        } catch {
            try? descriptor.close()
            throw error
        }
        guard let identity else {
            try? descriptor.close()
            return nil
        }
        return OpenedAttachment(descriptor: descriptor, identity: identity, directory: directory)
    }

    /// Up to `count` bytes from `offset` (pread, so no shared offset matters); fewer only at the
    /// end of the file. Blocking: thread pool only.
    func read(at offset: Int64, count: Int) throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        var done = 0
        while done < count {
            let got = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - done) { bytes in
                try descriptor.read(
                    fromAbsoluteOffset: offset + Int64(done),
                    into: UnsafeMutableRawBufferPointer(rebasing: bytes.prefix(count - done)), retryOnInterrupt: true)
            }
            if got == 0 { break }
            done += got
        }
        return buffer
    }
}

/// Small published files in memory, as nginx's `open_file_cache` keeps descriptors: a hot
/// attachment is answered from a slice of one buffer with no disk access at all.
///
/// Published files are content-named and never rewritten (a new output is a new name), so a
/// cached name keeps its bytes until it is pruned. An entry is trusted for
/// ``revalidateInterval`` after it was last checked; then one `fstatat` must find the same
/// regular file (device, inode, size, modification time) or the entry is dropped, so a pruned
/// file is a 404 within that interval. Memory is bounded: files up to ``maxFileBytes``, at most
/// ``maxBytes`` in all and ``maxEntries`` names; the clock (second-chance) order evicts names not
/// asked for since the hand last passed them.
final class AttachmentCache: Sendable {
    /// What a request needs of a cached file.
    struct Entry: Sendable {
        var identity: FileIdentity
        var sha256: String
        var lastModified: String
        var bytes: ByteBuffer
    }

    let maxBytes: Int
    let maxFileBytes: Int
    let maxEntries: Int
    /// Nanoseconds an entry is served without looking at the disk.
    let revalidateInterval: UInt64

    private struct Slot {
        var entry: Entry
        var checkedAt: UInt64
        var referenced: Bool
    }

    private struct State {
        var slots: [String: Slot] = [:]
        /// Cached names in clock order (the hand at the front).
        var clock = CircularBuffer<String>()
        var bytes = 0
    }

    private let state = Mutex(State())

    init(
        maxBytes: Int = 64 << 20, maxFileBytes: Int = 2 << 20, maxEntries: Int = 16_384,
        revalidateInterval: UInt64 = 1_000_000_000
    ) {
        self.maxBytes = maxBytes
        self.maxFileBytes = min(maxFileBytes, maxBytes)
        self.maxEntries = max(1, maxEntries)
        self.revalidateInterval = revalidateInterval
    }

    /// The entry for `name` when it was checked less than the interval ago.
    func fresh(_ name: String, now: UInt64) -> Entry? {
        state.withLock { state in
            guard let slot = state.slots[name], now &- slot.checkedAt < revalidateInterval else { return nil }
            if !slot.referenced { state.slots[name]?.referenced = true }
            return slot.entry
        }
    }

    /// The entry for `name` however old, to be revalidated.
    func stale(_ name: String) -> Entry? {
        state.withLock { $0.slots[name]?.entry }
    }

    /// Records that `name` was just found to still be `identity`.
    func confirm(_ name: String, identity: FileIdentity, now: UInt64) {
        state.withLock { state in
            if state.slots[name]?.entry.identity == identity { state.slots[name]?.checkedAt = now }
        }
    }

    /// Forgets `name` (no longer there, or another file now).
    func remove(_ name: String) {
        state.withLock { state in
            guard let slot = state.slots.removeValue(forKey: name) else { return }
            state.bytes -= Self.cost(slot.entry)
            // Its name stays in the clock until the hand reaches it, and is skipped then.
        }
    }

    /// Keeps `entry` as `name`, evicting others as needed; a file over ``maxFileBytes`` is not kept.
    func insert(_ name: String, _ entry: Entry, now: UInt64) {
        let cost = Self.cost(entry)
        guard entry.bytes.readableBytes <= maxFileBytes else { return }
        state.withLock { state in
            if let old = state.slots[name] {
                state.bytes -= Self.cost(old.entry)
                state.slots[name] = nil
            }
            while state.bytes + cost > maxBytes || state.slots.count >= maxEntries, let hand = state.clock.popFirst() {
                guard let slot = state.slots[hand] else { continue }
                if slot.referenced {
                    state.slots[hand]?.referenced = false
                    state.clock.append(hand)
                } else {
                    state.slots[hand] = nil
                    state.bytes -= Self.cost(slot.entry)
                }
            }
            // Names removed earlier may linger in the clock; compact it when they dominate.
            if state.clock.count > 2 * state.slots.count + 64 {
                var seen = Set<String>()
                let slots = state.slots
                state.clock = CircularBuffer(state.clock.filter { slots[$0] != nil && seen.insert($0).inserted })
            }
            state.slots[name] = Slot(entry: entry, checkedAt: now, referenced: false)
            state.clock.append(name)
            state.bytes += cost
        }
    }

    /// Bytes held and names cached (for tests and metrics).
    var usage: (bytes: Int, entries: Int) {
        state.withLock { ($0.bytes, $0.slots.count) }
    }

    /// An entry's memory: its bytes and a little for the name, digest and bookkeeping.
    private static func cost(_ entry: Entry) -> Int { entry.bytes.readableBytes + 512 }
}

extension FileIdentity {
    /// The identity in `status`, or nil when it is not a regular file.
    init?(regularFile status: Stat) {
        guard status.type == .regular else { return nil }
        self.init(
            device: UInt64(status.deviceID.rawValue), inode: UInt64(status.inode.rawValue), size: status.size,
            modifiedSeconds: Int(status.st_mtim.tv_sec), modifiedNanoseconds: Int(status.st_mtim.tv_nsec))
    }
}
