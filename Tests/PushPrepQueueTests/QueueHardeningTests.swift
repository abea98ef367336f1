import Foundation
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// Numbers and secrets that reach the queue from outside, end to end with real `pushprep`
/// processes: queued settings and database rows a worker must refuse (not crash on, not retry
/// forever), the PostgreSQL password from `PGPASSWORD` or a file, and where the metrics listen.
@Suite(.serialized)
struct QueueHardeningTests {
    // MARK: - Numbers in the queue

    /// A job whose stored timeout is not a usable number of seconds (written by hand or by
    /// another program) fails at once with `invalid_settings`; the worker does not crash.
    /// PostgreSQL stores `Infinity` and `NaN` in a double precision column; SQLite stores an
    /// infinity (`9e999`) but turns NaN into NULL.
    @Test(arguments: [
        (QueueBackend.postgres, "'Infinity'"), (.postgres, "'NaN'"), (.postgres, "1e300"), (.postgres, "-5"),
        (.sqlite, "9e999"), (.sqlite, "1e300"),
    ])
    func storedTimeoutOutOfRangeFailsTheJob(_ backend: QueueBackend, _ value: String) async throws {
        if backend == .sqlite { try #require(TestTools.programAvailable("sqlite3"), "needs the sqlite3 tool") }
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let input = dir.appendingPathComponent("a.bmp")
        try Data(TinyBMP.bytes(7)).write(to: input)

        try await QueueFixture.withQueue(backend) { queue, url in
            let id = try WorkerProcessTests.enqueue([input.path], queue: url.commandLineArgument, in: dir)[0]
            let update = "UPDATE pushprep_jobs SET timeout_seconds = \(value) WHERE id = \(id)"
            switch url {
            case .postgres(let location):
                try await PostgresTestServer.shared.execute(update, database: location.database)
            case .sqlite(let path):
                try TestTools.runChecked("sqlite3", [path, update])
            }
            let worker = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir.appendingPathComponent("out"), in: dir)
            let done = try await WorkerProcessTests.waitUntilFinished(
                id, on: queue, within: .seconds(60), worker: worker)
            #expect(done.state == .failed, "\(done.state): \(done.errorMessage ?? "")")
            #expect(done.errorCode == "invalid_settings")
            #expect(done.errorMessage?.contains("timeout") == true, "\(done.errorMessage ?? "")")
            #expect(done.attempt == 1, "failed at once, not retried")
            try await WorkerProcessTests.stop(worker)
        }
    }

    /// A row whose time or timeout no JSON number or calendar holds (PostgreSQL's `'infinity'`
    /// and `'Infinity'`, SQLite's `9e999`) is still shown: `jobs show --json` failed on it
    /// ("Unable to encode Double.inf directly in JSON") and the table printed "queued (at )".
    @Test(arguments: [
        (QueueBackend.postgres, "run_at = 'infinity', timeout_seconds = 'Infinity'"),
        (.sqlite, "run_at = 9e999, timeout_seconds = 9e999"),
    ])
    func rowWithInfinitiesIsShown(_ backend: QueueBackend, _ assignments: String) async throws {
        if backend == .sqlite { try #require(TestTools.programAvailable("sqlite3"), "needs the sqlite3 tool") }
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let input = dir.appendingPathComponent("a.bmp")
        try Data(TinyBMP.bytes(9)).write(to: input)

        try await QueueFixture.withQueue(backend) { queue, url in
            let id = try WorkerProcessTests.enqueue([input.path], queue: url.commandLineArgument, in: dir)[0]
            let update = "UPDATE pushprep_jobs SET \(assignments) WHERE id = \(id)"
            switch url {
            case .postgres(let location):
                try await PostgresTestServer.shared.execute(update, database: location.database)
            case .sqlite(let path):
                try TestTools.runChecked("sqlite3", [path, update])
            }
            let queueArguments = ["--queue", url.commandLineArgument]
            let shown = try PushPrepCLI.runChecked(["jobs", "show", "\(id)", "--json"] + queueArguments, in: dir)
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(shown.stdoutText.utf8)) as? [String: Any])
            #expect(object["runAt"] as? String == "Infinity", "\(shown.stdoutText)")
            #expect(object["timeoutSeconds"] as? String == "Infinity", "\(shown.stdoutText)")
            let listed = try PushPrepCLI.runChecked(["jobs", "list", "--json"] + queueArguments, in: dir)
            #expect(listed.stdoutText.contains(#""runAt" : "Infinity""#), "\(listed.stdoutText)")
            let table = try PushPrepCLI.runChecked(["jobs", "list"] + queueArguments, in: dir)
            #expect(table.stdoutText.contains("queued (at Infinity)"), "\(table.stdoutText)")
        }
    }

    /// Queued settings are checked when the worker reads them: numbers out of range (a start
    /// at 1e13 s once trapped converting it to a time stamp) fail the job at once with
    /// `invalid_settings`, as does JSON that is not settings.
    @Test(arguments: [
        (QueueBackend.sqlite, #"{"videoStart":1e13}"#), (.postgres, #"{"videoStart":1e13}"#),
        (.sqlite, #"{"audioSeconds":1e300}"#), (.sqlite, #"{"width":1e300}"#), (.sqlite, "not json"),
    ])
    func queuedSettingsOutOfRangeFailTheJob(_ backend: QueueBackend, _ payload: String) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let input = dir.appendingPathComponent("a.bmp")
        try Data(TinyBMP.bytes(8)).write(to: input)

        try await QueueFixture.withQueue(backend) { queue, url in
            let id = try await queue.enqueue([JobSpec(source: input.path, payload: payload)])[0].id
            let worker = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir.appendingPathComponent("out"), in: dir)
            let done = try await WorkerProcessTests.waitUntilFinished(
                id, on: queue, within: .seconds(60), worker: worker)
            #expect(done.state == .failed, "\(done.state): \(done.errorMessage ?? "")")
            #expect(done.errorCode == "invalid_settings", "\(done.errorCode ?? ""): \(done.errorMessage ?? "")")
            #expect(done.attempt == 1, "failed at once, not retried")
            try await WorkerProcessTests.stop(worker)
        }
    }

    // MARK: - Metrics

    /// Without `--metrics-host` the metrics server listens on 127.0.0.1 only: the kernel's
    /// table of listening TCP sockets shows the port bound to 127.0.0.1, not 0.0.0.0 or `::`.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/net/tcp"), "needs Linux's /proc/net/tcp"))
    func metricsListenOnLoopbackByDefault() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let port = try ChildProcessTools.freePort()
        try await QueueFixture.withQueue(.sqlite) { _, url in
            let worker = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir.appendingPathComponent("out"), in: dir,
                options: ["--metrics-port", "\(port)"])
            let health = try await Poll.value(
                "the metrics server answers on 127.0.0.1", within: .seconds(60), every: .milliseconds(250),
                diagnostics: { worker.logTail() }
            ) { await WorkerProcessTests.get("http://127.0.0.1:\(port)/healthz") }
            #expect(health == "ok\n")
            let listeners = Self.listeningAddresses(port: port)
            #expect(listeners == ["0100007F"], "listening on \(listeners) (hex, /proc/net/tcp{,6})")
            try await WorkerProcessTests.stop(worker)
        }
    }

    /// The local addresses (hex, as the kernel prints them) of TCP sockets listening on `port`,
    /// IPv4 and IPv6.
    static func listeningAddresses(port: Int) -> [String] {
        let portHex = String(format: "%04X", port)
        var addresses: [String] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // sl local_address rem_address st ...; st 0A is LISTEN.
                guard fields.count > 3, fields[3] == "0A" else { continue }
                let local = fields[1].split(separator: ":")
                if local.count == 2, local[1] == portHex { addresses.append(String(local[0])) }
            }
        }
        return addresses
    }

    // MARK: - The PostgreSQL password

    /// A URL without a password connects with `PGPASSWORD` or `--queue-password-file`, for
    /// `enqueue`, `jobs` and `worker`, against a role that needs its password (SCRAM); the
    /// password never appears in any output, not even in a URL that cannot be parsed.
    @Test func postgresPasswordFromEnvironmentOrFile() async throws {
        let server = PostgresTestServer.shared
        let suffix = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let role = "pw_\(suffix)"
        let password = "S3cr#t/\(suffix)@x"
        try await server.execute("CREATE ROLE \(role) LOGIN PASSWORD '\(password)'")
        try await server.execute("CREATE DATABASE \(role) OWNER \(role)")
        // The cluster trusts every local connection: only this role must give its password.
        let hbaFile = try await server.execute("SHOW hba_file")
        let rules = try String(contentsOfFile: hbaFile, encoding: .utf8)
        try ("host all \(role) 127.0.0.1/32 scram-sha-256\n" + rules).write(
            toFile: hbaFile, atomically: true, encoding: .utf8)
        try await server.execute("SELECT pg_reload_conf()")
        defer {
            if let rules = try? String(contentsOfFile: hbaFile, encoding: .utf8) {
                let kept = rules.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains(role) }
                try? kept.joined(separator: "\n").write(toFile: hbaFile, atomically: true, encoding: .utf8)
            }
        }

        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let input = dir.appendingPathComponent("a.bmp")
        try Data(TinyBMP.bytes(9)).write(to: input)
        let port = try await server.port
        let queue = "postgres://\(role)@127.0.0.1:\(port)/\(role)?sslmode=disable"
        let binary = try PushPrepCLI.binary().path
        func pushprep(_ arguments: [String], environment: [String] = []) async throws -> PushPrepCLI.Result {
            // env(1) clears PGPASSWORD unless the test sets it.
            let result = try await Self.onOwnThread {
                try TestTools.run(
                    "env", ["-u", "PGPASSWORD"] + environment + [binary] + arguments, currentDirectory: dir)
            }
            let output = PushPrepCLI.Result(status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(!output.stdoutText.contains(password) && !output.stderrText.contains(password))
            #expect(!output.stderrText.contains("S3cr"), "a part of the password leaked: \(output.stderrText)")
            return output
        }

        // The rule is in force once a connection without the password is refused.
        try await Poll.until("the server asks \(role) for a password", within: .seconds(20), every: .milliseconds(250))
        {
            try await pushprep(["jobs", "stats", "--queue", queue]).status == 1
        }

        let withEnvironment = try await pushprep(
            ["enqueue", "--queue", queue, input.path], environment: ["PGPASSWORD=\(password)"])
        #expect(withEnvironment.status == 0, "PGPASSWORD: \(withEnvironment.stderrText)")

        let file = dir.appendingPathComponent("password")
        try Data((password + "\n").utf8).write(to: file)
        let withFile = try await pushprep(["jobs", "list", "--queue", queue, "--queue-password-file", file.path])
        #expect(withFile.status == 0, "--queue-password-file: \(withFile.stderrText)")
        #expect(withFile.stdoutText.contains(input.path), "the job enqueued with PGPASSWORD is listed")

        let wrong = dir.appendingPathComponent("wrong")
        try Data("S3cr-wrong\n".utf8).write(to: wrong)
        let refused = try await pushprep(["jobs", "stats", "--queue", queue, "--queue-password-file", wrong.path])
        #expect(refused.status == 1, "a wrong password: exit \(refused.status), \(refused.stderrText)")

        let twice = try await pushprep([
            "jobs", "stats", "--queue", "postgres://\(role):x@127.0.0.1:\(port)/\(role)", "--queue-password-file",
            file.path,
        ])
        #expect(twice.status == 2, "a password in the URL and a file: \(twice.stderrText)")

        // Unencoded, '#', '/' and '@' break the URL: the message must still hide the password.
        let unparsable = try await pushprep(["jobs", "stats", "--queue", "postgres://\(role):\(password)@127.0.0.1/db"])
        #expect(unparsable.status == 2 && unparsable.stderrText.contains("***"), "\(unparsable.stderrText)")

        // The worker takes the password from the file too and processes the queued job.
        let out = dir.appendingPathComponent("out")
        let worker = try PushPrepProcess(
            [
                "worker", "--queue", queue, "--queue-password-file", file.path, "--out", out.path, "--lease", "2",
                "--poll-interval", "0.2", "--log-level", "debug", "--source-root", dir.path,
            ], in: dir)
        try await Poll.until("the worker finished the job", within: .seconds(60), diagnostics: { worker.logTail() }) {
            (try? OutDirectory.visibleNames(in: out).isEmpty) == false
        }
        try await WorkerProcessTests.stop(worker)
        #expect(!worker.stderrText.contains(password), "the worker's log shows the password")
        _ = try? await server.execute("DROP DATABASE IF EXISTS \(role) WITH (FORCE)")
        _ = try? await server.execute("DROP ROLE IF EXISTS \(role)")
    }

    /// Runs blocking work (a child process) on a thread of its own, not on one of the few
    /// threads of Swift concurrency's pool.
    static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }
}
