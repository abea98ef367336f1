import Foundation
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// From a finished job to a push with the CLI (issue 28 §1): `payload --job ID…` reads the
/// queue `--queue` names, `jobs show ID --manifest` prints a manifest `payload -` takes, and a
/// job that is missing, failed or not finished is a stable code and exit status 1. What is not
/// a manifest (a job as `jobs show --json` prints it, a list of jobs, a payload, broken JSON) is
/// said in words, never in the decoder's. A real queue file, a real worker, real processes.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PayloadFromJobCLITests {
    static let base = "https://cdn.example.com/push"

    /// Words of Swift's DecodingError that must never reach a user.
    static let decoderWords = [
        "CodingKeys", "No value associated", "Expected to decode", "DecodingError", "codingPath",
    ]

    @Test("payload --job and jobs show --manifest make the payload a manifest makes; other jobs are clear errors")
    func payloadFromJobs() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let out = dir.appendingPathComponent("out")
        try Data(TinyBMP.bytes(2801)).write(to: dir.appendingPathComponent("a.bmp"))
        try Data(TinyBMP.bytes(2802)).write(to: dir.appendingPathComponent("b.bmp"))
        try Data("just some notes\n".utf8).write(to: dir.appendingPathComponent("notes.txt"))

        try await QueueFixture.withQueue(.sqlite) { queue, url in
            let q = url.commandLineArgument
            func pushprep(_ arguments: [String], stdin: Data? = nil) async throws -> PushPrepCLI.Result {
                try await PushPrepCLI.runAsync(arguments, in: dir, stdin: stdin)
            }
            let queued = try await pushprep(["enqueue", "--queue", q, "a.bmp", "b.bmp", "notes.txt"])
            let ids = queued.lines.compactMap { JobID($0) }
            try #require(ids.count == 3, "\(queued.stdoutText)\(queued.stderrText)")
            let (a, b, notes) = (ids[0], ids[1], ids[2])

            // Before a worker ran it, a job has nothing to send.
            let early = try await pushprep(["payload", "--queue", q, "--job", "\(a)", "--body", "Hi"])
            #expect(early.status == 1 && early.stdout.isEmpty, "\(early.stderrText)")
            #expect(
                early.stderrText.contains("invalid_job_state: job \(a) is queued")
                    && early.stderrText.contains("a payload takes succeeded jobs only"), "\(early.stderrText)")
            // jobs show --manifest says so in its own words.
            let earlyManifest = try await pushprep(["jobs", "show", "\(a)", "--manifest", "--queue", q])
            #expect(earlyManifest.status == 1 && earlyManifest.stdout.isEmpty, "\(earlyManifest.stderrText)")
            #expect(
                earlyManifest.stderrText.contains("a manifest takes succeeded jobs only"), "\(earlyManifest.stderrText)"
            )

            let worker = try PushPrepCLI.startWorker(queue: q, out: out, in: dir)
            try await Poll.until(
                "the worker has run every job", within: .seconds(60), diagnostics: { worker.logTail() }
            ) {
                let stats = try await queue.stats()
                return stats.byState[.queued] == 0 && stats.byState[.running] == 0
            }
            try await WorkerProcessTests.stop(worker)
            let finished = try #require(try await queue.job(a))
            try #require(finished.state == .succeeded, "\(finished)")
            let entry = try JSONDecoder().decode(ManifestEntry.self, from: Data(try #require(finished.result).utf8))
            let attachment = try #require(entry.attachment)
            let second = try #require(
                try await queue.job(b)?.result.flatMap {
                    try JSONDecoder().decode(ManifestEntry.self, from: Data($0.utf8)).attachment
                })

            // payload --job: the job's attachment, as from a manifest holding its entry.
            let content = ["--title", "Hi", "--base-url", Self.base, "--compact"]
            let fromJob = try await pushprep(["payload", "--queue", q, "--job", "\(a)"] + content)
            #expect(fromJob.status == 0, "\(fromJob.stderrText)")
            #expect(fromJob.stdoutText.contains("\"id\":\"\(attachment.id)\""), "\(fromJob.stdoutText)")
            #expect(fromJob.stdoutText.contains("\"url\":\"\(Self.base)/\(attachment.file)\""))

            // jobs show --manifest: a manifest document (process's schema) of the job's entry,
            // which payload - and payload FILE take; the same bytes as payload --job.
            let shown = try await pushprep(["jobs", "show", "\(a)", "--manifest", "--queue", q])
            #expect(shown.status == 0, "\(shown.stderrText)")
            let manifest = try JSONDecoder().decode(Manifest.self, from: shown.stdout)
            #expect(manifest.version == Manifest.currentVersion && manifest.attachments == [entry])
            let document = shown.stdout
            let violations = try await ChildProcessTools.blocking { try ManifestSchema.violations(of: document) }
            #expect(violations.isEmpty, "the schema of process's manifest.json: \(violations)")
            let piped = try await pushprep(["payload", "-"] + content, stdin: shown.stdout)
            #expect(piped.status == 0, "\(piped.stderrText)")
            #expect(piped.stdout == fromJob.stdout)
            // --manifest-version 3: the same entry, its warnings structured; payload reads it alike.
            let three = try await pushprep([
                "jobs", "show", "\(a)", "--manifest", "--manifest-version", "3", "--queue", q,
            ])
            #expect(three.status == 0, "\(three.stderrText)")
            let structured = try JSONDecoder().decode(Manifest.self, from: three.stdout)
            #expect(structured.version == 3 && structured.attachments == [entry])
            let threeDocument = three.stdout
            let threeViolations = try await ChildProcessTools.blocking {
                try ManifestSchema.violations(of: threeDocument)
            }
            #expect(threeViolations.isEmpty, "\(threeViolations)")
            let pipedThree = try await pushprep(["payload", "-"] + content, stdin: three.stdout)
            #expect(pipedThree.status == 0 && pipedThree.stdout == fromJob.stdout, "\(pipedThree.stderrText)")
            let alone = try await pushprep(["jobs", "show", "\(a)", "--manifest-version", "3", "--queue", q])
            #expect(alone.status == 2 && alone.stderrText.contains("--manifest-version takes --manifest"))

            // Two jobs: the first by default, saying which it took; both with --all.
            let two = try await pushprep(["payload", "--queue", q, "--job", "\(a)", "--job", "\(b)"] + content)
            #expect(two.status == 0 && two.stdout == fromJob.stdout, "\(two.stderrText)")
            #expect(
                two.stderrText.contains(
                    "payload: took \(attachment.id), the first of 2 ready attachments; the others: \(second.id);"
                        + " choose with --id, or send every one with --all"), "\(two.stderrText)")
            let both = try await pushprep(
                ["payload", "--queue", q, "--job", "\(a)", "--job", "\(b)", "--all"] + content)
            #expect(both.status == 0, "\(both.stderrText)")
            #expect(both.stdoutText.contains(attachment.id) && both.stdoutText.contains(second.id))
            // Airship carries one: --all is refused, listing the ids to choose from.
            let airship = try await pushprep(
                ["payload", "--queue", q, "--job", "\(a)", "--job", "\(b)", "--all", "--dialect", "airship"] + content)
            #expect(airship.status == 1 && airship.stdout.isEmpty)
            #expect(
                airship.stderrText.contains(
                    "invalid_payload: Airship carries one attachment per push, got 2 (\(attachment.id), \(second.id)):"
                        + " choose one with --id"), "\(airship.stderrText)")

            // A failed job, one that does not exist: a code, exit status 1, nothing on standard output.
            let failed = try await pushprep(["payload", "--queue", q, "--job", "\(notes)", "--body", "Hi"])
            let failedState = try #require(try await queue.job(notes)?.state)
            #expect(failed.status == 1 && failed.stdout.isEmpty, "\(failed.stderrText)")
            #expect(
                failed.stderrText.contains(
                    "invalid_job_state: job \(notes) is \(failedState.rawValue) (unsupported_type:"),
                "\(failed.stderrText)")
            let missing = try await pushprep(["payload", "--queue", q, "--job", "987654", "--body", "Hi"])
            #expect(missing.status == 1 && missing.stdout.isEmpty)
            #expect(missing.stderrText.contains("job_not_found: no job 987654"), "\(missing.stderrText)")
            let noManifest = try await pushprep(["jobs", "show", "\(notes)", "--manifest", "--queue", q])
            #expect(noManifest.status == 1 && noManifest.stdout.isEmpty)
            #expect(noManifest.stderrText.contains("invalid_job_state"), "\(noManifest.stderrText)")
            let missingManifest = try await pushprep(["jobs", "show", "987654", "--manifest", "--queue", q])
            #expect(missingManifest.status == 1 && missingManifest.stderrText.contains("job_not_found"))

            // Neither or both of a manifest and --job: a usage error.
            #expect(try await pushprep(["payload", "--body", "Hi"]).status == 2)
            let twice = try await pushprep(["payload", "m.json", "--queue", q, "--job", "\(a)", "--body", "Hi"])
            #expect(twice.status == 2 && twice.stderrText.contains("not both"), "\(twice.stderrText)")

            // What the issue saw: jobs show --json piped to payload - says what it got, and what to run.
            let json = try await pushprep(["jobs", "show", "\(a)", "--json", "--queue", q])
            let wrong = try await pushprep(["payload", "-", "--title", "Hi"], stdin: json.stdout)
            #expect(wrong.status == 1 && wrong.stdout.isEmpty)
            #expect(
                wrong.stderrText.contains(
                    "invalid_payload: - is not a PushPrep manifest: got a job (from `jobs show --json`): use"
                        + " `pushprep payload --job \(a)`, or `pushprep jobs show \(a) --manifest`"),
                "\(wrong.stderrText)")
            let list = try await pushprep(["jobs", "list", "--json", "--queue", q, "--state", "succeeded"])
            let listed = try await pushprep(["payload", "-", "--title", "Hi"], stdin: list.stdout)
            #expect(listed.status == 1)
            #expect(
                listed.stderrText.contains("got a list of jobs (from `jobs list --json`): use `pushprep payload --job"),
                "\(listed.stderrText)")
            for result in [wrong, listed] {
                #expect(!Self.decoderWords.contains { result.stderrText.contains($0) }, "\(result.stderrText)")
            }
        }
    }

    /// A document `payload` was given instead of a manifest, and the words it must answer with.
    struct NotAManifest: Sendable, CustomTestStringConvertible {
        var name: String
        var text: String
        var says: String
        var testDescription: String { name }
    }

    static let notManifests: [NotAManifest] = [
        NotAManifest(name: "empty input", text: "\n", says: "got nothing (an empty input); expected a manifest"),
        NotAManifest(
            name: "broken JSON", text: "{\"version\": 2,\n  \"attachments\": [}",
            says: "not JSON at line 2, column 19"),
        NotAManifest(name: "an array", text: "[1, 2]", says: "got a JSON array; expected a manifest"),
        NotAManifest(name: "a string", text: "\"manifest.json\"", says: "got a JSON string; expected a manifest"),
        NotAManifest(name: "an empty object", text: "{}", says: "got an empty JSON object; expected a manifest"),
        NotAManifest(
            name: "an APNs payload", text: #"{"aps": {"alert": "Hi", "mutable-content": 1}, "attachments": []}"#,
            says: "got a push payload (APNs); payload makes one from a manifest, and `pushprep preflight` checks one"),
        NotAManifest(
            name: "a manifest entry", text: #"{"status": "failed", "source": "a.txt", "error": {}}"#,
            says: "got one manifest entry; a manifest is an object whose attachments are the entries"),
        NotAManifest(
            name: "another object", text: #"{"name": "x", "files": []}"#,
            says: #"got a JSON object with the keys "files", "name" and no "attachments"; expected a manifest"#),
        NotAManifest(
            name: "a newer manifest", text: #"{"version": 4, "attachments": []}"#,
            says: "a manifest of version 4; this PushPrep reads versions 1 to 3"),
        NotAManifest(
            name: "a manifest without its generator", text: #"{"version": 2, "attachments": []}"#,
            says: #"the document has no "generator"; expected a manifest"#),
        NotAManifest(
            name: "a manifest whose entry has a field of the wrong type",
            text:
                #"{"version": 2, "generator": {"name": "p", "version": "1"}, "settings": {}, "attachments": [{"status": "ok", "id": 5}]}"#,
            says: #"/attachments/0/id must be a string, got 5"#),
        NotAManifest(
            name: "a manifest whose entry lacks a field",
            text:
                #"{"version": 2, "generator": {"name": "p", "version": "1"}, "settings": {}, "attachments": [{"status": "ok", "id": "img-1"}]}"#,
            says: #"/attachments/0 has no "source", which a manifest has there"#),
        NotAManifest(
            name: "an entry of an unknown kind",
            text:
                #"{"version": 2, "generator": {"name": "p", "version": "1"}, "settings": {}, "attachments": [{"status": "ok", "id": "img-1", "source": "a", "kind": "hologram"}]}"#,
            says: #"/attachments/0/kind holds "hologram", which is not one of the values it takes"#),
    ]

    @Test("payload and preflight --manifest say in words what they got instead of a manifest", arguments: notManifests)
    func notAManifest(_ document: NotAManifest) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try Data(document.text.utf8).write(to: dir.appendingPathComponent("doc.json"))
        try Data(#"{"aps": {"alert": "Hi", "mutable-content": 1}}"#.utf8).write(
            to: dir.appendingPathComponent("p.json"))
        let fromStdin = try await PushPrepCLI.runAsync(
            ["payload", "-", "--title", "Hi"], in: dir, stdin: Data(document.text.utf8))
        let fromFile = try await PushPrepCLI.runAsync(["payload", "doc.json", "--title", "Hi"], in: dir)
        let preflight = try await PushPrepCLI.runAsync(["preflight", "p.json", "--manifest", "doc.json"], in: dir)
        for (result, name) in [(fromStdin, "-"), (fromFile, "doc.json"), (preflight, "doc.json")] {
            #expect(result.status == 1 && result.stdout.isEmpty, "\(result.stderrText)")
            #expect(
                result.stderrText.contains("invalid_payload: \(name) is not a PushPrep manifest: \(document.says)"),
                "\(result.stderrText)")
            #expect(!Self.decoderWords.contains { result.stderrText.contains($0) }, "\(result.stderrText)")
        }
    }
}
