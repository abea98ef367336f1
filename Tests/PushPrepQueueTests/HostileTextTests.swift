import Foundation
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// Client text with control characters in it, on both backends: refused with
/// `invalid_request` by the queue itself (so no way of enqueueing skips the check), by
/// `pushprep enqueue`, and, when a row holds such text anyway (written by an older version or by
/// hand), printed escaped by `jobs` and by the worker's log lines. And a source that answers a
/// client error is not retried.
@Suite(.serialized)
struct HostileTextTests {
    /// A terminal title escape and a colour, a forged worker log line, a NUL (which SQLite
    /// stored and PostgreSQL refused), a C1 CSI, a Unicode line separator.
    static let hostileSources = [
        "http://media.example.com/a\u{1B}]0;PWN\u{07}\u{1B}[31m.jpg",
        "http://media.example.com/a.jpg\n2026-01-01T00:00:00+0000 error pushprep: forged=1 [PushPrepQueue] FORGED",
        "http://media.example.com/a\0.jpg", "http://media.example.com/a\u{9B}31m.jpg",
        "http://media.example.com/a\u{2028}.jpg",
    ]

    static func spec(_ source: String, metadata: String? = nil) -> JobSpec {
        JobSpec(source: source, payload: "{}", metadata: metadata)
    }

    /// The queue's own validation refuses each hostile source, metadata key and idempotency key
    /// with `invalid_request` before writing anything, the same on SQLite and PostgreSQL.
    @Test(arguments: QueueBackend.testedBackends)
    func queueRefusesControlCharacters(_ backend: QueueBackend) async throws {
        try await QueueFixture.withQueue(backend) { queue, _ in
            var refused: [JobSpec] = Self.hostileSources.map { Self.spec($0) }
            refused.append(Self.spec("http://media.example.com/ok.jpg", metadata: #"{"a\u001bb": 1}"#))
            refused.append(Self.spec("http://media.example.com/ok.jpg", metadata: #"{"x": [{"\u2028": 1}]}"#))
            for spec in refused {
                let error = await #expect(throws: PushPrepError.self) {
                    _ = try await queue.enqueue([Self.spec("http://media.example.com/fine.jpg"), spec])
                }
                #expect(
                    error?.code == .invalidRequest, "\(String(reflecting: spec.source)): \(error?.description ?? "")")
            }
            let key = IdempotencyKey(scope: "client", key: "key\u{1B}[2J", fingerprint: "f")
            let error = await #expect(throws: PushPrepError.self) {
                _ = try await queue.enqueue([Self.spec("http://media.example.com/fine.jpg")], idempotency: key)
            }
            #expect(error?.code == .invalidRequest, "\(error?.description ?? "")")
            #expect(try await queue.list(state: nil, limit: 10).isEmpty, "nothing was written")
            // Printable text in metadata values and keys is the client's own.
            let fine = try await queue.enqueue([
                Self.spec("http://media.example.com/fine.jpg", metadata: #"{"name": "a\nb", "日本": "x"}"#)
            ])
            #expect(fine.count == 1)
        }
    }

    /// `pushprep enqueue` refuses the same sources with `invalid_request` (exit 2, nothing
    /// queued, the message names the code point and prints no control character), and stores a
    /// URL in its normalised form, not as typed.
    @Test(arguments: QueueBackend.testedBackends)
    func enqueueCommandRefusesControlsAndNormalises(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await QueueFixture.withQueue(backend) { queue, url in
            let arguments = ["enqueue", "--queue", url.commandLineArgument]
            // A NUL cannot be an argument: it comes on standard input, one source per line.
            let nul = try await PushPrepCLI.runAsync(
                arguments + ["-"], in: dir, stdin: Data("http://media.example.com/a\0.jpg\n".utf8))
            for result in [nul] + (try await Self.enqueueEach(Self.hostileSources, arguments, in: dir)) {
                #expect(result.status == 2, "a usage error: \(result.status): \(result.stderrText)")
                #expect(result.stderrText.contains("invalid_request"), "\(result.stderrText)")
                #expect(
                    !result.stderrText.unicodeScalars.contains { UntrustedText.isControl($0) && $0 != "\n" },
                    "\(result.stderrText)")
            }
            #expect(try await queue.list(state: nil, limit: 10).isEmpty)

            let typed = try await PushPrepCLI.runAsync(arguments + ["HTTP://Media.EXAMPLE.com/a.jpg"], in: dir)
            let id = try #require(JobID(typed.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(try await queue.job(id)?.source == "http://media.example.com/a.jpg")
            let refused = try await PushPrepCLI.runAsync(arguments + ["ftp://media.example.com/a.jpg"], in: dir)
            #expect(refused.status == 2 && refused.stderrText.contains("invalid_request"), "\(refused.stderrText)")
        }
    }

    static func enqueueEach(_ sources: [String], _ arguments: [String], in dir: URL) async throws
        -> [PushPrepCLI.Result]
    {
        var results: [PushPrepCLI.Result] = []
        // Arguments are C strings: the NUL source is tried on standard input instead.
        for source in sources where !source.contains("\0") {
            results.append(try await PushPrepCLI.runAsync(arguments + [source], in: dir))
        }
        return results
    }

    /// A row that holds a hostile source anyway (written before this check, or by hand) is
    /// printed escaped by `jobs list` and `jobs show`, and the worker that fails it (at once: the
    /// URL cannot be fetched) logs it escaped: no escape sequence reaches the terminal and the
    /// `\n` forges no log line.
    @Test(arguments: QueueBackend.testedBackends)
    func storedHostileSourceIsPrintedEscaped(_ backend: QueueBackend) async throws {
        if backend == .sqlite { try #require(TestTools.programAvailable("sqlite3"), "needs the sqlite3 tool") }
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await QueueFixture.withQueue(backend) { queue, url in
            let id = try await queue.enqueue([
                try ProcessingJobs.spec(source: "http://127.0.0.1:9/a.jpg", settings: ProcessingSettings())
            ])[0].id
            // ESC ] 0;PWN BEL ESC [31m, then a newline and a whole forged log line.
            let forged = "2026-01-01T00:00:00+0000 error pushprep: forged=1 [PushPrepQueue] FORGED"
            let character = backend == .sqlite ? "char" : "chr"
            let update =
                "UPDATE pushprep_jobs SET source = 'http://127.0.0.1:9/a' || \(character)(27) || ']0;PWN' || "
                + "\(character)(7) || \(character)(27) || '[31m' || \(character)(10) || '\(forged)' WHERE id = \(id)"
            switch url {
            case .postgres(let location):
                _ = try await PostgresTestServer.shared.execute(update, database: location.database)
            case .sqlite(let path):
                _ = try await TestTools.runAsync("sqlite3", [path, update])
            }
            #expect(try await queue.job(id)?.source.contains("\u{1B}]0;PWN") == true, "the row holds the raw text")

            let queueArguments = ["--queue", url.commandLineArgument]
            let listed = try await PushPrepCLI.runAsync(["jobs", "list"] + queueArguments, in: dir)
            let shown = try await PushPrepCLI.runAsync(["jobs", "show", "\(id)"] + queueArguments, in: dir)
            for result in [listed, shown] {
                #expect(result.status == 0, "\(result.stderrText)")
                Self.expectNoControls(result.stdoutText)
                #expect(
                    result.stdoutText.contains(#"a\u001b]0;PWN\u0007\u001b[31m\n2026-01-01"#), "\(result.stdoutText)")
                #expect(!result.stdoutText.split(separator: "\n").contains { $0.hasPrefix("2026-01-01") })
            }

            let worker = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir.appendingPathComponent("out"), in: dir)
            let done = try await WorkerProcessTests.waitUntilFinished(
                id, on: queue, within: .seconds(60), worker: worker)
            #expect(done.state == .failed, "\(done.state): \(done.errorMessage ?? "")")
            #expect(done.attempt == 1, "an unusable URL is not retried")
            try await WorkerProcessTests.stop(worker)
            let log = worker.stderrText
            Self.expectNoControls(log)
            #expect(log.contains(#"a\u001b]0;PWN\u0007\u001b[31m\n2026-01-01"#), "\(worker.logTail())")
            for line in log.split(separator: "\n") {
                #expect(!line.hasPrefix("2026-01-01"), "a forged line: \(line)")
                // Every line reads as a log line, its fields as the worker wrote them.
                let parsed = try LogfmtLine(String(line))
                #expect(parsed.fields.allSatisfy { $0.key != "forged" }, "\(line)")
            }
        }
    }

    /// No control character but the line ends.
    static func expectNoControls(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let controls = text.unicodeScalars.filter { UntrustedText.isControl($0) && $0 != "\n" }
        #expect(
            controls.isEmpty, "raw controls \(controls.map { $0.value }) in:\n\(text)", sourceLocation: sourceLocation)
    }

    /// A source answering a client error (404, 410, 401, 403, 400, 418) fails its job at once,
    /// on the first attempt, with `fetch_failed` and the status; 500, 503, 408 and 429 stay
    /// retryable: the job is queued again after its first attempt.
    @Test(arguments: QueueBackend.testedBackends)
    func clientErrorsFromASourceAreNotRetried(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try await TestServer.with(files: [:]) { server in
            try await QueueFixture.withQueue(backend) { queue, url in
                let permanent = [404, 410, 401, 403, 400, 418]
                let transient = [500, 503, 408, 429]
                var ids: [Int: JobID] = [:]
                for status in permanent + transient {
                    let spec = try ProcessingJobs.spec(
                        source: server.url("/status/\(status)"), settings: ProcessingSettings(), maxAttempts: 4)
                    ids[status] = try await queue.enqueue([spec])[0].id
                }
                // A long retry base keeps a retried job queued (not run again) while it is looked at.
                let worker = try PushPrepCLI.startWorker(
                    queue: url.commandLineArgument, out: dir.appendingPathComponent("out"), in: dir, concurrency: 4,
                    options: ["--retry-base", "600", "--retry-max", "600"])
                for status in permanent + transient {
                    let id = try #require(ids[status])
                    let job = try await Poll.value(
                        "job \(id) (HTTP \(status)) has ended its first attempt", within: .seconds(90),
                        diagnostics: { worker.logTail() }
                    ) { () -> JobRecord? in
                        guard let job = try await queue.job(id), job.errorCode != nil, job.state != .running else {
                            return nil
                        }
                        return job
                    }
                    #expect(job.errorCode == "fetch_failed", "HTTP \(status): \(job.errorMessage ?? "")")
                    #expect(job.attempt == 1, "HTTP \(status)")
                    #expect(job.errorMessage?.contains("HTTP \(status)") == true, "\(job.errorMessage ?? "")")
                    if permanent.contains(status) {
                        #expect(job.state == .failed, "HTTP \(status) is permanent: \(job.state)")
                    } else {
                        #expect(job.state == .queued, "HTTP \(status) is retried: \(job.state)")
                    }
                }
                try await WorkerProcessTests.stop(worker)
            }
        }
    }
}
