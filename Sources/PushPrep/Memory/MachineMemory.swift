import Foundation

/// How much memory this process may use: the machine's physical memory, or less when a cgroup
/// limits it (a container's `resources.limits.memory` in Kubernetes, Docker's `--memory`, a
/// systemd unit's `MemoryMax=`). What the default memory budget is a share of.
///
/// The cgroup is found from `/proc/self/cgroup` and its limit read under `/sys/fs/cgroup`:
/// cgroup v2's `memory.max` (a number, or `max` for none), and on a cgroup v1 host the memory
/// controller's `memory.limit_in_bytes`. A cgroup's limit binds its children, so the smallest
/// limit on the path from the process's cgroup up to the root counts; directories that are not
/// there (a container that sees only its own cgroup, at the root of its mount) are skipped.
package struct MachineMemory: Sendable, Equatable {
    /// Physical memory, in bytes.
    package let physical: Int
    /// The smallest cgroup memory limit over the process's cgroup and its parents, if any.
    package let cgroupLimit: Int?

    /// What the process may use: the smaller of the two.
    package var available: Int { min(physical, cgroupLimit ?? .max) }

    /// Where ``available`` comes from, in words, for logs and `--help`.
    package var source: String {
        if let cgroupLimit, cgroupLimit < physical { return "the cgroup memory limit" }
        return "physical memory"
    }

    /// This machine's, read from `/proc` and `/sys/fs/cgroup`.
    package static func current() -> MachineMemory {
        read(root: "/", physical: Int(clamping: ProcessInfo.processInfo.physicalMemory))
    }

    /// The memory seen from the file system rooted at `root` (`/`, or a test's directory that
    /// holds `proc/self/cgroup` and `sys/fs/cgroup/...`), with `physical` bytes of RAM.
    package static func read(root: String, physical: Int) -> MachineMemory {
        let cgroups = (try? String(contentsOfFile: join(root, "proc/self/cgroup"), encoding: .utf8)) ?? ""
        var limits: [Int] = []
        for line in cgroups.split(separator: "\n") {
            // hierarchy-id:controllers:path; cgroup v2 is "0::/path".
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = String(fields[2])
            if fields[0] == "0" && fields[1].isEmpty {
                limits += ancestors(of: path).compactMap { limit(at: join(root, "sys/fs/cgroup", $0, "memory.max")) }
            } else if fields[1].split(separator: ",").contains("memory") {
                limits += ancestors(of: path).compactMap {
                    limit(at: join(root, "sys/fs/cgroup/memory", $0, "memory.limit_in_bytes"))
                }
            }
        }
        return MachineMemory(physical: physical, cgroupLimit: limits.min())
    }

    package init(physical: Int, cgroupLimit: Int?) {
        self.physical = physical
        self.cgroupLimit = cgroupLimit
    }

    /// `path` and every directory above it, the root (`""`) last: "/a/b" gives "a/b", "a", "".
    static func ancestors(of path: String) -> [String] {
        var parts = path.split(separator: "/").map(String.init)
        // A path that climbs ("..") is not a cgroup's; read only the root's limit then.
        guard !parts.contains("..") else { return [""] }
        var result: [String] = []
        while !parts.isEmpty {
            result.append(parts.joined(separator: "/"))
            parts.removeLast()
        }
        return result + [""]
    }

    /// The limit in a `memory.max` or `memory.limit_in_bytes` file: nil when the file is missing
    /// or says `max` (v2's "no limit"). v1's "no limit" is a number near `Int64.max`, which the
    /// physical memory then wins against.
    static func limit(at path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Int(value), bytes > 0 else { return nil }
        return bytes
    }

    private static func join(_ parts: String...) -> String {
        parts.filter { !$0.isEmpty }.joined(separator: "/").replacingOccurrences(of: "//", with: "/")
    }
}
