package import Foundation

/// Which workers share this process's PID space, from their ids (`host:pid:random`): a worker
/// whose id names this host and a PID that no longer exists is gone, and its leases can be
/// rescued at once instead of after the lease (fencing keeps a mistaken rescue safe: the old
/// holder can neither finish nor publish).
///
/// The host part is the host name followed by a tag of the boot and the PID namespace
/// (`web1-3k9x2a`): two machines or containers that share a host name still differ, so a PID
/// is only ever looked up in the PID space it belongs to.
package enum WorkerHost {
    /// This process's host part.
    package static let current: String = {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let boot = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
        let namespace = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid")) ?? ""
        // FNV-1a: stable across runs and processes (Hasher is seeded per process).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (boot.trimmingCharacters(in: .whitespacesAndNewlines) + "/" + namespace).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return "\(WorkerConfiguration.fileNameSafe(host))-\(String(hash % 2_176_782_336, radix: 36))"
    }()

    /// Running jobs looked at, at most, per pass for a dead holder.
    static let holderScanLimit = 1000

    /// The host part and PID of a worker id, or nil when it is not `host:pid:…`.
    static func parse(_ workerID: String) -> (host: Substring, pid: pid_t)? {
        let parts = workerID.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let pid = pid_t(parts[1]), pid > 0 else { return nil }
        return (parts[0], pid)
    }

    /// Whether `pid` of this PID space is known to be gone: not this process, and kill(pid, 0)
    /// says no such process (EPERM means it exists, under another user).
    package static func isGone(_ pid: pid_t) -> Bool {
        pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Whether the worker `workerID` ran on this host (this PID space) and its process is gone.
    package static func isGoneHolder(_ workerID: String) -> Bool {
        guard let (host, pid) = parse(workerID), host == current else { return false }
        return isGone(pid)
    }
}
