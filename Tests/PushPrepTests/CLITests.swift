import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrep
@testable import PushPrepCore
@testable import PushPrepQueue

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// End-to-end tests of the built `pushprep` executable, run as real processes: exit codes,
/// the manifest, standard output and error, input expansion, reuse, and crash safety.
///
/// Fixtures are generated with the `vips` command-line tool into a temporary directory.
@Suite(.serialized)
struct CLITests {
    // MARK: - Exit status 0

    @Test(.enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func everyInputSucceedsExitsZeroWithCompleteManifest() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try CLI.smallJPEGs(in: dir, "a.jpg", "b.jpg")

        let result = try CLI.pushprep(["process", "a.jpg", "b.jpg", "--out", "out"], in: dir)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        #expect(!result.stderr.contains(UInt8(ascii: "\r")), "no progress bar when stderr is not a terminal")

        let out = dir.appendingPathComponent("out")
        let entries = try CLI.attachments(try Data(contentsOf: out.appendingPathComponent("manifest.json")))
        try #require(entries.count == 2)
        #expect(entries.map { $0["source"] as? String } == ["a.jpg", "b.jpg"])
        let sha256sum = TestTools.programPath("sha256sum")
        for entry in entries {
            #expect(entry["status"] as? String == "ok")
            let id = try #require(entry["id"] as? String)
            let file = try #require(entry["file"] as? String)
            #expect(entry["mime"] as? String == "image/jpeg")
            #expect(file == "\(id).jpg", "JPEG outputs are named <id>.jpg")
            #expect(entry["url"] is NSNull, "no --base-url: url is null")
            let path = out.appendingPathComponent(file).path
            let data = try #require(FileManager.default.contents(atPath: path), "\(file) is missing")
            #expect(data.count == entry["bytes"] as? Int)
            #expect(Array(data.prefix(3)) == [0xFF, 0xD8, 0xFF], "\(file) is a JPEG")
            if sha256sum != nil {
                let hash = try TestTools.runChecked("sha256sum", [path])
                let hex = String(decoding: hash, as: UTF8.self).split(separator: " ").first.map(String.init)
                #expect(hex == entry["sha256"] as? String)
            }
        }
        let outputs = try CLI.visibleNames(in: out).filter { $0 != "manifest.json" }
        let renditions = entries.flatMap { entry in
            ((entry["renditions"] as? [String: [String: Any]]) ?? [:]).values.compactMap { $0["file"] as? String }
        }
        #expect(renditions.count == entries.count, "an Android rendition of each (the default platforms)")
        #expect(
            Set(outputs) == Set(entries.compactMap { $0["file"] as? String } + renditions),
            "nothing but the outputs and their renditions")
    }

    // MARK: - Exit status 1

    @Test(.enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func anyFailedInputExitsOneWithCompleteManifest() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try CLI.smallJPEGs(in: dir, "good.jpg")
        try Data("just some notes\n".utf8).write(to: dir.appendingPathComponent("notes.txt"))

        let result = try CLI.pushprep(["process", "good.jpg", "notes.txt", "missing.jpg", "--out", "out"], in: dir)
        #expect(result.status == 1, "stderr: \(result.stderrText)")

        let entries = try CLI.attachments(try Data(contentsOf: dir.appendingPathComponent("out/manifest.json")))
        try #require(entries.count == 3)
        #expect(entries.map { $0["source"] as? String } == ["good.jpg", "notes.txt", "missing.jpg"])
        #expect(entries.map { $0["status"] as? String } == ["ok", "failed", "failed"])
        #expect(CLI.errorCode(entries[1]) == "unsupported_type")
        #expect(CLI.errorCode(entries[2]) == "not_found")
        let good = try #require(entries[0]["file"] as? String)
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/\(good)").path))

        let stderr = result.stderrText
        #expect(stderr.contains("notes.txt") && stderr.contains("unsupported_type"), "stderr: \(stderr)")
        #expect(stderr.contains("missing.jpg") && stderr.contains("not_found"), "stderr: \(stderr)")
        #expect(!stderr.contains("good.jpg"), "only failures are named on stderr: \(stderr)")
    }

    @Test(
        "--isolation process writes what --isolation none writes, failures included, and leaves no staging",
        .enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func isolationProcessMatchesNone() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try CLI.smallJPEGs(in: dir, "good.jpg", "other.jpg")
        try Data("just some notes\n".utf8).write(to: dir.appendingPathComponent("notes.txt"))
        let arguments = ["process", "good.jpg", "notes.txt", "missing.jpg", "other.jpg", "--jobs", "2"]

        let isolated = try CLI.pushprep(arguments + ["--out", "isolated", "--isolation", "process"], in: dir)
        let inProcess = try CLI.pushprep(arguments + ["--out", "in-process", "--isolation", "none"], in: dir)
        #expect(isolated.status == 1, "stderr: \(isolated.stderrText)")
        #expect(inProcess.status == 1, "stderr: \(inProcess.stderrText)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("isolated").path)
        #expect(
            names.sorted()
                == (try FileManager.default.contentsOfDirectory(
                    atPath: dir.appendingPathComponent("in-process").path)).sorted(),
            "the same files, and nothing else (no staging directory)")
        for name in names {
            #expect(
                FileManager.default.contents(atPath: dir.appendingPathComponent("isolated/\(name)").path)
                    == FileManager.default.contents(atPath: dir.appendingPathComponent("in-process/\(name)").path),
                "\(name) differs")
        }
    }

    @Test("--isolation process takes URLs: the parent fetches, a decoder decodes; the same outputs as in process")
    func isolationProcessFetchesURLs() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try CLI.smallJPEGs(in: dir, "remote.jpg")
        let bytes = try Data(contentsOf: dir.appendingPathComponent("remote.jpg"))
        try await TestServer.with(files: ["remote.jpg": [UInt8](bytes)]) { server in
            let arguments = ["process", server.url("/files/remote.jpg"), "--allow-private-networks", "--list"]
            let isolated = try await PushPrepCLI.runAsync(
                arguments + ["--out", "isolated", "--isolation", "process"], in: dir)
            let inProcess = try await PushPrepCLI.runAsync(
                arguments + ["--out", "in-process", "--isolation", "none"], in: dir)
            #expect(isolated.status == 0, "stderr: \(isolated.stderrText)")
            #expect(inProcess.status == 0, "stderr: \(inProcess.stderrText)")
            let source = server.url("/files/remote.jpg")
            #expect(isolated.stdoutText.contains("ok      \(source)"), "\(isolated.stdoutText)")
            let names = try OutDirectory.visibleNames(in: dir.appendingPathComponent("isolated")).sorted()
            let inProcessNames = try OutDirectory.visibleNames(in: dir.appendingPathComponent("in-process"))
            #expect(names == inProcessNames.sorted())
            #expect(names.contains { $0.hasPrefix("img-") }, "\(names)")
            for name in names where name != "manifest.json" {
                #expect(
                    FileManager.default.contents(atPath: dir.appendingPathComponent("isolated/\(name)").path)
                        == FileManager.default.contents(atPath: dir.appendingPathComponent("in-process/\(name)").path),
                    "\(name) differs")
            }
        }
    }

    // MARK: - Exit status 2

    struct UsageCase: Sendable, CustomTestStringConvertible {
        let name: String
        let arguments: [String]
        var testDescription: String { name }
    }

    @Test(arguments: [
        UsageCase(name: "no inputs", arguments: ["process"]),
        UsageCase(name: "--quality 0", arguments: ["process", "photo.jpg", "--quality", "0"]),
        UsageCase(
            name: "--image-max-bytes above Apple's limit",
            arguments: ["process", "photo.jpg", "--image-max-bytes", "20000000"]),
        UsageCase(name: "unknown flag", arguments: ["process", "photo.jpg", "--no-such-flag"]),
        UsageCase(
            name: "--base-url without a scheme", arguments: ["process", "photo.jpg", "--base-url", "cdn.example.com"]),
        UsageCase(
            name: "--base-url with a fragment",
            arguments: ["process", "photo.jpg", "--base-url", "https://cdn.example.com/push#top"]),
        UsageCase(
            name: "--base-url without a host", arguments: ["process", "photo.jpg", "--base-url", "https:///push"]),
        UsageCase(name: "a directory without files", arguments: ["process", "empty"]),
    ])
    func usageErrorsExitTwo(_ usage: UsageCase) throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("empty"), withIntermediateDirectories: false)

        let result = try CLI.pushprep(usage.arguments + ["--out", "out"], in: dir)
        #expect(result.status == 2, "\(usage.name): exit \(result.status), stderr: \(result.stderrText)")
        #expect(result.stderrText.contains("Error"), "\(usage.name): the error is explained on stderr")
        #expect(result.stdout.isEmpty, "\(usage.name): nothing on stdout")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out").path), "nothing written")
    }

    /// Numbers that are not finite or far out of range are usage errors naming the option (exit
    /// 2, nothing written), never a crash: `--delay inf` and `--job-timeout nan` once trapped
    /// converting seconds to a `Duration`.
    @Test(arguments: [
        UsageCase(name: "enqueue --delay inf", arguments: ["enqueue", "--delay", "inf", "photo.jpg"]),
        UsageCase(name: "enqueue --delay 1e300", arguments: ["enqueue", "--delay", "1e300", "photo.jpg"]),
        UsageCase(name: "enqueue --job-timeout nan", arguments: ["enqueue", "--job-timeout", "nan", "photo.jpg"]),
        UsageCase(name: "enqueue --video-start inf", arguments: ["enqueue", "--video-start", "inf", "photo.jpg"]),
        UsageCase(name: "worker --lease 1e300", arguments: ["worker", "--lease", "1e300"]),
        UsageCase(name: "worker --poll-interval nan", arguments: ["worker", "--poll-interval", "nan"]),
        UsageCase(name: "worker --retention inf", arguments: ["worker", "--retention", "inf"]),
        UsageCase(name: "worker --retry-max 1e300", arguments: ["worker", "--retry-max", "1e300"]),
        UsageCase(name: "worker --drain-timeout -inf", arguments: ["worker", "--drain-timeout=-inf"]),
        UsageCase(name: "jobs prune --older-than nan", arguments: ["jobs", "prune", "--older-than", "nan"]),
        UsageCase(name: "preflight --fetch-max-urls 0", arguments: ["preflight", "--fetch-max-urls", "0", "p.json"]),
        UsageCase(
            name: "preflight --fetch-max-bytes 1e20", arguments: ["preflight", "--fetch-max-bytes", "1e20", "p.json"]),
        UsageCase(
            name: "preflight --fetch-max-bytes 99999999999",
            arguments: ["preflight", "--fetch-max-bytes", "99999999999", "p.json"]),
        UsageCase(
            name: "process --video-start 1e13",
            arguments: ["process", "photo.jpg", "--video-start", "1e13", "--out", "o"]),
        UsageCase(
            name: "process --memory-limit 500 (bytes, below 16 MiB)",
            arguments: ["process", "photo.jpg", "--memory-limit", "500", "--out", "o"]),
        UsageCase(name: "worker --memory-limit 2XB", arguments: ["worker", "--memory-limit", "2XB"]),
        UsageCase(name: "worker --memory-limit 1e300", arguments: ["worker", "--memory-limit", "1e300"]),
        UsageCase(name: "serve --memory-limit 99999999TiB", arguments: ["serve", "--memory-limit", "99999999TiB"]),
    ])
    func nonFiniteOrHugeNumbersExitTwo(_ usage: UsageCase) throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try Data([0xFF, 0xD8, 0xFF]).write(to: dir.appendingPathComponent("photo.jpg"))

        let result = try CLI.pushprep(usage.arguments, in: dir)
        #expect(result.status == 2, "\(usage.name): exit \(result.status), stderr: \(result.stderrText)")
        let option = try #require(usage.arguments.first { $0.hasPrefix("--") }?.split(separator: "=").first)
        #expect(result.stderrText.contains(option), "\(usage.name): the message names \(option): \(result.stderrText)")
        #expect(result.stdout.isEmpty, "\(usage.name): nothing on stdout")
        let written = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(written == ["photo.jpg"], "\(usage.name): nothing written, found \(written)")
    }

    // MARK: - Standard output and input

    @Test(.enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func manifestDashPrintsOnlyJSONOnStdout() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try CLI.smallJPEGs(in: dir, "a.jpg", "b.jpg")

        let result = try CLI.pushprep(["process", "a.jpg", "b.jpg", "--out", "out", "--manifest", "-"], in: dir)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        // The whole of stdout must parse as one JSON document: nothing else is printed there.
        let entries = try CLI.attachments(result.stdout)
        #expect(entries.map { $0["source"] as? String } == ["a.jpg", "b.jpg"])
        #expect(result.stderrText.contains("2 of 2"), "the summary goes to stderr: \(result.stderrText)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/manifest.json").path))
    }

    @Test(.enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func dashReadsPathsFromStdinInOrder() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try CLI.smallJPEGs(in: dir, "a.jpg", "b.jpg", "c.jpg")

        let stdin = Data("c.jpg\na.jpg\n\nb.jpg\n".utf8)
        let result = try CLI.pushprep(["process", "-", "--out", "out", "--manifest", "-"], in: dir, stdin: stdin)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        let entries = try CLI.attachments(result.stdout)
        #expect(entries.map { $0["source"] as? String } == ["c.jpg", "a.jpg", "b.jpg"])
        #expect(entries.allSatisfy { $0["status"] as? String == "ok" })
    }

    @Test(.enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func directoryExpandsRecursivelySortedWithoutHiddenFiles() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let fm = FileManager.default
        for sub in ["in/b", "in/c", "in/.hidden-dir"] {
            try fm.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        // Created out of order on purpose; a recursive, path-sorted walk gives the order below.
        try CLI.smallJPEGs(
            in: dir, "in/z.jpg", "in/c/1.jpg", "in/a.jpg", "in/b/2.jpg", "in/.hidden.jpg", "in/.hidden-dir/x.jpg")

        let result = try CLI.pushprep(["process", "in", "--out", "out", "--manifest", "-"], in: dir)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        let entries = try CLI.attachments(result.stdout)
        #expect(entries.map { $0["source"] as? String } == ["in/a.jpg", "in/b/2.jpg", "in/c/1.jpg", "in/z.jpg"])
    }

    @Test(
        .enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"),
        arguments: [
            ("https://cdn.example.com/push", ""), ("https://cdn.example.com/push/", ""),
            // A container-wide token in the query (an Azure SAS, say) stays after each file name.
            ("https://cdn.example.com/push?sv=1&sig=a/b%3D", "?sv=1&sig=a/b%3D"),
        ])
    func baseURLPrefixesEveryFile(_ baseURL: String, _ query: String) throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try CLI.smallJPEGs(in: dir, "a.jpg", "b.jpg")

        let result = try CLI.pushprep(
            ["process", "a.jpg", "b.jpg", "--out", "out", "--manifest", "-", "--base-url", baseURL], in: dir)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        let entries = try CLI.attachments(result.stdout)
        try #require(entries.count == 2)
        for entry in entries {
            let file = try #require(entry["file"] as? String)
            #expect(entry["url"] as? String == "https://cdn.example.com/push/" + file + query)
        }
    }

    // MARK: - Reuse

    @Test(.enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func secondRunReusesIdenticalOutputs() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try CLI.smallJPEGs(in: dir, "a.jpg", "b.jpg")
        let arguments = ["process", "a.jpg", "b.jpg", "--out", "out"]
        let manifest = dir.appendingPathComponent("out/manifest.json")

        let first = try CLI.pushprep(arguments, in: dir)
        #expect(first.status == 0, "stderr: \(first.stderrText)")
        let firstEntries = try CLI.attachments(try Data(contentsOf: manifest))
        let second = try CLI.pushprep(arguments, in: dir)
        #expect(second.status == 0, "stderr: \(second.stderrText)")
        let secondEntries = try CLI.attachments(try Data(contentsOf: manifest))

        try #require(firstEntries.count == 2 && secondEntries.count == 2)
        #expect(firstEntries.map { $0["id"] as? String } == secondEntries.map { $0["id"] as? String })
        #expect(firstEntries.map { $0["sha256"] as? String } == secondEntries.map { $0["sha256"] as? String })
        for entry in firstEntries {
            #expect(
                !CLI.operations(entry).contains { $0.contains("reused") }, "first run writes: \(CLI.operations(entry))")
        }
        for entry in secondEntries {
            #expect(
                CLI.operations(entry).contains { $0.contains("reused") }, "second run reuses: \(CLI.operations(entry))")
        }
        #expect(
            try CLI.visibleNames(in: dir.appendingPathComponent("out")).count == 5,
            "two outputs, their Android renditions and the manifest")
    }

    // MARK: - Crash safety

    /// SIGKILL mid-run: no final name holds a partial file, the manifest is absent or whole,
    /// and the next run completes and clears the dead process's temporaries.
    @Test(
        .enabled(
            if: TestTools.programAvailable("vips") && TestTools.programAvailable("vipsheader"),
            "needs vips and vipsheader"))
    func killedRunLeavesOnlyCompleteFiles() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let inputs = dir.appendingPathComponent("in")
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: false)

        // One 3000x2000 noise JPEG, then 40 distinct inputs made from it by adding a JPEG
        // comment segment: different source hashes (so different ids and outputs) for the cost
        // of a single encode.
        let count = 40
        let seed = dir.appendingPathComponent("seed.jpg").path
        try TestTools.vips("gaussnoise", seed, "3000", "2000")
        let seedBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: seed)))
        try #require(seedBytes.starts(with: [0xFF, 0xD8]))
        for index in 0..<count {
            let comment = Array("pushprep crash test \(index)".utf8)
            let length = comment.count + 2
            let bytes = [0xFF, 0xD8, 0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + comment + seedBytes[2...]
            try Data(bytes).write(to: inputs.appendingPathComponent(String(format: "noise-%02d.jpg", index)))
        }
        let arguments = ["process", "in", "--out", "out", "--jobs", "2"]

        // Start, wait for the first output, kill. The watch runs on its own thread: other
        // suites' blocking subprocess calls can hold every cooperative thread for seconds,
        // long enough for the whole run to finish unseen.
        let running = try CLI.Running(try CLI.binary(), arguments, in: dir)
        let killedPID = running.pid
        let sawOutput = await running.send(SIGKILL, within: .seconds(120)) {
            (try? CLI.visibleNames(in: out))?.contains(where: { $0.hasSuffix(".jpg") }) ?? false
        }
        let killed = await running.wait()
        try #require(sawOutput, "pushprep finished (exit \(killed.status)) or hung before its first output appeared")
        #expect(killed.killedBySignal == SIGKILL, "pushprep had finished before the kill; the test proves nothing")

        // Every visible file is complete: the manifest is absent or valid JSON, every other
        // file is an image that decodes fully.
        let names = try CLI.visibleNames(in: out)
        #expect(names.count < 2 * count + 1, "the run was interrupted before writing everything (and renditions)")
        for name in names {
            let path = out.appendingPathComponent(name).path
            if name == "manifest.json" {
                #expect(throws: Never.self, "manifest.json is half-written") {
                    _ = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: path)))
                }
                continue
            }
            #expect(name.hasSuffix(".jpg"), "unexpected file \(name) under a final name")
            let header = try TestTools.run("vipsheader", [path])
            #expect(
                header.status == 0, "\(name) has no valid header: \(String(decoding: header.stderr, as: UTF8.self))")
            // A truncated JPEG only warns by default; fail_on=warning makes it an error.
            let decode = try TestTools.run("vips", ["avg", path + "[fail_on=warning]"])
            #expect(decode.status == 0, "\(name) does not decode: \(String(decoding: decode.stderr, as: UTF8.self))")
        }

        // Stand-ins for temporaries: one of the killed process (stale), one of a live process
        // (this test runner), which a new run must leave alone.
        let stale = ".pushprep-tmp-\(killedPID)-1234-img-stale.jpg"
        let live = ".pushprep-tmp-\(getpid())-1234-img-live.jpg"
        try Data([0xFF, 0xD8]).write(to: out.appendingPathComponent(stale))
        try Data([0xFF, 0xD8]).write(to: out.appendingPathComponent(live))

        // Run again to completion in the same out dir.
        let rerun = try CLI.pushprep(arguments, in: dir)
        #expect(rerun.status == 0, "stderr: \(rerun.stderrText)")
        #expect(!rerun.stderr.contains(UInt8(ascii: "\r")), "no progress bar when stderr is not a terminal")
        let entries = try CLI.attachments(try Data(contentsOf: out.appendingPathComponent("manifest.json")))
        #expect(entries.count == count)
        #expect(entries.allSatisfy { $0["status"] as? String == "ok" })
        for entry in entries {
            let file = try #require(entry["file"] as? String)
            let size = (try? FileManager.default.attributesOfItem(atPath: out.appendingPathComponent(file).path))?[
                .size]
            #expect((size as? NSNumber)?.intValue == entry["bytes"] as? Int, "\(file) is complete")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out.path)
            .filter { $0.hasPrefix(".pushprep-tmp-") }
        #expect(
            !leftovers.contains { $0.hasPrefix(".pushprep-tmp-\(killedPID)-") },
            "stale temporaries remain: \(leftovers)")
        #expect(leftovers == [live], "only the live process's temporary may remain: \(leftovers)")
    }

    // MARK: - Memory budget

    /// An input whose estimate is over the whole `--memory-limit` is processed alone, never
    /// refused, and the log says so; the help gives the default on this machine.
    @Test(.enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
    func memoryLimitBelowAnInputRunsItAlone() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        // RGBA: premultiplied in float for the resize, about 29 MB estimated.
        try TestTools.vips("black", dir.appendingPathComponent("big.png").path, "3000", "2000", "--bands", "4")
        try CLI.smallJPEGs(in: dir, "a.jpg")

        let result = try CLI.pushprep(
            ["process", "big.png", "a.jpg", "--out", "out", "--jobs", "2", "--memory-limit", "16MiB"], in: dir)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        #expect(result.stderrText.contains("over the whole memory budget"), "stderr: \(result.stderrText)")
        #expect(result.stderrText.contains("big.png"), "the warning names the input: \(result.stderrText)")

        // Words, whatever the wrapping.
        let help = try CLI.pushprep(["process", "--help"], in: dir).stdoutText
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let expected = ByteCountText.describe(MemoryBudget.defaultLimit())
        #expect(help.contains("--memory-limit <bytes>") && help.contains("(here \(expected))"), "\(help)")
    }

    // MARK: - Help and version

    @Test(arguments: [["process", "--help"], ["inspect", "--help"], ["help", "process"]])
    func subcommandHelpHasExamples(_ arguments: [String]) throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let result = try CLI.pushprep(arguments, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        #expect(result.stdoutText.contains("Examples"), "stdout: \(result.stdoutText)")
    }

    /// `process` handles movies and sounds too; its help said "images".
    @Test func processHelpNamesEveryKind() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let result = try CLI.pushprep(["process", "--help"], in: dir)
        let overview = result.stdoutText.prefix { $0 != "\n" }
        #expect(overview.contains("images, movies and sounds"), "overview: \(overview)")
    }

    // MARK: - Every setting an option

    /// Every declared setting is an option of `process` and `enqueue` (but `--jobs`, which
    /// workers decide), named and explained as declared, the accepted values included.
    @Test(arguments: ["process", "enqueue"])
    func helpShowsEverySetting(_ command: String) throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let result = try CLI.pushprep([command, "--help"], in: dir)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        // ArgumentParser wraps the help: compare with the line breaks and indents as spaces.
        let help = result.stdoutText.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for setting in ProcessingSettings.Declared.all where !(command == "enqueue" && setting.key == "jobs") {
            #expect(help.contains("--\(setting.option) <\(setting.option)>"), "\(command) has --\(setting.option)")
            // enqueue says whose out directory --base-url is about.
            let text = command == "enqueue" && setting.key == "baseURL" ? "Must be an http(s) URL" : setting.help
            #expect(help.contains(text), "\(command) --\(setting.option) says: \(text)")
        }
    }

    /// `process` takes every declared setting from its option: a value unlike the default for
    /// each comes back in the manifest's settings.
    @Test func processCopiesEveryOption() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try Data([0xFF, 0xD8, 0xFF]).write(to: dir.appendingPathComponent("photo.jpg"))
        let expected = SettingsFixtures.changed
        let result = try CLI.pushprep(
            ["process", "photo.jpg", "--out", "out", "--manifest", "-"] + CLI.options(expected), in: dir)
        #expect(result.status == 1, "a cut JPEG fails, the run completes: \(result.stderrText)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let settings = try JSONSerialization.data(withJSONObject: try #require(manifest["settings"]))
        #expect(try JSONDecoder().decode(ProcessingSettings.self, from: settings) == expected)
    }

    /// `enqueue` queues every declared setting from its option (`jobs` is 1 in a job: workers
    /// decide), the same for every input.
    @Test func enqueueCopiesEveryOption() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        var expected = SettingsFixtures.changed
        expected.jobs = 1
        let queue = ["--queue", "sqlite:\(dir.appendingPathComponent("queue.db").path)"]
        for name in ["a.jpg", "b.jpg"] { try Data([0xFF, 0xD8, 0xFF]).write(to: dir.appendingPathComponent(name)) }
        let enqueued = try CLI.pushprep(
            ["enqueue", "a.jpg", "b.jpg"] + queue + CLI.options(expected, except: ["jobs"]), in: dir)
        #expect(enqueued.status == 0, "stderr: \(enqueued.stderrText)")
        let ids = enqueued.stdoutText.split(separator: "\n").map(String.init)
        #expect(ids.count == 2, "one job per input: \(enqueued.stdoutText)")
        for id in ids {
            let shown = try CLI.pushprep(["jobs", "show", id, "--json"] + queue, in: dir)
            #expect(shown.status == 0, "stderr: \(shown.stderrText)")
            let job = try #require(try JSONSerialization.jsonObject(with: shown.stdout) as? [String: Any])
            let settings = try JSONSerialization.data(withJSONObject: try #require(job["settings"], "job \(id)"))
            #expect(try JSONDecoder().decode(ProcessingSettings.self, from: settings) == expected, "job \(id)")
        }
    }

    /// Issue 28: `enqueue missing.jpg` printed a job id and exited 0; the job failed later, in a
    /// worker. A local path that does not exist or cannot be read here is a usage error, and
    /// nothing is queued, unless `--no-check` says the workers see another file system.
    @Test func enqueueRefusesAPathItCannotRead() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let queue = ["--queue", "sqlite:\(dir.appendingPathComponent("queue.db").path)"]
        try Data([0xFF, 0xD8, 0xFF]).write(to: dir.appendingPathComponent("here.jpg"))
        let missing = try CLI.pushprep(["enqueue", "here.jpg", "missing.jpg"] + queue, in: dir)
        #expect(missing.status == 2, "stdout: \(missing.stdoutText) stderr: \(missing.stderrText)")
        #expect(missing.stderrText.contains("not_found"), "\(missing.stderrText)")
        #expect(missing.stderrText.contains("missing.jpg") && missing.stderrText.contains("--no-check"))
        #expect(missing.stdoutText.isEmpty, "no job id")
        let listed = try CLI.pushprep(["jobs", "list", "--json"] + queue, in: dir)
        #expect(listed.status == 0, "\(listed.stderrText)")
        #expect((try JSONSerialization.jsonObject(with: listed.stdout) as? [Any])?.isEmpty == true, "nothing queued")

        let unchecked = try CLI.pushprep(["enqueue", "missing.jpg", "--no-check"] + queue, in: dir)
        #expect(unchecked.status == 0, "\(unchecked.stderrText)")
        #expect(unchecked.stdoutText.split(separator: "\n").count == 1, "one job: \(unchecked.stdoutText)")
        // A URL is the workers' to fetch: never checked here.
        let url = try CLI.pushprep(["enqueue", "https://media.example.com/a.jpg"] + queue, in: dir)
        #expect(url.status == 0, "\(url.stderrText)")
    }

    @Test func versionPrintsAVersion() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let result = try CLI.pushprep(["--version"], in: dir)
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        let version = result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version.wholeMatch(of: /\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?/) != nil, "stdout: \(result.stdoutText)")
    }
}

// MARK: - Helpers

/// Helpers private to these tests; the shared ones are in `Support/TestTools.swift`.
private enum CLI {
    struct Result {
        var status: Int32
        var killedBySignal: Int32?
        var stdout: Data
        var stderr: Data
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// The built `pushprep`; fails the test when it is not there.
    static func binary() throws -> URL {
        try #require(TestTools.pushprepBinary(), "the pushprep executable was not built (swift build --build-tests)")
    }

    /// Runs `pushprep` in `directory`, bounded to 120 s (``TestTools/run`` kills and throws).
    static func pushprep(_ arguments: [String], in directory: URL, stdin: Data? = nil) throws -> Result {
        let result = try TestTools.run(try binary().path, arguments, stdin: stdin, currentDirectory: directory)
        return Result(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// `--option value` for every declared setting but those with a key in `except`, with its
    /// value in `settings`.
    static func options(_ settings: ProcessingSettings, except: Set<String> = []) -> [String] {
        ProcessingSettings.Declared.all.filter { !except.contains($0.key) }.flatMap { setting in
            let value = setting.value(in: settings)
            // An optional setting's value unwrapped (`--focus 0.25,0.75`, not `Optional(…)`).
            return ["--\(setting.option)", (value as? any CustomStringConvertible)?.description ?? "\(value)"]
        }
    }

    /// Writes small, distinct JPEGs (paths relative to `directory`).
    static func smallJPEGs(in directory: URL, _ names: String...) throws {
        for (index, name) in names.enumerated() {
            let path = directory.appendingPathComponent(name).path
            try TestTools.vips("gaussnoise", path, "\(64 + 8 * index)", "\(48 + 4 * index)")
        }
    }

    /// The entries of a manifest, which must parse as a whole as one JSON object.
    static func attachments(_ data: Data) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: data)
        let manifest = try #require(object as? [String: Any], "the manifest is not a JSON object")
        return try #require(manifest["attachments"] as? [[String: Any]], "the manifest has no attachments array")
    }

    static func errorCode(_ entry: [String: Any]) -> String? {
        (entry["error"] as? [String: Any])?["code"] as? String
    }

    static func operations(_ entry: [String: Any]) -> [String] {
        entry["operations"] as? [String] ?? []
    }

    /// Names in `directory` that do not start with a dot.
    static func visibleNames(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// A started process whose output goes to files, for tests that act while it runs.
    final class Running {
        private let process = Process()
        private let scratch: URL
        private let started = ContinuousClock.now

        init(_ executable: URL, _ arguments: [String], in directory: URL) throws {
            scratch = try TestTools.temporaryDirectory()
            let outURL = scratch.appendingPathComponent("stdout")
            let errURL = scratch.appendingPathComponent("stderr")
            _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
            _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
            process.executableURL = executable
            process.arguments = arguments
            process.currentDirectoryURL = directory
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = try FileHandle(forWritingTo: outURL)
            process.standardError = try FileHandle(forWritingTo: errURL)
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            TestTools.removeDirectory(scratch)
        }

        var pid: Int32 { process.processIdentifier }
        var isRunning: Bool { process.isRunning }

        /// Polls `condition` every 2 ms on a dedicated thread, never on the cooperative pool,
        /// and sends `signal` as soon as it holds (or when `timeout` passes). Returns whether
        /// the condition was seen while the process was still running.
        func send(
            _ signal: Int32, within timeout: Duration, when condition: @escaping @Sendable () -> Bool
        ) async -> Bool {
            let pid = process.processIdentifier
            let process = process
            return await withCheckedContinuation { continuation in
                let thread = Thread {
                    let deadline = ContinuousClock.now + timeout
                    var seen = false
                    while process.isRunning && ContinuousClock.now < deadline {
                        if condition() {
                            seen = true
                            break
                        }
                        usleep(2000)
                    }
                    kill(pid, signal)
                    continuation.resume(returning: seen)
                }
                thread.start()
            }
        }

        /// Waits for the exit; a watchdog kills the process and records an issue after 120 s
        /// from its start.
        func wait(sourceLocation: SourceLocation = #_sourceLocation) async -> Result {
            while process.isRunning {
                if ContinuousClock.now - started > .seconds(120) {
                    kill(process.processIdentifier, SIGKILL)
                    Issue.record(
                        "the process did not finish within 120 s and was killed", sourceLocation: sourceLocation)
                    break
                }
                try? await Task.sleep(for: .milliseconds(10))
            }
            process.waitUntilExit()
            try? (process.standardOutput as? FileHandle)?.close()
            try? (process.standardError as? FileHandle)?.close()
            let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
            return Result(
                status: process.terminationStatus,
                killedBySignal: signal,
                stdout: (try? Data(contentsOf: scratch.appendingPathComponent("stdout"))) ?? Data(),
                stderr: (try? Data(contentsOf: scratch.appendingPathComponent("stderr"))) ?? Data()
            )
        }
    }
}
