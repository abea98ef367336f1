import Foundation
package import Logging
package import PushPrepCore
package import PushPrepQueue
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Deletes the uploads no unfinished job refers to (issue 26 §1.8), so that the uploads
/// directory returns to its size once its jobs end, succeeded or failed.
///
/// A sweep reads, in one statement, the sources of the queued and running jobs under the
/// directory (``JobQueueAdmin/unfinishedSources(withPrefix:)``), then deletes every upload
/// (`<sha256>.<ext>`, a regular file, not a symbolic link) absent from that set, unless
/// - an upload of this server is between storing that file and the commit of its job, or was
///   at any moment since the sweep began (the query may predate the commit): ``begin(_:)`` and
///   ``end(_:)`` bracket that span, and the check and the `unlink` happen under the same lock
///   as those, so no job of this process can be enqueued for a file this sweep deletes;
/// - the file was written less than ``grace`` ago: the margin for several servers sharing one
///   uploads directory, whose uploads this process cannot see (an upload renames a fresh file
///   over the name, so its modification time is when its bytes arrived).
///
/// The queue schema is unchanged: the jobs' `source` column is the reference. A job retried
/// after its upload was deleted fails with `not_found` like any missing source. Sweeps run
/// every ``interval`` while the server runs (``run()``), one at a time; temporaries left by
/// processes that died mid-upload go too.
package final class UploadSweeper: Sendable {
    /// The uploads directory, as the upload route names the files it stores.
    package let directory: String
    let queue: any JobQueueAdmin
    /// How recently written a file must not be to be deleted.
    package let grace: Duration
    /// The time between two sweeps.
    package let interval: Duration
    let logger: Logger

    private struct State {
        /// Uploads between storing their file and the end of their enqueue, by path.
        var active: [String: Int] = [:]
        /// Paths an upload began or ended on since the running sweep started.
        var touched: Set<String> = []
        var sweeping = false
    }

    private let state = Mutex(State())

    /// A sweeper of `directory` against `queue`'s unfinished jobs.
    package init(directory: String, queue: any JobQueueAdmin, grace: Duration, interval: Duration, logger: Logger) {
        self.directory = directory
        self.queue = queue
        self.grace = grace
        self.interval = interval
        self.logger = logger
    }

    /// The time between sweeps for a grace of `grace`: half of it, from 1 s to 60 s.
    package static func interval(forGrace grace: Duration) -> Duration {
        min(max(grace / 2, .seconds(1)), .seconds(60))
    }

    /// An upload is about to store `path` and enqueue its job: no sweep deletes it until
    /// ``end(_:)``.
    func begin(_ path: String) {
        state.withLock { state in
            state.active[path, default: 0] += 1
            if state.sweeping { state.touched.insert(path) }
        }
    }

    /// The upload of `path` has enqueued its job (or failed to).
    func end(_ path: String) {
        state.withLock { state in
            if let count = state.active[path], count > 1 {
                state.active[path] = count - 1
            } else {
                state.active[path] = nil
            }
            if state.sweeping { state.touched.insert(path) }
        }
    }

    /// Sweeps every ``interval`` until cancelled; a failed sweep (the queue unreachable) is
    /// logged and tried again at the next one.
    package func run() async {
        while !Task.isCancelled {
            do {
                _ = try await sweep()
            } catch {
                logger.warning("uploads not swept", metadata: ["error": "\(error.message)"])
            }
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
        }
    }

    /// One sweep; returns how many uploads it deleted (0 when another sweep is running).
    @discardableResult
    package func sweep() async throws(PushPrepError) -> Int {
        let started = state.withLock { state -> Bool in
            guard !state.sweeping else { return false }
            state.sweeping = true
            state.touched = []
            return true
        }
        guard started else { return 0 }
        defer {
            state.withLock { state in
                state.sweeping = false
                state.touched = []
            }
        }
        AtomicFile.removeStaleTemporaries(in: directory)
        let needed = try await queue.unfinishedSources(withPrefix: directory + "/")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var removed = 0
        var bytes = 0
        for name in names where Self.isUploadName(name) {
            let path = "\(directory)/\(name)"
            guard !needed.contains(path) else { continue }
            let size = state.withLock { state -> Int? in
                guard state.active[path] == nil, !state.touched.contains(path) else { return nil }
                // attributesOfItem reads the entry with lstat: a symbolic link is not followed, nor
                // deleted (the server never makes one).
                guard let info = try? FileManager.default.attributesOfItem(atPath: path),
                    info[.type] as? FileAttributeType == .typeRegular,
                    let written = info[.modificationDate] as? Date
                else { return nil }
                guard Date().timeIntervalSince(written) >= grace.seconds else { return nil }
                let size = (info[.size] as? NSNumber)?.intValue ?? 0
                return unlink(path) == 0 ? size : nil
            }
            if let size {
                removed += 1
                bytes += size
            }
        }
        if removed > 0 {
            logger.info("uploads deleted", metadata: ["files": "\(removed)", "bytes": "\(bytes)"])
        }
        return removed
    }

    /// A name the upload route gives a stored upload: 64 lowercase hex digits, a dot, an
    /// extension of letters and digits. Temporaries (dot-files) and anything else an operator
    /// put there are left alone.
    static func isUploadName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 64, !parts[1].isEmpty, parts[1].utf8.count <= 8 else {
            return false
        }
        return parts[0].utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
            && parts[1].utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }
    }
}
