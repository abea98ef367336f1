import Foundation
import Logging
import PushPrepTestSupport
import Synchronization
import Testing

@testable import PushPrep
@testable import PushPrepCore
@testable import PushPrepRemote

/// ``ProcessingSession`` reused across inputs, and ``ProcessingControl`` stopping jobs before
/// they start, in the middle of a movie transcode, and during a slow download; on real files
/// made with the `vips` and `ffmpeg` programs and a real HTTP server on 127.0.0.1.
@Suite(
    .enabled(
        if: TestTools.programAvailable("vips") && TestTools.programAvailable("ffmpeg"),
        "needs the vips and ffmpeg programs to make fixtures"),
    .timeLimit(.minutes(3)))
final class ProcessingSessionTests {
    let directory: URL

    init() throws { directory = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func photo() throws -> String {
        let photo = path("photo.jpg")
        if !FileManager.default.fileExists(atPath: photo) { try TestTools.vips("gaussnoise", photo, "640", "480") }
        return photo
    }

    /// Every name in `out` (temporaries and the fetch cache's files included), or none when
    /// the directory was never made.
    private func leftovers(in out: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: out) else { return [] }
        return enumerator.compactMap { $0 as? String }.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: "\(out)/\(name)", isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
    }

    /// How long a stop may take to end a job, in seconds. A stop takes milliseconds; the bound
    /// is generous because the whole suite runs in parallel on few cores.
    static let stopBound = 5.0

    /// Polls `condition` every 10 ms for up to `seconds`; whether it became true.
    private func waitUntil(seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
        let start = ContinuousClock.now
        while !condition() {
            guard self.seconds(since: start) < seconds else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Seconds since `start`.
    private func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test("a session reused for several inputs gives the same entries as Processor.run")
    func sameEntriesAsRun() async throws {
        let sound = path("sound.wav")
        let drawing = path("drawing.png")
        let broken = path("broken.jpg")
        try TestTools.ffmpeg("-f", "lavfi", "-i", "sine=duration=3", sound)
        try TestTools.vips("black", drawing, "300", "200", "--bands", "4")
        try Data("not an image at all".utf8).write(to: URL(fileURLWithPath: broken))
        let inputs = [try photo(), sound, drawing, broken, path("missing.gif")].map { InputItem(source: $0, path: $0) }
        var settings = ProcessingSettings()
        settings.jobs = 2

        let manifest = try await Processor(settings: settings, outputDirectory: path("run"), logger: .quiet).run(inputs)
        let session = try ProcessingSession(threads: 2, remote: RemoteSettings(), logger: .quiet)
        var entries: [ManifestEntry] = []
        for input in inputs {
            entries.append(
                await session.process(
                    input, settings: try settings.validated(), outputDirectory: path("session"), control: nil))
        }
        await session.shutdown()

        #expect(entries == manifest.attachments)
        #expect(entries.compactMap(\.attachment).count == 3)
        #expect(entries[3].failure?.error.code == .unsupportedType)
        #expect(entries[4].failure?.error.code == .notFound)
        #expect(leftovers(in: path("session")).sorted() == leftovers(in: path("run")).sorted())
    }

    @Test("libav's and libvips' lines go to the logger processing the input, with its source and job")
    func libraryLinesFollowTheInput() async throws {
        // moov at the end, cut before it: libav says so while probing.
        let whole = path("whole.mp4")
        try TestTools.ffmpeg("-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "2", "-c:v", "libx264", whole)
        let cut = path("cut.mp4")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))

        let first = CapturedLog()
        let second = CapturedLog()
        let session = try ProcessingSession(threads: 1, remote: RemoteSettings(), logger: first.logger())
        // A later session (another worker's in the same process, a test's) no longer takes
        // the lines of inputs it does not process.
        let other = try ProcessingSession(threads: 1, remote: RemoteSettings(), logger: second.logger())
        let entry = await session.process(
            InputItem(source: cut, path: cut), settings: try ProcessingSettings().validated(),
            outputDirectory: path("out"),
            control: nil, metadata: ["job": "42"])
        await session.shutdown()
        await other.shutdown()

        #expect(entry.failure?.error.code == .corruptInput, "\(entry)")
        let libav = first.lines.filter { $0.metadata["domain"] == "libav" }
        #expect(libav.contains { $0.message.contains("moov atom not found") }, "\(first.lines)")
        #expect(libav.allSatisfy { $0.metadata["source"] == cut && $0.metadata["job"] == "42" }, "\(libav)")
        #expect(second.lines.filter { $0.metadata["domain"] == "libav" }.isEmpty, "\(second.lines)")
    }

    @Test("a control stopped before processing gives a cancelled entry and no output")
    func stoppedBefore() async throws {
        let session = try ProcessingSession(threads: 1, remote: RemoteSettings(), logger: .quiet)
        let control = ProcessingControl()
        control.stop(.cancelled)
        control.stop(.timedOut(.seconds(1)))
        #expect(control.reason == .cancelled)
        let photo = try photo()
        let entry = await session.process(
            InputItem(source: photo, path: photo), settings: try ProcessingSettings().validated(),
            outputDirectory: path("out"),
            control: control)
        await session.shutdown()
        #expect(entry.failure?.error.code == .cancelled)
        #expect(entry.failure?.error.message == "cancelled")
        #expect(leftovers(in: path("out")).isEmpty)
    }

    @Test(".timedOut gives a timeout entry naming the job's timeout")
    func timedOut() async throws {
        let session = try ProcessingSession(threads: 1, remote: RemoteSettings(), logger: .quiet)
        let control = ProcessingControl()
        control.stop(.timedOut(.milliseconds(1500)))
        let photo = try photo()
        let entry = await session.process(
            InputItem(source: photo, path: photo), settings: try ProcessingSettings().validated(),
            outputDirectory: path("out"),
            control: control)
        await session.shutdown()
        #expect(entry.failure?.error.code == .timeout)
        #expect(entry.failure?.error.message == "the job's timeout of 1.5 s passed")
        #expect(leftovers(in: path("out")).isEmpty)
    }

    @Test("a video transcode stopped midway ends cancelled promptly and leaves no file, temporaries included")
    func stopsTranscode() async throws {
        let clip = path("long.mp4")
        // MPEG-4 part 2 is never copied as it is: the pipeline must transcode all 30 s.
        try TestTools.ffmpeg(
            "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=30:duration=30", "-f", "lavfi", "-i", "sine=duration=30",
            "-c:v", "mpeg4", "-q:v", "5", "-c:a", "aac", clip)
        var settings = ProcessingSettings()
        settings.videoSeconds = 30
        let out = path("out")
        let session = try ProcessingSession(threads: 1, remote: RemoteSettings(), logger: .quiet)
        let control = ProcessingControl()
        let validated = try settings.validated()
        let job = Task {
            await session.process(
                InputItem(source: clip, path: clip), settings: validated, outputDirectory: out, control: control)
        }
        // Wait until the muxer has created its temporary output: the transcode is under way.
        let writing = await waitUntil { leftovers(in: out).contains { $0.hasPrefix(AtomicFile.temporaryPrefix) } }
        #expect(writing, "the transcode never started writing")
        try await Task.sleep(for: .milliseconds(300))
        let stopped = ContinuousClock.now
        control.stop(.cancelled)
        let entry = await job.value
        let took = seconds(since: stopped)
        await session.shutdown()

        #expect(entry.failure?.error.code == .cancelled, "\(entry)")
        #expect(took < Self.stopBound, "took \(took) s to stop")
        #expect(leftovers(in: out).isEmpty, "\(leftovers(in: out))")
    }

    @Test("a stop during a download cancels the fetch and leaves nothing in the cache folder")
    func stopsDownload() async throws {
        let server = try await TestServer.start(files: [
            "photo.jpg": Array(try Data(contentsOf: URL(fileURLWithPath: try photo())))
        ])
        var remote = RemoteSettings()
        remote.allowedHosts = ["127.0.0.1"]
        remote.totalTimeout = .seconds(60)
        let session = try ProcessingSession(threads: 1, remote: remote, logger: .quiet)
        let out = path("out")
        // One byte every 100 ms: the download stays in progress, its temporary file open.
        let url = server.url("/trickle/photo.jpg")
        let control = ProcessingControl()
        let settings = try ProcessingSettings().validated()
        let job = Task {
            await session.process(
                InputItem(source: url, path: url), settings: settings, outputDirectory: out, control: control)
        }
        let downloading = await waitUntil {
            self.leftovers(in: out).contains {
                $0.hasPrefix("\(FetchCache.directoryName)/") && $0.hasSuffix("-download.jpg")
            }
        }
        #expect(downloading, "the download never started")
        let stopped = ContinuousClock.now
        control.stop(.timedOut(.seconds(2)))
        let entry = await job.value
        let took = seconds(since: stopped)
        await session.shutdown()
        await server.shutdown()

        #expect(entry.failure?.error.code == .timeout, "\(entry)")
        #expect(entry.failure?.error.message == "the job's timeout of 2 s passed")
        // The whole body would take a minute.
        #expect(took < Self.stopBound, "took \(took) s to stop")
        #expect(leftovers(in: out).isEmpty, "\(leftovers(in: out))")
    }

    @Test("a fetch cancelled while it waits for a slot stops waiting and takes no slot")
    func limiterWaiterCancelled() async throws {
        let limiter = FetchLimiter(overall: 1, perHost: 1)
        let release = Mutex(false)
        let holder = Task {
            try await limiter.withSlot(host: "a") { () async throws(PushPrepError) -> Void in
                while !release.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
            }
        }
        #expect(await waitUntil { limiter.running == 1 })
        let finished = Mutex<PushPrepError??>(nil)
        let waiter = Task {
            do throws(PushPrepError) {
                try await limiter.withSlot(host: "a") { () async throws(PushPrepError) -> Void in }
                finished.withLock { $0 = .some(nil) }
            } catch {
                finished.withLock { $0 = .some(error) }
            }
        }
        #expect(await waitUntil { limiter.waiting == 1 })
        waiter.cancel()
        // The slot is still held: only the cancellation can end the wait.
        #expect(await waitUntil { finished.withLock { $0 } != nil }, "the cancelled waiter kept waiting")
        #expect(finished.withLock { $0 }??.code == .fetchFailed)
        #expect(limiter.waiting == 0 && limiter.running == 1)
        release.withLock { $0 = true }
        try await holder.value
        await waiter.value
        #expect(limiter.running == 0)
    }

    /// Remote settings are checked once, when the session is made, not for each URL; a run
    /// refuses them before it writes anything.
    @Test("invalid remote settings are refused by the session's initializer and before a run writes")
    func invalidRemoteSettings() async throws {
        var remote = RemoteSettings()
        remote.maxTries = 0
        let error = #expect(throws: PushPrepError.self) {
            try ProcessingSession(threads: 1, remote: remote, logger: .quiet)
        }
        #expect(error?.code == .invalidSettings)
        #expect(error?.message == "tries must be between 1 and 10, got 0")
        let out = path("never")
        let processor = Processor(settings: ProcessingSettings(), outputDirectory: out, logger: .quiet, remote: remote)
        let photo = try photo()
        await #expect(throws: PushPrepError.self) { try await processor.run([InputItem(source: photo, path: photo)]) }
        #expect(!FileManager.default.fileExists(atPath: out), "nothing written")
    }

    @Test("after shutdown a session fails inputs with io_error instead of hanging")
    func afterShutdown() async throws {
        let session = try ProcessingSession(threads: 1, remote: RemoteSettings(), logger: .quiet)
        await session.shutdown()
        await session.shutdown()
        let photo = try photo()
        let entry = await session.process(
            InputItem(source: photo, path: photo), settings: try ProcessingSettings().validated(),
            outputDirectory: path("out"),
            control: nil)
        #expect(entry.failure?.error.code == .ioError)
        #expect(entry.failure?.error.message.contains("shut down") == true)
    }

    @Test("a control runs its stop actions once, on the first stop, and not once removed")
    func controlObservers() {
        let control = ProcessingControl()
        let calls = CallCounter()
        let kept = control.onStop { calls.add("kept") }
        let removed = control.onStop { calls.add("removed") }
        #expect(kept != nil && removed != nil)
        if let removed { control.removeObserver(removed) }
        #expect(control.reason == nil)
        control.stop(.timedOut(.seconds(3)))
        control.stop(.cancelled)
        #expect(control.reason == .timedOut(.seconds(3)))
        #expect(calls.names == ["kept"])
        // Registered after the stop: runs at once.
        #expect(control.onStop { calls.add("late") } == nil)
        #expect(calls.names == ["kept", "late"])
    }
}

/// Records which stop actions ran, from any thread.
private final class CallCounter: Sendable {
    private let state = Mutex<[String]>([])
    func add(_ name: String) { state.withLock { $0.append(name) } }
    var names: [String] { state.withLock { $0 } }
}
