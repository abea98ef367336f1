import Foundation
import PushPrepCore
import PushPrepSandbox
import PushPrepTestSupport
import Testing

/// `pushprep sandbox-check` as an operator runs it, and decoders that are not to be trusted.
@Suite(.serialized)
struct SandboxCheckTests {
    @Test("sandbox-check passes on this machine and its JSON lists every probe as blocked")
    func passesHere() async throws {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let result = try await TestTools.runAsync(binary.path, ["sandbox-check", "--json"])
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(result.status == 0, "stderr: \(stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(report["passed"] as? Bool == true, "\(report)")
        #expect((report["problems"] as? [String])?.isEmpty == true)
        let probes = report["probes"] as? [[String: Any]] ?? []
        #expect(Set(probes.compactMap { $0["probe"] as? String }) == Set(SandboxProbe.allCases.map(\.rawValue)))
        for probe in probes {
            #expect(probe["blocked"] as? Bool == true, "\(probe)")
            #expect(probe["layer"] is String, "\(probe)")
        }
        let layers = report["layers"] as? [[String: Any]] ?? []
        #expect(
            layers.compactMap { $0["layer"] as? String } == SandboxLayer.allCases.map(\.rawValue),
            "every layer is reported, in order: \(layers)")
        for layer in layers where layer["supported"] as? Bool == true && layer["layer"] as? String != "cgroup_v2" {
            #expect(layer["applied"] as? Bool == true, "\(layer)")
        }

        let text = try await TestTools.runAsync(binary.path, ["sandbox-check"])
        let output = String(decoding: text.stdout, as: UTF8.self)
        #expect(text.status == 0)
        #expect(output.contains("Sandbox check passed"), "\(output)")
        #expect(output.contains("open_etc_passwd") && output.contains("blocked by"))
    }

    @Test("the decoder subcommand is hidden, and refuses to run without its descriptors or with a bad option")
    func hiddenDecoder() async throws {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let help = String(decoding: try await TestTools.runAsync(binary.path, ["--help"]).stdout, as: UTF8.self)
        #expect(help.contains("\n  sandbox-check "), "\(help)")
        #expect(!help.contains("\n  decoder "), "\(help)")

        // Started by hand: no channel, no staging directory.
        let alone = try await TestTools.runAsync(binary.path, ["decoder"])
        #expect(alone.status == 70)
        let stderr = String(decoding: alone.stderr, as: UTF8.self)
        #expect(stderr.contains("descriptor 4 is not the staging directory"), "\(stderr)")

        let bad = try await TestTools.runAsync(binary.path, ["decoder", "--skip-layer", "everything"])
        #expect(bad.status == 2)
        #expect(String(decoding: bad.stderr, as: UTF8.self).contains("--skip-layer: no layer everything"))
    }

    @Test("sandbox-check fails, naming the probes that got through, when a layer is missing")
    func failsWithoutALayer() async throws {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let report = await SandboxCheck.run(
            executable: binary.path,
            options: DecoderService.Options(limits: DecoderLimits(), skipping: [.landlock]))
        #expect(!report.passed)
        #expect(report.problems.contains { $0.hasPrefix("open_etc_passwd was not blocked") }, "\(report.problems)")
        if report.layers.contains(where: { $0.layer == .landlock && $0.supported }) {
            #expect(
                report.problems.contains { $0.hasPrefix("landlock is offered by this machine but was not applied") })
        }
        #expect(report.text.contains("NOT blocked"))
    }

    @Test("a decoder that cannot apply a layer stops, and sandbox-check says which and why")
    func layerThatCannotApply() async throws {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        // RLIMIT_NOFILE above the kernel's nr_open (1048576 by default): setrlimit answers EPERM.
        let report = await SandboxCheck.run(
            executable: binary.path, options: DecoderService.Options(limits: DecoderLimits(openFiles: 1 << 30)))
        #expect(!report.passed)
        #expect(report.probes.isEmpty)
        let problem = report.problems.first ?? ""
        #expect(
            problem.contains("could not start: the decoder cannot confine itself: setting rlimits failed: EPERM"),
            "\(problem)")
    }

    @Test(
        "a decoder that writes garbage on its channel is reported as untrusted, and reaped",
        arguments: DecoderService.Garbage.allCases)
    func garbage(_ garbage: DecoderService.Garbage) async throws {
        let binary = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let expected =
            switch garbage {
            case .oversized: "frame of 4294967280 bytes; frames are 1 to 1048576 bytes"
            case .malformed: "not a valid DecoderReply"
            case .truncated: "closed its channel before a message of 200 bytes"
            }
        var options = DecoderService.Options(limits: DecoderLimits())
        options.garbage = garbage
        do throws(PushPrepError) {
            let decoder = try await DecoderProcess.start(
                executable: binary.path, staging: directory.path, options: options, timeout: .seconds(20))
            await decoder.kill()
            Issue.record("a decoder that sent \(garbage) garbage was trusted")
        } catch {
            #expect(error.code == .ioError)
            #expect(error.message.contains("is not trusted"), "\(error.message)")
            #expect(error.message.contains(expected), "\(error.message)")
            // The message names the process, which must be gone (killed and reaped).
            let pid = try #require(error.message.split(separator: " ").dropFirst(2).first.flatMap { Int32($0) })
            #expect(kill(pid, 0) == -1 && errno == ESRCH, "decoder \(pid) is still there")
        }
        let report = await SandboxCheck.run(executable: binary.path, options: options)
        #expect(!report.passed)
        #expect(report.probes.isEmpty)
        #expect(report.problems.first?.contains(expected) == true, "\(report.problems)")
    }
}
