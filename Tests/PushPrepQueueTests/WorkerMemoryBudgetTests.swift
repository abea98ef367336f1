import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 16, §2: a real `pushprep worker` under a low `--memory-limit`, with many big images
/// queued, stays under the limit plus its own baseline and finishes every job; the same batch
/// with a budget that does not bind peaks higher (so the check can fail). The worker decodes in
/// its pool of decoder processes (`--isolation process`, its default), whose inputs its one
/// budget admits: the peak is the whole tree's, the resident memory of the worker and its
/// decoders summed (`/proc/PID/statm`), sampled every 5 ms while the jobs run; the baseline is the
/// same for a worker that processed four 8x8 JPEGs at once (its four decoders all started, as a
/// worker starts its pool whole, and each with libvips warm from an input of its own).
@Suite(
    .serialized,
    .enabled(
        if: TestTools.programAvailable("vips") && FileManager.default.fileExists(atPath: "/proc/self/status"),
        "needs the vips program and /proc"),
    .timeLimit(.minutes(3)))
struct WorkerMemoryBudgetTests {
    /// Twelve progressive 4000x3000 JPEGs: each estimated at 49 MB (every DCT coefficient of the
    /// image is held; 49 MB above the baseline measured alone, up to 57 MB in a long batch, where
    /// the allocator keeps a little of what each input freed), so a 90 MB budget admits one at a
    /// time, and four at once (the worker's concurrency) would need more than twice that.
    static let count = 12
    static let limit = 90_000_000

    /// The resident memory of `pid` and of its children, summed, in bytes (0 for a process gone).
    static func treeResident(of pid: Int32) -> Int {
        func resident(_ pid: String) -> Int {
            guard let statm = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return 0 }
            let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").map(String.init)
        }
        return resident("\(pid)") + children.reduce(0) { $0 + resident($1) }
    }

    /// Runs a worker with `options` until the jobs of `inputs` are finished; its peak memory, the
    /// jobs' states and its metrics at the end (served in every run, so that the baseline counts
    /// the metrics server too).
    static func run(_ inputs: [String], options: [String], in directory: URL) async throws
        -> (peak: Int, states: [JobState], metrics: String?)
    {
        try await QueueFixture.withQueue(.sqlite) { queue, url in
            let queueArgument = url.commandLineArgument
            let ids = try WorkerProcessTests.enqueue(inputs, queue: queueArgument, in: directory)
            let port = try ChildProcessTools.freePort()
            let worker = try PushPrepCLI.startWorker(
                queue: queueArgument, out: directory.appendingPathComponent("out-\(UUID().uuidString)"),
                in: directory, concurrency: 4,
                options: options + ["--metrics-port", "\(port)", "--metrics-host", "127.0.0.1"])
            let pid = worker.pid
            let sampler = Task {
                var peak = 0
                while !Task.isCancelled {
                    peak = max(peak, treeResident(of: pid))
                    try? await Task.sleep(for: .milliseconds(5))
                }
                return peak
            }
            var states: [JobState] = []
            for id in ids {
                states.append(
                    try await WorkerProcessTests.waitUntilFinished(id, on: queue, within: .seconds(120), worker: worker)
                        .state)
            }
            let metrics = await WorkerProcessTests.get("http://127.0.0.1:\(port)/metrics")
            sampler.cancel()
            let peak = await sampler.value
            try await WorkerProcessTests.stop(worker)
            return (peak, states, metrics)
        }
    }

    /// `count` progressive 4000x3000 JPEGs `<name>-<i>.jpg` in `directory`: smooth content
    /// (upscaled noise), quick to make and to decode, photo-like in size, each about 49 MB at its peak.
    static func bigJPEGs(_ count: Int, named name: String, in directory: URL) throws -> [String] {
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        return try (0..<count).map { index in
            try TestTools.vips("gaussnoise", file("seed.v"), "500", "375", "--seed", "\(index + 1)")
            try TestTools.vips("colourspace", file("seed.v"), file("seed3.v"), "srgb")
            try TestTools.vips("resize", file("seed3.v"), file("\(name)-\(index).jpg") + "[Q=85,interlace]", "8")
            return file("\(name)-\(index).jpg")
        }
    }

    @Test("a worker under a low budget with many queued big images stays under it and keeps going")
    func lowBudgetHolds() async throws {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let inputs = try Self.bigJPEGs(Self.count, named: "big", in: directory)
        let tiny = try (0..<4).map { index in
            try TestTools.vips("black", file("tiny-\(index).jpg"), "\(8 + index)", "8", "--bands", "3")
            return file("tiny-\(index).jpg")
        }
        let limitOption = ["--memory-limit", "90MB"]

        let baseline = try await Self.run(tiny, options: limitOption, in: directory)
        #expect(baseline.states == Array(repeating: .succeeded, count: 4))
        let limited = try await Self.run(inputs, options: limitOption, in: directory)
        let unlimited = try await Self.run(inputs, options: ["--memory-limit", "4GiB"], in: directory)
        let megabytes = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1e6) }
        let summary =
            "baseline \(megabytes(baseline.peak)), limited \(megabytes(limited.peak)), "
            + "unlimited \(megabytes(unlimited.peak)), limit \(megabytes(Self.limit))"

        print("[memory budget] \(summary)")
        #expect(limited.states == Array(repeating: .succeeded, count: Self.count), "\(limited.states)")
        #expect(unlimited.states == Array(repeating: .succeeded, count: Self.count), "\(unlimited.states)")
        #expect(limited.peak < baseline.peak + Self.limit, "\(summary)")
        // Four at once without the budget: the limit is what kept the peak down.
        #expect(unlimited.peak > baseline.peak + Self.limit, "\(summary)")

        let metrics = try #require(limited.metrics)
        #expect(WorkerProcessTests.sample(metrics, "pushprep_memory_budget_bytes") == Double(Self.limit), "\(metrics)")
        #expect(WorkerProcessTests.sample(metrics, "pushprep_memory_reserved_bytes") == 0, "\(metrics)")
        #expect(WorkerProcessTests.sample(metrics, "pushprep_memory_waiting_inputs") == 0, "\(metrics)")
    }

    @Test("a wait for memory does not count against --job-timeout: inputs admitted in turn all succeed at once")
    func memoryWaitIsNotJobTime() async throws {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        // The big images of lowBudgetHolds, sixteen at once: a 90 MB budget admits one at a time,
        // each taking a fraction of a second, so the last waits for seconds, far longer than
        // the 1 s --job-timeout.
        let inputs = try Self.bigJPEGs(16, named: "turn", in: directory)
        try await QueueFixture.withQueue(.sqlite) { queue, url in
            let queueArgument = url.commandLineArgument
            let ids = try WorkerProcessTests.enqueue(inputs, queue: queueArgument, in: directory)
            let started = ContinuousClock.now
            let worker = try PushPrepCLI.startWorker(
                queue: queueArgument, out: directory.appendingPathComponent("out"), in: directory,
                concurrency: 16,
                options: ["--memory-limit", "90MB", "--job-timeout", "1", "--retry-base", "0.1", "--retry-max", "0.1"])
            var jobs: [JobRecord] = []
            for id in ids {
                jobs.append(
                    try await WorkerProcessTests.waitUntilFinished(id, on: queue, within: .seconds(120), worker: worker)
                )
            }
            let elapsed = ContinuousClock.now - started
            let log = worker.logTail()
            try await WorkerProcessTests.stop(worker)
            let summary = jobs.map { "\($0.state) attempt \($0.attempt) \($0.errorCode ?? "")" }
            // The batch took longer than one job may: the waits were long enough to matter.
            #expect(elapsed > .seconds(2), "the inputs did not wait in turn: \(elapsed)")
            #expect(jobs.allSatisfy { $0.state == .succeeded && $0.attempt == 1 }, "\(summary)\n\(log)")
        }
    }
}
