import CSandboxShims
import Dispatch
import Foundation
package import Logging
import PushPrep
import PushPrepCore
import PushPrepMedia
import PushPrepRemote
import Synchronization

/// The decoder process's side (`pushprep decoder`, hidden): it confines itself, says so on its
/// channel, then answers requests one at a time until it is asked to exit or its parent closes
/// the channel. It runs on the process's main thread, which must still be its only thread (see
/// ``Confinement``); the pipeline's own threads start later, inside the confinement.
package enum DecoderService {
    /// A decoder's options, from its command line.
    package struct Options: Sendable {
        /// The rlimits it sets on itself.
        package var limits: DecoderLimits
        /// Layers not to apply: tests only, to show which layer blocks a probe.
        package var skipping: Set<SandboxLayer>
        /// Test mode: send this instead of the ready message, then wait for the channel to close.
        package var garbage: Garbage? = nil
        /// Test mode: answer each ``DecoderRequest/decode(source:path:size:sha256:outputDirectory:settings:)``
        /// with this instead of a reply, after decoding (its outputs are in the staging directory).
        package var garbageReply: Garbage? = nil
        /// With `garbageReply`: only for inputs whose source contains this (nil: every input).
        package var garbageFor: String? = nil
        /// Test mode: declare a wrong SHA-256 for each output (its file is as written), as a
        /// decoder taken over could, to have its parent publish something else.
        package var lying = false

        /// Options for a decoder with `limits` and every layer but `skipping`, in no test mode.
        package init(limits: DecoderLimits, skipping: Set<SandboxLayer> = []) {
            self.limits = limits
            self.skipping = skipping
        }
    }

    /// What a decoder in the garbage test mode writes on its channel: a length header past
    /// ``DecoderChannel/maximumFrame`` (`oversized`), a frame of a valid length whose bytes are
    /// no message (`malformed`), or half a frame before it closes the channel (`truncated`).
    package enum Garbage: String, CaseIterable, Sendable, Codable {
        case oversized, malformed, truncated

        /// The bytes.
        var bytes: Data {
            switch self {
            case .oversized: Data([0xFF, 0xFF, 0xFF, 0xF0]) + Data("garbage".utf8)
            case .malformed: Data([0, 0, 0, 9]) + Data("{\"ready\":".utf8)
            case .truncated: Data([0, 0, 0, 200]) + Data("{\"ready\":[".utf8)
            }
        }
    }

    /// Runs the decoder on descriptor 3 (the channel) and 4 (the staging directory); returns its
    /// exit status: 0 after an exit request or the parent's hang-up, 70 when it cannot confine
    /// itself (the reason on standard error and, as ``DecoderReply/refused(_:)``, on the channel).
    package static func run(_ options: Options, logger: Logger) -> Int32 {
        let channel = DecoderChannel(descriptor: Confinement.channelDescriptor)
        dieOnFaults()
        // A long-lived process: its threads' freed memory kept in few arenas (see FreedMemory).
        FreedMemory.limitArenas(environment: [:])
        let layers: [LayerState]
        do {
            layers = try Confinement.apply(limits: options.limits, skipping: options.skipping)
        } catch {
            // Said on the channel too, so that the parent reports why (a layer it cannot apply).
            logger.error("\(error.message)")
            try? channel.send(DecoderReply.refused(error.message))
            return 70
        }
        if let garbage = options.garbage {
            try? channel.write(garbage.bytes)
            if garbage == .truncated { return 0 }
            _ = try? channel.receive(DecoderRequest.self, deadline: .now + .seconds(60))
            return 0
        }
        // Its outputs are staging: the parent reads them back and flushes its own copies.
        AtomicFile.stopFlushing()
        var session: ProcessingSession?
        defer { if let session { wait { await session.shutdown() } } }
        do {
            try channel.send(DecoderReply.ready(layers))
            // Warm while the parent opens and hashes the first input: the session and libvips.
            session = try makeSession(channel, logger: logger)
            while true {
                // Idle until the next request, however long; a parent that dies closes the channel.
                let (request, descriptor) = try channel.receiveWithDescriptor(
                    DecoderRequest.self, deadline: .now + .seconds(366 * 86400))
                // Only a decode request takes a descriptor; one sent with anything else is closed.
                if let descriptor, !request.takesDescriptor { close(descriptor) }
                switch request {
                case .exit:
                    return 0
                case .admitted:
                    try channel.send(DecoderReply.refused("memory was admitted that no input asked for"))
                case .probe(let port):
                    // The staging directory is the working directory: a probe writes next to it.
                    let results = SandboxProbe.runAll(
                        ProbeContext(
                            stagingPath: FileManager.default.currentDirectoryPath, connectPort: port,
                            addressSpace: options.limits.addressSpace,
                            landlock: layers.contains { $0.layer == .landlock && $0.applied }))
                    try channel.send(DecoderReply.probes(results))
                case .process(let input, let outputDirectory, let settings):
                    guard isPlainName(input), isPlainName(outputDirectory) else {
                        try channel.send(DecoderReply.refused("\(input) or \(outputDirectory) is not a plain name"))
                        continue
                    }
                    try channel.send(
                        process(input, into: outputDirectory, settings: settings, session: session!))
                case .decode(let source, let path, let size, let sha256, let outputDirectory, let settings):
                    guard let descriptor else {
                        try channel.send(DecoderReply.refused("a decode request came without its input"))
                        continue
                    }
                    guard isPlainName(outputDirectory) else {
                        close(descriptor)
                        try channel.send(DecoderReply.refused("\(outputDirectory) is not a plain name"))
                        continue
                    }
                    InputCPULimit.set(timeout: settings.timeout)
                    let reply = InputMemoryLimit.naming(
                        decode(
                            InputItem(source: source, path: path), descriptor: descriptor, size: size,
                            sha256: sha256, into: outputDirectory, settings: settings, session: session!))
                    // The next input gets a limit of its own. (What a big input freed went back to
                    // the system as its admission ended, before the answer releases its budget:
                    // FreedMemory.bigInputEnded. Trimming after every input cost 3.5% more CPU on
                    // the photo bench.)
                    InputMemoryLimit.lift()
                    InputCPULimit.lift()
                    if options.lying, case .processed(.ok(var attachment)) = reply {
                        attachment.sha256 = String(repeating: "0", count: 64)
                        try channel.send(DecoderReply.processed(.ok(attachment)))
                    } else if let garbage = options.garbageReply,
                        options.garbageFor.map({ source.contains($0) }) ?? true
                    {
                        try channel.write(garbage.bytes)
                        if garbage == .truncated { return 0 }
                    } else {
                        try channel.send(reply)
                    }
                }
            }
        } catch {
            logger.debug("decoder channel closed: \(error.message)")
            return 0
        }
    }

    /// The decoder's processing session, made once it is ready: one thread; its inputs' memory
    /// is reserved in the parent's budget, asked for on `channel` (while an input is processed
    /// the main thread waits for it, so the channel is the processing thread's).
    private static func makeSession(_ channel: DecoderChannel, logger: Logger) throws(PushPrepError)
        -> ProcessingSession
    {
        let budget = MemoryBudget { bytes throws(PushPrepError) in
            try channel.send(DecoderReply.admit(bytes: bytes))
            // However long the parent's budget makes the input wait: the parent bounds it.
            let answer = try channel.receive(DecoderRequest.self, deadline: .now + .seconds(366 * 86400))
            guard case .admitted(let alone) = answer else {
                throw PushPrepError(.ioError, "the parent answered a request for memory with something else")
            }
            InputMemoryLimit.set(estimate: bytes)
            return alone
        }
        return try ProcessingSession(threads: 1, remote: RemoteSettings(), memory: budget, logger: logger)
    }

    /// Processes the input its parent passed as `descriptor` (owned from here on) into
    /// `outputDirectory`, relative to the working directory (the staging directory).
    private static func decode(
        _ item: InputItem, descriptor: Int32, size: Int, sha256: String, into outputDirectory: String,
        settings: ProcessingSettings, session: ProcessingSession
    ) -> DecoderReply {
        let validated: ProcessingSettings.Validated
        let file: InputFile
        do {
            validated = try settings.validated()
            file = try InputFile.adopting(descriptor: descriptor, path: item.path, size: size, sha256: sha256) {
                MediaDetector.detect($0) == .bmp
            }
        } catch {
            return .refused(error.description)
        }
        return .processed(
            wait { await session.process(item, file: file, settings: validated, outputDirectory: outputDirectory) })
    }

    /// Processes one staged input, relative to the working directory (the staging directory).
    private static func process(
        _ input: String, into outputDirectory: String, settings: ProcessingSettings, session: ProcessingSession
    ) -> DecoderReply {
        let validated: ProcessingSettings.Validated
        do {
            validated = try settings.validated()
        } catch {
            return .refused(error.description)
        }
        let entry = wait {
            await session.process(
                InputItem(source: input, path: input), settings: validated, outputDirectory: outputDirectory,
                control: nil)
        }
        return .processed(entry)
    }

    /// Gives the fault signals their default action back: a decoder that faults dies at once, and
    /// its parent sees it. Swift's runtime catches them to print a backtrace, which in a decoder
    /// cannot run (no exec) and, for a signal sent with kill(2), then returns: the decoder would
    /// carry on after SIGSEGV.
    private static func dieOnFaults() {
        for fault in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP] { signal(fault, SIG_DFL) }
    }

    /// Whether `name` names an entry of the working directory itself.
    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0")
    }

    /// Runs `work` on Swift concurrency's pool and blocks the calling thread (the decoder's main
    /// thread, which has nothing else to do) until it is done.
    private static func wait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        Task {
            let value = await work()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }
}

extension DecoderRequest {
    /// Whether the request comes with a descriptor (SCM_RIGHTS).
    var takesDescriptor: Bool {
        if case .decode = self { return true }
        return false
    }
}

/// The address space one input may use in a decoder: from its memory estimate (the one the
/// parent's budget admitted) plus headroom, as a soft limit under the decoder's hard one, set
/// once the input is admitted and lifted when it is done. An input whose decoding needs far
/// more than its header said (a crafted one) fails there, with `resource_exhausted`, instead of
/// growing up to the decoder's whole limit.
enum InputMemoryLimit {
    /// Room above the estimate: the estimate may be 30% under the real peak, and address space
    /// grows by more than resident memory does (thread stacks, the allocator's reservations).
    static let estimateFactor = 3
    static let headroom = 512 << 20

    /// The soft limit in force for this input, nil when none is.
    private static let current = Mutex<(limit: Int, estimate: Int)?>(nil)

    /// Sets the soft limit for an input of `estimate` bytes: the address space now, plus
    /// ``estimateFactor`` times the estimate, plus ``headroom`` (at most the hard limit).
    static func set(estimate: Int) {
        guard let now = addressSpaceNow() else { return }
        // Saturating: an estimate near Int.max (a header's claim) leaves the hard limit in force.
        let (scaled, overflow) = max(0, estimate).multipliedReportingOverflow(by: estimateFactor)
        let (room, over) = scaled.addingReportingOverflow(headroom)
        let (sum, beyond) = now.addingReportingOverflow(room)
        let limit = overflow || over || beyond ? Int.max : sum
        guard limit > now, csandboxshims_set_soft_limit(0, UInt64(limit)) == 0 else { return }
        current.withLock { $0 = (limit, estimate) }
    }

    /// Back to the hard limit.
    static func lift() {
        current.withLock { $0 = nil }
        _ = csandboxshims_set_soft_limit(0, UInt64.max)
    }

    /// `reply` with a failure that libvips reported as an allocation refused ("out of memory")
    /// told as `resource_exhausted`: a decoder runs one input at a time, so the lines of libvips'
    /// error buffer are this input's (in a shared process they may be another's, which is why
    /// the in-process path does not read them).
    static func naming(_ reply: DecoderReply) -> DecoderReply {
        guard case .processed(.failed(let failure)) = reply, failure.error.code == .corruptInput,
            failure.error.message.contains("out of memory")
        else { return reply }
        let limit = current.withLock { $0 }
        let within =
            limit.map {
                "the \($0.limit >> 20) MiB of address space allowed for an estimate of \($0.estimate >> 20) MiB"
            }
            ?? "the decoder's address-space limit"
        return .processed(
            .failed(
                Failure(
                    source: failure.source,
                    error: PushPrepError(
                        .resourceExhausted, "decoding needed more memory than \(within): \(failure.error.message)"))))
    }

    /// The process's address space now (`/proc/self/statm`), in bytes.
    private static func addressSpaceNow() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = statm.split(separator: " ").first.flatMap({ Int($0) })
        else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// The CPU time one input may use in a decoder: from its timeout, as a soft limit under the
/// decoder's hard one (a day: it lives for many inputs), set as the input comes and lifted
/// when it is done. The parent's own deadline (the timeout and 2 s of wall time) comes first on
/// a machine of a few cores; this bounds a decoder whose parent cannot stop it.
enum InputCPULimit {
    /// CPU seconds per second of the timeout (the decoder's threads run side by side), and a
    /// floor.
    static let timeoutFactor = 4
    static let floor = 10

    /// Sets the soft limit: the CPU time used so far, plus ``timeoutFactor`` times `timeout`,
    /// plus ``floor`` seconds.
    static func set(timeout: Double) {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return }
        let used = Int(usage.ru_utime.tv_sec) + Int(usage.ru_stime.tv_sec) + 1
        let allowed = timeout.isFinite ? Int(min(timeout, 86_400)) * timeoutFactor : 86_400
        _ = csandboxshims_set_soft_limit(1, UInt64(used + allowed + floor))
    }

    /// Back to the hard limit.
    static func lift() {
        _ = csandboxshims_set_soft_limit(1, UInt64.max)
    }
}
