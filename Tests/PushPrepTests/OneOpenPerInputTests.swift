import Foundation
import PushPrepTestSupport
import Testing

/// An input is opened once on the image path: the descriptor that is hashed is the one libvips
/// reads the header from and decodes from, at every width the fit ladder tries.
///
/// Counted on the built `pushprep` with strace, which records every `open`/`openat` the process
/// and its threads make; and checked for interference between inputs that run at once (every
/// input's single source shares its offset with nothing but itself).
@Suite(.serialized)
struct OneOpenPerInputTests {
    static let canTrace = TestTools.programAvailable("strace") && TestTools.programAvailable("vips")

    /// Still images of every libvips-decoded type, each big and noisy enough that the first
    /// width misses `--image-max-bytes 10000` and the ladder decodes it again smaller.
    private static func makeInputs(in directory: URL) throws -> [String] {
        let noise = directory.appendingPathComponent("noise.v").path
        try TestTools.vips("gaussnoise", noise, "1600", "1000", "--mean", "128", "--sigma", "60")
        var names: [String] = []
        for ext in ["jpg", "png", "webp", "tif", "gif"] {
            let name = "noise.\(ext)"
            try TestTools.vips("copy", noise, directory.appendingPathComponent(name).path)
            names.append(name)
        }
        return names
    }

    @Test(
        "each image input is opened exactly once, however many widths are decoded",
        .enabled(if: canTrace, "needs strace and the vips command-line tool"))
    func oneOpenPerInput() throws {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let inputs = try Self.makeInputs(in: dir)
        let trace = dir.appendingPathComponent("trace.log").path

        let result = try TestTools.run(
            "strace",
            ["-f", "-qq", "-e", "trace=open,openat,openat2", "-o", trace, binary.path, "process"] + inputs + [
                "--out", "out", "--image-max-bytes", "10000", "--jobs", "2",
            ],
            currentDirectory: dir, timeout: .seconds(300))
        #expect(result.status == 0, "stderr: \(String(decoding: result.stderr, as: UTF8.self))")

        let entries = try Self.entries(dir.appendingPathComponent("out/manifest.json"))
        try #require(entries.count == inputs.count)
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        for (name, entry) in zip(inputs, entries) {
            #expect(entry["status"] as? String == "ok", "\(name): \(entry)")
            let operations = entry["operations"] as? [String] ?? []
            #expect(
                operations.contains { $0.hasPrefix("reduced width to") },
                "\(name) was decoded at more than one width: \(operations)")
            let opens = lines.filter { $0.contains("\"\(name)\"") }
            #expect(opens.count == 1, "\(name) opened \(opens.count) times:\n\(opens.joined(separator: "\n"))")
        }
        let reopens = lines.filter { $0.contains("/proc/self/fd/") }
        #expect(reopens.isEmpty, "an image was opened again by descriptor path:\n\(reopens.joined(separator: "\n"))")
    }

    @Test(
        "inputs decoded at once, the same file among them twice, give what one at a time gives",
        .enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func concurrentInputsMatchSequential() throws {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let inputs = try Self.makeInputs(in: dir)
        // The same file given twice: two inputs, two descriptors, two sources on one inode.
        let arguments = inputs + ["noise.jpg", "noise.png"]

        var outputs: [[String: String]] = []
        for jobs in [1, 4] {
            let out = "out-\(jobs)"
            let result = try TestTools.run(
                binary.path,
                ["process"] + arguments + ["--out", out, "--image-max-bytes", "10000", "--jobs", "\(jobs)"],
                currentDirectory: dir, timeout: .seconds(300))
            #expect(result.status == 0, "--jobs \(jobs): \(String(decoding: result.stderr, as: UTF8.self))")
            let entries = try Self.entries(dir.appendingPathComponent("\(out)/manifest.json"))
            try #require(entries.count == arguments.count)
            var hashes: [String: String] = [:]
            for (index, entry) in entries.enumerated() {
                #expect(entry["source"] as? String == arguments[index])
                let file = try #require(entry["file"] as? String, "--jobs \(jobs), \(arguments[index]): \(entry)")
                let bytes = try Data(contentsOf: dir.appendingPathComponent("\(out)/\(file)"))
                // Whichever of two identical outputs lands second is reused, not written: the last
                // operation says which, and is left out.
                let operations = (entry["operations"] as? [String] ?? []).filter {
                    !$0.hasPrefix("wrote ") && !$0.hasPrefix("reused identical existing output ")
                }
                hashes["\(index) \(arguments[index])"] =
                    "\(file) \(entry["sha256"] as? String ?? "-") \(bytes.count) \(operations)"
            }
            outputs.append(hashes)
        }
        #expect(outputs[0] == outputs[1])
        // The twice-given files are the same attachment each time.
        #expect(outputs[1]["0 noise.jpg"] == outputs[1]["5 noise.jpg"])
        #expect(outputs[1]["1 noise.png"] == outputs[1]["6 noise.png"])
    }

    private static func entries(_ manifest: URL) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: manifest))
        return try #require((object as? [String: Any])?["attachments"] as? [[String: Any]])
    }
}
