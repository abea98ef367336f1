import Foundation
import PushPrepJSON
import Testing

@testable import PushPrepPayload

/// The one order of pre-flight's findings (``Preflight/sorted(_:)``: severity, then JSON Pointer
/// with indices as numbers) and the grouping of a finding said of several attachments
/// (``Preflight/grouped(_:urls:)``).
@Suite struct PreflightOrderTests {
    private func finding(_ severity: PreflightSeverity, _ code: PreflightCode, _ pointer: String) -> PreflightFinding {
        var finding = PreflightFinding(severity, code, "a message", at: .root)
        finding.pointer = pointer
        return finding
    }

    /// As `--fetch` merges them: each download's findings in the order the downloads finished
    /// (attachment 1, 3, 2, 10, 0 here), infos and warnings among the errors.
    @Test func findingsComeBySeverityThenPointerWithIndicesAsNumbers() {
        let merged = [
            finding(.warning, .slowServer, "/attachments/1/url"),
            finding(.info, .redirected, "/attachments/3/url"),
            finding(.error, .contentTooLarge, "/attachments/10/url"),
            finding(.error, .contentTooLarge, "/attachments/2/url"),
            finding(.warning, .slowServer, "/attachments/10/url"),
            finding(.warning, .missingMutableContent, "/aps"),
            finding(.error, .missingAPS, ""),
            finding(.warning, .slowServer, "/attachments/0/url"),
            finding(.error, .fetchFailed, "/attachments/2/url"),
        ]
        let order = Preflight.sorted(merged).map { "\($0.severity.rawValue) \($0.pointer) \($0.code.rawValue)" }
        #expect(
            order == [
                "error  missing_aps",
                "error /attachments/2/url content_too_large",
                // The same pointer: in the order they were found.
                "error /attachments/2/url fetch_failed",
                "error /attachments/10/url content_too_large",
                "warning /aps missing_mutable_content",
                "warning /attachments/0/url slow_server",
                "warning /attachments/1/url slow_server",
                "warning /attachments/10/url slow_server",
                "info /attachments/3/url redirected",
            ])
    }

    @Test(arguments: [
        ("/2", "/10", ComparisonResultCase.ascending),
        ("/attachments/9/url", "/attachments/10", .ascending),
        ("/a", "/a/b", .ascending),
        ("", "/a", .ascending),
        ("/b", "/a", .descending),
        ("/007", "/7", .same),
        ("/1", "/a", .ascending),
        ("/99999999999999999999999", "/100000000000000000000000", .ascending),
    ])
    func pointersCompareTokenByToken(_ a: String, _ b: String, _ expected: ComparisonResultCase) {
        #expect(ComparisonResultCase(Preflight.pointerOrder(a, b)) == expected)
        #expect(ComparisonResultCase(Preflight.pointerOrder(b, a)) == expected.reversed)
    }

    /// A cut report keeps its `findings_truncated` last of its severity when it is sorted again
    /// (`--fix`'s recheck merges the unreplaced attachments' findings into it).
    @Test func theTruncationStaysLast() {
        var findings = (0..<1200).map { finding(.warning, .slowServer, "/attachments/\($0)/url") }
        findings = Preflight.sorted(findings)
        #expect(findings.count == Preflight.maximumFindings)
        let again = Preflight.sorted(findings.reversed())
        #expect(again.last?.code == .findingsTruncated)
        #expect(again.first?.pointer == "/attachments/0/url")
    }

    /// Seven `http://` attachments: seven findings in the JSON, one group of seven places on the
    /// page, its message with the URL in words and each place with its own URL.
    @Test func oneFindingOfSevenAttachmentsIsOneGroup() throws {
        let urls = (0..<7).map { "http://cdn.example.com/push/\($0).jpg" }
        let entries = urls.enumerated().map { #"{"id":"a\#($0.offset)","url":"\#($0.element)"}"# }
        let payload =
            #"{"aps":{"alert":"Hi","mutable-content":1},"attachments":["# + entries.joined(separator: ",") + "]}"
        let report = Preflight.check(Array(payload.utf8), file: "p.json", options: PreflightOptions())
        #expect(report.findings.filter { $0.code == .insecureURL }.count == 7)
        let groups = Preflight.grouped(report.findings, urls: Preflight.urls(of: report))
        let insecure = try #require(groups.first { $0.code == .insecureURL })
        #expect(groups.filter { $0.code == .insecureURL }.count == 1)
        #expect(insecure.places.map(\.pointer) == (0..<7).map { "/attachments/\($0)/url" })
        #expect(insecure.places.map(\.url) == urls)
        #expect(insecure.message.hasPrefix(PreflightFindingGroup.urlWords + " is http://"), "\(insecure.message)")
        #expect(!urls.contains { insecure.message.contains($0) })
    }

    /// Findings that differ beyond their URL stay apart, and a lone finding keeps its message.
    @Test func differentMessagesAreNotGrouped() {
        let urls = ["/attachments/0/url": "http://a.example/x.webp", "/attachments/1/url": "http://a.example/y.heic"]
        var first = finding(.error, .unsupportedExtension, "/attachments/0/url")
        first.message = ".webp is webp, which iOS does not accept as an attachment; convert it"
        var second = finding(.error, .unsupportedExtension, "/attachments/1/url")
        second.message = ".heic is heic, which iOS does not accept as an attachment; convert it"
        let groups = Preflight.grouped([first, second], urls: urls)
        #expect(groups.map(\.places.count) == [1, 1])
        #expect(groups.map(\.message) == [first.message, second.message])
    }
}

/// `ComparisonResult` as an enum these tests can list (Foundation's is not `Sendable` here).
enum ComparisonResultCase: Sendable, Equatable {
    case ascending, same, descending

    init(_ result: Foundation.ComparisonResult) {
        switch result {
        case .orderedAscending: self = .ascending
        case .orderedSame: self = .same
        case .orderedDescending: self = .descending
        }
    }

    var reversed: Self {
        switch self {
        case .ascending: .descending
        case .same: .same
        case .descending: .ascending
        }
    }
}
