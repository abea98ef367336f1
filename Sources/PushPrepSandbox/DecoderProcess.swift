package import Foundation
package import PushPrepCore

/// A confined decoder process, from its parent's side: started with an empty environment, its
/// channel as descriptor 3 and the staging directory as descriptor 4, nothing on standard input
/// or output, and the parent's standard error for its log lines. Requests go one at a time
/// (the caller serialises them); every reply is validated (``DecoderChannel``) and a decoder
/// that sends anything else is not trusted: the call throws, and the caller kills it.
///
/// The channel is read on a thread of its own, and the exit is awaited by polling, so no thread
/// of Swift concurrency's pool ever blocks on the child. Call ``finish(timeout:)`` or
/// ``kill()`` when done: both reap it.
package final class DecoderProcess: Sendable {
    /// The decoder's process id.
    package let pid: pid_t
    /// The layers it reported when it started.
    package let layers: [LayerState]
    /// The parent's end of the channel (closed by ``finish(timeout:)`` and ``kill()``).
    private let channel: DecoderChannel

    private init(pid: pid_t, channel: DecoderChannel, layers: [LayerState]) {
        self.pid = pid
        self.channel = channel
        self.layers = layers
    }

    /// Starts `executable decoder` on the staging directory `staging` with `options` and waits
    /// (at most `timeout`) for it to report its layers. `environment` is empty except in tests
    /// that show the decoder clears what it was given. Throws `io_error` when it cannot be
    /// started or does not answer with a valid ready message (it is killed then).
    package static func start(
        executable: String, staging: String, options: DecoderService.Options,
        environment: [String: String] = [:], timeout: Duration = .seconds(30)
    ) async throws(PushPrepError) -> DecoderProcess {
        let directory = open(staging, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            throw PushPrepError(
                .ioError, "cannot open the staging directory \(staging): \(DecoderChannel.describe(errno))")
        }
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            close(directory)
            throw PushPrepError(.ioError, "cannot make a decoder channel: \(DecoderChannel.describe(errno))")
        }
        var arguments = [
            executable, "decoder", "--address-space", "\(options.limits.addressSpace)", "--cpu-seconds",
            "\(options.limits.cpuSeconds)", "--file-size", "\(options.limits.fileSize)", "--open-files",
            "\(options.limits.openFiles)",
        ]
        for layer in options.skipping.sorted(by: { $0.rawValue < $1.rawValue }) {
            arguments += ["--skip-layer", layer.rawValue]
        }
        if let garbage = options.garbage { arguments += ["--test-garbage", garbage.rawValue] }
        if let garbage = options.garbageReply { arguments += ["--test-garbage-reply", garbage.rawValue] }
        if let marker = options.garbageFor { arguments += ["--test-garbage-for", marker] }
        if options.lying { arguments.append("--test-lie") }
        let spawned = Result { () throws(PushPrepError) in
            try spawn(arguments, channel: ends[1], staging: directory, environment: environment)
        }
        // The decoder's copies are its own: the parent keeps only its end, or it would never
        // see the decoder close the channel.
        close(ends[1])
        close(directory)
        let pid: pid_t
        switch spawned {
        case .success(let started): pid = started
        case .failure(let error):
            close(ends[0])
            throw error
        }
        let channel = DecoderChannel(descriptor: ends[0])
        do throws(PushPrepError) {
            let reply = try await offThread { () throws(PushPrepError) in
                try channel.receive(DecoderReply.self, deadline: .now + timeout)
            }
            switch reply {
            case .ready(let layers): return DecoderProcess(pid: pid, channel: channel, layers: layers)
            case .refused(let why): throw PushPrepError(.ioError, "it could not start: \(why)")
            default: throw PushPrepError(.ioError, "the decoder's first message is not its ready message")
            }
        } catch {
            await DecoderProcess(pid: pid, channel: channel, layers: []).kill()
            throw PushPrepError(.ioError, "decoder process \(pid) is not trusted: \(error.message)")
        }
    }

    /// Sends `request` (with `descriptor` attached, when given) and returns the reply, waiting at
    /// most `timeout`.
    package func request(
        _ request: DecoderRequest, passing descriptor: Int32? = nil, timeout: Duration
    ) async throws(PushPrepError) -> DecoderReply {
        let channel = self.channel
        return try await offThread { () throws(PushPrepError) in
            if let descriptor {
                try channel.send(request, passing: descriptor)
            } else {
                try channel.send(request)
            }
            return try channel.receive(DecoderReply.self, deadline: .now + timeout)
        }
    }

    /// Runs the probes; throws unless the reply holds each probe exactly once.
    package func probes(connectPort: Int, timeout: Duration = .seconds(30)) async throws(PushPrepError) -> [ProbeResult]
    {
        guard case .probes(let results) = try await request(.probe(connectPort: connectPort), timeout: timeout),
            results.map(\.probe).sorted(by: { $0.rawValue < $1.rawValue })
                == SandboxProbe.allCases.sorted(by: { $0.rawValue < $1.rawValue })
        else {
            throw PushPrepError(.ioError, "decoder process \(pid) answered the probes with something else")
        }
        return results
    }

    /// Asks the decoder to exit and waits for it (at most `timeout`, then kills it); returns its
    /// exit status as a shell shows it (128 + the signal when one ended it).
    @discardableResult
    package func finish(timeout: Duration = .seconds(10)) async -> Int32 {
        let channel = self.channel
        _ = try? await offThread { () throws(PushPrepError) in try channel.send(DecoderRequest.exit) }
        let status = await exitStatus(within: timeout)
        close(channel.descriptor)
        return status
    }

    /// Kills the decoder (SIGKILL) and reaps it.
    package func kill() async {
        Glibc.kill(pid, SIGKILL)
        await exitStatus(within: .seconds(10))
        close(channel.descriptor)
    }

    /// Polls for the exit without blocking a thread, every millisecond at first (an exit asked
    /// for comes at once) and then less often, up to every 10 ms; kills the process when `timeout`
    /// passes.
    @discardableResult
    private func exitStatus(within timeout: Duration) async -> Int32 {
        let deadline = ContinuousClock.now + timeout
        var interval: Duration = .milliseconds(1)
        while true {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                let signal = status & 0x7f
                return signal == 0 ? (status >> 8) & 0xff : 128 + signal
            }
            if reaped < 0 { return -1 }  // already reaped
            if ContinuousClock.now >= deadline { Glibc.kill(pid, SIGKILL) }
            try? await Task.sleep(for: interval)
            interval = min(interval * 2, .milliseconds(10))
        }
    }

    /// posix_spawn with the channel as 3, the staging directory as 4, /dev/null as 0 and 1.
    private static func spawn(
        _ arguments: [String], channel: Int32, staging: Int32, environment: [String: String]
    ) throws(PushPrepError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Copies above 4 first, so that neither dup2 overwrites the other's source.
        let high = [channel, staging].map { fcntl($0, F_DUPFD_CLOEXEC, 5) }
        defer { high.forEach { close($0) } }
        guard high.allSatisfy({ $0 >= 5 }) else {
            throw PushPrepError(.ioError, "cannot prepare the decoder's descriptors: \(DecoderChannel.describe(errno))")
        }
        posix_spawn_file_actions_adddup2(&actions, high[0], Confinement.channelDescriptor)
        posix_spawn_file_actions_adddup2(&actions, high[1], Confinement.stagingDescriptor)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard result == 0 else {
            throw PushPrepError(
                .ioError, "cannot start the decoder \(arguments[0]): \(DecoderChannel.describe(result))")
        }
        return pid
    }
}

/// Runs blocking channel work on a thread of its own, not on one of Swift concurrency's.
func offThread<T: Sendable>(
    _ work: @escaping @Sendable () throws(PushPrepError) -> T
) async throws(PushPrepError) -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, PushPrepError>, Never>) in
        Thread.detachNewThread {
            continuation.resume(returning: Result { () throws(PushPrepError) in try work() })
        }
    }
    return try result.get()
}

extension DecoderProcess {
    /// This program's executable, which runs the decoders (`pushprep decoder`).
    package static var ownExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
