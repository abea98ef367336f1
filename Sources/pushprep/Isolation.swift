import ArgumentParser
import Logging
import PushPrep
import PushPrepCore
import PushPrepSandbox

/// Where inputs are decoded (`--isolation`), for `process`, `worker` and `serve`.
enum Isolation: String, ExpressibleByArgument, CaseIterable {
    /// In a pool of confined decoder processes, which hold no secrets and whose crash costs one
    /// attempt.
    case process
    /// In this process, as before the pool existed.
    case none

    /// The help of `--isolation`; `slots` says how many decoders a pool has.
    static func help(slots: String) -> ArgumentHelp {
        ArgumentHelp(
            "Where inputs are decoded: process (in a pool of \(slots) confined decoder processes, which hold no "
                + "secrets and whose crash costs one attempt) or none (in this process).",
            valueName: "process|none")
    }

    /// A pool of `size` decoders whose staging directories are in `directory` (on the file
    /// system of the outputs, which are renamed out of it), for inputs of at most `timeout`
    /// seconds each; nil for `none`. With `startingAll`, every decoder starts now (else the first
    /// does, and the others at their first input). The decoders run `executable` (default: this
    /// program), with a hard address-space limit of `addressSpace` bytes when given, answering
    /// garbage for the sources that contain `garbageFor` (a test mode). A pool that cannot start
    /// is a ``CommandFailure``.
    func decoders(
        size: Int, in directory: String, timeout: Double, startingAll: Bool = false, executable: String? = nil,
        addressSpace: Int? = nil, garbageFor: String? = nil, logger: Logger
    ) async throws -> DecoderPool? {
        guard self == .process else { return nil }
        // The rlimits: the defaults, but CPU time for a whole day, as a decoder lives for many
        // inputs; each input's own bound is its timeout, which the pool enforces.
        var limits = DecoderLimits()
        limits.cpuSeconds = max(86_400, Int(timeout) * 4)
        if let addressSpace { limits.addressSpace = addressSpace }
        var options = DecoderService.Options(limits: limits)
        if let garbageFor {
            options.garbageReply = .malformed
            options.garbageFor = garbageFor
        }
        do {
            let pool = try await DecoderPool.start(
                executable: executable ?? DecoderProcess.ownExecutable, size: size, outputDirectory: directory,
                options: options, startingAll: startingAll, logger: logger)
            // So that an operator sees where inputs are decoded (`--isolation`).
            logger.info("decoding in confined decoder processes", metadata: ["decoders": "\(size)"])
            return pool
        } catch {
            throw CommandFailure(message: "cannot start the decoder processes: \(error.description)")
        }
    }
}
