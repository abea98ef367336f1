import Foundation
package import PushPrepCore

/// `pushprep sandbox-check`: starts a real confined decoder process, runs the probes inside it,
/// and reports the layers found on this machine. Passes when every layer the machine offers was
/// applied and every probe was blocked.
package struct SandboxCheckReport: Encodable, Sendable {
    /// The decoder's layers, then cgroup v2 as found by the parent.
    package var layers: [LayerState]
    /// The probes' outcomes (empty when no decoder answered).
    package var probes: [ProbeResult]
    /// Every reason the check fails, in words; empty when it passes.
    package var problems: [String]
    /// Whether the check passed.
    package var passed: Bool { problems.isEmpty }

    /// Also encodes ``passed``.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(layers, forKey: .layers)
        try container.encode(probes, forKey: .probes)
        try container.encode(problems, forKey: .problems)
        try container.encode(passed, forKey: .passed)
    }

    private enum CodingKeys: String, CodingKey { case layers, probes, problems, passed }

    /// The report for people.
    package var text: String {
        var lines = ["Layers:"]
        for state in layers {
            let status = state.applied ? "applied" : state.supported ? "MISSING" : "not available"
            lines.append("  \(pad(state.layer.rawValue, 14)) \(pad(status, 13)) \(state.detail)")
        }
        lines.append("Probes (inside a confined decoder process):")
        for result in probes {
            let status = result.blocked ? "blocked by \(result.layer?.rawValue ?? "?")" : "NOT blocked"
            lines.append("  \(pad(result.probe.rawValue, 23)) \(pad(status, 22)) \(result.detail)")
        }
        if passed {
            lines.append("Sandbox check passed: every layer this machine offers is applied and every probe is blocked.")
        } else {
            lines.append("Sandbox check FAILED:")
            lines += problems.map { "  - \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

package enum SandboxCheck {
    /// Runs the check with the decoder `executable` (this program), in a new temporary directory
    /// (a staging directory inside it; removed afterwards). `options` and `environment` are the
    /// decoder's (tests skip layers and pass variables; the command never does).
    package static func run(
        executable: String, options: DecoderService.Options = DecoderService.Options(limits: DecoderLimits()),
        environment: [String: String] = [:]
    ) async -> SandboxCheckReport {
        let cgroup = CgroupV2.detect()
        var report = SandboxCheckReport(layers: [], probes: [], problems: [])
        var template = Array((NSTemporaryDirectory() + "/pushprep-sandbox-check-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            report.problems.append("cannot make a temporary directory: \(DecoderChannel.describe(errno))")
            report.layers = [cgroup]
            return report
        }
        let directory = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let staging = directory + "/staging"
        mkdir(staging, 0o700)
        do throws(PushPrepError) {
            let listener = try LoopbackListener()
            defer { listener.close() }
            let decoder = try await DecoderProcess.start(
                executable: executable, staging: staging, options: options, environment: environment)
            do throws(PushPrepError) {
                report.probes = try await decoder.probes(connectPort: listener.port)
                await decoder.finish()
            } catch {
                await decoder.kill()
                throw error
            }
            report.layers = decoder.layers
        } catch {
            report.problems.append(error.message)
        }
        report.layers.append(cgroup)
        report.problems += report.layers.filter(\.isMissing).map {
            "\($0.layer.rawValue) is offered by this machine but was not applied (\($0.detail))"
        }
        report.problems += report.probes.filter { !$0.blocked }.map {
            "\($0.probe.rawValue) was not blocked: \($0.detail)"
        }
        return report
    }
}

/// A TCP listener on 127.0.0.1, port chosen by the kernel, that accepts nothing itself (the
/// kernel completes connections into its backlog): what the connect probe aims at.
package struct LoopbackListener: Sendable {
    /// Its descriptor.
    package let descriptor: Int32
    /// Its port.
    package let port: Int

    /// Listens, or throws `io_error`.
    package init() throws(PushPrepError) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening =
            descriptor >= 0
            && withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, length) == 0 && listen(descriptor, 8) == 0
                        && getsockname(descriptor, $0, &length) == 0
                }
            }
        guard listening else {
            let why = DecoderChannel.describe(errno)
            if descriptor >= 0 { Glibc.close(descriptor) }
            throw PushPrepError(.ioError, "cannot listen on 127.0.0.1 for the connect probe: \(why)")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Stops listening.
    package func close() { Glibc.close(descriptor) }
}

/// Whether cgroup v2's memory controller could hold decoder processes on this machine.
enum CgroupV2 {
    /// Reads /proc/self/mountinfo and /proc/self/cgroup; never applies anything.
    static func detect() -> LayerState {
        let mounts = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        // "36 25 0:30 / /sys/fs/cgroup rw,... - cgroup2 cgroup2 rw": the mount point is field 5.
        guard
            let mount = mounts.split(separator: "\n").first(where: { $0.contains(" - cgroup2 ") })?
                .split(separator: " ").dropFirst(4).first
        else {
            return LayerState(.cgroupV2, supported: false, applied: false, detail: "no cgroup2 file system is mounted")
        }
        let membership = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? ""
        let path =
            membership.split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) } ?? "/"
        let controllers = (try? String(contentsOfFile: "\(mount)\(path)/cgroup.controllers", encoding: .utf8)) ?? ""
        let list = controllers.split(whereSeparator: \.isWhitespace)
        guard list.contains("memory") else {
            let named = list.isEmpty ? "none" : list.joined(separator: " ")
            return LayerState(
                .cgroupV2, supported: false, applied: false,
                detail:
                    "cgroup2 at \(mount) (this process in \(path)) has no memory controller (controllers: \(named)); memory is limited by RLIMIT_AS"
            )
        }
        return LayerState(
            .cgroupV2, supported: true, applied: false,
            detail: "cgroup2 at \(mount) with the memory controller (this process in \(path)); not used yet")
    }
}
