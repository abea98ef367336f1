import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

#if canImport(Glibc)
    import Glibc
#endif

/// Faults of a `pushprep worker`'s decoder processes (`--isolation process`, its default) stay in
/// their job, on SQLite and PostgreSQL, with other jobs in flight: a decoder killed mid-job once
/// costs that attempt (the input is decoded again on a fresh decoder and the job succeeds),
/// killed twice fails the job for good with `decoder_crashed`, stopped (SIGSTOP) is killed at the
/// job's timeout (`timeout`), out of memory ends it with `resource_exhausted`, and answering
/// garbage on its channel counts as a crash. Every other job succeeds, the worker never exits,
/// nothing of the failed jobs is published, and no staging directory is left once it stops.
///
/// The decoder at work on an input is the one the worker's debug line `decoding` names.
@Suite(.serialized)
struct IsolatedWorkerFaultTests {
    static let canMake = TestTools.programAvailable("ffmpeg") && TestTools.programAvailable("vips")

    @Test(
        "decoder faults stay in their job; the worker and the other jobs go on",
        .enabled(if: canMake, "needs ffmpeg and vips"), arguments: QueueBackend.testedBackends)
    func decoderFaultsStayInTheirJob(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        let path: @Sendable (String) -> String = { dir.appendingPathComponent($0).path }
        try await ChildProcessTools.blocking {
            // A movie long enough to be caught mid-transcode (about 2 s in a release build), and two
            // more inputs of it: the same bytes and one or two more after its end, which the demuxer
            // skips (other SHA-256s, so other outputs). Photos and a sound finish beside them.
            try TestTools.ffmpeg(
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=1920x1080:rate=30:duration=15", "-f", "lavfi",
                "-i", "sine=duration=15", "-c:v", "mpeg4", "-q:v", "6", "-c:a", "aac", "-shortest", path("once.mp4"))
            let movie = try Data(contentsOf: URL(fileURLWithPath: path("once.mp4")))
            try (movie + Data([0])).write(to: URL(fileURLWithPath: path("twice.mp4")))
            try (movie + Data([0, 0])).write(to: URL(fileURLWithPath: path("hang.mp4")))
            for (index, name) in ["a.jpg", "b.png", "c.jpg", "d.png"].enumerated() {
                try TestTools.vips(
                    "gaussnoise", path(name), "\(600 + index * 40)", "400", "--mean", "\(80 + index * 20)")
            }
            try TestTools.ffmpeg("-v", "error", "-f", "lavfi", "-i", "sine=duration=2", path("s.wav"))
        }
        try await QueueFixture.withQueue(backend) { queue, url in
            let queueArgument = url.commandLineArgument
            // One attempt each (the decoder's retry is the pool's, inside the job's attempt), but
            // three for the movie that crashes twice: decoder_crashed must not be retried.
            func enqueue(_ names: [String], _ options: [String]) throws -> [JobID] {
                try WorkerProcessTests.enqueue(names.map(path), queue: queueArgument, in: dir, options: options)
            }
            let ids =
                try enqueue(["once.mp4"], ["--max-attempts", "1"]) + enqueue(["twice.mp4"], ["--max-attempts", "3"])
                + enqueue(["a.jpg", "b.png", "c.jpg", "d.png", "s.wav"], ["--max-attempts", "1"])
            let hangID = try enqueue(["hang.mp4"], ["--max-attempts", "1", "--job-timeout", "8"])[0]
            let worker = try PushPrepCLI.startWorker(queue: queueArgument, out: out, in: dir, concurrency: 3)

            let first = try await Self.decoder(of: worker, processing: path("once.mp4"))
            kill(first, SIGSEGV)
            let crashedOnce = try await Self.decoder(of: worker, processing: path("twice.mp4"))
            kill(crashedOnce, SIGSEGV)
            let crashedTwice = try await Self.decoder(of: worker, processing: path("twice.mp4"), after: [crashedOnce])
            kill(crashedTwice, SIGKILL)
            let hung = try await Self.decoder(of: worker, processing: path("hang.mp4"))
            kill(hung, SIGSTOP)

            var jobs: [JobRecord] = []
            for id in ids + [hangID] {
                jobs.append(
                    try await WorkerProcessTests.waitUntilFinished(id, on: queue, within: .seconds(180), worker: worker)
                )
            }
            #expect(worker.isRunning, "the worker goes on: \(worker.logTail())")
            let succeeded = [jobs[0]] + jobs[2..<7]
            for job in succeeded {
                #expect(
                    job.state == .succeeded,
                    "\(job.source): \(job.state) \(job.errorCode ?? "") \(job.errorMessage ?? "")")
            }
            #expect(jobs[0].attempt == 1, "the crash cost the decoder's attempt, not the job's")
            #expect(
                jobs[1].state == .failed && jobs[1].errorCode == "decoder_crashed",
                "\(jobs[1].state) \(jobs[1].errorCode ?? "") \(jobs[1].errorMessage ?? "")")
            #expect(jobs[1].attempt == 1, "decoder_crashed is permanent: not retried")
            #expect(
                jobs[7].state == .failed || jobs[7].state == .dead, "\(jobs[7].state)")
            #expect(
                jobs[7].errorCode == "timeout" && jobs[7].errorMessage?.contains("timeout of 8 s") == true,
                "the job's own timeout stopped it: \(jobs[7].errorCode ?? "") \(jobs[7].errorMessage ?? "")")
            #expect(kill(hung, 0) == -1 && errno == ESRCH, "the stopped decoder was killed and reaped")
            for pid in [first, crashedOnce, crashedTwice] {
                #expect(kill(pid, 0) == -1 && errno == ESRCH, "decoder \(pid) was reaped")
            }

            // Published: the succeeded jobs' files, nothing of the failed ones.
            var expected: Set<String> = []
            for job in succeeded {
                let attachment = try WorkerProcessTests.attachment(of: job)
                expected.insert(attachment.file)
                for companion in attachment.companionFiles { expected.insert(companion.file) }
            }
            #expect(Set(try OutDirectory.visibleNames(in: out)) == expected)
            try await WorkerProcessTests.stop(worker)
            let staging = WorkerProcessTests.stagingNames(in: out)
            #expect(staging.isEmpty, "the decoders' and the jobs' staging is removed: \(staging)")

            // A decoder that runs out of memory: a worker whose decoders may use 600 MiB of
            // address space, an interlaced PNG decoded whole (231 MiB in one block) among photos.
            try await ChildProcessTools.blocking {
                try TestTools.vips("black", path("big.png") + "[interlace]", "9000", "9000", "--bands", "3")
                try TestTools.vips("gaussnoise", path("e.jpg"), "700", "500", "--mean", "100")
                try TestTools.vips("gaussnoise", path("f.png"), "500", "700", "--mean", "150")
                try TestTools.vips("gaussnoise", path("garbled.png"), "400", "300", "--mean", "60")
            }
            let memoryIDs = try enqueue(["e.jpg", "big.png", "f.png", "garbled.png"], ["--max-attempts", "3"])
            // And a decoder that answers garbage on its channel (the test mode of `pushprep decoder`),
            // for garbled.png only.
            let small = try PushPrepCLI.startWorker(
                queue: queueArgument, out: out, in: dir, concurrency: 2,
                options: ["--decoder-address-space", "\(600 << 20)", "--decoder-test-garbage-for", "garbled"])
            var memoryJobs: [JobRecord] = []
            for id in memoryIDs {
                memoryJobs.append(
                    try await WorkerProcessTests.waitUntilFinished(id, on: queue, within: .seconds(120), worker: small))
            }
            #expect(
                memoryJobs[1].state == .failed && memoryJobs[1].errorCode == "resource_exhausted"
                    && memoryJobs[1].attempt == 1,
                "\(memoryJobs[1].state) \(memoryJobs[1].errorCode ?? "") \(memoryJobs[1].errorMessage ?? "")")
            #expect(
                memoryJobs[0].state == .succeeded && memoryJobs[2].state == .succeeded,
                "\(memoryJobs.map { "\($0.state) \($0.errorMessage ?? "")" })")
            #expect(
                memoryJobs[3].state == .failed && memoryJobs[3].errorCode == "decoder_crashed"
                    && memoryJobs[3].errorMessage?.contains("not a valid DecoderReply") == true,
                "\(memoryJobs[3].state) \(memoryJobs[3].errorCode ?? "") \(memoryJobs[3].errorMessage ?? "")")
            #expect(small.isRunning, "the worker goes on: \(small.logTail())")
            try await WorkerProcessTests.stop(small)
        }
    }

    /// The pid of the decoder the worker's debug lines say took `source` (the first whose pid is
    /// not in `after`).
    static func decoder(of worker: PushPrepProcess, processing source: String, after: [pid_t] = []) async throws
        -> pid_t
    {
        try await Poll.value(
            "a decoder of pid \(worker.pid) takes \(source)", within: .seconds(120), every: .milliseconds(20),
            diagnostics: { worker.logTail() }
        ) { () -> pid_t? in
            worker.stderrText.split(separator: "\n").lazy.filter { $0.hasSuffix(" decoding") }
                .compactMap { line -> pid_t? in
                    let fields = line.split(separator: " ")
                    guard fields.contains("source=\(source)"),
                        let pid = fields.first(where: { $0.hasPrefix("decoder=") }).flatMap({
                            pid_t($0.dropFirst("decoder=".count))
                        })
                    else { return nil }
                    return pid
                }
                .first { !after.contains($0) }
        }
    }
}
