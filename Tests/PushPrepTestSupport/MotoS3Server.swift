package import Foundation
package import PushPrepStorage
import Synchronization
package import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// moto's S3 server, a real S3 API on 127.0.0.1 for the storage tests: one per test process and
/// kind, started on first use on a free port from `.build/pyenv` (`make pyenv`, which `make test`
/// runs, installs the pinned `moto[server]` and `boto3` there).
///
/// ``shared`` checks signatures as AWS does: it runs with IAM auth on
/// (`INITIAL_NO_AUTH_ACTION_COUNT=3`), and `scripts/moto_setup.py` spends those three unsigned
/// calls creating an IAM user with an S3 policy and its access key, so every later request must
/// be signed with that key (a wrong signature is a 403 `SignatureDoesNotMatch`; an unsigned
/// request is refused too, though with a bare 500 where AWS says 403). ``withoutIAM`` checks
/// nothing: moto 5.2 answers presigned GETs with 500 when IAM auth is on, so a presigned URL is
/// downloaded from that one.
///
/// ``readBack(_:bucket:)`` reads an object with boto3 (`scripts/s3_read.py`), a client
/// independent of PushPrep's, so a test checks what was stored rather than what PushPrep thinks
/// it stored. The server is killed when the test process exits; one left by a killed run is
/// killed by the next run (the same directory scheme as ``PostgresTestServer``).
package final class MotoS3Server: Sendable {
    /// The server that checks signatures and IAM policies.
    package static let shared = MotoS3Server(iamAuth: true)
    /// A server that checks no signature, for downloading presigned URLs (see above).
    package static let withoutIAM = MotoS3Server(iamAuth: false)

    /// The virtualenv's interpreter, where `make pyenv` installs moto and boto3.
    package static let python = TestTools.packageRoot.appendingPathComponent(".build/pyenv/bin/python").path

    /// Whether `.build/pyenv` has moto's server and boto3: Python imports them, once per
    /// process, on a thread of its own.
    package static var isAvailable: Bool {
        get async { await availability.value }
    }

    private static let availability = Task<Bool, Never> {
        let check = try? await ChildProcessTools.blocking {
            guard FileManager.default.isExecutableFile(atPath: python) else { return false }
            return try TestTools.run(python, ["-c", "import boto3, moto.server"], timeout: .seconds(60)).status == 0
        }
        return check ?? false
    }

    /// The trait of every test that needs a moto server: skipped, with the way to get one, when
    /// `.build/pyenv` lacks it.
    package static var required: ConditionTrait {
        .enabled("needs moto[server] and boto3 in .build/pyenv: `make pyenv` (run by `make test`) installs them") {
            await isAvailable
        }
    }

    /// The region of the server's own bucket and of ``makeBucket(_:region:)``'s by default.
    package let region: String
    /// Whether this server checks signatures (``shared``) or not (``withoutIAM``).
    package let iamAuth: Bool

    /// A started, prepared server.
    private struct Instance: Sendable {
        let pid: pid_t
        let endpoint: URL
        let credentials: AWSCredentials
        let bucket: String
    }

    private let instance: Task<Instance, any Error>

    private init(iamAuth: Bool) {
        let region = "us-east-1"
        self.iamAuth = iamAuth
        self.region = region
        instance = Task { try await Self.start(iamAuth: iamAuth, region: region) }
    }

    /// `http://127.0.0.1:PORT` (starts the server).
    package var endpoint: URL {
        get async throws { try await instance.value.endpoint }
    }

    /// The key requests are signed with: the IAM user's on ``shared`` (starts the server).
    package var credentials: AWSCredentials {
        get async throws { try await instance.value.credentials }
    }

    /// A bucket made with the server, in ``region`` (starts the server). Tests that list or
    /// count objects make their own with ``makeBucket(_:region:)``.
    package var bucket: String {
        get async throws { try await instance.value.bucket }
    }

    /// The path-style URL of `key` in `bucket` (``bucket`` when nil); `key` is used as written,
    /// so give it percent-encoded where S3 needs that.
    package func url(key: String, bucket: String? = nil) async throws -> URL {
        let instance = try await instance.value
        let text = "\(instance.endpoint.absoluteString)/\(bucket ?? instance.bucket)/\(key)"
        guard let url = URL(string: text) else { throw TestTools.Failure(description: "not a URL: \(text)") }
        return url
    }

    /// The `--store` value for `prefix` in `bucket` (``bucket`` when nil) on this server:
    /// `s3://BUCKET/PREFIX?region=us-east-1&endpoint=http://127.0.0.1:PORT` (path style by
    /// default, the endpoint being an IP address). The key comes from the environment
    /// (``environment``), as an operator's would.
    package func storeURL(prefix: String = "", bucket: String? = nil) async throws -> String {
        let instance = try await instance.value
        return
            "s3://\(bucket ?? instance.bucket)/\(prefix)?region=\(region)&endpoint=\(instance.endpoint.absoluteString)"
    }

    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` set to the server's key, for a
    /// `pushprep` process or for resolving a configuration the way an operator's would be.
    package var environment: [String: String] {
        get async throws {
            let credentials = try await instance.value.credentials
            return ["AWS_ACCESS_KEY_ID": credentials.accessKeyID, "AWS_SECRET_ACCESS_KEY": credentials.secretAccessKey]
        }
    }

    /// A fresh bucket name, `pushprep-<12 hex digits>`: valid everywhere, unique per call.
    package static func uniqueBucketName() -> String {
        "pushprep-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
    }

    /// Creates `name` (a fresh name by default) in `region` (``region`` by default) with boto3
    /// and the server's key; returns the name.
    @discardableResult
    package func makeBucket(_ name: String = uniqueBucketName(), region: String? = nil) async throws -> String {
        let instance = try await instance.value
        let request = Self.request(instance, region: region ?? self.region, ["bucket": name])
        _ = try await Self.runScript("moto_setup.py", request)
        return name
    }

    /// What S3 stores for `key` in `bucket` (``bucket`` when nil), read with boto3; nil when
    /// there is no such object.
    package func readBack(_ key: String, bucket: String? = nil) async throws -> StoredObject? {
        let instance = try await instance.value
        let request = Self.request(instance, region: region, ["bucket": bucket ?? instance.bucket, "key": key])
        let output = try await Self.runScript("s3_read.py", request)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        if let failure = try? decoder.decode(ReadFailure.self, from: output) {
            guard failure.error == "NoSuchKey" else {
                throw TestTools.Failure(description: "boto3 could not read \(key): \(failure.error)")
            }
            return nil
        }
        return try decoder.decode(StoredObject.self, from: output)
    }

    /// Stores `body` under `key` in `bucket` (``bucket`` when nil) with boto3
    /// (`scripts/s3_put.py`), as a client other than PushPrep would: no `x-amz-meta-sha256`.
    package func put(_ key: String, body: Data, bucket: String? = nil) async throws {
        let instance = try await instance.value
        let request = Self.request(
            instance, region: region,
            ["bucket": bucket ?? instance.bucket, "key": key, "body_base64": body.base64EncodedString()])
        _ = try await Self.runScript("s3_put.py", request)
    }

    /// An object as boto3 reads it back.
    package struct StoredObject: Sendable, Decodable {
        /// The bytes.
        package let body: Data
        package let contentType: String?
        package let cacheControl: String?
        package let contentDisposition: String?
        package let contentEncoding: String?
        /// The user metadata: `x-amz-meta-NAME` headers, by NAME.
        package let metadata: [String: String]

        private enum CodingKeys: String, CodingKey {
            case bodyBase64, contentType, cacheControl, contentDisposition, contentEncoding, metadata
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let body = Data(base64Encoded: try container.decode(String.self, forKey: .bodyBase64)) else {
                throw TestTools.Failure(description: "s3_read.py printed a body that is not base64")
            }
            self.body = body
            contentType = try container.decodeIfPresent(String.self, forKey: .contentType)
            cacheControl = try container.decodeIfPresent(String.self, forKey: .cacheControl)
            contentDisposition = try container.decodeIfPresent(String.self, forKey: .contentDisposition)
            contentEncoding = try container.decodeIfPresent(String.self, forKey: .contentEncoding)
            metadata = try container.decode([String: String].self, forKey: .metadata)
        }
    }

    private struct ReadFailure: Decodable {
        let error: String
    }

    // MARK: - Starting

    /// Holds every server directory: `<pid>-<random>/` with `owner.pid` (the test process),
    /// `server.pid` and `server.log`.
    static let parentDirectory = URL(fileURLWithPath: "/tmp/pushprep-moto-tests", isDirectory: true)

    /// What `moto_setup.py` prints.
    private struct Setup: Decodable {
        let accessKeyId: String
        let secretAccessKey: String
        let bucket: String
    }

    /// Starts a server on a free port (another when moto could not listen on the one picked),
    /// waits until it listens, and prepares it with `moto_setup.py`.
    private static func start(iamAuth: Bool, region: String) async throws -> Instance {
        guard await isAvailable else {
            throw TestTools.Failure(description: "moto's server is not in .build/pyenv: run `make pyenv`")
        }
        ChildProcessTools.removeStaleDirectories(under: parentDirectory) { stopServer(in: $0) }
        let directory = try ChildProcessTools.makeDirectory(under: parentDirectory)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AWS_") }
        environment["INITIAL_NO_AUTH_ACTION_COUNT"] = iamAuth ? "3" : nil
        environment["PYTHONUNBUFFERED"] = "1"
        let log = directory.appendingPathComponent("server.log")
        var lastFailure: (any Error)?
        for _ in 0..<3 {
            let port = try ChildProcessTools.freePort()
            let pid = try ChildProcessTools.spawn(
                [python, "-m", "moto.server", "-H", "127.0.0.1", "-p", "\(port)"], in: directory, output: log,
                environment: environment)
            register(pid, directory: directory)
            do {
                try await waitUntilListening(pid: pid, port: port, log: log)
            } catch {
                lastFailure = error
                stop(pid)
                continue
            }
            do {
                guard let endpoint = URL(string: "http://127.0.0.1:\(port)") else {
                    throw TestTools.Failure(description: "no URL for port \(port)")
                }
                let output = try await runScript(
                    "moto_setup.py",
                    ["endpoint": endpoint.absoluteString, "region": region, "iam": iamAuth, "bucket": "pushprep-tests"])
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                let setup = try decoder.decode(Setup.self, from: output)
                return Instance(
                    pid: pid, endpoint: endpoint,
                    credentials: AWSCredentials(accessKeyID: setup.accessKeyId, secretAccessKey: setup.secretAccessKey),
                    bucket: setup.bucket)
            } catch {
                stop(pid)
                throw TestTools.Failure(
                    description: "moto_setup.py failed: \(error)\nserver.log:\n\(ChildProcessTools.tail(of: log))")
            }
        }
        throw lastFailure ?? TestTools.Failure(description: "moto's S3 server did not start")
    }

    /// Polls, without blocking a thread, until moto says it listens on `port` (Werkzeug logs
    /// "Running on" once it is bound) and accepts a connection there; throws when it exits
    /// first or takes more than a minute.
    private static func waitUntilListening(pid: pid_t, port: Int, log: URL) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        let listening = "Running on http://127.0.0.1:\(port)"
        while true {
            if let status = ChildProcessTools.exitStatus(of: pid) {
                throw TestTools.Failure(
                    description: "moto's S3 server exited with \(status) before listening on \(port):\n"
                        + ChildProcessTools.tail(of: log))
            }
            let logged = (try? String(contentsOf: log, encoding: .utf8))?.contains(listening) ?? false
            if logged, ChildProcessTools.acceptsConnections(port: port) { return }
            guard ContinuousClock.now < deadline else {
                throw TestTools.Failure(
                    description: "moto's S3 server did not listen on \(port) within a minute:\n"
                        + ChildProcessTools.tail(of: log))
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The JSON the scripts read: the server, its key and `extra`.
    private static func request(_ instance: Instance, region: String, _ extra: [String: String]) -> [String: Any] {
        var request: [String: Any] = [
            "endpoint": instance.endpoint.absoluteString, "region": region,
            "access_key_id": instance.credentials.accessKeyID,
            "secret_access_key": instance.credentials.secretAccessKey,
        ]
        for (name, value) in extra { request[name] = value }
        return request
    }

    /// Runs `scripts/NAME` with the virtualenv's Python, `request` as JSON on its standard input
    /// (so no secret is on a command line), on a thread of its own; returns its standard output.
    private static func runScript(_ name: String, _ request: [String: Any]) async throws -> Data {
        let script = TestTools.packageRoot.appendingPathComponent("scripts/\(name)").path
        let input = try JSONSerialization.data(withJSONObject: request)
        return try await ChildProcessTools.blocking {
            let result = try TestTools.run(python, [script], stdin: input, timeout: .seconds(120))
            guard result.status == 0 else {
                throw TestTools.Failure(
                    description:
                        "\(name) exited with \(result.status): \(String(decoding: result.stderr, as: UTF8.self))")
            }
            return result.stdout
        }
    }

    // MARK: - Stopping

    /// The servers this process started, by pid, with their directories, for the exit handler.
    private static let servers = Mutex<[pid_t: URL]>([:])

    /// Records a started server (in `server.pid` too, for the next run when this one is killed)
    /// and, the first time, installs the exit handler that kills them all.
    private static func register(_ pid: pid_t, directory: URL) {
        try? "\(pid)\n".write(to: directory.appendingPathComponent("server.pid"), atomically: true, encoding: .utf8)
        let first = servers.withLock { servers in
            defer { servers[pid] = directory }
            return servers.isEmpty
        }
        guard first else { return }
        atexit {
            let servers = MotoS3Server.servers.withLock { $0 }
            for pid in servers.keys { ChildProcessTools.killAndReap(pid) }
            for directory in Set(servers.values) { try? FileManager.default.removeItem(at: directory) }
        }
    }

    /// Kills a server this process started that failed to start or to be prepared.
    private static func stop(_ pid: pid_t) {
        ChildProcessTools.killAndReap(pid)
        _ = servers.withLock { $0.removeValue(forKey: pid) }
    }

    /// Kills the server of a stale directory, when `server.pid` names a live moto server (the
    /// pid may have been reused).
    private static func stopServer(in directory: URL) {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("server.pid"), encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0,
            ChildProcessTools.isAlive(pid)
        else { return }
        let commandLine = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
        guard String(decoding: commandLine, as: UTF8.self).contains("moto.server") else { return }
        kill(pid, SIGKILL)
    }
}
