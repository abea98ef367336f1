import Foundation
import PushPrepCore
import PushPrepSandbox
import PushPrepTestSupport
import Testing

/// Each layer is the one that blocks its probes: a real decoder process with the layer skipped
/// (a test mode of `pushprep decoder`) lets the probe through, and with it the probe is refused
/// with that layer's answer. The connect probe aims at a listener this test owns, and the test
/// sees the connection arrive when nothing stops it.
@Suite(.serialized)
struct SandboxLayerTests {
    @Test("with every layer, every probe is blocked by the layer that answers it")
    func everyLayer() async throws {
        // A descriptor the decoder inherits (posix_spawn passes every one without FD_CLOEXEC).
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        let run = try await DecoderUnderTest.start()
        let descriptors = run.state(.descriptors)?.detail ?? ""
        #expect(descriptors.contains("; 5 open"), "\(descriptors)")
        #expect(!descriptors.hasPrefix("closed 0 "), "the leaked descriptor reached the decoder open: \(descriptors)")
        let probes = try await run.probes()
        let connected = run.acceptedConnection()
        #expect(await run.finish() == 0)
        #expect(!connected, "a connection reached the test's listener")
        #expect(probes[.connectLoopback]?.layer == .seccomp, "\(String(describing: probes[.connectLoopback]))")
        #expect(probes[.execTrue]?.layer == .seccomp)
        #expect(probes[.readEnvironment]?.layer == .environment)
        #expect(probes[.allocatePastLimit]?.layer == .rlimits)
        if run.state(.landlock)?.supported == true {
            #expect(probes[.openPasswd]?.layer == .landlock)
            #expect(probes[.writeOutside]?.layer == .landlock)
            #expect(probes[.readParentEnvironment]?.layer == .landlock)
        }
        for probe in SandboxProbe.allCases {
            #expect(probes[probe]?.blocked == true, "\(probe): \(String(describing: probes[probe]))")
        }
    }

    @Test("without seccomp and Landlock the connect, exec, open and write probes get through")
    func withoutSeccompAndLandlock() async throws {
        let run = try await DecoderUnderTest.start(skipping: [.seccomp, .landlock])
        let probes = try await run.probes()
        let connected = run.acceptedConnection()
        await run.finish()
        #expect(connected, "the connect probe's connection did not reach the test's listener")
        for probe in [SandboxProbe.connectLoopback, .execTrue, .openPasswd, .writeOutside] {
            #expect(probes[probe]?.blocked == false, "\(probe): \(String(describing: probes[probe]))")
        }
        // The layers not skipped still block theirs.
        #expect(probes[.allocatePastLimit]?.layer == .rlimits)
        #expect(probes[.readEnvironment]?.layer == .environment)
    }

    @Test("without seccomp, Landlock alone refuses the connection and the exec")
    func landlockWithoutSeccomp() async throws {
        let run = try await DecoderUnderTest.start(skipping: [.seccomp])
        let probes = try await run.probes()
        let connected = run.acceptedConnection()
        let landlock = run.state(.landlock)
        await run.finish()
        try #require(landlock?.applied == true, "Landlock is not available here: \(String(describing: landlock))")
        #expect(probes[.execTrue]?.layer == .landlock, "\(String(describing: probes[.execTrue]))")
        #expect(probes[.openPasswd]?.layer == .landlock)
        #expect(probes[.writeOutside]?.layer == .landlock)
        // Landlock refuses TCP connect from ABI 4; before that the connection gets through.
        if landlock?.detail.contains("no TCP") == true {
            #expect(probes[.connectLoopback]?.layer == .landlock, "\(String(describing: probes[.connectLoopback]))")
            #expect(!connected)
        }
    }

    @Test(
        "without Landlock, seccomp alone refuses the connection and the exec, not the files; /proc as the user allows")
    func seccompWithoutLandlock() async throws {
        let run = try await DecoderUnderTest.start(skipping: [.landlock])
        let probes = try await run.probes()
        let connected = run.acceptedConnection()
        await run.finish()
        #expect(!connected)
        #expect(probes[.connectLoopback]?.layer == .seccomp)
        #expect(probes[.execTrue]?.layer == .seccomp)
        #expect(probes[.openPasswd]?.blocked == false, "\(String(describing: probes[.openPasswd]))")
        #expect(probes[.writeOutside]?.blocked == false)
        // Without Landlock, a parent of the same user is shielded only by the capabilities the
        // decoder dropped, and only when that user is root (CAP_SYS_PTRACE would pass the check).
        let parent = probes[.readParentEnvironment]
        if getuid() == 0 {
            #expect(parent?.layer == .noNewPrivs, "\(String(describing: parent))")
        } else {
            #expect(parent?.blocked == false, "\(String(describing: parent))")
        }
    }

    @Test("without Landlock, no_new_privs and seccomp the decoder reads its parent's environment from /proc")
    func parentEnvironment() async throws {
        // no_new_privs goes with seccomp: a filter without it needs CAP_SYS_ADMIN.
        let open = try await DecoderUnderTest.start(skipping: [.landlock, .noNewPrivs, .seccomp])
        let read = try await open.probes()[.readParentEnvironment]
        await open.finish()
        #expect(read?.blocked == false, "\(String(describing: read))")
        #expect(read?.detail == "opened /proc/\(getpid())/environ")

        let confined = try await DecoderUnderTest.start()
        let refused = try await confined.probes()[.readParentEnvironment]
        await confined.finish()
        #expect(refused?.blocked == true, "\(String(describing: refused))")
    }

    @Test("the decoder clears an environment it was given; without that layer it can read it")
    func environment() async throws {
        let given = ["PUSHPREP_CANARY": "a secret", "AWS_SECRET_ACCESS_KEY": "not for decoders"]
        let cleared = try await DecoderUnderTest.start(environment: given)
        let blocked = try await cleared.probes()[.readEnvironment]
        await cleared.finish()
        #expect(blocked?.layer == .environment, "\(String(describing: blocked))")

        let kept = try await DecoderUnderTest.start(skipping: [.environment], environment: given)
        let read = try await kept.probes()[.readEnvironment]
        await kept.finish()
        #expect(read?.blocked == false)
        #expect(read?.detail.contains("AWS_SECRET_ACCESS_KEY") == true, "\(String(describing: read))")
    }

    @Test("without rlimits the allocation past the limit succeeds; with them it is refused")
    func rlimits() async throws {
        let limits = DecoderLimits(addressSpace: 3 << 30)
        let unlimited = try await DecoderUnderTest.start(skipping: [.rlimits], limits: limits)
        let mapped = try await unlimited.probes()[.allocatePastLimit]
        await unlimited.finish()
        #expect(mapped?.blocked == false, "\(String(describing: mapped))")

        let limited = try await DecoderUnderTest.start(limits: limits)
        let refused = try await limited.probes()[.allocatePastLimit]
        let state = limited.state(.rlimits)
        await limited.finish()
        #expect(refused?.layer == .rlimits, "\(String(describing: refused))")
        #expect(state?.detail.contains("address space \(3 << 30) bytes") == true)
    }
}
