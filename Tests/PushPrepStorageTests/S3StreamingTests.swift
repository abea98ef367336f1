import Foundation
import Logging
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepStorage

/// Uploads stream from the file: memory does not grow with the file's size.
///
/// Measured as the process's resident memory: the peak (`VmHWM`, reset through
/// `/proc/self/clear_refs` before each upload) and, in case the reset is not allowed, the
/// largest `VmRSS` sampled every 5 ms, both against `VmRSS` just before. `make test` runs one test
/// at a time, so nothing else in the process allocates meanwhile; the bound (24 MB for a 40 MB
/// file) leaves room for NIO's and the allocator's noise and still fails if the file were read
/// whole (checked by hand: reading it whole gave 78 MB for the single PUT and 160 MB for the
/// multipart upload). Each mode is warmed up first with a 17 MiB upload of the same shape, so
/// that thread pools, arenas and connections made once are not counted: without it the first
/// parallel upload measured up to 20 MB, with it 2 to 11 MB. The server keeps only sizes and
/// hashes here, so its memory does not count; it also reports the body arriving in many chunks.
/// (The bound does not catch buffering one part whole: 4 parts of 5 MiB are within the noise.)
@Suite("S3 client streaming", .serialized)
struct S3StreamingTests {
    /// A `/proc/self/status` field in bytes.
    static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// What `body` returns, and the peak resident growth while it ran.
    static func residentGrowth<Result: Sendable>(
        _ body: () async throws(PushPrepError) -> Result
    ) async throws(PushPrepError) -> (Result, Int) {
        let reset = (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
        let before = status("VmRSS") ?? 0
        let sampler = Task {
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, status("VmRSS") ?? 0)
                try? await Task.sleep(for: .milliseconds(5))
            }
            return peak
        }
        let result: Result
        do {
            result = try await body()
        } catch {
            sampler.cancel()
            throw error
        }
        sampler.cancel()
        let sampled = await sampler.value
        let peak = max(sampled, reset ? status("VmHWM") ?? 0 : 0)
        return (result, peak - before)
    }

    @Test("a 40 MB file goes up as a single PUT and as a multipart upload with well under 40 MB of memory growth")
    func memoryStaysFlat() async throws {
        guard Self.status("VmRSS") != nil else { return }  // Linux only: /proc
        let size = 40_000_000
        let file = try S3ClientTests.makeFile(size: size, seed: 40)
        let warmup = try S3ClientTests.makeFile(size: 17 * 1024 * 1024, seed: 41)
        defer { for path in [file.path, warmup.path] { try? FileManager.default.removeItem(atPath: path) } }
        let server = try await S3Bucket.serve(.init(retainBodies: false))
        for (label, threshold) in [("single-put", 64 * 1024 * 1024), ("multipart", 6 * 1024 * 1024)] {
            var limits = S3ClientTests.fastLimits
            limits.multipartThreshold = threshold
            limits.partSize = label == "multipart" ? 5 * 1024 * 1024 : limits.partSize
            let configuration = try S3ClientTests.configuration(server, limits: limits)
            let (result, growth) = try await S3Client.withClient(
                configuration, logger: CapturedLog().logger(level: .info)
            ) { client throws(PushPrepError) in
                _ = try await client.publish(
                    file: warmup.path, key: "warm-\(label).bin", contentType: "application/octet-stream",
                    sha256: warmup.sha256)
                return try await Self.residentGrowth { () throws(PushPrepError) in
                    try await client.publish(
                        file: file.path, key: "big-\(label).mp4", contentType: "video/mp4", sha256: file.sha256)
                }
            }
            print("S3 streaming, \(label): \(size) bytes, peak resident growth \(growth / 1024) KiB")
            #expect(result.bytes == size && result.outcome == .stored)
            #expect(growth < 24_000_000, "\(label): resident memory grew by \(growth) bytes for a \(size)-byte file")
            let bodies = server.received.filter { $0.path.hasSuffix("big-\(label).mp4") && $0.method == "PUT" }
            #expect(bodies.map(\.bodyBytes).reduce(0, +) == size)
            #expect(bodies.map(\.bodyChunks).reduce(0, +) > 100, "the body arrived in many chunks")
            #expect(server.object("big-\(label).mp4")?.size == size)
        }
        #expect(server.requests(.uploadPart).count == 4 + 8)
        await server.shutdown()
    }
}
