import CSandboxShims
import Foundation

/// What `sandbox-check` tries from inside a confined decoder process. Each probe does the real
/// thing (opens, connects, runs, writes, maps) and is blocked only when it fails with the error
/// that one layer of the sandbox gives; any other outcome, success or an unrelated failure,
/// is "not blocked":
/// - `open_etc_passwd`: open /etc/passwd for reading (Landlock: EACCES);
/// - `connect_loopback`: connect to a port on 127.0.0.1 the parent listens on (seccomp refuses
///   `socket`: EPERM; without it, Landlock ABI 4 refuses `connect`: EACCES);
/// - `exec_bin_true`: run /bin/true (seccomp refuses `execve`: EPERM; without it, Landlock:
///   EACCES);
/// - `read_environment`: read environment variables: the environment must be empty;
/// - `write_outside_staging`: create a file next to the staging directory (Landlock: EACCES);
/// - `allocate_past_limit`: map as many bytes as the address-space limit (rlimits: ENOMEM);
/// - `read_parent_environment`: open /proc/<parent>/environ, where the parent's secrets are
///   (the kernel's ptrace check: EACCES, which Landlock makes fail for a process outside the
///   decoder's domain, and dropped capabilities for a parent running as root).
package enum SandboxProbe: String, Codable, CaseIterable, Sendable {
    case openPasswd = "open_etc_passwd", connectLoopback = "connect_loopback", execTrue = "exec_bin_true"
    case readEnvironment = "read_environment", writeOutside = "write_outside_staging"
    case allocatePastLimit = "allocate_past_limit", readParentEnvironment = "read_parent_environment"
}

/// What the probes need to know: where they are, what to aim at, and what was applied.
package struct ProbeContext: Sendable {
    /// The staging directory's path (a probe writes next to it).
    package var stagingPath: String
    /// The parent's listener on 127.0.0.1.
    package var connectPort: Int
    /// The address-space limit, bytes.
    package var addressSpace: Int
    /// Whether Landlock was applied (it, not the capabilities, then answers for /proc).
    package var landlock: Bool
}

/// One probe's outcome.
package struct ProbeResult: Codable, Sendable, Equatable {
    /// The probe.
    package let probe: SandboxProbe
    /// Whether the sandbox stopped it.
    package let blocked: Bool
    /// The layer that stopped it (nil when not blocked).
    package let layer: SandboxLayer?
    /// What happened, in words.
    package let detail: String
}

extension SandboxProbe {
    /// Runs every probe, in declaration order.
    package static func runAll(_ context: ProbeContext) -> [ProbeResult] {
        allCases.map { $0.run(context) }
    }

    /// Runs this probe.
    func run(_ context: ProbeContext) -> ProbeResult {
        switch self {
        case .openPasswd:
            return judge(csandboxshims_probe_open_read("/etc/passwd"), done: "opened /etc/passwd", context)
        case .connectLoopback:
            var step: Int32 = 0
            let result = csandboxshims_probe_connect_loopback(Int32(context.connectPort), &step)
            let call = step == 1 ? "socket" : "connect"
            return judge(result, done: "connected to 127.0.0.1:\(context.connectPort)", context, call: call)
        case .execTrue:
            return judge(csandboxshims_probe_exec("/bin/true"), done: "ran /bin/true", context)
        case .readEnvironment:
            let count = csandboxshims_environment_count()
            let secrets: [String] = ["PATH", "HOME", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD"]
            let names = secrets.filter { getenv($0) != nil }
            guard count == 0 else {
                let shown = names.isEmpty ? "" : " (\(names.joined(separator: ", ")) among them)"
                return ProbeResult(
                    probe: self, blocked: false, layer: nil, detail: "\(count) variables readable\(shown)")
            }
            return ProbeResult(probe: self, blocked: true, layer: .environment, detail: "the environment is empty")
        case .writeOutside:
            let outside = URL(fileURLWithPath: context.stagingPath).deletingLastPathComponent()
                .appendingPathComponent("outside-probe-\(getpid())").path
            return judge(csandboxshims_probe_create_file(outside), done: "wrote \(outside)", context)
        case .allocatePastLimit:
            let bytes = context.addressSpace
            return judge(csandboxshims_probe_map(UInt64(bytes)), done: "mapped \(bytes) bytes", context)
        case .readParentEnvironment:
            let path = "/proc/\(getppid())/environ"
            return judge(csandboxshims_probe_open_read(path), done: "opened \(path)", context)
        }
    }

    /// The layer that answers `code` to this probe, if one does.
    private func layer(for code: Int32, _ context: ProbeContext) -> SandboxLayer? {
        switch (self, code) {
        case (.readParentEnvironment, EACCES): context.landlock ? .landlock : .noNewPrivs
        case (.connectLoopback, EPERM), (.execTrue, EPERM): .seccomp
        case (.openPasswd, EACCES), (.connectLoopback, EACCES), (.execTrue, EACCES), (.writeOutside, EACCES):
            .landlock
        case (.allocatePastLimit, ENOMEM): .rlimits
        default: nil
        }
    }

    /// A result from a shim's answer: 0 is success (`done` happened), -errno a failure of `call`.
    private func judge(_ result: Int32, done: String, _ context: ProbeContext, call: String? = nil) -> ProbeResult {
        guard result < 0 else { return ProbeResult(probe: self, blocked: false, layer: nil, detail: done) }
        let failure = (call.map { "\($0): " } ?? "") + Confinement.errorName(-result)
        guard let layer = layer(for: -result, context) else {
            return ProbeResult(
                probe: self, blocked: false, layer: nil,
                detail: "\(failure), which is no layer's answer: the call itself was allowed")
        }
        return ProbeResult(probe: self, blocked: true, layer: layer, detail: failure)
    }
}
