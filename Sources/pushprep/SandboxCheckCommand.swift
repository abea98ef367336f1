import ArgumentParser
import Foundation
import PushPrepSandbox

/// `pushprep sandbox-check`: what a decoder process may do on this machine.
struct SandboxCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox-check",
        abstract: "Show what a confined decoder process can do on this machine.",
        discussion: """
            Starts a real decoder process, confined as PushPrep confines the processes that decode \
            inputs (empty environment, no inherited descriptors, rlimits, no new privileges and no \
            capabilities, Landlock where the kernel has it, a seccomp filter), and tries from inside \
            it: opening /etc/passwd, connecting to 127.0.0.1, running /bin/true, reading the \
            environment, writing outside its staging directory, allocating past its address-space \
            limit, and reading its parent's environment through /proc. \
            Prints each layer found on this machine (cgroup v2 too) and each probe's outcome, with \
            the layer that blocked it.

            Exit status: 0 when every layer this machine offers was applied and every probe was \
            blocked, 1 otherwise.
            """
    )

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    func run() async throws {
        let report = await SandboxCheck.run(executable: DecoderProcess.ownExecutable)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            FileHandle.standardOutput.write(try encoder.encode(report) + Data("\n".utf8))
        } else {
            print(report.text)
        }
        if !report.passed { throw ExitCode(1) }
    }
}
