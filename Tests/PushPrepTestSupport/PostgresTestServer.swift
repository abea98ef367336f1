import Foundation
package import PushPrepQueue
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One real PostgreSQL server for the whole test process, in a temporary directory, and a fresh
/// database for each test.
///
/// The server starts on first use (about two seconds: `initdb`, then `pg_ctl start`) from
/// Debian's `postgresql` package (`make deps` installs it), listens on 127.0.0.1 on a free port
/// with `trust` authentication, and runs with durability off (`fsync`, `synchronous_commit`,
/// `full_page_writes`), which is only acceptable because the data is thrown away. It is stopped
/// and its directory deleted when the process exits; a server left behind by a killed test run
/// is stopped and deleted by the next run.
///
/// `initdb` and `postgres` refuse to run as root: as root (CI), they run as the `postgres`
/// system user through `runuser`, in a directory owned by that user.
package final class PostgresTestServer: Sendable {
    package static let shared = PostgresTestServer()

    /// Holds every server directory: `<pid>-<random>/` with `owner.pid` (the test process),
    /// `data/`, `server.log` and the Unix socket.
    static let parentDirectory = URL(fileURLWithPath: "/tmp/pushprep-pg-tests", isDirectory: true)

    /// A started server.
    private struct Instance: Sendable {
        let port: Int
        let directory: URL
        let binDirectory: URL
    }

    private let instance: Task<Instance, any Error>

    private init() {
        instance = Task { try await ChildProcessTools.blocking(Self.start) }
    }

    /// The server's TCP port on 127.0.0.1 (starts the server).
    package var port: Int {
        get async throws { try await instance.value.port }
    }

    /// The queue URL of `database` on this server (starts the server).
    package func url(database: String) async throws -> QueueURL {
        .postgres(
            QueueURL.PostgresLocation(
                host: "127.0.0.1", port: try await port, username: "postgres", password: nil, database: database,
                tls: false))
    }

    /// Creates an empty database `t_<random>`, runs `body` with its queue URL, and drops the
    /// database (closing any connection left open) afterwards, also when `body` throws.
    package func withFreshDatabase<T: Sendable>(_ body: (QueueURL) async throws -> T) async throws -> T {
        let database = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try await execute("CREATE DATABASE \(database)")
        let result: T
        do {
            result = try await body(try await url(database: database))
        } catch {
            _ = try? await execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            throw error
        }
        try await execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
        return result
    }

    /// The name of the database a queue URL made by this server names.
    package static func databaseName(_ url: QueueURL) -> String {
        guard case .postgres(let location) = url else { preconditionFailure("\(url) is not a PostgreSQL URL") }
        return location.database
    }

    /// Runs `sql` with `psql` in `database` as the superuser and returns its output, unaligned
    /// and without headers (`-At`): one row a line, columns separated by `|`.
    @discardableResult
    package func execute(_ sql: String, database: String = "postgres") async throws -> String {
        let instance = try await instance.value
        let psql = instance.binDirectory.appendingPathComponent("psql").path
        let arguments = [
            "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(instance.port)", "-U", "postgres",
            "-d", database, "-c", sql,
        ]
        let output = try await ChildProcessTools.blocking { try TestTools.runChecked(psql, arguments) }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: - Starting

    /// Finds the programs, cleans up after killed runs, creates the cluster and starts it.
    private static func start() throws -> Instance {
        let binDirectory = try findBinDirectory()
        ChildProcessTools.removeStaleDirectories(under: parentDirectory) { stopServer(in: $0) }
        let directory = try makeServerDirectory()
        do {
            try initializeCluster(in: directory, binDirectory: binDirectory)
            let port = try startServer(in: directory, binDirectory: binDirectory)
            return Instance(port: port, directory: directory, binDirectory: binDirectory)
        } catch {
            stopServer(in: directory)
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// The newest `/usr/lib/postgresql/<version>/bin` that has `initdb`, `pg_ctl` and `postgres`.
    private static func findBinDirectory() throws -> URL {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql", isDirectory: true)
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        let candidates = versions.sorted { (Double($0) ?? 0) > (Double($1) ?? 0) }.map {
            root.appendingPathComponent($0).appendingPathComponent("bin")
        }
        let programs = ["initdb", "pg_ctl", "postgres", "psql"]
        guard
            let bin = candidates.first(where: { bin in
                programs.allSatisfy {
                    FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent($0).path)
                }
            })
        else {
            throw TestTools.Failure(
                description: "the PostgreSQL tests need a PostgreSQL server (initdb, pg_ctl, postgres and psql under "
                    + "/usr/lib/postgresql/<version>/bin): run `make deps`, which installs Debian's postgresql package")
        }
        return bin
    }

    /// A new server directory owned by the user the server runs as, recorded as this process's.
    private static func makeServerDirectory() throws -> URL {
        let directory = try ChildProcessTools.makeDirectory(under: parentDirectory)
        registerCleanup(of: directory)
        if let user = try serverUser() {
            guard chown(directory.path, user.uid, user.gid) == 0 else {
                throw TestTools.Failure(
                    description:
                        "cannot give \(directory.path) to the postgres user: \(String(cString: strerror(errno)))")
            }
        }
        return directory
    }

    private static func initializeCluster(in directory: URL, binDirectory: URL) throws {
        let data = directory.appendingPathComponent("data").path
        try runAsServerUser(
            binDirectory.appendingPathComponent("initdb").path,
            ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"], in: directory)
    }

    /// Starts the server on a free port; tries another port when the one picked was taken in
    /// the meantime. Returns the port.
    private static func startServer(in directory: URL, binDirectory: URL) throws -> Int {
        let data = directory.appendingPathComponent("data")
        let log = directory.appendingPathComponent("server.log")
        var lastFailure: (any Error)?
        for _ in 0..<3 {
            let port = try ChildProcessTools.freePort()
            let settings = [
                "port": "\(port)", "listen_addresses": "'127.0.0.1'",
                "unix_socket_directories": "'\(directory.path)'",
                // Tests only: the data is thrown away, so durability buys nothing.
                "fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
                // Tests run in parallel, each queue with a pool and a listener.
                "max_connections": "200",
            ]
            let options = settings.sorted { $0.key < $1.key }.map { "-c \($0.key)=\($0.value)" }.joined(separator: " ")
            do {
                try runAsServerUser(
                    binDirectory.appendingPathComponent("pg_ctl").path,
                    ["-D", data.path, "-l", log.path, "-w", "-t", "60", "-o", options, "start"], in: directory)
                return port
            } catch {
                let tail = (try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n").suffix(5)
                lastFailure = TestTools.Failure(
                    description: "\(error)\nserver.log:\n\(tail?.joined(separator: "\n") ?? "(none)")")
                stopServer(in: directory)
            }
        }
        throw lastFailure ?? TestTools.Failure(description: "the PostgreSQL test server did not start")
    }

    // MARK: - Running as the postgres user

    /// The user the server runs as when this process is root (initdb and postgres refuse root),
    /// nil otherwise (the current user).
    private static func serverUser() throws -> (uid: uid_t, gid: gid_t)? {
        guard getuid() == 0 else { return nil }
        guard let entry = getpwnam("postgres") else {
            throw TestTools.Failure(
                description: "running as root, the PostgreSQL tests need the postgres system user, which Debian's "
                    + "postgresql package creates: run `make deps`")
        }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// Runs a server program, through `runuser -u postgres` when this process is root, and
    /// waits for it.
    ///
    /// Spawned directly rather than with Foundation's `Process`: `pg_ctl start` leaves the
    /// server running as a daemon, which would inherit the descriptors `Process` watches to see
    /// its child exit (and any other descriptor of this process), so the wait would never end.
    /// Here the child gets /dev/null, a log file, and nothing else.
    private static func runAsServerUser(_ program: String, _ arguments: [String], in directory: URL) throws {
        var command = [program] + arguments
        if try serverUser() != nil {
            guard
                let runuser = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].first(where: {
                    FileManager.default.isExecutableFile(atPath: $0)
                })
            else {
                throw TestTools.Failure(description: "running as root, the PostgreSQL tests need runuser (util-linux)")
            }
            command = [runuser, "-u", "postgres", "--"] + command
        }
        let output = directory.appendingPathComponent("command.log")
        let status = try spawnAndWait(command, in: directory, output: output, timeout: .seconds(120))
        guard status == 0 else {
            let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            throw TestTools.Failure(
                description: "\(URL(fileURLWithPath: program).lastPathComponent) exited with \(status): \(log)")
        }
    }

    /// Runs `command` in `directory` with standard input from /dev/null, standard output and
    /// error into `output`, and no other descriptor; returns its exit status. Kills it after
    /// `timeout`.
    private static func spawnAndWait(
        _ command: [String], in directory: URL, output: URL, timeout: Duration
    ) throws -> Int32 {
        let pid = try ChildProcessTools.spawn(command, in: directory, output: output)
        return try ChildProcessTools.wait(for: pid, timeout: timeout, command: command)
    }

    // MARK: - Stopping

    /// The directory of this process's server, for the exit handler.
    private static let serverDirectory = Mutex<URL?>(nil)

    /// Stops the server and deletes its directory when the process exits.
    private static func registerCleanup(of directory: URL) {
        serverDirectory.withLock { $0 = directory }
        atexit {
            guard let directory = PostgresTestServer.serverDirectory.withLock({ $0 }) else { return }
            PostgresTestServer.stopServer(in: directory)
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Stops the server of `directory`, if it runs, the way `pg_ctl stop -m immediate` does (a
    /// SIGQUIT to the postmaster), and waits up to 10 s for it to exit. Spawns no process, so it
    /// is safe in an exit handler.
    private static func stopServer(in directory: URL) {
        guard let pid = postmasterPID(in: directory) else { return }
        kill(pid, SIGQUIT)
        for _ in 0..<1000 where ChildProcessTools.isAlive(pid) {
            usleep(10_000)
        }
    }

    /// The postmaster of `directory`, when one runs: the first line of `data/postmaster.pid`,
    /// checked to be a live `postgres` process (the pid may have been reused).
    private static func postmasterPID(in directory: URL) -> pid_t? {
        let file = directory.appendingPathComponent("data/postmaster.pid")
        guard let text = try? String(contentsOf: file, encoding: .utf8),
            let line = text.split(separator: "\n").first, let pid = pid_t(line.trimmingCharacters(in: .whitespaces)),
            pid > 0, ChildProcessTools.isAlive(pid)
        else { return nil }
        let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
        return command.hasPrefix("postgres") ? pid : nil
    }
}
