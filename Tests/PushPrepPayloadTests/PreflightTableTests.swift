import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepJSON
@testable import PushPrepPayload

// MARK: - The table's vocabulary

/// One finding a case expects: its severity, code and JSON Pointer (the message is free text).
struct ExpectedFinding: Sendable, Hashable, Comparable, CustomStringConvertible {
    var severity: PreflightSeverity
    var code: PreflightCode
    var pointer: String

    init(_ severity: PreflightSeverity, _ code: PreflightCode, _ pointer: String) {
        self.severity = severity
        self.code = code
        self.pointer = pointer
    }

    /// What a report said, without its message.
    init(_ finding: PreflightFinding) {
        self.init(finding.severity, finding.code, finding.pointer)
    }

    static func error(_ code: PreflightCode, _ pointer: String) -> Self { Self(.error, code, pointer) }
    static func warning(_ code: PreflightCode, _ pointer: String) -> Self { Self(.warning, code, pointer) }
    static func info(_ code: PreflightCode, _ pointer: String) -> Self { Self(.info, code, pointer) }

    var description: String { "\(severity.rawValue) \(code.rawValue) at \"\(pointer)\"" }

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.severity, lhs.code.rawValue, lhs.pointer) < (rhs.severity, rhs.code.rawValue, rhs.pointer)
    }
}

/// One payload and everything pre-flight must say about it without the network.
struct PreflightCase: Sendable, CustomTestStringConvertible {
    /// What pre-flight must count against the limit, worked out from the payload's text.
    enum Counted: Sendable {
        /// The text is compact JSON and all of it counts against the push type's limit.
        case wholeText
        /// The text is compact JSON with one repeated member: all of it but that member's first
        /// occurrence (with its comma) counts, since only the last value is kept.
        case wholeTextWithout(String)
        /// Exactly these bytes count, against this limit (Braze's alert + extra).
        case bytes(Int, limit: Int)
        /// The text is not a JSON object: nothing is measured.
        case nothing
    }

    let name: String
    /// The dialect to check with explicitly (and to detect); nil to leave it to detection.
    let dialect: PushDialect?
    /// Whether the case passes its dialect explicitly only; otherwise it is also detected.
    let explicitOnly: Bool
    let pushType: PushType
    let allowHTTP: Bool
    let counted: Counted
    let payload: String
    let expected: [ExpectedFinding]

    var testDescription: String { name }

    init(
        _ name: String, _ dialect: PushDialect?, explicitOnly: Bool = false, pushType: PushType = .alert,
        allowHTTP: Bool = false, counted: Counted = .wholeText, _ payload: String, _ expected: [ExpectedFinding]
    ) {
        self.name = name
        self.dialect = dialect
        self.explicitOnly = explicitOnly
        self.pushType = pushType
        self.allowHTTP = allowHTTP
        self.counted = counted
        self.payload = payload
        self.expected = expected
    }

    /// The options to check with: the dialect given explicitly, and left to detection unless the
    /// case is explicit only.
    var optionSets: [PreflightOptions] {
        let given: [PushDialect?] = explicitOnly ? [dialect] : dialect == nil ? [nil] : [dialect, nil]
        return given.map { dialect in
            var options = PreflightOptions()
            options.dialect = dialect
            options.pushType = pushType
            options.allowHTTP = allowHTTP
            return options
        }
    }

    /// The dialect the report must name when none is asked for: none when the text is not a
    /// JSON object. One asked for is always named.
    var reportedDialect: PushDialect? {
        if case .nothing = counted { return nil }
        return dialect
    }

    /// The bytes and the limit the report must give.
    var expectedSize: (bytes: Int?, limit: Int?) {
        switch counted {
        case .wholeText: (payload.utf8.count, pushType.sizeLimit)
        case .wholeTextWithout(let member): (payload.utf8.count - member.utf8.count, pushType.sizeLimit)
        case .bytes(let bytes, let limit): (bytes, limit)
        case .nothing: (nil, nil)
        }
    }
}

// MARK: - The table

/// `pushprep preflight` without the network: a table of payloads in every dialect and form,
/// valid and broken in each way the issue names, each asserting the complete list of findings
/// (severity, code, JSON Pointer), the dialect, and the bytes counted against the limit.
@Suite struct PreflightTableTests {
    static let notObjectCases: [PreflightCase] = [
        PreflightCase("an empty file", nil, counted: .nothing, "", [.error(.invalidJSON, "")]),
        PreflightCase("cut short", nil, counted: .nothing, #"{"aps": {"#, [.error(.invalidJSON, "")]),
        PreflightCase("a trailing comma", nil, counted: .nothing, #"{"aps":{},}"#, [.error(.invalidJSON, "")]),
        PreflightCase("single quotes", nil, counted: .nothing, "{'aps':{}}", [.error(.invalidJSON, "")]),
        PreflightCase(
            "not JSON even with a dialect", .braze, explicitOnly: true, counted: .nothing, "apple_push",
            [.error(.invalidJSON, "")]),
        PreflightCase("an array", nil, counted: .nothing, #"[{"aps":{}}]"#, [.error(.notAnObject, "")]),
        PreflightCase("a string", nil, counted: .nothing, #""aps""#, [.error(.notAnObject, "")]),
        PreflightCase("a number", nil, counted: .nothing, "4096", [.error(.notAnObject, "")]),
        PreflightCase("null", nil, counted: .nothing, "null", [.error(.notAnObject, "")]),
    ]

    // MARK: - Running the table

    /// Checks one case with every option set it names.
    private func verify(_ testCase: PreflightCase) {
        for options in testCase.optionSets {
            let how = options.dialect.map { "as \($0.rawValue)" } ?? "detected"
            let report = Preflight.check(Array(testCase.payload.utf8), file: "payload.json", options: options)
            let found = report.findings.map(ExpectedFinding.init).sorted()
            #expect(
                found == testCase.expected.sorted(),
                "\(how): \(report.findings.map { "\($0.code.rawValue) \($0.pointer): \($0.message)" })")
            #expect(report.file == "payload.json")
            #expect(report.dialect == (options.dialect ?? testCase.reportedDialect), "\(how)")
            #expect(report.bytes == testCase.expectedSize.bytes, "\(how): bytes counted")
            #expect(report.limit == testCase.expectedSize.limit, "\(how): limit")
            #expect(report.changes == nil && report.remaining == nil && report.fixedPayload == nil)
            let severities = report.findings.map(\.severity)
            #expect(severities == severities.sorted(), "errors first, then warnings, then infos")
            #expect(report.findings.allSatisfy { !$0.message.isEmpty })
        }
    }

    @Test("APNs payloads", arguments: apnsCases)
    func apnsTable(_ testCase: PreflightCase) { verify(testCase) }

    @Test("text that is not a JSON object", arguments: notObjectCases)
    func notAnObjectTable(_ testCase: PreflightCase) { verify(testCase) }

    @Test("OneSignal: REST body and device payload", arguments: oneSignalCases)
    func oneSignalTable(_ testCase: PreflightCase) { verify(testCase) }

    @Test("Airship: push object and device payload", arguments: airshipCases)
    func airshipTable(_ testCase: PreflightCase) { verify(testCase) }

    @Test("Braze: /messages/send, apple_push and device payload", arguments: brazeCases)
    func brazeTable(_ testCase: PreflightCase) { verify(testCase) }

    @Test("FCM: HTTP v1 message and device payload", arguments: fcmCases)
    func fcmTable(_ testCase: PreflightCase) { verify(testCase) }

    // MARK: - Detection, sizes, attachments, exit status

    @Test(
        "every shape in the table is detected as its dialect",
        arguments: [apnsCases, oneSignalCases, airshipCases, brazeCases, fcmCases].joined().filter { !$0.explicitOnly })
    func detection(_ testCase: PreflightCase) throws {
        let payload = try JSONValue.parse(Array(testCase.payload.utf8)).value
        #expect(PushDialect.detect(payload) == testCase.dialect)
    }

    @Test(
        "the keys that name a dialect on their own",
        arguments: [
            (#"{}"#, PushDialect.apns), (#"{"aps":{"alert":"B"},"deeplink":"x"}"#, .apns), ("[1]", .apns),
            (#"{"app_id":"x"}"#, .onesignal), (#"{"contents":{"en":"B"}}"#, .onesignal),
            (#"{"headings":{"en":"T"}}"#, .onesignal), (#"{"ios_attachments":{}}"#, .onesignal),
            (#"{"aps":{},"custom":{"i":"5f1c"}}"#, .onesignal), (#"{"aps":{},"att":{}}"#, .onesignal),
            (#"{"audience":"all"}"#, .airship), (#"{"device_types":["ios"]}"#, .airship),
            (#"{"notification":{"ios":{}}}"#, .airship),
            (#"{"aps":{},"com.urbanairship.media_attachment":{}}"#, .airship),
            (#"{"apple_push":{}}"#, .braze), (#"{"messages":{"apple_push":{}}}"#, .braze),
            (#"{"aps":{},"ab":{}}"#, .braze),
            (#"{"message":{"token":"t"}}"#, .fcm), (#"{"message":{"topic":"news"}}"#, .fcm),
            (#"{"message":{"apns":{}}}"#, .fcm), (#"{"apns":{}}"#, .fcm), (#"{"aps":{},"fcm_options":{}}"#, .fcm),
        ])
    func detectionKeys(_ text: String, _ dialect: PushDialect) throws {
        let payload = try JSONValue.parse(Array(text.utf8)).value
        #expect(PushDialect.detect(payload) == dialect)
    }

    @Test("the size is the compact JSON's UTF-8, whatever the file's layout and escapes")
    func compactSize() {
        let compact =
            #"{"aps":{"alert":"Café ☕ / 5€","mutable-content":1},"attachments":[\#(Self.jpgEntry),{"id":"b","url":"\#(Self.mp4)"}]}"#
        let pretty = """
            {
              "aps" : { "alert" : "Caf\\u00e9 \\u2615 \\/ 5\\u20ac", "mutable-content" : 1 },
              "attachments" : [
                { "id" : "a", "url" : "https:\\/\\/cdn.example.com\\/push\\/a.jpg", "type" : "public.jpeg" },
                { "id" : "b", "url" : "\(Self.mp4)" }
              ]
            }

            """
        // "é" is 2 bytes, "☕" and "€" 3: the compact text's bytes, not its characters.
        #expect(compact.utf8.count == compact.count + 1 + 2 + 2)
        for text in [compact, pretty] {
            let report = Preflight.check(Array(text.utf8), file: "p.json", options: PreflightOptions())
            #expect(report.bytes == compact.utf8.count)
            #expect(report.limit == 4096)
            // Two attachments: only the second's is a finding, a warning that iOS does not show it.
            #expect(report.findings.map(\.code) == [.attachmentsBeyondFirst], "\(report.findings)")
        }
    }

    @Test("the report lists every attachment URL with its pointer and id, in payload order")
    func attachments() {
        /// Each attachment as `pointer url id`, `-` for no id; none is fetched.
        func listed(_ text: String) -> [String] {
            let report = Preflight.check(Array(text.utf8), file: "-", options: PreflightOptions())
            #expect(report.attachments.allSatisfy { $0.fetched == nil })
            return report.attachments.map { "\($0.pointer) \($0.url) \($0.id ?? "-")" }
        }
        let apnsPayload = Self.apns(
            #"{"alert":"B","mutable-content":1}"#,
            attachments:
                #"[\#(Self.jpgEntry),{"url":5},{"id":"b","url":"\#(Self.mp4)"},{"url":"http://x.example/c.m4a"}]"#)
        #expect(
            listed(apnsPayload) == [
                "/attachments/0/url \(Self.jpg) a",
                "/attachments/2/url \(Self.mp4) b",
                "/attachments/3/url http://x.example/c.m4a -",
            ])
        #expect(
            listed(
                Self.oneSignal(#""contents":{"en":"B"},"ios_attachments":{"vid":"\#(Self.mp4)","img":"\#(Self.jpg)"}"#))
                == [
                    "/ios_attachments/vid \(Self.mp4) vid",
                    "/ios_attachments/img \(Self.jpg) img",
                ])
        #expect(
            listed(
                Self.device(
                    #"{"alert":"B"}"#, #""com.urbanairship.media_attachment":{"url":["\#(Self.jpg)","\#(Self.mp4)"]}"#))
                == [
                    "/com.urbanairship.media_attachment/url/0 \(Self.jpg) -",
                    "/com.urbanairship.media_attachment/url/1 \(Self.mp4) -",
                ])
        #expect(
            listed(Self.braze(#"{"alert":"B","asset_url":"\#(Self.jpg)","asset_file_type":"jpg"}"#)) == [
                "/messages/apple_push/asset_url \(Self.jpg) -"
            ])
        #expect(
            listed(Self.fcm(Self.fcmAPNs(#"{"alert":"B","mutable-content":1}"#))) == [
                "/message/apns/fcm_options/image \(Self.jpg) -"
            ])
    }

    @Test("exit status: 1 on an error, 3 on warnings only when strict, else 0 (infos allowed)")
    func exitStatus() {
        func status(_ text: String, strict: Bool) -> Int32 {
            Preflight.check(Array(text.utf8), file: "-", options: PreflightOptions()).exitStatus(strict: strict)
        }
        let clean = Self.apns(#"{"alert":"B","mutable-content":1,"category":"NEWS"}"#)
        let warning = Self.apns(#"{"alert":"B","mutable-content":1,"image-url":"x"}"#)
        let error = Self.apns(#"{"alert":"B"}"#)
        #expect(status(clean, strict: true) == 0)
        #expect(status(warning, strict: false) == 0)
        #expect(status(warning, strict: true) == 3)
        #expect(status(error, strict: false) == 1)
        #expect(status(error, strict: true) == 1)
        #expect(status("[]", strict: false) == 1)
    }

    @Test("every finding code and error code is in the README's tables")
    func documented() throws {
        let readme = try String(
            contentsOf: TestTools.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        for code in PreflightCode.allCases {
            #expect(readme.contains("| `\(code.rawValue)` |"), "README lacks the finding code \(code.rawValue)")
        }
        for code in PushPrepError.Code.all {
            #expect(readme.contains("| `\(code.rawValue)` |"), "README lacks the error code \(code.rawValue)")
        }
    }
}
