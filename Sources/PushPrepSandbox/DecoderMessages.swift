package import PushPrepCore

/// What the parent asks a decoder process, one request at a time, on the channel.
package enum DecoderRequest: Codable, Sendable {
    /// Run every ``SandboxProbe``; `connectPort` is a port on 127.0.0.1 the parent listens on,
    /// so that a connection the sandbox lets through really connects.
    case probe(connectPort: Int)
    /// Process the file `input` of the staging directory into its directory `outputDirectory`
    /// (both plain names: no `/`, not `.` or `..`) with `settings`.
    case process(input: String, outputDirectory: String, settings: ProcessingSettings)
    /// Process the input passed with this request (its descriptor, SCM_RIGHTS), which the parent
    /// opened and hashed: `size` bytes of SHA-256 `sha256`, found at `path` (for messages and the
    /// extension check); into the staging directory's directory `outputDirectory` (a plain name).
    case decode(
        source: String, path: String, size: Int, sha256: String, outputDirectory: String,
        settings: ProcessingSettings)
    /// The answer to ``DecoderReply/admit(bytes:)``: the parent's budget admitted the input's
    /// estimate (alone: it is over the whole budget, and nothing else runs meanwhile).
    case admitted(alone: Bool)
    /// Exit with status 0.
    case exit
}

/// What a decoder process answers.
package enum DecoderReply: Codable, Sendable {
    /// Sent once, first, when the process has confined itself: the layers it applied.
    case ready([LayerState])
    /// The answer to ``DecoderRequest/probe(connectPort:)``: one result per probe.
    case probes([ProbeResult])
    /// The answer to ``DecoderRequest/process(input:outputDirectory:settings:)`` and to
    /// ``DecoderRequest/decode(source:path:size:sha256:outputDirectory:settings:)``.
    case processed(ManifestEntry)
    /// Sent while decoding, once per input at most, before its pixels or samples are decoded:
    /// reserve the input's estimated peak memory, `bytes`, in the parent's memory budget;
    /// answered with ``DecoderRequest/admitted(alone:)`` when it is admitted.
    case admit(bytes: Int)
    /// A request the decoder does not take (a name that is not a plain name), or, as its first
    /// message, why it cannot confine itself; in words.
    case refused(String)
}

/// One layer of the confinement, as a decoder applied it (or `sandbox-check` found it).
package enum SandboxLayer: String, Codable, CaseIterable, Sendable {
    /// An empty environment: the parent passes none, and the decoder clears its own.
    case environment
    /// No descriptor but standard input, output and error, the channel (3) and the staging
    /// directory (4), which is also the working directory.
    case descriptors
    /// Address space, CPU time, file size, open files, no core dumps.
    case rlimits
    /// `PR_SET_NO_NEW_PRIVS`, and no capabilities (a decoder started by root keeps uid 0 only).
    case noNewPrivs = "no_new_privs"
    /// Landlock: paths, TCP and signals.
    case landlock
    /// The seccomp-bpf filter.
    case seccomp
    /// cgroup v2 with its memory controller: found or not, not used yet (the decoder pool will
    /// put its processes in one); never required.
    case cgroupV2 = "cgroup_v2"
}

/// Whether this machine offers a layer, whether it was applied, and the details in words (a
/// Landlock ABI version, a number of rules, the limits, or why it is missing).
package struct LayerState: Codable, Sendable, Equatable {
    /// The layer.
    package var layer: SandboxLayer
    /// Whether this machine offers it.
    package var supported: Bool
    /// Whether the decoder applied it.
    package var applied: Bool
    /// What was applied, or why not.
    package var detail: String

    /// A layer's state.
    package init(_ layer: SandboxLayer, supported: Bool, applied: Bool, detail: String) {
        self.layer = layer
        self.supported = supported
        self.applied = applied
        self.detail = detail
    }

    /// A layer the machine offers that was not applied (cgroup v2 is never required).
    package var isMissing: Bool { supported && !applied && layer != .cgroupV2 }
}

/// The limits a decoder process sets on itself (rlimits, hard and soft).
package struct DecoderLimits: Codable, Sendable, Equatable {
    /// RLIMIT_AS, bytes.
    package var addressSpace: Int
    /// RLIMIT_CPU, seconds.
    package var cpuSeconds: Int
    /// RLIMIT_FSIZE, bytes: the largest file it may write.
    package var fileSize: Int
    /// RLIMIT_NOFILE.
    package var openFiles: Int

    /// Limits; the defaults admit decoding one input of the default settings' limits.
    package init(
        addressSpace: Int = 4 << 30, cpuSeconds: Int = 300, fileSize: Int = 256 << 20, openFiles: Int = 64
    ) {
        self.addressSpace = addressSpace
        self.cpuSeconds = cpuSeconds
        self.fileSize = fileSize
        self.openFiles = openFiles
    }
}
