import CSandboxShims
package import Foundation
package import Logging
package import PushPrep
package import PushPrepCore

/// A pool of long-lived confined decoder processes (``DecoderProcess``), one input at a time
/// each (`--isolation process`). The parent keeps everything but decoding: it opens, checks and
/// hashes each input (``InputFile``) and passes the open descriptor (SCM_RIGHTS) with the
/// settings; the decoder writes the outputs into a directory of its own staging directory made
/// for that input, and answers with the manifest entry. The parent checks the entry (every file
/// it names is a regular file the decoder wrote) and publishes the files into the out directory
/// with a rename each (the staging directories are inside it: same file system); then removes
/// the input's directory, whatever happened.
///
/// Faults stay with their input: a decoder that dies, or sends anything but a valid reply, costs
/// that attempt: it is killed and replaced, and the input tried once more on the fresh decoder; a
/// second such fault fails the input with `decoder_crashed`. A decoder that does not answer by
/// the input's timeout (and a grace of ``timeoutGrace``) is killed and replaced, and the input
/// fails with `timeout`. No partial output is published: only files named by a valid entry are.
///
/// Starting a pool makes this process non-dumpable (PR_SET_DUMPABLE 0) for the rest of its
/// life. Decoders get no PR_SET_PDEATHSIG: it fires when the spawning *thread* exits, and the
/// threads of Swift concurrency's pool come and go; a decoder whose parent died sees its channel
/// close and exits after its current input.
package actor DecoderPool: InputDecoder {
    /// How long past an input's timeout the parent waits for the decoder's own `timeout` answer
    /// before it kills it.
    package static let timeoutGrace: Duration = .seconds(2)

    /// One decoder and its staging directory.
    private final class Slot: Sendable {
        /// The slot's staging directory (the decoder's descriptor 4).
        let staging: String
        /// The decoder, nil until it starts (again, after a fault).
        let decoder: DecoderProcess?

        init(staging: String, decoder: DecoderProcess?) {
            self.staging = staging
            self.decoder = decoder
        }
    }

    /// What one attempt of one input came to.
    private enum Outcome {
        /// A failed entry to keep, told by the decoder or found before it was asked.
        case entry(ManifestEntry)
        /// The decoder's attachment, its files in the input's `directory` (the caller publishes
        /// them, then removes it), made by decoder `pid`.
        case produced(Attachment, directory: String, pid: pid_t)
        /// The decoder died or broke the protocol: why.
        case crashed(String)
        /// The decoder did not answer in time.
        case timedOut
        /// The input's control was stopped (the decoder was killed): its error.
        case stopped(PushPrepError)
    }

    private let executable: String
    private let options: DecoderService.Options
    /// The directory holding the slots' staging directories.
    private let root: String
    private let logger: Logger
    /// Slots no input holds.
    private var idle: [Slot]
    /// Inputs waiting for a slot.
    private var waiting: [CheckedContinuation<Slot, Never>] = []
    /// The decoders processing an input now, by the input's source (tests send them signals).
    private var working: [String: pid_t] = [:]
    /// Names the inputs' directories.
    private var counter = 0
    /// Decoders killed for lying about an input's outputs after their slot was released: the next
    /// input to hold the slot replaces the decoder first, and is not charged for it.
    private var condemned: Set<pid_t> = []

    private init(executable: String, options: DecoderService.Options, root: String, slots: [Slot], logger: Logger) {
        self.executable = executable
        self.options = options
        self.root = root
        self.idle = slots
        self.logger = logger
    }

    /// A pool of `size` decoders of `executable` with `options`, their staging directories in a
    /// new temporary directory of `outputDirectory` (created when missing). Starts the first
    /// decoder and throws when it cannot start (the directory is removed then); the others start
    /// at their slot's first input, or now, side by side, when `startingAll` (a long-lived worker's
    /// pool: the start-up is then no job's time).
    package static func start(
        executable: String = DecoderProcess.ownExecutable, size: Int, outputDirectory: String,
        options: DecoderService.Options, startingAll: Bool = false, logger: Logger
    ) async throws(PushPrepError) -> DecoderPool {
        try Directories.create(outputDirectory, name: "the out directory \(outputDirectory)")
        // The staging of pools whose process was killed.
        AtomicFile.removeStaleTemporaries(in: outputDirectory)
        // The parent holds what the decoders must not reach: a decoder taken over runs as the
        // same user, and /proc/<parent> (environment, memory) is then root's, not that user's.
        let notDumpable = csandboxshims_set_not_dumpable()
        guard notDumpable == 0 else {
            throw PushPrepError(
                .ioError, "cannot make this process non-dumpable: \(DecoderChannel.describe(-notDumpable))")
        }
        // Named as a temporary, so that what lists the out directory skips it.
        let root = "\(outputDirectory)/\(AtomicFile.temporaryPrefix)\(getpid())-decoders-\(UUID().uuidString)"
        guard mkdir(root, 0o700) == 0 else {
            throw PushPrepError(.ioError, "cannot create \(root): \(DecoderChannel.describe(errno))")
        }
        var slots: [Slot] = []
        do throws(PushPrepError) {
            for index in 0..<max(1, size) {
                let staging = "\(root)/\(index)"
                guard mkdir(staging, 0o700) == 0 else {
                    throw PushPrepError(.ioError, "cannot create \(staging): \(DecoderChannel.describe(errno))")
                }
                // The first decoder now, so that a machine where one cannot start fails the run
                // at once; the others at their first input, at the same time as each other, and
                // not at all in a run of fewer inputs.
                let decoder =
                    index == 0
                    ? try await DecoderProcess.start(executable: executable, staging: staging, options: options) : nil
                slots.append(Slot(staging: staging, decoder: decoder))
            }
            if startingAll { slots = try await startAll(slots, executable: executable, options: options) }
        } catch {
            for slot in slots { await slot.decoder?.finish() }
            try? FileManager.default.removeItem(atPath: root)
            throw error
        }
        return DecoderPool(executable: executable, options: options, root: root, slots: slots, logger: logger)
    }

    /// `slots` with a decoder each: those without one get theirs, started side by side; throws
    /// the first failure (the decoders started are ended then).
    private static func startAll(
        _ slots: [Slot], executable: String, options: DecoderService.Options
    ) async throws(PushPrepError) -> [Slot] {
        let started = await withTaskGroup(of: (Int, Result<DecoderProcess, PushPrepError>).self) { group in
            for (index, slot) in slots.enumerated() where slot.decoder == nil {
                group.addTask {
                    do throws(PushPrepError) {
                        let decoder = try await DecoderProcess.start(
                            executable: executable, staging: slot.staging, options: options)
                        return (index, .success(decoder))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var started: [Int: Result<DecoderProcess, PushPrepError>] = [:]
            for await (index, result) in group { started[index] = result }
            return started
        }
        var failure: PushPrepError?
        var result = slots
        for (index, outcome) in started {
            switch outcome {
            case .success(let decoder): result[index] = Slot(staging: slots[index].staging, decoder: decoder)
            case .failure(let error): failure = failure ?? error
            }
        }
        if let failure {
            for case .success(let decoder) in started.values { await decoder.finish() }
            throw failure
        }
        return result
    }

    /// The pid of an idle slot's decoder, if one has started (for the fault tests).
    package func idleDecoder() -> pid_t? { idle.lazy.compactMap(\.decoder?.pid).first }

    /// The decoder processing the input of `source` now, if one is (for the fault tests).
    package func decoder(processing source: String) -> pid_t? { working[source] }

    /// Processes `item` from `file` (opened, checked and hashed by the caller) in a decoder of
    /// the pool; see the type's description. A stop of `control` kills the decoder at work on it
    /// (the slot gets a fresh one) and fails the input with the stop's error, without a retry.
    package nonisolated func decode(
        _ item: InputItem, file: InputFile, settings: ProcessingSettings, outputDirectory: String,
        memory: MemoryBudget?, control: ProcessingControl?
    ) async -> ManifestEntry {
        var entry: ManifestEntry?
        for attempt in 1...2 where entry == nil {
            if let reason = control?.reason {
                entry = failed(item, reason.error)
                break
            }
            var slot = await acquire()
            let outcome = await runAttempt(
                item, file: file, settings: settings, memory: memory, control: control, in: &slot)
            var crash: String?
            var released = false
            switch outcome {
            case .entry(let result):
                entry = result
            case .produced(var attachment, let directory, let pid):
                // The decoder takes its next input while this one's files are checked and published.
                await release(slot)
                released = true
                defer { try? FileManager.default.removeItem(atPath: directory) }
                do {
                    try publish(&attachment, from: directory, into: outputDirectory)
                    entry = .ok(attachment)
                } catch {
                    // A decoder that lied about its outputs is not trusted with another input: it is
                    // killed, and whoever holds its slot next starts a fresh one.
                    Glibc.kill(pid, SIGKILL)
                    await condemn(pid)
                    crash = error.message
                }
            case .stopped(let error):
                slot = await replace(slot)
                entry = failed(item, error)
            case .timedOut:
                slot = await replace(slot)
                entry = failed(item, PushPrepError(.timeout, "the job's timeout of \(Int(settings.timeout)) s passed"))
            case .crashed(let why):
                slot = await replace(slot)
                crash = why
            }
            if !released { await release(slot) }
            if let why = crash {
                logger.warning(
                    "decoder crashed", metadata: ["source": "\(item.source)", "attempt": "\(attempt)", "why": "\(why)"])
                if attempt == 2 {
                    entry = failed(
                        item,
                        PushPrepError(
                            .decoderCrashed, "the decoder process crashed on this input twice (last: \(why))"))
                }
            }
        }
        return entry!
    }

    /// Ends every decoder (asking each to exit) and removes the staging directories. Call it
    /// once the run's inputs are done.
    package func shutdown() async {
        let slots = idle
        idle = []
        await withTaskGroup(of: Void.self) { group in
            for slot in slots { group.addTask { await slot.decoder?.finish() } }
        }
        try? FileManager.default.removeItem(atPath: root)
    }

    /// One attempt: the decoder of `slot` (started first if it has none) processes the input into
    /// a directory of its own, which is removed afterwards, whatever happened.
    private nonisolated func runAttempt(
        _ item: InputItem, file: InputFile, settings: ProcessingSettings, memory: MemoryBudget?,
        control: ProcessingControl?, in slot: inout Slot
    ) async -> Outcome {
        if let running = slot.decoder, await isCondemned(running.pid) {
            slot = await replace(slot)
        }
        let decoder: DecoderProcess
        if let running = slot.decoder {
            decoder = running
        } else {
            do {
                decoder = try await DecoderProcess.start(
                    executable: executable, staging: slot.staging, options: options)
            } catch {
                return .entry(failed(item, error))
            }
            slot = Slot(staging: slot.staging, decoder: decoder)
        }
        let name = await nextInputName()
        let directory = "\(slot.staging)/\(name)"
        guard mkdir(directory, 0o700) == 0 else {
            return .entry(
                failed(item, PushPrepError(.ioError, "cannot create \(directory): \(DecoderChannel.describe(errno))")))
        }
        // Removed here unless the attachment's files are in it: then by the caller, once published.
        var produced = false
        defer { if !produced { try? FileManager.default.removeItem(atPath: directory) } }
        await setWorking(item.source, decoder.pid)
        logger.debug("decoding", metadata: ["source": "\(item.source)", "decoder": "\(decoder.pid)"])
        let request = DecoderRequest.decode(
            source: item.source, path: item.path, size: file.size, sha256: file.sha256, outputDirectory: name,
            settings: settings)
        var deadline = ContinuousClock.now + .seconds(settings.timeout) + Self.timeoutGrace
        // A stop (a cancelled job, its own timeout, a worker's drain running out) kills the decoder:
        // libvips and libav are not interrupted from outside otherwise.
        let pid = decoder.pid
        let observation = control?.onStop { Glibc.kill(pid, SIGKILL) }
        defer { if let observation { control?.removeObserver(observation) } }
        var reply: DecoderReply
        // The input's share of the memory budget, from its request for it until its answer.
        var reservation: MemoryBudget.Reservation?
        defer { reservation?.release() }
        do {
            // The descriptor is the file's: it stays open until the reply is in.
            defer { withExtendedLifetime(file) {} }
            reply = try await decoder.request(
                request, passing: file.descriptor, timeout: deadline - ContinuousClock.now)
            while case .admit(let bytes) = reply {
                guard reservation == nil else {
                    return .crashed("the decoder asked for memory twice for one input")
                }
                let waitStart = ContinuousClock.now
                let admitted = try await admit(bytes, in: memory, control: control)
                reservation = admitted
                // The wait is not the input's own time (nor the job's: see admit).
                deadline += ContinuousClock.now - waitStart
                reply = try await decoder.request(
                    .admitted(alone: admitted?.alone ?? false), timeout: deadline - ContinuousClock.now)
            }
        } catch {
            await setWorking(item.source, nil)
            if let reason = control?.reason { return .stopped(reason.error) }
            return ContinuousClock.now >= deadline ? .timedOut : .crashed(error.message)
        }
        await setWorking(item.source, nil)
        switch reply {
        case .processed(.failed(var failure)):
            // Logged by the decoder; the source is the parent's.
            failure.source = item.source
            return .entry(.failed(failure))
        case .processed(.ok(var attachment)):
            attachment.source = item.source
            produced = true
            return .produced(attachment, directory: directory, pid: decoder.pid)
        case .refused(let why):
            return .entry(failed(item, PushPrepError(.ioError, "the decoder refused the input: \(why)")))
        case .ready, .probes, .admit:
            return .crashed("the decoder answered a decode request with something else")
        }
    }

    /// Reserves a decoder's request for `bytes` in `budget` (none: nothing to reserve), waiting on
    /// a thread of its own, with the job's timeout clock stopped meanwhile; throws the stop's
    /// error when `control` is stopped first.
    private nonisolated func admit(
        _ bytes: Int, in budget: MemoryBudget?, control: ProcessingControl?
    ) async throws(PushPrepError) -> MemoryBudget.Reservation? {
        guard let budget else { return nil }
        return try await offThread { () throws(PushPrepError) in
            guard let control else { return try budget.reserve(bytes, control: nil) }
            return try control.excludingFromTimeout { () throws(PushPrepError) in
                try budget.reserve(bytes, control: control)
            }
        }
    }

    /// Publishes the files `attachment` names in the input's `directory` into `outputDirectory`:
    /// first reads and checks every one (``AtomicFile/readUntrusted(_:maxBytes:declared:)``: a
    /// plain name, a regular file, within Apple's limit for its kind, the size and SHA-256 the
    /// entry declares; a poster's entry declares no hash: it is bounded only), then writes this
    /// process's own copies, the output last, as the in-process path writes them (an identical
    /// file already there is kept, and the entry's operation says so). Throws, having published
    /// nothing, when any file fails its check: the decoder is then not trusted.
    private nonisolated func publish(
        _ attachment: inout Attachment, from directory: String, into outputDirectory: String
    ) throws(PushPrepError) {
        typealias Declared = (bytes: Int, sha256: String)
        var files: [(name: String, maxBytes: Int, declared: Declared?)] = []
        if let poster = attachment.poster { files.append((poster.file, AppleLimits.imageBytes, nil)) }
        for (_, rendition) in attachment.renditions.all {
            files.append((rendition.file, AppleLimits.imageBytes, (rendition.bytes, rendition.sha256)))
        }
        files.append(
            (attachment.file, AppleLimits.maxBytes(for: attachment.kind), (attachment.bytes, attachment.sha256)))
        var checked: [(name: String, bytes: [UInt8])] = []
        for (name, maxBytes, declared) in files {
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
                throw PushPrepError(.ioError, "the decoder named an output \(name), not a plain name")
            }
            checked.append(
                (name, try AtomicFile.readUntrusted("\(directory)/\(name)", maxBytes: maxBytes, declared: declared)))
        }
        for (name, bytes) in checked {
            let outcome = try AtomicFile.write(bytes, to: "\(outputDirectory)/\(name)")
            if outcome == .reused,
                let index = attachment.operations.firstIndex(of: AtomicFile.Outcome.written.operation(name))
            {
                attachment.operations[index] = outcome.operation(name)
            }
        }
    }

    /// The failed entry for `item`, logged.
    private nonisolated func failed(_ item: InputItem, _ error: PushPrepError) -> ManifestEntry {
        logger.info(
            "failed", metadata: ["source": "\(item.source)", "code": "\(error.code)", "error": "\(error.message)"])
        return .failed(Failure(source: item.source, error: error))
    }

    /// Kills the decoder of `slot` (reaping it) and returns the slot without one: the next
    /// attempt starts a fresh decoder.
    private nonisolated func replace(_ slot: Slot) async -> Slot {
        await slot.decoder?.kill()
        return Slot(staging: slot.staging, decoder: nil)
    }

    /// A slot, once one is idle.
    private func acquire() async -> Slot {
        if let slot = idle.popLast() { return slot }
        return await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives `slot` to the next waiting input, or back to the idle ones.
    private func release(_ slot: Slot) {
        if waiting.isEmpty {
            idle.append(slot)
        } else {
            waiting.removeFirst().resume(returning: slot)
        }
    }

    /// Marks decoder `pid` as killed for lying (see ``condemned``).
    private func condemn(_ pid: pid_t) { condemned.insert(pid) }

    /// Whether decoder `pid` was killed for lying; forgets it (its slot is about to replace it).
    private func isCondemned(_ pid: pid_t) -> Bool { condemned.remove(pid) != nil }

    /// Records the decoder processing the input of `source` (nil: none now).
    private func setWorking(_ source: String, _ pid: pid_t?) { working[source] = pid }

    /// A new name for an input's directory.
    private func nextInputName() -> String {
        counter += 1
        return "input-\(counter)"
    }
}
