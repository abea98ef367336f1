import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrep

/// ``MachineMemory`` reading cgroup limits from a fake file system root: `proc/self/cgroup`
/// and `sys/fs/cgroup/...` as the kernel shows them in a container, under systemd, and on a
/// cgroup v1 host.
@Suite final class MachineMemoryTests {
    let root: URL
    static let physical = 16_000_000_000

    init() throws { root = try TestTools.temporaryDirectory() }
    deinit { TestTools.removeDirectory(root) }

    private func write(_ text: String, to path: String) throws {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    private var memory: MachineMemory { MachineMemory.read(root: root.path, physical: Self.physical) }

    @Test("cgroup v2 in a container (its own namespace, at the root): memory.max a number is the limit")
    func containerLimit() throws {
        try write("0::/\n", to: "proc/self/cgroup")
        try write("2147483648\n", to: "sys/fs/cgroup/memory.max")
        #expect(memory.cgroupLimit == 2_147_483_648)
        #expect(memory.available == 2_147_483_648)
        #expect(memory.source == "the cgroup memory limit")
        #expect(MemoryBudget.defaultLimit(of: memory) == 1_073_741_824)
    }

    @Test("cgroup v2 memory.max of max is no limit: physical memory counts")
    func maxIsNoLimit() throws {
        try write("0::/\n", to: "proc/self/cgroup")
        try write("max\n", to: "sys/fs/cgroup/memory.max")
        #expect(memory.cgroupLimit == nil)
        #expect(memory.available == Self.physical && memory.source == "physical memory")
        #expect(MemoryBudget.defaultLimit(of: memory) == Self.physical / 2)
    }

    @Test("cgroup v2 under systemd: the smallest limit on the path up to the root binds")
    func nestedLimits() throws {
        try write("0::/system.slice/pushprep.service\n", to: "proc/self/cgroup")
        try write("max\n", to: "sys/fs/cgroup/system.slice/pushprep.service/memory.max")
        try write("3000000000\n", to: "sys/fs/cgroup/system.slice/memory.max")
        #expect(memory.cgroupLimit == 3_000_000_000)
        try write("1000000000\n", to: "sys/fs/cgroup/system.slice/pushprep.service/memory.max")
        #expect(memory.cgroupLimit == 1_000_000_000)
    }

    @Test("a limit above physical memory leaves physical memory as what is available")
    func limitAbovePhysical() throws {
        try write("0::/\n", to: "proc/self/cgroup")
        try write("64000000000\n", to: "sys/fs/cgroup/memory.max")
        #expect(memory.available == Self.physical && memory.source == "physical memory")
    }

    @Test("cgroup v1: the memory controller's limit_in_bytes; its no-limit is a huge number")
    func version1() throws {
        try write(
            "9:name=systemd:/\n4:memory:/process_api/b8c6\n2:cpuacct,cpu:/\n1:cpuset:/\n", to: "proc/self/cgroup")
        try write("9223372036854771712\n", to: "sys/fs/cgroup/memory/memory.limit_in_bytes")
        #expect(memory.available == Self.physical)
        try write("536870912\n", to: "sys/fs/cgroup/memory/process_api/b8c6/memory.limit_in_bytes")
        #expect(memory.cgroupLimit == 536_870_912)
    }

    @Test("no cgroup files, unreadable lines, a path that climbs: physical memory")
    func nothingToRead() throws {
        #expect(memory == MachineMemory(physical: Self.physical, cgroupLimit: nil))
        try write("garbage\n0::/../../etc\n", to: "proc/self/cgroup")
        try write("junk\n", to: "sys/fs/cgroup/memory.max")
        #expect(memory.cgroupLimit == nil)
    }

    @Test("this machine's memory is read without failing and is positive")
    func current() {
        let machine = MachineMemory.current()
        #expect(machine.available > 0 && machine.available <= machine.physical)
    }
}
