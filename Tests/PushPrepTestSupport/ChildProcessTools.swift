import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Tools for the child processes the tests start (the servers they run themselves, PostgreSQL
/// and moto's S3; the programs and workers they wait for): a directory per server recorded as
/// this process's, so the next run stops and deletes what a killed run left behind; spawning a
/// program with no descriptor of this process; and running blocking work off Swift concurrency's
/// pool. (Not to be confused with ``RunningServe``, a `pushprep serve` under test.)
package enum ChildProcessTools {
    // MARK: - Server directories

    /// A new directory `<pid>-<random>/` under `parent` (made, shared like /tmp, when missing),
    /// with `owner.pid` naming this process.
    static func makeDirectory(under parent: URL) throws -> URL {
        let fileManager = FileManager.default
        if !fileManager.fileExists(atPath: parent.path) {
            try fileManager.createDirectory(at: parent, withIntermediateDirectories: true)
            // Shared like /tmp: runs as root and as other users both keep their servers here.
            chmod(parent.path, 0o1777)
        }
        let name = "\(getpid())-\(UUID().uuidString.prefix(8).lowercased())"
        let directory = parent.appendingPathComponent(name, isDirectory: true)
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: false)
        try "\(getpid())\n".write(
            to: directory.appendingPathComponent("owner.pid"), atomically: true, encoding: .utf8)
        return directory
    }

    /// Calls `stop` for, then deletes, each directory under `parent` whose test process died
    /// without cleaning up (killed, or interrupted before its exit handler ran), and each
    /// abandoned half-made one (no `owner.pid`, untouched for ten minutes).
    static func removeStaleDirectories(under parent: URL, stop: (URL) -> Void) {
        let fileManager = FileManager.default
        guard let names = try? fileManager.contentsOfDirectory(atPath: parent.path) else { return }
        for name in names {
            let directory = parent.appendingPathComponent(name, isDirectory: true)
            let ownerFile = directory.appendingPathComponent("owner.pid")
            if let text = try? String(contentsOf: ownerFile, encoding: .utf8) {
                guard let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), !isAlive(owner) else {
                    continue
                }
            } else {
                // No owner recorded: a directory being made right now, or one abandoned long ago.
                let modified = (try? fileManager.attributesOfItem(atPath: directory.path)[.modificationDate]) as? Date
                guard let modified, modified.timeIntervalSinceNow < -600 else { continue }
            }
            stop(directory)
            try? fileManager.removeItem(at: directory)
        }
    }

    // MARK: - Processes

    /// Starts `command` in `directory` with standard input from /dev/null, standard output and
    /// error into `output`, no other descriptor (a server left running must not hold a pipe of
    /// the test runner open), and `environment` (this process's when nil); returns its pid.
    static func spawn(
        _ command: [String], in directory: URL, output: URL, environment: [String: String]? = nil
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        try GlibcSpawn.addCloseFrom(&actions, 3)
        try GlibcSpawn.addChdir(&actions, directory.path)

        let arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let variables = environment.map {
            $0.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { variables?.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned =
            if let variables {
                posix_spawn(&pid, command[0], &actions, nil, arguments, variables)
            } else {
                posix_spawn(&pid, command[0], &actions, nil, arguments, environ)
            }
        guard spawned == 0 else {
            throw TestTools.Failure(description: "cannot run \(command[0]): \(String(cString: strerror(spawned)))")
        }
        return pid
    }

    /// The exit status of `pid` if it has exited (reaping it), nil while it runs; never waits.
    /// A normal exit gives its code, a signal 128 + the signal, as shells say.
    static func exitStatus(of pid: pid_t) -> Int32? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        return decoded(status)
    }

    /// Kills `pid` with SIGKILL and reaps it. Spawns no process, so it is safe in an exit handler.
    static func killAndReap(_ pid: pid_t) {
        guard kill(pid, SIGKILL) == 0 else { return }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    /// Waits for `pid` (blocking: call it through ``blocking(_:)``); kills it after `timeout`.
    static func wait(for pid: pid_t, timeout: Duration, command: [String]) throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = exitStatus(of: pid) { return status }
            guard ContinuousClock.now < deadline else {
                killAndReap(pid)
                throw TestTools.Failure(
                    description: "\(command.joined(separator: " ")) did not finish within \(timeout)")
            }
            usleep(20_000)
        }
    }

    static func isAlive(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    /// A TCP port on 127.0.0.1 that nothing listens on: bound to port 0, read, closed. For a
    /// program that takes its port as an argument (PostgreSQL, moto, a worker's metrics port);
    /// a server of the tests' own binds port 0 itself.
    package static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestTools.Failure(description: "socket(): \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
            }
        }
        guard bound else { throw TestTools.Failure(description: "bind(): \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now. A connection on the
    /// loopback interface is accepted or refused at once, so this does not block.
    static func acceptsConnections(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// The last `count` lines of a log file, for a failure message.
    static func tail(of log: URL, lines count: Int = 8) -> String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").suffix(count)
        return lines.isEmpty ? "(empty)" : lines.joined(separator: "\n")
    }

    /// Runs blocking work (processes, waits) on a thread of its own instead of one of the few
    /// threads of Swift concurrency's pool.
    package static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try work() })
            }
        }
    }

    private static func decoded(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}

/// glibc's `posix_spawn` file actions that Swift's Glibc module does not import (they are GNU
/// extensions, in glibc since 2.29 and 2.34), looked up at run time.
private enum GlibcSpawn {
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias Chdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>)
        -> Int32

    /// Closes every descriptor from `lowest` up in the child.
    static func addCloseFrom(_ actions: inout posix_spawn_file_actions_t, _ lowest: Int32) throws {
        let function = unsafeBitCast(try symbol("posix_spawn_file_actions_addclosefrom_np"), to: CloseFrom.self)
        try check(function(&actions, lowest), "posix_spawn_file_actions_addclosefrom_np")
    }

    /// Changes the child's working directory.
    static func addChdir(_ actions: inout posix_spawn_file_actions_t, _ path: String) throws {
        let function = unsafeBitCast(try symbol("posix_spawn_file_actions_addchdir_np"), to: Chdir.self)
        try check(function(&actions, path), "posix_spawn_file_actions_addchdir_np")
    }

    private static func symbol(_ name: String) throws -> UnsafeMutableRawPointer {
        // RTLD_DEFAULT: the global symbols of the process, which include glibc's.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            throw TestTools.Failure(description: "\(name) is missing: the test servers need glibc 2.34 or newer")
        }
        return symbol
    }

    private static func check(_ result: Int32, _ name: String) throws {
        guard result == 0 else {
            throw TestTools.Failure(description: "\(name) failed: \(String(cString: strerror(result)))")
        }
    }
}
