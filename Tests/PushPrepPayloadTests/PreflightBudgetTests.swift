import Foundation
import PushPrepCore
import PushPrepRemote
import PushPrepTestSupport
import Testing

@testable import PushPrep
@testable import PushPrepJSON
@testable import PushPrepPayload

/// Pre-flight on payloads built to cost far more than their size: what is recorded is capped
/// (duplicate keys, findings) and `--fetch` downloads within a budget, deleting each file once
/// checked.
@Suite(.serialized)
struct PreflightBudgetTests {
    /// `{"aps":…,"d":{"d":{…{"k":0,"k":0,…}…}}}`: `count` repeats of one key, `depth` levels down.
    private static func duplicates(_ count: Int, depth: Int) -> [UInt8] {
        var text = #"{"aps":{"alert":"x","mutable-content":1},"d":"#
        text += String(repeating: #"{"d":"#, count: depth)
        text += "{" + Array(repeating: #""k":0"#, count: count).joined(separator: ",") + "}"
        text += String(repeating: "}", count: depth) + "}"
        return Array(text.utf8)
    }

    /// Defect: every repeated key stored its full path and became a finding (a 16 MiB payload of
    /// repeated keys 256 levels deep needed gigabytes). Now 100 paths are kept, the rest counted.
    @Test func duplicateKeysAreCountedNotAllRecorded() throws {
        let bytes = Self.duplicates(20_000, depth: 200)
        let document = try JSONValue.parse(bytes)
        #expect(document.duplicateKeys.count == JSONDocument.maximumRecordedDuplicates)
        #expect(document.duplicateKeyCount == 19_999)
        let report = Preflight.check(bytes, file: "dup.json", options: PreflightOptions())
        let duplicates = report.findings.filter { $0.code == .duplicateKey }
        #expect(duplicates.count == 101, "100 listed and one that counts the rest")
        #expect(duplicates.contains { $0.message.contains("and 19899 more repeated keys") }, "\(duplicates.last!)")
        #expect(report.findings.count <= Preflight.maximumFindings)
    }

    /// A payload of 3,000 attachments with bad URLs: 1,000 findings listed, the last counting
    /// the rest with the worst severity among them (the outcome is unchanged).
    @Test func findingsAreCappedWithACount() throws {
        let entries = (0..<3000).map { #"{"id":"a\#($0)","url":"ftp://x/\#($0).jpg"}"# }
        let text = #"{"aps":{"alert":"x","mutable-content":1},"attachments":["# + entries.joined(separator: ",") + "]}"
        let report = Preflight.check(Array(text.utf8), file: "many.json", options: PreflightOptions())
        #expect(report.findings.count == Preflight.maximumFindings)
        let last = try #require(report.findings.last)
        #expect(last.code == .findingsTruncated, "\(last)")
        #expect(last.severity == .error, "errors were left out: the summary is an error")
        let stated = last.message.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        let errors = report.findings.filter { $0.code == .invalidURL }.count
        #expect(stated.map { $0 + errors } ?? 0 >= 3000, "\(last.message); \(errors) invalid_url listed")
        #expect(last.omitted == stated, "the count is a field as well as words")
    }

    /// A capped list capped again (the fix's re-check adds the downloads' findings) counts what
    /// both caps left out, from the first summary's field, not from its words.
    @Test func cappingTwiceCountsBothCuts() throws {
        let finding = { (n: Int) in
            PreflightFinding(.warning, .insecureURL, "finding \(n)", at: .root)
        }
        let once = Preflight.sorted((0..<1500).map(finding))
        #expect(once.last?.omitted == 501)
        var reworded = once
        reworded[reworded.count - 1].message = "words that carry no number"
        let twice = Preflight.sorted(reworded + (0..<10).map(finding))
        let last = try #require(twice.last)
        #expect(last.code == .findingsTruncated)
        #expect(last.omitted == 501 + 10, "\(last.message)")
    }

    private static func session(_ budget: PreflightSession.FetchBudget) throws -> PreflightSession {
        var options = PreflightOptions()
        options.allowHTTP = true
        var remote = RemoteSettings()
        remote.allowedHosts = ["127.0.0.1"]
        remote.maxTries = 1
        return try PreflightSession(options: options, remote: remote, budget: budget, logger: .quiet)
    }

    private static func payload(_ urls: [String]) -> [UInt8] {
        let entries = urls.enumerated().map { #"{"id":"a\#($0.offset)","url":"\#($0.element)"}"# }
        return Array(
            (#"{"aps":{"alert":"x","mutable-content":1},"attachments":["# + entries.joined(separator: ",") + "]}").utf8)
    }

    /// Defect: `--fetch` downloaded every URL a payload named and kept each file to the end. Now
    /// at most `maxURLs` are fetched, the others are named as skipped, and no file is left once
    /// the check returns.
    @Test func fetchStopsAtTheURLBudget() async throws {
        let names = (0..<30).map { "p\($0).bmp" }
        let files = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, TinyBMP.bytes(10 + $0)) })
        try await TestServer.with(files: files) { server in
            let session = try Self.session(.init(maxURLs: 5))
            let report = await session.check(Self.payload(names.map { server.url("/files/\($0)") }), file: "p.json")
            let hits = names.map { server.hits("/files/\($0)") }.reduce(0, +)
            #expect(hits == 5, "downloads: \(hits)")
            #expect(names.prefix(5).allSatisfy { server.hits("/files/\($0)") == 1 }, "the first five, in payload order")
            let skipped = report.findings.filter { $0.code == .fetchSkipped }
            #expect(skipped.count == 25)
            #expect(skipped.allSatisfy { $0.message.contains("--fetch-max-urls") && $0.severity == .warning })
            #expect(Set(skipped.map(\.pointer)) == Set((5..<30).map { "/attachments/\($0)/url" }))
            #expect(try FileManager.default.contentsOfDirectory(atPath: session.scratch).isEmpty, "files left")
            await session.shutdown()
        }
    }

    @Test func fetchStopsAtTheByteBudget() async throws {
        // 400 KB each: the first window of four downloads passes the 1 MB budget.
        let names = (0..<12).map { "big\($0).bmp" }
        let files = Dictionary(
            uniqueKeysWithValues: names.enumerated().map {
                ($1, TinyBMP.bytes(40 + $0) + [UInt8](repeating: 0, count: 400_000))
            })
        try await TestServer.with(files: files) { server in
            let session = try Self.session(.init(maxURLs: 1000, maxBytes: 1_000_000))
            let report = await session.check(Self.payload(names.map { server.url("/files/\($0)") }), file: "p.json")
            let hits = names.map { server.hits("/files/\($0)") }.reduce(0, +)
            // Four start at once; the budget is checked before each further one: after the
            // third 400 KB file, the total is past 1 MB.
            #expect(hits == PreflightSession.window + 2, "downloads: \(hits)")
            #expect(!report.findings.contains { $0.code == .fetchFailed }, "\(report.findings)")
            let skipped = report.findings.filter { $0.code == .fetchSkipped }
            #expect(skipped.count == names.count - hits)
            #expect(skipped.allSatisfy { $0.message.contains("--fetch-max-bytes") }, "\(skipped.first!)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: session.scratch).isEmpty, "files left")
            await session.shutdown()
        }
        #expect(throws: PushPrepError.self) { try Self.session(.init(maxURLs: 0)) }
        #expect(throws: PushPrepError.self) { try Self.session(.init(maxBytes: 10)) }
    }
}
