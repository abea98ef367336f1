import CSandboxShims
import Foundation
package import PushPrepCore

/// How a decoder process confines itself as it starts, in this order: empty environment, no
/// inherited descriptor, rlimits, `PR_SET_NO_NEW_PRIVS` and no capabilities, Landlock (where the kernel has it),
/// seccomp. Each layer is a call into CSandboxShims (C: the system calls, Landlock's kernel
/// structures and libseccomp are C interfaces Swift's Glibc module lacks or imports badly);
/// the order and the report are here.
///
/// A layer the machine offers that cannot be applied stops the decoder (fail closed); a layer
/// the machine lacks (Landlock on an older kernel) is reported as such. Tests skip layers to
/// show which one blocks a probe; nothing else does.
package enum Confinement {
    /// The channel's descriptor in a decoder process.
    package static let channelDescriptor: Int32 = 3
    /// The staging directory's descriptor in a decoder process: its only writable place.
    package static let stagingDescriptor: Int32 = 4

    /// What a decoder may read besides the staging directory: the libraries and their data
    /// (libvips' modules, ICC profiles, locale and time-zone data), all under /usr on a
    /// merged-/usr system (/lib and /lib64 for the others); the CPU count. And /proc, because
    /// Swift concurrency's threads on Linux are libdispatch's, whose worker monitor reads
    /// /proc/<thread>/stat and crashes the process when it cannot (seen: SIGILL in the first
    /// decode under load). Landlock cannot allow /proc/<own threads> alone. What that exposes:
    /// what /proc shows of other processes without ptrace rights (command lines, status);
    /// not /etc, /home, /tmp, or anything writable.
    static let readablePaths = ["/usr", "/lib", "/lib64", "/sys/devices/system/cpu", "/proc"]

    /// Confines the calling process, skipping the layers in `skipping` (tests only), and returns
    /// each layer's state. Throws when a layer this machine offers fails to apply.
    package static func apply(
        limits: DecoderLimits, skipping: Set<SandboxLayer> = []
    ) throws(PushPrepError) -> [LayerState] {
        var layers: [LayerState] = []
        func skipped(_ layer: SandboxLayer) -> Bool {
            guard skipping.contains(layer) else { return false }
            layers.append(LayerState(layer, supported: true, applied: false, detail: "skipped (test mode)"))
            return true
        }
        func applied(_ layer: SandboxLayer, _ detail: String) {
            layers.append(LayerState(layer, supported: true, applied: true, detail: detail))
        }

        if !skipped(.environment) {
            try check(csandboxshims_clear_environment(), "clearing the environment")
            applied(.environment, "empty")
        }
        // Landlock confines the calling thread and the threads it starts later, not the others:
        // the decoder must still be single-threaded here (seccomp is synchronised anyway).
        let threads = csandboxshims_thread_count()
        guard threads == 1 || skipping.contains(.landlock) else {
            throw PushPrepError(
                .ioError, "the decoder runs \(threads) threads before confining itself; it must run one")
        }
        if !skipped(.descriptors) {
            let inherited = csandboxshims_open_descriptor_count()
            try check(csandboxshims_close_descriptors_from(stagingDescriptor + 1), "closing inherited descriptors")
            guard fchdir(stagingDescriptor) == 0 else {
                throw PushPrepError(
                    .ioError, "descriptor 4 is not the staging directory: \(DecoderChannel.describe(errno))")
            }
            let open = csandboxshims_open_descriptor_count()
            let kept = "0-2, the channel (3), the staging directory (4, the working directory)"
            applied(.descriptors, "closed \(inherited - open) inherited; \(open) open: \(kept)")
        }
        if !skipped(.rlimits) {
            // Each malloc arena reserves 64 MiB of address space: two are plenty for one input.
            csandboxshims_set_arena_max(2)
            try check(
                csandboxshims_set_limits(
                    UInt64(limits.addressSpace), UInt64(limits.cpuSeconds), UInt64(limits.fileSize),
                    UInt64(limits.openFiles)),
                "setting rlimits")
            applied(
                .rlimits,
                "address space \(limits.addressSpace) bytes, CPU \(limits.cpuSeconds) s, file size "
                    + "\(limits.fileSize) bytes, \(limits.openFiles) descriptors, no core dumps")
        }
        if !skipped(.noNewPrivs) {
            try check(csandboxshims_set_no_new_privs(), "PR_SET_NO_NEW_PRIVS")
            try check(csandboxshims_drop_capabilities(), "dropping capabilities")
            applied(.noNewPrivs, "set; every capability dropped")
        }
        if !skipped(.landlock) {
            layers.append(try landlock())
        }
        if !skipped(.seccomp) {
            guard csandboxshims_seccomp_available() == 1 else {
                layers.append(
                    LayerState(.seccomp, supported: false, applied: false, detail: "this kernel has no seccomp filters")
                )
                return layers
            }
            let rules = try check(csandboxshims_seccomp_apply(), "loading the seccomp filter")
            applied(.seccomp, "\(rules) rules: network, exec, ptrace, mount, namespaces, bpf, modules... refused")
        }
        return layers
    }

    /// Applies Landlock, or says why this kernel does not have it.
    private static func landlock() throws(PushPrepError) -> LayerState {
        let abi = csandboxshims_landlock_abi()
        guard abi >= 1 else {
            let why =
                abi == -ENOSYS ? "this kernel has no Landlock (ENOSYS)" : "Landlock is disabled (\(errorName(-abi)))"
            return LayerState(.landlock, supported: false, applied: false, detail: why)
        }
        let applied = readablePaths.withCStrings { paths in
            csandboxshims_landlock_restrict(stagingDescriptor, paths, Int32(readablePaths.count))
        }
        try check(applied, "applying Landlock")
        return LayerState(
            .landlock, supported: true, applied: true,
            detail:
                "ABI \(applied): writes to the staging directory only, reads \(readablePaths.joined(separator: " ")); "
                + (applied >= 4 ? "no TCP; " : "") + (applied >= 6 ? "no signals out, no abstract sockets" : ""))
    }

    /// `result` when it is not negative; otherwise the error of `what`.
    @discardableResult
    private static func check(_ result: Int32, _ what: String) throws(PushPrepError) -> Int32 {
        guard result < 0 else { return result }
        throw PushPrepError(.ioError, "the decoder cannot confine itself: \(what) failed: \(errorName(-result))")
    }

    /// An errno value as its name and words ("EACCES: Permission denied").
    package static func errorName(_ code: Int32) -> String {
        let names: [Int32: String] = [
            EPERM: "EPERM", EACCES: "EACCES", ENOMEM: "ENOMEM", ENOSYS: "ENOSYS", EOPNOTSUPP: "EOPNOTSUPP",
            ECONNREFUSED: "ECONNREFUSED", ENOENT: "ENOENT", EINVAL: "EINVAL", EFBIG: "EFBIG",
        ]
        return "\(names[code] ?? "errno \(code)"): \(DecoderChannel.describe(code))"
    }
}

extension Array where Element == String {
    /// Calls `body` with the strings as a C array of C strings.
    func withCStrings<Result>(_ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result) -> Result {
        let copies = map { UnsafePointer(strdup($0)) }
        defer { copies.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
