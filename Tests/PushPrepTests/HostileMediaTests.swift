import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepMedia

#if canImport(Glibc)
    import Glibc
#endif

/// Media built to cost the process far more than its size: each is refused with a stable code,
/// at the cost of refusing a small damaged file.
@Suite(.serialized)
struct HostileMediaTests {
    /// A 424 KB H.264 MP4 whose two black frames declare 12000×12000 pixels (144 megapixels,
    /// over the default limit of 100), gzipped (1.4 KB). Made with:
    /// `ffmpeg -f lavfi -i color=black:size=12000x12000:rate=1 -frames:v 2 -c:v libx264
    /// -preset ultrafast -pix_fmt yuv420p huge.mp4 && gzip -9 -n huge.mp4` (11 s and 1.8 GB).
    static let hugeFrameMP4GzipBase64 = [
        "H4sIAAAAAAACA+3SQY/cVh0AcO+mDQUhClWQAAXJiIIq1J3MzG6WJmgQJarYAwgkRIUQdOWxPRlr7bFjeze75ZIDBz4BB04c",
        "QVx66wEhceAAEkK9QRFIcEFwoR9heZ7NKpMU+gX6e/Oz/d7z//2f/fdEURQv+rOm6Ooqiraj4RqOaXKSTqpmbxJF0TOLNs+j",
        "q90LVZb0IebbV58+P//mX1/596//+fbBmz958c/x25/9zzun0/29eCdO6zaPJ6Hb7o5v3YznSZ7vjcfhxsEoBNz4xrde+drO",
        "Xvzyq3dCZJan4cadujkr80UfT8fj3Z3peDoNk8u+b27fuHH//v3RSZHldZmsRnV798awy2jZV2WIqZu+qFfd7ThN5kk6G8dt",
        "vphN4iyfl3V6NBvfDr84WSXlWZcPo7jKZ1mRxN3xPPTGcdOdhfBwPmyz2WQ0DiHhFFfFaZ4dDrmGFYdtsrqbzyb7cbps6yo5",
        "DEsncd/mZVl0IeKl05eytA+d9F4VzlmeZK/Xq3w2nbw4mcSLpOsPm+6oaMKihwnuNYf1YtHlw6J+2YYF3Ww3Luv6KFmGweHl",
        "3CTuyiLNH02M41W73iItqqQfHqNY9XlbJiEozM/L4zY5O0zrqknWDxRq07dJsQopQmCbDDGLNqnyIdX9vLi77JvQO8rPwu3Z",
        "9OZl97AqVsPuab7K0+Mh1Xr5UJI275ZDodNZ2i7iah7qMFQyDGbT3dE4vjfsPhuP9kO3GdKsr8npbP9W6HR93sz24qIJRQ2f",
        "LtR8L3yge7Nx9CC62ryZ//hHtz//QvTB7d9r2vul/ekHxwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAO9rr0VR9KGXfxpf+1m09dzP34iiK6Oqrk/CbFmdLLPosXblX1H0gbeirWjwqG09HvXk+CvRe7bt4Lt9mxyF",
        "/vf7o/WeV96dLewbvfc+/2vf0d8vjtCez7O+C9fredn1j1Y8zLteu/VWlRVJ6MRV9uS7D9keRN/57Xqws8zK9vLOSZHlm5Gv",
        "hnF9kKyyMh9itn5YFatF6Fw7qdZJNx/z+ezi3vWszRcbr/Hh47aML/pbX+r6eRn6v+r6LtuI+WVykk7+TynCS4fXPgidg8uI",
        "j389xN+8Ndr94mgyHsdlMT+d7u9tLPnE+Xk4T0LUna2v/ubL5/+IPnU3XP8Scj39tzc+NnyVreG0/ewzT31hK3pq+cdnfxcW",
        "fLRJuubhIwzHtXnfXtT3k394sD5C6q5f1/7yUbcf/iuuhVfanB+O62EufWJue+Pe64/9d652z4XrRy5ypfXGunE45sdZP3zP",
        "71X5+jq0z2x+u/C926Rpys3S7RQXf5DP/aKvh4SfzpL14nWNQxEXoYjTdRH/C1nM2U5+dgYA",
    ].joined()

    /// Writes the 12000×12000 MP4 to `path`.
    static func writeHugeFrameMP4(to path: URL) throws {
        let gzipped = try #require(Data(base64Encoded: hugeFrameMP4GzipBase64))
        let result = try TestTools.run("gzip", ["-dc"], stdin: gzipped)
        try #require(result.status == 0, "gzip -dc failed")
        try result.stdout.write(to: path)
    }

    /// The same movie, its MP4 headers (the `avc1` sample entry and `tkhd`) claiming 320×240:
    /// only the H.264 parameter set inside says 12000×12000.
    static func writeLyingHugeFrameMP4(to path: URL) throws {
        try writeHugeFrameMP4(to: path)
        var bytes = [UInt8](try Data(contentsOf: path))
        func find(_ type: String, after start: Int) -> Int? {
            let pattern = Array(type.utf8)
            return (start..<(bytes.count - 4)).first { bytes[$0..<$0 + 4].elementsEqual(pattern) }
        }
        func put(_ value: UInt32, bytes count: Int, at offset: Int) {
            for index in 0..<count {
                bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(count - 1 - index)))
            }
        }
        // avc1 sample entry: type, 6 reserved, data reference index, 16 bytes, then width and height.
        let entry = try #require(find("stsd", after: 0).flatMap { find("avc1", after: $0) })
        put(320, bytes: 2, at: entry + 28)
        put(240, bytes: 2, at: entry + 30)
        // tkhd ends with width and height in 16.16 fixed point.
        let header = try #require(find("tkhd", after: 0))
        let size = Int(bytes[header - 4..<header].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        put(320 << 16, bytes: 4, at: header - 4 + size - 8)
        put(240 << 16, bytes: 4, at: header - 4 + size - 4)
        try Data(bytes).write(to: path)
    }

    /// Peak resident memory in KB of `pushprep` run with `arguments`, by `/usr/bin/time -f %M`,
    /// and the manifest's first entry.
    private func peakRSS(_ arguments: [String], in directory: URL) throws -> (kilobytes: Int, entry: [String: Any]) {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let report = directory.appendingPathComponent("time.txt")
        let result = try TestTools.run(
            "/usr/bin/time", ["-o", report.path, "-f", "%M", binary.path] + arguments, currentDirectory: directory)
        #expect(result.status == 1, "refused inputs exit 1: \(String(decoding: result.stderr, as: UTF8.self))")
        let text = try String(contentsOf: report, encoding: .utf8)
        let kilobytes = try #require(
            text.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.last)
        let out = directory.appendingPathComponent(arguments[arguments.firstIndex(of: "--out")! + 1])
        let manifest = try JSONSerialization.jsonObject(
            with: Data(contentsOf: out.appendingPathComponent("manifest.json")))
        let entries = try #require((manifest as? [String: Any])?["attachments"] as? [[String: Any]])
        return (kilobytes, try #require(entries.first))
    }

    /// Defect: stream probing decoded the 144-megapixel frames (with a thread each) before
    /// --max-pixels was checked: 412 MB to refuse a 424 KB file. Probing now runs its decoders
    /// with max_pixels and one thread.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "needs /usr/bin/time (Debian's time)"),
        .enabled(if: TestTools.programAvailable("ffmpeg"), "needs ffmpeg to make the small damaged file"))
    func hugeFrameCostsNoMoreThanADamagedFile() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try Self.writeHugeFrameMP4(to: dir.appendingPathComponent("huge.mp4"))
        // The damaged file: a small clip cut off after its first 3 KB.
        let clip = dir.appendingPathComponent("clip.mp4")
        try TestTools.ffmpeg(
            "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "2", "-c:v", "libx264",
            "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "+faststart", clip.path)
        try Data(try Data(contentsOf: clip).prefix(3_000)).write(to: dir.appendingPathComponent("damaged.mp4"))

        try Self.writeLyingHugeFrameMP4(to: dir.appendingPathComponent("lying.mp4"))

        let damaged = try peakRSS(["process", "damaged.mp4", "--out", "out-damaged"], in: dir)
        let huge = try peakRSS(["process", "huge.mp4", "--out", "out-huge"], in: dir)
        let lying = try peakRSS(["process", "lying.mp4", "--out", "out-lying"], in: dir)
        #expect((damaged.entry["error"] as? [String: Any])?["code"] as? String == "corrupt_input")
        for entry in [huge.entry, lying.entry] {
            let error = try #require(entry["error"] as? [String: Any])
            #expect(error["code"] as? String == "too_many_pixels", "\(error)")
            #expect((error["message"] as? String)?.contains("12000x12000") == true, "\(error)")
        }
        // The container's 12000x12000 is refused before any decoder runs: the cost of a damaged
        // file (the same process start, libraries and manifest).
        #expect(
            huge.kilobytes <= damaged.kilobytes + 16_000,
            "refusing 12000x12000 took \(huge.kilobytes) KB, a damaged file \(damaged.kilobytes) KB")
        // Headers that lie leave it to the probing decoder, which sets up its per-macroblock
        // tables (about 56 MB here) but never allocates a frame (216 MB each, one per thread
        // before: 412 MB in all).
        #expect(
            lying.kilobytes < damaged.kilobytes + 216_000,
            "refusing lying headers took \(lying.kilobytes) KB, a damaged file \(damaged.kilobytes) KB")
    }

    /// A fragmented MP4 (H.264, 4 s) whose every `tfdt` is moved by `offset` ticks of its
    /// 1/12800 time base: libav then reports the start time the file claims, however absurd.
    static func writeShiftedFragmentedMP4(to path: URL, offset: UInt64) throws {
        try TestTools.ffmpeg(
            "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-t", "4", "-c:v", "libx264",
            "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "25", "-video_track_timescale", "12800",
            "-movflags", "frag_keyframe+empty_moov+default_base_moof", path.path)
        var bytes = [UInt8](try Data(contentsOf: path))
        var shifted = 0
        var index = 0
        while index + 16 <= bytes.count {
            // A version-1 tfdt: type, version and flags, then a 64-bit baseMediaDecodeTime.
            if bytes[index..<index + 4].elementsEqual("tfdt".utf8), bytes[index + 4] == 1 {
                let value = bytes[index + 8..<index + 16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } &+ offset
                for byte in 0..<8 {
                    bytes[index + 8 + byte] = UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64(byte)))
                }
                shifted += 1
            }
            index += 1
        }
        try #require(shifted >= 4, "the fragmented MP4 has \(shifted) version-1 tfdt boxes")
        try Data(bytes).write(to: path)
    }

    /// Defect: a start time close to 2^63 µs (the container's, from a huge `tfdt`) trapped the
    /// process in the seek's seconds → microseconds conversion (Int64(Double) past Int64.max),
    /// taking every concurrent job with it. Now that input alone fails with corrupt_input.
    ///
    /// libav itself wraps a `tfdt` within 2^48 of 2^63 (2^63 − 2^48 arrives as pts 1), so the
    /// packet sums in the copy path cannot be pushed past Int64.max by this box; they are
    /// checked all the same.
    @Test(.enabled(if: TestTools.programAvailable("ffmpeg"), "needs ffmpeg to make the fragmented MP4"))
    func startTimeNearTwoToTheSixtyThreeIsCorruptNotATrap() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        // Ticks of 1/12800 s whose start time is 1 s short of Int64.max microseconds.
        let offset = UInt64(
            (Int64.max - 1_000_000) / 1_000_000 * 12_800 + (Int64.max - 1_000_000) % 1_000_000 * 12_800 / 1_000_000)
        try Self.writeShiftedFragmentedMP4(to: dir.appendingPathComponent("edge.mp4"), offset: offset)
        try Self.writeShiftedFragmentedMP4(to: dir.appendingPathComponent("plain.mp4"), offset: 0)
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let result = try TestTools.run(
            binary.path, ["process", "edge.mp4", "plain.mp4", "--video-start", "2", "--out", "out"],
            currentDirectory: dir)
        #expect(
            result.status == 1,
            "exit 1 (one input failed), not a crash: \(String(decoding: result.stderr, as: UTF8.self))")
        let manifest = try JSONSerialization.jsonObject(
            with: Data(contentsOf: dir.appendingPathComponent("out/manifest.json")))
        let entries = try #require((manifest as? [String: Any])?["attachments"] as? [[String: Any]])
        try #require(entries.count == 2)
        let edge = try #require(entries.first { $0["source"] as? String == "edge.mp4" })
        let plain = try #require(entries.first { $0["source"] as? String == "plain.mp4" })
        let error = try #require(edge["error"] as? [String: Any], "\(edge)")
        #expect(error["code"] as? String == "corrupt_input")
        #expect((error["message"] as? String)?.contains("out of range") == true, "\(error)")
        #expect(plain["status"] as? String == "ok", "the same file without the shift is fine: \(plain)")
    }

    @Test func checkedTimestampArithmetic() throws {
        #expect(try MediaTime.sum(1, 2) == 3)
        #expect(throws: PushPrepError.self) { try MediaTime.sum(Int64.max - 10, 11) }
        #expect(throws: PushPrepError.self) { try MediaTime.difference(Int64.min + 1, 2) }
        #expect(try MediaTime.microseconds(1.5) == 1_500_000)
        #expect(throws: PushPrepError.self) { try MediaTime.microseconds(9.3e12) }
        #expect(throws: PushPrepError.self) { try MediaTime.microseconds(.nan) }
        #expect(try MediaTime.integer(-9.2e18, "x") == -9_200_000_000_000_000_000)
    }

    /// Defect: the output was opened with every protocol libav has, so an output path that
    /// reads like a URL ("tcp://host:port") connected out. Only the file protocol opens now:
    /// a listener on 127.0.0.1 sees no connection, and the open fails.
    @Test func outputOpensOnlyFiles() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 4) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        #expect(throws: PushPrepError.self) {
            _ = try MediaOutput(path: "tcp://127.0.0.1:\(port)", format: "mp4", deadline: MediaDeadline(seconds: 5))
        }
        // No connection is waiting to be accepted.
        var poll = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        #expect(Glibc.poll(&poll, 1, 200) == 0, "the output connected to 127.0.0.1:\(port)")
    }
}
