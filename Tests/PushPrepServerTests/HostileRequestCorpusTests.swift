import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import PushPrep
import PushPrepCore
import PushPrepQueue
import PushPrepRemote
import PushPrepTestSupport
import PushPrepWorker
import Testing

@testable import PushPrepServer

/// The hostile-request corpus: every `Tests/HostileRequests/NN-name.http`, a request (or a
/// short sequence of them) that a hostile client or another site's page sends, replayed byte for
/// byte over a plain TCP connection to the API running in this process (the real application,
/// on a free port of 127.0.0.1), its answers checked against the file's `# expect:` lines.
///
/// Each file gets a server of its own, set up as its `# serve:` line says, on a fresh SQLite
/// queue: one case's jobs, waits or failed keys never change another's answers. The format is
/// described in `Tests/HostileRequests/README.md`; a file that does not follow it fails its test.
@Suite(.serialized)
struct HostileRequestCorpusTests {
    static let directory = TestTools.packageRoot.appendingPathComponent("Tests/HostileRequests")

    /// The corpus's `.http` files in name order; empty when the directory cannot be read (then
    /// ``corpusIsWellFormed()`` fails).
    static var files: [CorpusFile] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".http") }.sorted().map {
            CorpusFile(name: $0, url: directory.appendingPathComponent($0))
        }
    }

    /// The corpus is there and every file in it follows the format: named `NN-name.http` with a
    /// number of its own, an `# issue` line, an expectation for every request. A directory that
    /// lost its files, or a file that would replay nothing, fails here rather than passing
    /// silently.
    @Test func corpusIsWellFormed() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).sorted()
        let strays = names.filter { !$0.hasSuffix(".http") && $0 != "README.md" }
        #expect(strays.isEmpty, "files that are not cases in Tests/HostileRequests: \(strays)")
        let files = Self.files
        #expect(files.count >= 20, "Tests/HostileRequests has \(files.count) cases")
        var numbers: [String: String] = [:]
        for file in files {
            let number = file.name.prefix { $0.isNumber }
            #expect(
                number.count == 2 && file.name.dropFirst(2).first == "-" && file.name.count > ".http".count + 3,
                "\(file.name): name it NN-short-name.http")
            if let other = numbers.updateValue(file.name, forKey: String(number)) {
                Issue.record("\(file.name) and \(other) have the same number \(number)")
            }
            let parsed = try file.parse()
            #expect(!parsed.steps.isEmpty, "\(file.name) has no request")
            // Every placeholder is known and available in the file's setup.
            let values = CorpusValues(
                port: 1, sources: "http://127.0.0.1:2", keys: parsed.setup.keys, writeKey: "w", readKey: "r")
            for (index, step) in parsed.steps.enumerated() {
                _ = try step.request(values, label: "\(file.name), request \(index + 1)")
            }
        }
    }

    /// A file that does not follow the format is refused with its name and line, not replayed
    /// as something it does not say: a misspelt directive, a request without an expectation, an
    /// invisible character in a request, a placeholder the setup cannot fill.
    @Test func malformedFilesAreRefused() throws {
        let request = "POST /v1/jobs HTTP/1.1\nHost: {{HOST}}\nContent-Length: {{CONTENT_LENGTH}}\n\n{}\n"
        let malformed: [(String, String)] = [
            ("# expect: 400 invalid_request\n" + request, "no # issue line"),
            ("# issue 26 §1.5: x\n" + request, "no # expect: line"),
            ("# issue 26 §1.5: x\n# expext: 400 invalid_request\n" + request, "unknown directive # expext:"),
            ("# issue 26 §1.5: x\n# expect: 400\n" + request, "# expect: STATUS CODE"),
            (
                "# issue 26 §1.5: x\n# serve: --workers 1 --no-such-option\n# expect: 200 success\n" + request,
                "unknown serve option --no-such-option"
            ),
            (
                "# issue 26 §1.5: x\n# expect: 200 success\nGET / HTTP/1.1\n###\n# serve: --api-keys-file\n"
                    + "# expect: 200 success\nGET / HTTP/1.1\n", "# serve belongs in the first step"
            ),
            (
                "# issue 26 §1.5: x\n# expect: 400 invalid_request\nPOST /v1/jobs HTTP/1.1\nIdempotency-Key: a\u{2028}b\n",
                "U+2028 in the request"
            ),
            (
                "# issue 26 §1.5: x\n# expect: 400 invalid_request\nPOST /v1/jobs HTTP/1.1\nHost: x\n\n{}\n",
                "a body needs Content-Length"
            ),
            ("# issue 26 §1.5: x\n# expect: 200 success\nGET /\n", "not a request line"),
            ("# issue 26 §1.5: x\n# expect: 200 success\n", "a step without a request"),
        ]
        for (text, reason) in malformed {
            #expect {
                _ = try HostileCase(parsing: Array(text.utf8), file: "00-case.http")
            } throws: { error in
                "\(error)".contains("00-case.http") && "\(error)".contains(reason)
            }
        }
        let values = CorpusValues(port: 1, sources: "http://127.0.0.1:2", keys: false, writeKey: "w", readKey: "r")
        for line in ["Authorization: Bearer {{READ_KEY}}", "X: {{NOPE}}", "X: {{HEX:zz}}", "X: {{HOST"] {
            let parsed = try HostileCase(
                parsing: Array("# issue 26 §1.3: x\n# expect: 200 success\nGET / HTTP/1.1\n\(line)\n".utf8),
                file: "00-case.http")
            #expect(throws: TestTools.Failure.self, "\(line)") { try parsed.steps[0].request(values, label: "x") }
        }
        // What a well-formed file sends: CRLF line ends, the body's length, raw bytes, no final newline.
        let parsed = try HostileCase(
            parsing: Array(
                ("# issue 26 §1.5: x\n# expect: 400 invalid_request\n"
                    + request.replacingOccurrences(
                        of: "{}", with: "{\"k\": \"a{{HEX:1b}}\"}") + "\n").utf8),
            file: "00-case.http")
        let bytes = try parsed.steps[0].request(values, label: "x")
        #expect(
            bytes == Array("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Length: 11\r\n\r\n{\"k\": \"a".utf8)
                + [0x1B] + Array("\"}".utf8))
    }

    /// Replays one file's requests and checks each answer: its status, and its problem `code` (or
    /// that it is not a problem), the headers and JSON fields the file names; no answer is a 5xx.
    @Test(arguments: Self.files)
    func replay(_ file: CorpusFile) async throws {
        let hostile = try file.parse()
        try await TestServer.with(files: ["a.bmp": TinyBMP.bytes(40)]) { sources in
            try await Self.replay(hostile, file: file.name, sources: sources)
        }
    }

    /// Replays `hostile` against a server of its own.
    private static func replay(_ hostile: HostileCase, file: String, sources: TestServer<SourceFixtures>) async throws {
        try await Self.withServer(hostile.setup) { port in
            let values = CorpusValues(
                port: port, sources: sources.url(""), keys: hostile.setup.keys,
                writeKey: AuthAndLimitsTests.writer, readKey: AuthAndLimitsTests.reader)
            var held: [any Channel] = []
            do {
                for (index, step) in hostile.steps.enumerated() {
                    let label = "\(file), request \(index + 1)\(step.title.map { " (\($0))" } ?? "")"
                    let request = try step.request(values, label: label)
                    if let hold = step.holdUntil {
                        held.append(try await CorpusWire.hold(request, port: port))
                        try await Self.awaitHold(hold, after: step, values: values, label: label)
                        continue
                    }
                    for attempt in 1...step.repeatCount {
                        let answer = try await CorpusWire.exchange(request, port: port, label: label)
                        let which = step.repeatCount > 1 ? "\(label), sent \(attempt) of \(step.repeatCount)" : label
                        step.check(answer, label: which)
                    }
                }
            } catch {
                for channel in held { try? await channel.close() }
                throw error
            }
            for channel in held {
                // A held request is still waiting when the file ends: it was not answered early.
                #expect(channel.isActive, "\(file): a held request's connection was closed by the server")
                try? await channel.close()
            }
        }
    }

    /// Polls `hold`'s request until it answers its status: the held request has taken effect.
    private static func awaitHold(
        _ hold: CorpusStep.Hold, after step: CorpusStep, values: CorpusValues, label: String
    ) async throws {
        var poll = "GET \(hold.path) HTTP/1.1\r\nHost: \(values.host)\r\n"
        if let authorization = step.header("Authorization") {
            poll += "Authorization: \(try values.substitute(authorization, label: label).text)\r\n"
        }
        let request = Array((poll + "\r\n").utf8)
        var last = ""
        try await Poll.until(
            "\(label): GET \(hold.path) to answer \(hold.status) while the request is held", within: .seconds(15),
            every: .milliseconds(50), diagnostics: { "last answer: \(last)" }
        ) {
            let answer = try await CorpusWire.exchange(request, port: values.port, label: label)
            last = answer.summary
            return answer.status == hold.status
        }
    }

    /// Runs `body` with the port of the API (the application `pushprep serve` runs, in this
    /// process, on 127.0.0.1) configured as `setup` says, on a SQLite queue in a temporary
    /// directory, with `setup.workers` embedded workers when it asks for some.
    static func withServer(_ setup: CorpusSetup, _ body: @Sendable (Int) async throws -> Void) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let uploads = dir.appendingPathComponent("uploads")
        try FileManager.default.createDirectory(at: uploads, withIntermediateDirectories: true)
        var configuration = ServerConfiguration(
            port: 0,
            apiKeys: setup.keys
                ? try APIKeyStore(parsing: "\(AuthAndLimitsTests.writer)\n\(AuthAndLimitsTests.reader) read") : nil,
            uploadsDirectory: uploads.path)
        // As RunningServe starts `pushprep serve`: sources on the test's own server are allowed.
        configuration.remote.allowPrivateNetworks = true
        setup.apply(to: &configuration)
        try configuration.validate()
        let settings = configuration
        try await JobQueues.withBackend(.sqlite(path: dir.appendingPathComponent("q.db").path), logger: .quiet) {
            queue in
            let application = APIServer.application(
                configuration: settings, queue: queue, publicURL: PublicURL(configured: settings.publicURL),
                registry: nil, readiness: {}, logger: .quiet, onListening: nil)
            guard setup.workers > 0 else {
                try await application.test(.live) { client in try await body(try #require(client.port)) }
                return
            }
            let session = try ProcessingSession(threads: setup.workers, remote: settings.remote, logger: .quiet)
            let worker = QueueWorker(
                url: .sqlite(path: dir.appendingPathComponent("q.db").path),
                configuration: WorkerConfiguration(
                    concurrency: setup.workers, pollInterval: .milliseconds(100), statsInterval: .seconds(60)),
                handler: ProcessingJobHandler(
                    session: session, outputDirectory: dir.appendingPathComponent("out").path),
                logger: .quiet)
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await worker.work(on: queue) }
                    try await application.test(.live) { client in try await body(try #require(client.port)) }
                    group.cancelAll()
                }
            } catch {
                await session.shutdown()
                throw error
            }
            await session.shutdown()
        }
    }
}

// MARK: - The format

/// One file of the corpus, named for the test's report.
struct CorpusFile: Sendable, CustomTestStringConvertible {
    /// `NN-short-name.http`.
    var name: String
    var url: URL

    /// The file's name, as the test's report shows the case.
    var testDescription: String { name }

    /// The file's setup and requests; throws, naming the file and line, when it does not follow
    /// the format.
    func parse() throws -> HostileCase {
        let data = try Data(contentsOf: url)
        return try HostileCase(parsing: Array(data), file: name)
    }
}

/// A parsed corpus file: the server it needs and its requests, in order.
///
/// A file is UTF-8 text whose requests are printable ASCII (other bytes are written
/// `{{HEX:..}}`: nothing invisible hides in a request). It holds one or more steps separated by lines starting `###` (the rest of the
/// line names the step). A step is comment lines starting `#`, then a raw HTTP/1.1 request: the
/// request line, header lines, an empty line, the body. Lines end in LF in the file and CRLF on
/// the wire; the body's trailing empty lines are not sent.
///
/// Directives (`# name: value` lines; any other `#` line is a comment):
/// - `# issue ...`: which defect the file is (required in the first step).
/// - `# serve: OPTIONS`: the server's setup (first step only), among ``CorpusSetup``'s options.
/// - `# expect: STATUS CODE` (a problem+json answer with that `code`) or `# expect: STATUS success`
///   (an answer that is not a problem); required unless the step is held.
/// - `# expect-header: Name: value` (or just `Name`: present), `# expect-no-header: Name`.
/// - `# expect-json: a.0.b = JSON`: the answer's field at that path (object keys, array indexes).
/// - `# repeat: N`: send the request N times on N connections, each with the same expectations.
/// - `# hold-until: GET PATH STATUS`: send the request and keep its connection open without
///   reading (a long poll that waits on); the next step starts once `GET PATH` (with the held
///   request's `Authorization`) answers STATUS. The connection must still be open at the end.
///
/// Placeholders: `{{HOST}}` (`127.0.0.1:PORT`), `{{PORT}}`, `{{WRITE_KEY}}` and `{{READ_KEY}}`
/// (need `--api-keys-file`), `{{SOURCES}}` (the test's own source server: `/status/404`,
/// `/files/a.bmp`, see ``SourceFixtures``), `{{CONTENT_LENGTH}}` (the body's length once
/// substituted), `{{HEX:c2 85}}` (raw bytes), `{{REPEAT:20000:a}}` (a text repeated).
struct HostileCase: Sendable {
    /// The `# issue` line: which defect the file reproduces.
    var issue: String
    var setup: CorpusSetup
    /// The requests, sent in order, each on a connection of its own.
    var steps: [CorpusStep]

    /// Parses the text of the corpus file `file`; throws ``malformed(_:_:_:)`` failures.
    init(parsing bytes: [UInt8], file: String) throws {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw Self.malformed(file, 1, "not UTF-8") }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        var chunks: [(title: String?, start: Int, lines: [Substring])] = [(nil, 1, [])]
        for (offset, line) in lines.enumerated() {
            if line.hasPrefix("###") {
                let title = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
                chunks.append((title.isEmpty ? nil : title, offset + 2, []))
            } else {
                chunks[chunks.count - 1].lines.append(line)
            }
        }
        var issue: String?
        var setup = CorpusSetup()
        var steps: [CorpusStep] = []
        for (index, chunk) in chunks.enumerated() {
            var step = CorpusStep(title: chunk.title)
            var lineNumber = chunk.start
            var rest = chunk.lines[...]
            // The comments and directives, up to the request line.
            while let line = rest.first, line.hasPrefix("#") || line.allSatisfy(\.isWhitespace) {
                rest = rest.dropFirst()
                defer { lineNumber += 1 }
                if line.hasPrefix("# issue ") {
                    guard index == 0 else {
                        throw Self.malformed(file, lineNumber, "# issue belongs in the first step")
                    }
                    issue = String(line.dropFirst(2))
                    continue
                }
                guard let (name, value) = Self.directive(line) else { continue }
                do {
                    if name == "serve" {
                        guard index == 0 else { throw CorpusError("# serve belongs in the first step") }
                        setup = try CorpusSetup(options: value)
                    } else {
                        try step.apply(name, value)
                    }
                } catch let error as CorpusError {
                    throw Self.malformed(file, lineNumber, error.message)
                }
            }
            guard let requestLine = rest.first else {
                throw Self.malformed(file, lineNumber, "a step without a request")
            }
            guard requestLine.split(separator: " ").count == 3, requestLine.hasSuffix(" HTTP/1.1") else {
                throw Self.malformed(file, lineNumber, "not a request line: \(requestLine)")
            }
            if step.expected == nil && step.holdUntil == nil {
                throw Self.malformed(file, lineNumber, "the request has no # expect: line")
            }
            for (offset, line) in rest.enumerated() {
                if let scalar = line.unicodeScalars.first(where: { !($0 == "\t" || (0x20...0x7E).contains($0.value)) })
                {
                    throw Self.malformed(
                        file, lineNumber + offset,
                        "U+\(String(scalar.value, radix: 16, uppercase: true)) in the request: "
                            + "it is printable ASCII, other bytes are written {{HEX:..}}")
                }
            }
            // The head ends at the first empty line (or the step's end); the body follows it.
            let blank = rest.firstIndex(where: \.isEmpty) ?? rest.endIndex
            step.head = rest[..<blank].map(String.init)
            var body = rest[min(blank + 1, rest.endIndex)...]
            while body.last?.isEmpty == true { body = body.dropLast() }
            step.body = body.map(String.init)
            if step.header("Content-Length") == nil && !step.body.isEmpty
                && step.header("Transfer-Encoding") == nil
            {
                throw Self.malformed(
                    file, lineNumber, "a body needs Content-Length: {{CONTENT_LENGTH}} (or a Transfer-Encoding)")
            }
            steps.append(step)
        }
        guard let issue else { throw Self.malformed(file, 1, "no # issue line says which defect this is") }
        self.issue = issue
        self.setup = setup
        self.steps = steps
    }

    /// `# name: value` when `name` is a directive's spelling (lowercase letters and dashes).
    static func directive(_ line: Substring) -> (String, String)? {
        guard line.hasPrefix("# "), let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[line.index(line.startIndex, offsetBy: 2)..<colon]
        guard !name.isEmpty, name.allSatisfy({ $0.isLowercase || $0 == "-" }) else { return nil }
        return (String(name), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    /// The failure for line `line` of `file`, naming both.
    static func malformed(_ file: String, _ line: Int, _ message: String) -> TestTools.Failure {
        TestTools.Failure(description: "Tests/HostileRequests/\(file):\(line): malformed: \(message)")
    }
}

/// A problem in a corpus file's line.
struct CorpusError: Error {
    /// What is wrong, without the file and line (the parser adds them).
    var message: String

    /// An error saying `message`.
    init(_ message: String) { self.message = message }
}

/// The server a file needs (`# serve:`): the options of `pushprep serve` the corpus uses, with
/// their meanings there. Without a `# serve:` line: no keys, no workers (`--workers 0`), the
/// defaults for the rest.
struct CorpusSetup: Sendable {
    /// `--api-keys-file`: a write key and a read key (`{{WRITE_KEY}}`, `{{READ_KEY}}`).
    var keys = false
    /// `--workers N`: embedded workers processing the jobs.
    var workers = 0
    /// The numeric options, by their name.
    var limits: [String: Int] = [:]
    /// `--allowed-host NAME` (repeatable).
    var allowedHosts: [String] = []

    /// The options that take a number, set on ``ServerConfiguration`` by ``apply(to:)``.
    static let numericOptions = [
        "--max-waits", "--max-waits-per-client", "--max-queued", "--auth-failure-limit", "--max-body-bytes",
    ]

    /// The setup of a file without `# serve:`.
    init() {}

    /// The setup `# serve: OPTIONS` names; throws for an option the corpus does not know.
    init(options text: String) throws(CorpusError) {
        var words = text.split(separator: " ").map(String.init)[...]
        while let option = words.popFirst() {
            switch option {
            case "--api-keys-file": keys = true
            case "--allowed-host":
                guard let name = words.popFirst() else { throw CorpusError("--allowed-host needs a name") }
                allowedHosts.append(name)
            case "--workers":
                guard let count = words.popFirst().flatMap({ Int($0) }), (0...4).contains(count) else {
                    throw CorpusError("--workers needs a count of 0...4")
                }
                workers = count
            case let name where Self.numericOptions.contains(name):
                guard let value = words.popFirst().flatMap({ Int($0) }) else {
                    throw CorpusError("\(name) needs a number")
                }
                limits[name] = value
            default:
                throw CorpusError(
                    "unknown serve option \(option) (known: --api-keys-file, --workers, --allowed-host, "
                        + Self.numericOptions.joined(separator: ", ") + ")")
            }
        }
    }

    /// Sets `configuration` as `pushprep serve` does for these options.
    func apply(to configuration: inout ServerConfiguration) {
        configuration.allowedHosts = allowedHosts
        for (name, value) in limits {
            switch name {
            case "--max-waits": configuration.maxWaits = value
            case "--max-waits-per-client": configuration.maxWaitsPerClient = value
            case "--max-queued": configuration.maxQueued = value
            case "--auth-failure-limit": configuration.authFailureLimit = value
            case "--max-body-bytes": configuration.maxBodyBytes = value
            default: break
            }
        }
    }
}

/// One request of a file and what its answer must be.
struct CorpusStep: Sendable {
    /// The answer's kind: a problem with its `code`, or not a problem.
    enum Outcome: Sendable, Equatable {
        case problem(String)
        case success
    }

    /// `# hold-until: GET PATH STATUS`.
    struct Hold: Sendable {
        var path: String
        var status: Int
    }

    /// The rest of the `###` line that starts the step, if any.
    var title: String?
    /// `# expect:`.
    var expected: (status: Int, outcome: Outcome)?
    /// `# expect-header:` (a nil value: present with any value).
    var headers: [(name: String, value: String?)] = []
    /// `# expect-no-header:`.
    var absentHeaders: [String] = []
    /// `# expect-json:`, the value in ``CorpusWire/canonical(json:)`` form.
    var fields: [(path: String, json: String)] = []
    /// `# repeat:`.
    var repeatCount = 1
    /// `# hold-until:`.
    var holdUntil: Hold?
    /// The request line and header lines, as written.
    var head: [String] = []
    /// The body's lines, as written.
    var body: [String] = []

    /// A step with no directives yet.
    init(title: String?) { self.title = title }

    /// Applies the directive `# name: value`.
    mutating func apply(_ name: String, _ value: String) throws(CorpusError) {
        switch name {
        case "expect":
            let words = value.split(separator: " ")
            guard words.count == 2, let status = Int(words[0]), (100...599).contains(status) else {
                throw CorpusError("# expect: STATUS CODE (the problem's code) or STATUS success")
            }
            expected = (status, words[1] == "success" ? .success : .problem(String(words[1])))
        case "expect-header":
            let parts = value.split(separator: ":", maxSplits: 1)
            guard let header = parts.first, !header.isEmpty else { throw CorpusError("# expect-header: Name: value") }
            headers.append((String(header), parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : nil))
        case "expect-no-header":
            guard !value.isEmpty else { throw CorpusError("# expect-no-header: Name") }
            absentHeaders.append(value)
        case "expect-json":
            let parts = value.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { throw CorpusError("# expect-json: path.to.field = JSON") }
            let json = parts[1].trimmingCharacters(in: .whitespaces)
            guard let literal = CorpusWire.canonical(json: Array(json.utf8)) else {
                throw CorpusError("# expect-json: \(json) is not a JSON value")
            }
            fields.append((parts[0].trimmingCharacters(in: .whitespaces), literal))
        case "repeat":
            guard let count = Int(value), (1...100).contains(count) else { throw CorpusError("# repeat: 1...100") }
            repeatCount = count
        case "hold-until":
            let words = value.split(separator: " ")
            guard words.count == 3, words[0] == "GET", words[1].hasPrefix("/"), let status = Int(words[2]) else {
                throw CorpusError("# hold-until: GET /PATH STATUS")
            }
            holdUntil = Hold(path: String(words[1]), status: status)
        default:
            throw CorpusError(
                "unknown directive # \(name): (known: serve, expect, expect-header, expect-no-header, expect-json, "
                    + "repeat, hold-until)")
        }
    }

    /// The value of a header line of the request as written (placeholders not substituted).
    func header(_ name: String) -> String? {
        for line in head.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// The bytes to send: head and body with CRLF line ends, placeholders substituted.
    func request(_ values: CorpusValues, label: String) throws -> [UInt8] {
        var body: [UInt8] = []
        for (index, line) in self.body.enumerated() {
            if index > 0 { body += Array("\r\n".utf8) }
            body += try values.substitute(line, label: label).bytes
        }
        var bytes: [UInt8] = []
        for line in head {
            let filled = line.replacingOccurrences(of: "{{CONTENT_LENGTH}}", with: "\(body.count)")
            bytes += try values.substitute(filled, label: label).bytes + Array("\r\n".utf8)
        }
        return bytes + Array("\r\n".utf8) + body
    }

    /// Records an issue, naming `label`, for each way `answer` differs from the expectations.
    func check(_ answer: CorpusWire.Answer, label: String) {
        #expect(answer.status < 500, "\(label): a 5xx answer: \(answer.summary)")
        guard let (status, outcome) = expected else { return }
        #expect(answer.status == status, "\(label): expected \(status), got \(answer.summary)")
        let problem = answer.header("Content-Type") == "application/problem+json"
        switch outcome {
        case .success:
            #expect(!problem, "\(label): expected an answer that is not a problem, got \(answer.summary)")
        case .problem(let code):
            #expect(problem, "\(label): expected application/problem+json, got \(answer.summary)")
            #expect(
                answer.field("code") == CorpusWire.canonical(json: Array("\"\(code)\"".utf8)),
                "\(label): expected the problem code \(code), got \(answer.summary)")
        }
        for (name, value) in headers {
            let actual = answer.header(name)
            if let value {
                #expect(
                    actual == value, "\(label): expected \(name): \(value), got \(actual ?? "none"): \(answer.summary)")
            } else {
                #expect(actual != nil, "\(label): expected a \(name) header: \(answer.summary)")
            }
        }
        for name in absentHeaders {
            #expect(answer.header(name) == nil, "\(label): expected no \(name) header: \(answer.summary)")
        }
        for (path, json) in fields {
            let actual = answer.field(path)
            #expect(actual == json, "\(label): expected \(path) = \(json), got \(actual ?? "none"): \(answer.summary)")
        }
    }
}

/// What the placeholders stand for in one file's server.
struct CorpusValues: Sendable {
    /// The API's port.
    var port: Int
    /// The source server's base URL.
    var sources: String
    /// Whether the server has keys (`{{WRITE_KEY}}` and `{{READ_KEY}}` can be filled in).
    var keys: Bool
    var writeKey: String
    var readKey: String

    /// `{{HOST}}`.
    var host: String { "127.0.0.1:\(port)" }

    /// `line` with its placeholders replaced, as bytes (and as text, for headers).
    func substitute(_ line: String, label: String) throws -> (bytes: [UInt8], text: String) {
        var bytes: [UInt8] = []
        var rest = line[...]
        while let open = rest.range(of: "{{") {
            bytes += Array(rest[..<open.lowerBound].utf8)
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw TestTools.Failure(description: "\(label): malformed: {{ without }}")
            }
            let name = String(rest[open.upperBound..<close.lowerBound])
            bytes += try value(name, label: label)
            rest = rest[close.upperBound...]
        }
        bytes += Array(rest.utf8)
        return (bytes, String(decoding: bytes, as: UTF8.self))
    }

    /// The bytes of the placeholder `{{name}}`.
    private func value(_ name: String, label: String) throws -> [UInt8] {
        func failure(_ message: String) -> TestTools.Failure {
            TestTools.Failure(description: "\(label): malformed: {{\(name)}}: \(message)")
        }
        switch name {
        case "HOST": return Array(host.utf8)
        case "PORT": return Array("\(port)".utf8)
        case "SOURCES": return Array(sources.utf8)
        case "WRITE_KEY", "READ_KEY":
            guard keys else { throw failure("needs # serve: --api-keys-file") }
            return Array((name == "WRITE_KEY" ? writeKey : readKey).utf8)
        case let hex where hex.hasPrefix("HEX:"):
            let pairs = hex.dropFirst(4).split(separator: " ")
            let bytes = pairs.compactMap { $0.count == 2 ? UInt8($0, radix: 16) : nil }
            guard !pairs.isEmpty, bytes.count == pairs.count else { throw failure("write bytes as hex pairs") }
            return bytes
        case let text where text.hasPrefix("REPEAT:"):
            let parts = text.split(separator: ":", maxSplits: 2)
            guard parts.count == 3, let count = Int(parts[1]), (1...1_000_000).contains(count) else {
                throw failure("{{REPEAT:COUNT:TEXT}}, COUNT at most 1000000")
            }
            return Array(String(repeating: String(parts[2]), count: count).utf8)
        default:
            throw failure(
                "unknown placeholder (known: HOST, PORT, SOURCES, WRITE_KEY, READ_KEY, CONTENT_LENGTH, HEX:, REPEAT:)")
        }
    }
}

// MARK: - The wire

/// Raw requests on plain TCP connections to 127.0.0.1, and their answers read as they come.
enum CorpusWire {
    /// The first answer on a connection.
    struct Answer: Sendable {
        var status: Int
        /// The header fields in order.
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        /// The first field named `name` (any case).
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The JSON value at `path` (`a.0.b`) in the body, in ``CorpusWire/canonical(json:)`` form.
        func field(_ path: String) -> String? {
            guard var value = try? JSONSerialization.jsonObject(with: Data(body), options: .fragmentsAllowed) else {
                return nil
            }
            for key in path.split(separator: ".") {
                if let object = value as? [String: Any], let member = object[String(key)] {
                    value = member
                } else if let array = value as? [Any], let index = Int(key), array.indices.contains(index) {
                    value = array[index]
                } else {
                    return nil
                }
            }
            return CorpusWire.canonical(value)
        }

        /// The status, the problem's code and detail (or the body's start), for failure messages.
        var summary: String {
            let text = String(decoding: body.prefix(400), as: UTF8.self)
            return "\(status) \(header("Content-Type") ?? "(no Content-Type)") \(text)"
        }
    }

    /// A JSON value written one way (sorted keys), so that two spellings compare equal.
    static func canonical(json: [UInt8]) -> String? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(json), options: .fragmentsAllowed) else {
            return nil
        }
        return canonical(value)
    }

    /// `value` (from JSONSerialization) written one way.
    static func canonical(_ value: Any) -> String? {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Sends `request` on a new connection to 127.0.0.1:`port` and reads its answer: until the
    /// answer is complete (by its `Content-Length` or chunks) or the server closes, at most 30 s.
    static func exchange(_ request: [UInt8], port: Int, label: String) async throws -> Answer {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        // withDeadline (PushPrepCore), whose timer is freed when the answer comes first.
        let answer = try await withDeadline(.seconds(30)) {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(bytes: request))
                var received: [UInt8] = []
                for try await chunk in inbound {
                    received += chunk.readableBytesView
                    if let answer = try parse(received, closed: false) { return answer }
                }
                guard let answer = try parse(received, closed: true) else {
                    throw TestTools.Failure(
                        description: "\(label): the server closed the connection without an answer "
                            + "(\(received.count) bytes: \(String(decoding: received.prefix(200), as: UTF8.self)))"
                    )
                }
                return answer
            }
        }
        guard let answer else { throw TestTools.Failure(description: "\(label): no answer within 30 s") }
        return answer
    }

    /// Sends `request` on a new connection and leaves it open, unread.
    static func hold(_ request: [UInt8], port: Int) async throws -> any Channel {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port).get()
        try await channel.writeAndFlush(ByteBuffer(bytes: request))
        return channel
    }

    /// The first answer in `bytes` once it is complete (1xx answers skipped); with `closed`, what
    /// came is all there is.
    static func parse(_ bytes: [UInt8], closed: Bool) throws -> Answer? {
        var start = 0
        while true {
            let separator: [UInt8] = Array("\r\n\r\n".utf8)
            guard let end = bytes[start...].firstRange(of: separator) else { return nil }
            let head = String(decoding: bytes[start..<end.lowerBound], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst()
            let words = statusLine.split(separator: " ", maxSplits: 2)
            guard words.count >= 2, words[0] == "HTTP/1.1", let status = Int(words[1]) else {
                throw TestTools.Failure(description: "not an HTTP/1.1 status line: \(statusLine)")
            }
            let headers = lines.compactMap { line -> (String, String)? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { return nil }
                return (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces))
            }
            let rest = Array(bytes[end.upperBound...])
            if (100...199).contains(status) {
                start = end.upperBound
                continue
            }
            var answer = Answer(status: status, headers: headers, body: [])
            if let length = answer.header("Content-Length").flatMap({ Int($0) }) {
                guard rest.count >= length else { return closed ? answer.with(body: rest) : nil }
                return answer.with(body: Array(rest.prefix(length)))
            }
            if answer.header("Transfer-Encoding")?.lowercased() == "chunked" {
                if let body = dechunk(rest) { return answer.with(body: body) }
                return closed ? answer : nil
            }
            if status == 204 || status == 304 { return answer }
            guard closed else { return nil }
            answer.body = rest
            return answer
        }
    }

    /// The body of a complete chunked encoding, or nil while it is not complete.
    static func dechunk(_ bytes: [UInt8]) -> [UInt8]? {
        var body: [UInt8] = []
        var index = 0
        let crlf: [UInt8] = [0x0D, 0x0A]
        while let lineEnd = bytes[index...].firstRange(of: crlf) {
            let sizeText = String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else { return nil }
            let dataStart = lineEnd.upperBound
            if size == 0 { return body }
            guard bytes.count >= dataStart + size + 2 else { return nil }
            body += bytes[dataStart..<(dataStart + size)]
            index = dataStart + size + 2
        }
        return nil
    }
}

extension CorpusWire.Answer {
    /// This answer with `body`.
    fileprivate func with(body: [UInt8]) -> Self {
        var copy = self
        copy.body = body
        return copy
    }
}
