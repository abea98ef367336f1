import ArgumentParser
import PushPrepCommandLine
import PushPrepSandbox

/// `pushprep decoder` (hidden): a confined decoder process, started by its parent (for now
/// `sandbox-check`; the decoder pool later) with its channel as descriptor 3 and the staging
/// directory as descriptor 4. Synchronous on purpose: it confines itself on the main thread
/// before any other thread exists (see Confinement).
struct DecoderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decoder",
        abstract: "A confined decoder process (started by pushprep itself).",
        shouldDisplay: false
    )

    @Option(name: .long, help: "RLIMIT_AS, bytes.")
    var addressSpace: Int = DecoderLimits().addressSpace

    @Option(name: .long, help: "RLIMIT_CPU, seconds.")
    var cpuSeconds: Int = DecoderLimits().cpuSeconds

    @Option(name: .long, help: "RLIMIT_FSIZE, bytes.")
    var fileSize: Int = DecoderLimits().fileSize

    @Option(name: .long, help: "RLIMIT_NOFILE.")
    var openFiles: Int = DecoderLimits().openFiles

    @Option(name: .long, help: "Tests only: a layer not to apply (repeatable).")
    var skipLayer: [String] = []

    @Option(name: .long, help: "Tests only: write this garbage on the channel (oversized, malformed, truncated).")
    var testGarbage: String?

    @Option(
        name: .long, help: "Tests only: answer each decode request with this garbage (oversized, malformed, truncated)."
    )
    var testGarbageReply: String?

    @Option(name: .long, help: "Tests only: with --test-garbage-reply, only for sources that contain this.")
    var testGarbageFor: String?

    @Flag(name: .long, help: "Tests only: declare a wrong SHA-256 for each output (a decoder that lies).")
    var testLie = false

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard [addressSpace, cpuSeconds, fileSize, openFiles].allSatisfy({ $0 > 0 }) else {
            throw ValidationError("the limits must be positive")
        }
        for name in skipLayer where SandboxLayer(rawValue: name) == nil {
            throw ValidationError("--skip-layer: no layer \(name)")
        }
        for garbage in [testGarbage, testGarbageReply].compactMap(\.self)
        where DecoderService.Garbage(rawValue: garbage) == nil {
            throw ValidationError("--test-garbage, --test-garbage-reply: oversized, malformed or truncated")
        }
    }

    func run() throws {
        var options = DecoderService.Options(
            limits: DecoderLimits(
                addressSpace: addressSpace, cpuSeconds: cpuSeconds, fileSize: fileSize, openFiles: openFiles),
            skipping: Set(skipLayer.compactMap(SandboxLayer.init(rawValue:))))
        options.garbage = testGarbage.flatMap(DecoderService.Garbage.init(rawValue:))
        options.garbageReply = testGarbageReply.flatMap(DecoderService.Garbage.init(rawValue:))
        options.garbageFor = testGarbageFor
        options.lying = testLie
        let status = DecoderService.run(options, logger: logging.makeLogger(label: "pushprep-decoder"))
        if status != 0 { throw ExitCode(status) }
    }
}
