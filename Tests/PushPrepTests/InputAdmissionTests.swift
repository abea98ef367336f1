import Foundation
import Logging
import PushPrepTestSupport
import Synchronization
import Testing

@testable import PushPrep
@testable import PushPrepCore
@testable import PushPrepRemote

/// Inputs processed through a ``ProcessingSession`` take their share of its ``MemoryBudget``
/// once their plan is made and give it back however they end: done, failed, or stopped while
/// waiting. Real files made with the `vips` and `ffmpeg` programs.
@Suite(
    .enabled(
        if: TestTools.programAvailable("vips") && TestTools.programAvailable("ffmpeg"),
        "needs the vips and ffmpeg programs to make fixtures"),
    .timeLimit(.minutes(2)))
final class InputAdmissionTests {
    let directory: URL

    init() throws { directory = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func process(
        _ file: String, in session: ProcessingSession, control: ProcessingControl? = nil
    ) async throws -> ManifestEntry {
        await session.process(
            InputItem(source: file, path: file), settings: try ProcessingSettings().validated(),
            outputDirectory: path("out"), control: control)
    }

    @Test("an image, a movie and a sound each hold their estimate while processed, and give it back")
    func heldAndGivenBack() async throws {
        let photo = path("photo.jpg")
        let movie = path("clip.mp4")
        let sound = path("sound.wav")
        try TestTools.vips("gaussnoise", photo, "2400", "1600")
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=640x360:rate=25", "-t", "1", "-pix_fmt", "yuv420p", movie)
        try TestTools.ffmpeg("-f", "lavfi", "-i", "sine=duration=1", sound)
        let recorder = MemoryBudgetRecorder()
        let session = try ProcessingSession(
            threads: 1, remote: RemoteSettings(), memory: MemoryBudget(limit: 1 << 40, observer: recorder),
            logger: .quiet)
        for file in [photo, movie, sound] {
            let inspected = try #require(
                Inspector.inspect(InputItem(source: file, path: file), settings: ProcessingSettings()).memoryEstimate)
            recorder.reset()
            let entry = try await process(file, in: session)
            #expect(entry.failure == nil, "\(entry)")
            #expect(
                recorder.peakReserved == inspected,
                "\(file): reserved \(recorder.peakReserved), inspect says \(inspected)")
            #expect(session.memory.reserved == 0)
        }
        await session.shutdown()
    }

    @Test("an input that fails after its plan gives its share back")
    func failedInputGivesBack() async throws {
        try TestTools.vips("gaussnoise", path("noise.v"), "1600", "1200")
        try TestTools.vips("copy", path("noise.v"), path("whole.jpg"))
        let data = try Data(contentsOf: URL(fileURLWithPath: path("whole.jpg")))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: path("cut.jpg")))
        let recorder = MemoryBudgetRecorder()
        let session = try ProcessingSession(
            threads: 1, remote: RemoteSettings(), memory: MemoryBudget(limit: 1 << 40, observer: recorder),
            logger: .quiet)
        let entry = try await process(path("cut.jpg"), in: session)
        await session.shutdown()
        #expect(entry.failure?.error.code == .corruptInput, "\(entry)")
        #expect(recorder.peakReserved > 0, "the header was read and the estimate reserved before decoding failed")
        #expect(session.memory.reserved == 0)
    }

    @Test("a job stopped while it waits for memory ends at once with its stop's code, holding nothing")
    func stoppedWhileWaiting() async throws {
        let photo = path("photo.jpg")
        try TestTools.vips("gaussnoise", photo, "800", "600")
        let budget = MemoryBudget(limit: 100 << 20)
        let session = try ProcessingSession(threads: 1, remote: RemoteSettings(), memory: budget, logger: .quiet)
        // Another input holds the whole budget.
        let held = try budget.reserve(100 << 20, control: nil)
        let control = ProcessingControl()
        let settings = try ProcessingSettings().validated()
        let out = path("out")
        let job = Task {
            await session.process(
                InputItem(source: photo, path: photo), settings: settings, outputDirectory: out, control: control)
        }
        try await Poll.until("the photo waits for memory", within: .seconds(30)) { budget.waiting == 1 }
        control.stop(.timedOut(.seconds(5)))
        let entry = await job.value
        #expect(entry.failure?.error.code == .timeout, "\(entry)")
        #expect(budget.reserved == 100 << 20 && budget.waiting == 0)
        held.release()
        // The next input runs as usual.
        let next = try await process(photo, in: session)
        #expect(next.failure == nil, "\(next)")
        #expect(budget.reserved == 0)
        await session.shutdown()
    }

    @Test("a movie's --timeout does not count the time it waited for memory")
    func waitIsNotTheMoviesTime() async throws {
        let movie = path("clip.mp4")
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "1", "-pix_fmt", "yuv420p", movie)
        var settings = ProcessingSettings()
        settings.timeout = 0.5
        let validated = try settings.validated()
        let budget = MemoryBudget(limit: 100 << 20)
        let session = try ProcessingSession(threads: 1, remote: RemoteSettings(), memory: budget, logger: .quiet)
        let held = try budget.reserve(100 << 20, control: nil)
        let out = path("out")
        let job = Task {
            await session.process(
                InputItem(source: movie, path: movie), settings: validated, outputDirectory: out, control: nil)
        }
        try await Poll.until("the movie waits for memory", within: .seconds(30)) { budget.waiting == 1 }
        // Longer than its whole timeout: had the wait counted, the movie would fail with `timeout`.
        try await Task.sleep(for: .seconds(1))
        held.release()
        let entry = await job.value
        await session.shutdown()
        #expect(entry.failure == nil, "\(entry)")
        #expect(budget.reserved == 0)
    }

    @Test("an input over the whole budget runs alone, with a warning, and succeeds")
    func overBudgetRunsAloneWithAWarning() async throws {
        let photo = path("photo.jpg")
        try TestTools.vips("gaussnoise", photo, "1200", "900")
        let log = CapturedLog()
        let recorder = MemoryBudgetRecorder()
        let session = try ProcessingSession(
            threads: 1, remote: RemoteSettings(), memory: MemoryBudget(limit: 1, observer: recorder),
            logger: log.logger(level: .info))
        let entry = try await process(photo, in: session)
        await session.shutdown()
        #expect(entry.failure == nil, "\(entry)")
        #expect(recorder.alone.withLock { $0.count } == 1)
        let warning = log.lines.first { $0.level == .warning && $0.message.contains("over the whole memory budget") }
        #expect(warning?.metadata["source"] == photo, "\(log.lines)")
        #expect(warning?.metadata["budget"] == "1")
    }
}
