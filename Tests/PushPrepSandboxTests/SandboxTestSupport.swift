import Foundation
import PushPrepCore
import PushPrepSandbox
import PushPrepTestSupport
import Testing

/// A confined decoder process of the built `pushprep` on a staging directory of its own, and a
/// TCP listener on 127.0.0.1 (port 0) that the test owns and watches, for the connect probe.
struct DecoderUnderTest {
    /// The temporary directory: `staging/` inside it is the decoder's.
    let directory: URL
    /// The staging directory.
    var staging: URL { directory.appendingPathComponent("staging") }
    /// The decoder.
    let decoder: DecoderProcess
    /// The test's listener, for the connect probe.
    let listener: LoopbackListener

    /// Starts a decoder skipping `skipping`, with `environment`.
    static func start(
        skipping: Set<SandboxLayer> = [], environment: [String: String] = [:], limits: DecoderLimits = DecoderLimits()
    ) async throws -> DecoderUnderTest {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let directory = try TestTools.temporaryDirectory()
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("staging"), withIntermediateDirectories: false)
        let listener = try LoopbackListener()
        do {
            let decoder = try await DecoderProcess.start(
                executable: binary.path, staging: directory.appendingPathComponent("staging").path,
                options: DecoderService.Options(limits: limits, skipping: skipping), environment: environment)
            return DecoderUnderTest(directory: directory, decoder: decoder, listener: listener)
        } catch {
            listener.close()
            TestTools.removeDirectory(directory)
            throw error
        }
    }

    /// Runs the probes and returns them by name.
    func probes() async throws -> [SandboxProbe: ProbeResult] {
        let results = try await decoder.probes(connectPort: listener.port)
        return Dictionary(uniqueKeysWithValues: results.map { ($0.probe, $0) })
    }

    /// The layer state the decoder reported for `layer`.
    func state(_ layer: SandboxLayer) -> LayerState? { decoder.layers.first { $0.layer == layer } }

    /// Whether a connection is waiting on the listener (the kernel completed it), accepting it.
    func acceptedConnection() -> Bool {
        var poller = pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) == 1 else { return false }
        let connection = accept(listener.descriptor, nil, nil)
        if connection >= 0 { close(connection) }
        return connection >= 0
    }

    /// Ends the decoder (asking it to exit) and removes everything; returns its exit status.
    @discardableResult
    func finish() async -> Int32 {
        let status = await decoder.finish()
        listener.close()
        TestTools.removeDirectory(directory)
        return status
    }
}
