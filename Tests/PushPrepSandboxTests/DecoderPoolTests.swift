import CSandboxShims
import Foundation
import Logging
import PushPrep
import PushPrepCore
import PushPrepSandbox
import PushPrepTestSupport
import Testing

/// The decoder pool (`--isolation process`) on real files made with vips and ffmpeg, with real
/// decoder processes of the built `pushprep`: the same outputs as in process; and faults that
/// stay with their input: a decoder killed mid-input (once: retried on a fresh decoder; twice:
/// `decoder_crashed`), stopped (`timeout`), or answering garbage (crashed), while the run's
/// other inputs finish normally, nothing partial is published and no staging directory is left.
@Suite(.serialized)
struct DecoderPoolTests {
    static let canMake = TestTools.programAvailable("ffmpeg") && TestTools.programAvailable("vips")

    /// A directory with two photos, a sound and a movie of `seconds` (long enough to be caught
    /// mid-transcode), and an out directory.
    struct Inputs {
        let directory: URL
        var out: String { directory.appendingPathComponent("out").path }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func item(_ name: String) -> InputItem { InputItem(source: path(name), path: path(name)) }

        static func make(movieSeconds: Int = 2) async throws -> Inputs {
            let directory = try TestTools.temporaryDirectory()
            try await ChildProcessTools.blocking {
                try TestTools.vips(
                    "gaussnoise", directory.appendingPathComponent("a.jpg").path, "900", "700", "--mean", "128")
                try TestTools.vips(
                    "gaussnoise", directory.appendingPathComponent("b.png").path, "640", "480", "--mean", "90")
                try TestTools.ffmpeg(
                    "-v", "error", "-f", "lavfi", "-i", "sine=duration=2",
                    directory.appendingPathComponent("s.wav").path)
                try TestTools.ffmpeg(
                    "-v", "error", "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=25:duration=\(movieSeconds)", "-f",
                    "lavfi", "-i", "sine=duration=\(movieSeconds)", "-c:v", "mpeg4", "-q:v", "4", "-c:a", "aac",
                    "-shortest", directory.appendingPathComponent("m.mp4").path)
            }
            return Inputs(directory: directory)
        }

        /// The out directory's entries (the pool's staging directory included while it lives).
        func outEntries() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).sorted()
        }
    }

    static let logger = Logger(label: "pushprep-tests.decoder-pool")

    /// A pool of `size` decoders writing into `inputs`' out directory.
    static func pool(
        _ inputs: Inputs, size: Int, options: DecoderService.Options = DecoderService.Options(limits: DecoderLimits())
    ) async throws -> DecoderPool {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        return try await DecoderPool.start(
            executable: binary.path, size: size, outputDirectory: inputs.out, options: options, logger: logger)
    }

    /// The run of `names` through `pool` (nil: in process) with `settings`.
    static func run(
        _ inputs: Inputs, _ names: [String], pool: DecoderPool?, settings: ProcessingSettings = ProcessingSettings(),
        out: String? = nil
    ) async throws -> [ManifestEntry] {
        var processor = Processor(settings: settings, outputDirectory: out ?? inputs.out, logger: logger)
        processor.decoders = pool
        return try await processor.run(names.map(inputs.item)).attachments
    }

    /// Waits until a decoder of `pool` processes `source` and is not `other`; returns its pid.
    static func decoder(of pool: DecoderPool, processing source: String, not other: pid_t? = nil) async throws
        -> pid_t
    {
        for _ in 0..<6000 {
            if let pid = await pool.decoder(processing: source), pid != other { return pid }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestTools.Failure(description: "no decoder took \(source)")
    }

    @Test(
        "the pool's outputs and manifest entries are the in-process ones",
        .enabled(if: canMake, "needs ffmpeg and vips"))
    func sameAsInProcess() async throws {
        let inputs = try await Inputs.make()
        defer { TestTools.removeDirectory(inputs.directory) }
        let names = ["a.jpg", "m.mp4", "b.png", "s.wav"]
        let pool = try await Self.pool(inputs, size: 2)
        let isolated = try await Self.run(inputs, names, pool: pool)
        #expect(inputs.outEntries().contains { $0.hasPrefix(AtomicFile.temporaryPrefix) }, "the pool's staging")
        #expect(csandboxshims_dumpable() == 0, "the parent of a pool is not dumpable")
        let inProcessOut = inputs.directory.appendingPathComponent("in-process").path
        let inProcess = try await Self.run(inputs, names, pool: nil, out: inProcessOut)
        #expect(isolated == inProcess)
        #expect(isolated.allSatisfy { $0.failure == nil }, "\(isolated)")
        let files = inputs.outEntries().filter { !$0.hasPrefix(AtomicFile.temporaryPrefix) }
        #expect(files == ((try? FileManager.default.contentsOfDirectory(atPath: inProcessOut)) ?? []).sorted())
        for name in files {
            #expect(
                FileManager.default.contents(atPath: "\(inputs.out)/\(name)")
                    == FileManager.default.contents(atPath: "\(inProcessOut)/\(name)"), "\(name) differs")
        }
        // Again into the same out directory: the outputs there are reused, and the entries say so
        // as the in-process path's do (its own second run is not compared: CI41 once saw x264 encode
        // the same movie 16 bytes differently in process, under the load of three test passes).
        let isolatedAgain = try await Self.run(inputs, names, pool: pool)
        await pool.shutdown()
        let reused = isolated.map { entry -> ManifestEntry in
            guard case .ok(var attachment) = entry else { return entry }
            let names =
                [attachment.file] + [attachment.poster?.file].compactMap(\.self)
                + attachment.renditions.all.map(\.rendition.file)
            attachment.operations = attachment.operations.map { operation in
                names.first { AtomicFile.Outcome.written.operation($0) == operation }
                    .map { AtomicFile.Outcome.reused.operation($0) } ?? operation
            }
            return .ok(attachment)
        }
        #expect(isolatedAgain == reused)
        #expect(
            isolatedAgain.allSatisfy {
                $0.attachment?.operations.contains { $0.hasPrefix("reused identical") } == true
            },
            "\(isolatedAgain)")
        let after = inputs.outEntries()
        #expect(after == files, "a staging directory is left, or a file more: \(after)")
    }

    @Test(
        "a decoder killed mid-input costs that attempt: the input is retried on a fresh decoder",
        .enabled(if: canMake, "needs ffmpeg and vips"))
    func killedOnce() async throws {
        let inputs = try await Inputs.make(movieSeconds: 12)
        defer { TestTools.removeDirectory(inputs.directory) }
        let pool = try await Self.pool(inputs, size: 2)
        let run = Task { try await Self.run(inputs, ["m.mp4", "a.jpg", "b.png", "s.wav"], pool: pool) }
        let first = try await Self.decoder(of: pool, processing: inputs.path("m.mp4"))
        kill(first, SIGKILL)
        let retried = try await Self.decoder(of: pool, processing: inputs.path("m.mp4"), not: first)
        #expect(retried != first)
        let entries = try await run.value
        await pool.shutdown()
        #expect(entries.allSatisfy { $0.failure == nil }, "\(entries)")
        #expect(!inputs.outEntries().contains { $0.hasPrefix(AtomicFile.temporaryPrefix) })
    }

    @Test(
        "an input that crashes its decoder twice fails with decoder_crashed; the others finish; the pool goes on",
        .enabled(if: canMake, "needs ffmpeg and vips"))
    func killedTwice() async throws {
        let inputs = try await Inputs.make(movieSeconds: 12)
        defer { TestTools.removeDirectory(inputs.directory) }
        let pool = try await Self.pool(inputs, size: 2)
        let run = Task { try await Self.run(inputs, ["m.mp4", "a.jpg", "b.png", "s.wav"], pool: pool) }
        let first = try await Self.decoder(of: pool, processing: inputs.path("m.mp4"))
        kill(first, SIGSEGV)
        let second = try await Self.decoder(of: pool, processing: inputs.path("m.mp4"), not: first)
        kill(second, SIGKILL)
        let entries = try await run.value
        #expect(entries[0].failure?.error.code == .decoderCrashed, "\(entries[0])")
        #expect(entries.dropFirst().allSatisfy { $0.failure == nil }, "\(entries)")
        #expect(!inputs.outEntries().contains { $0.hasPrefix("vid-") }, "a movie was published: \(inputs.outEntries())")
        // The pool replaced both: the same movie goes through when nobody kills its decoder.
        let again = try await Self.run(inputs, ["m.mp4"], pool: pool)
        await pool.shutdown()
        #expect(again[0].failure == nil, "\(again)")
        #expect(!inputs.outEntries().contains { $0.hasPrefix(AtomicFile.temporaryPrefix) })
    }

    @Test(
        "a decoder that hangs (SIGSTOP) is killed at the input's timeout",
        .enabled(if: canMake, "needs ffmpeg and vips"))
    func stopped() async throws {
        let inputs = try await Inputs.make(movieSeconds: 12)
        defer { TestTools.removeDirectory(inputs.directory) }
        let pool = try await Self.pool(inputs, size: 1)
        var settings = ProcessingSettings()
        settings.timeout = 3
        let run = Task { try await Self.run(inputs, ["m.mp4", "a.jpg"], pool: pool, settings: settings) }
        let stopped = try await Self.decoder(of: pool, processing: inputs.path("m.mp4"))
        kill(stopped, SIGSTOP)
        let entries = try await run.value
        await pool.shutdown()
        #expect(entries[0].failure?.error.code == .timeout, "\(entries[0])")
        #expect(entries[1].failure == nil, "the next input, on a fresh decoder: \(entries[1])")
        #expect(kill(stopped, 0) == -1 && errno == ESRCH, "the stopped decoder was killed and reaped")
        #expect(!inputs.outEntries().contains { $0.hasPrefix("vid-") || $0.hasPrefix(AtomicFile.temporaryPrefix) })
    }

    @Test(
        "a staging directory left by a parent that died is removed by the next run into that out directory",
        .enabled(if: canMake, "needs ffmpeg and vips"))
    func staleStagingIsSwept() async throws {
        let inputs = try await Inputs.make()
        defer { TestTools.removeDirectory(inputs.directory) }
        // A pid that no longer runs: a child that exited and was reaped.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        let dead = try await ChildProcessTools.blocking {
            child.waitUntilExit()
            return child.processIdentifier
        }
        let stale = "\(inputs.out)/\(AtomicFile.temporaryPrefix)\(dead)-decoders-left"
        try FileManager.default.createDirectory(atPath: "\(stale)/0/input-1", withIntermediateDirectories: true)
        try Data("half an output".utf8).write(to: URL(fileURLWithPath: "\(stale)/0/input-1/img-x.jpg"))
        let pool = try await Self.pool(inputs, size: 1)
        let entries = try await Self.run(inputs, ["a.jpg"], pool: pool)
        await pool.shutdown()
        #expect(entries[0].failure == nil, "\(entries)")
        #expect(!FileManager.default.fileExists(atPath: stale), "left: \(inputs.outEntries())")
        #expect(!inputs.outEntries().contains { $0.hasPrefix(AtomicFile.temporaryPrefix) })
    }

    @Test(
        "a decoder that answers garbage is treated as crashed; nothing it wrote is published",
        .enabled(if: canMake, "needs ffmpeg and vips"),
        arguments: DecoderService.Garbage.allCases)
    func garbage(_ garbage: DecoderService.Garbage) async throws {
        let inputs = try await Inputs.make()
        defer { TestTools.removeDirectory(inputs.directory) }
        var options = DecoderService.Options(limits: DecoderLimits())
        options.garbageReply = garbage
        let pool = try await Self.pool(inputs, size: 1, options: options)
        let entries = try await Self.run(inputs, ["a.jpg"], pool: pool)
        await pool.shutdown()
        #expect(entries[0].failure?.error.code == .decoderCrashed, "\(entries[0])")
        #expect(inputs.outEntries() == [], "published or left: \(inputs.outEntries())")
    }

    @Test(
        "a decoder that lies about its outputs' SHA-256 is killed; nothing it wrote is published",
        .enabled(if: canMake, "needs ffmpeg and vips"))
    func lyingDecoder() async throws {
        let inputs = try await Inputs.make()
        defer { TestTools.removeDirectory(inputs.directory) }
        var options = DecoderService.Options(limits: DecoderLimits())
        options.lying = true
        let pool = try await Self.pool(inputs, size: 1, options: options)
        let first = try #require(await pool.idleDecoder(), "the pool started its first decoder")
        let entries = try await Self.run(inputs, ["a.jpg"], pool: pool)
        await pool.shutdown()
        #expect(entries[0].failure?.error.code == .decoderCrashed, "\(entries[0])")
        #expect(entries[0].failure?.error.message.contains("SHA-256") == true, "\(entries[0])")
        #expect(inputs.outEntries() == [], "published or left: \(inputs.outEntries())")
        #expect(kill(first, 0) == -1 && errno == ESRCH, "the decoder that lied was killed and reaped")
    }
}

extension DecoderPoolTests {
    /// This process's resident memory, in bytes (`/proc/self/statm`).
    static func residentNow() throws -> Int {
        let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let pages = try #require(statm.split(separator: " ").dropFirst().first.flatMap { Int($0) })
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test(
        "a decoder that runs out of its memory limit ends its input with resource_exhausted; the parent's memory stays flat",
        .enabled(if: canMake, "needs ffmpeg and vips"))
    func overMemoryLimit() async throws {
        let inputs = try await Inputs.make()
        defer { TestTools.removeDirectory(inputs.directory) }
        // An interlaced PNG is decoded whole: 9000x9000x3 bytes, 231 MiB in one block, which a
        // decoder allowed 600 MiB of address space (about 480 of them its own baseline) cannot get.
        try await ChildProcessTools.blocking {
            try TestTools.vips("black", inputs.path("big.png") + "[interlace]", "9000", "9000", "--bands", "3")
        }
        let pool = try await Self.pool(
            inputs, size: 1, options: DecoderService.Options(limits: DecoderLimits(addressSpace: 600 << 20)))
        let before = try Self.residentNow()
        let entries = try await Self.run(inputs, ["big.png", "a.jpg", "big.png", "b.png"], pool: pool)
        let after = try Self.residentNow()
        await pool.shutdown()
        for index in [0, 2] {
            #expect(entries[index].failure?.error.code == .resourceExhausted, "\(entries[index])")
            #expect(entries[index].failure?.error.message.contains("out of memory") == true, "\(entries[index])")
        }
        #expect(entries[1].failure == nil && entries[3].failure == nil, "the same decoder goes on: \(entries)")
        // The 231 MiB were the decoder's to fail to get, never this process's.
        #expect(after - before < 32 << 20, "the parent grew \((after - before) >> 20) MiB")
        #expect(!inputs.outEntries().contains { $0.hasPrefix(AtomicFile.temporaryPrefix) })
    }

    @Test(
        "while it decodes an input, a decoder's address space and CPU time are limited from the input's estimate and timeout",
        .enabled(if: canMake, "needs ffmpeg and vips"))
    func perInputAddressSpace() async throws {
        let inputs = try await Inputs.make(movieSeconds: 12)
        defer { TestTools.removeDirectory(inputs.directory) }
        // A pool's decoders get a day of CPU time (hard); an input's soft limit comes from its timeout.
        let limits = DecoderLimits(cpuSeconds: 86_400)
        let pool = try await Self.pool(inputs, size: 1, options: DecoderService.Options(limits: limits))
        var settings = ProcessingSettings()
        settings.timeout = 30
        let run = Task { try await Self.run(inputs, ["m.mp4"], pool: pool, settings: settings) }
        let pid = try await Self.decoder(of: pool, processing: inputs.path("m.mp4"))
        /// The soft limit of `name` in the decoder's /proc/PID/limits, once under `hard`.
        func soft(_ name: String, under hard: Int) -> Int? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }),
                let value = line.dropFirst(name.count).split(separator: " ").first.flatMap({ Int($0) }),
                value < hard
            else { return nil }
            return value
        }
        // Admitted after the movie's streams are probed: the address space drops then.
        let space = try await Poll.value("decoder \(pid)'s soft address-space limit drops", within: .seconds(60)) {
            soft("Max address space", under: limits.addressSpace)
        }
        let cpu = try #require(soft("Max cpu time", under: limits.cpuSeconds), "the input's CPU time is limited")
        let entries = try await run.value
        await pool.shutdown()
        #expect(entries[0].failure == nil, "\(entries)")
        #expect(space > 512 << 20 && space < limits.addressSpace, "soft address-space limit \(space)")
        // 4 x the 30 s timeout, 10 s more, and the few seconds the decoder had used.
        #expect(cpu >= 130 && cpu < 200, "soft CPU limit \(cpu) s")
    }
}
