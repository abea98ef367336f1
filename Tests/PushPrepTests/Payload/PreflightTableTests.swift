import Foundation
import Testing

@testable import PushPrep

/// One payload and exactly the findings pre-flight must report for it.
struct PreflightCase: Sendable, CustomTestStringConvertible {
    let name: String
    var dialect: PushDialect?
    var pushType: PushType = .alert
    var allowHTTP = false
    let payload: String
    /// `severity code pointer`, in any order.
    let expected: [String]

    var testDescription: String { name }

    init(
        _ name: String, _ dialect: PushDialect? = nil, pushType: PushType = .alert, allowHTTP: Bool = false,
        _ payload: String, _ expected: [String]
    ) {
        self.name = name
        self.dialect = dialect
        self.pushType = pushType
        self.allowHTTP = allowHTTP
        self.payload = payload
        self.expected = expected
    }

    var options: PreflightOptions {
        var options = PreflightOptions()
        options.dialect = dialect
        options.pushType = pushType
        options.allowHTTP = allowHTTP
        return options
    }
}

/// A payload of exactly `bytes` compact bytes: `{"aps":{"alert":"xxx…"}}`.
private func apsPayload(bytes: Int) -> String {
    "{\"aps\":{\"alert\":\"" + String(repeating: "x", count: bytes - 20) + "\"}}"
}

private let jpg = "https://cdn.example.com/p/a.jpg"
private let apnsAttachment = #""attachments":[{"id":"a","url":"\#(jpg)","type":"public.jpeg"}]"#

/// The static checks of every dialect, valid and broken in each way the issue names: each case
/// asserts the complete list of finding codes and JSON Pointers.
@Suite struct PreflightTableTests {
    static let apns: [PreflightCase] = [
        PreflightCase(
            "apns: valid", nil,
            #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"attachments":[{"id":"a","url":"\#(jpg)","type":"public.jpeg","options":{"UNNotificationAttachmentOptionsTypeHintKey":"public.jpeg"}}]}"#,
            []),
        PreflightCase(
            "apns: category, critical and a relevance score are noted", nil,
            #"{"aps":{"alert":"B","mutable-content":1,"category":"NEWS","interruption-level":"critical","relevance-score":0.5},\#(apnsAttachment)}"#,
            ["info category_noted /aps/category", "info critical_needs_entitlement /aps/interruption-level"]),
        PreflightCase(
            "apns: mutable-content missing", nil, #"{"aps":{"alert":"B"},\#(apnsAttachment)}"#,
            ["error missing_mutable_content /aps/mutable-content"]),
        PreflightCase(
            "apns: mutable-content as a string", nil,
            #"{"aps":{"alert":"B","mutable-content":"1"},\#(apnsAttachment)}"#,
            ["error invalid_mutable_content /aps/mutable-content"]),
        PreflightCase(
            "apns: mutable-content 0", nil, #"{"aps":{"alert":"B","mutable-content":0},\#(apnsAttachment)}"#,
            ["error invalid_mutable_content /aps/mutable-content"]),
        PreflightCase(
            "apns: mutable-content true", nil, #"{"aps":{"alert":"B","mutable-content":true},\#(apnsAttachment)}"#,
            ["error invalid_mutable_content /aps/mutable-content"]),
        PreflightCase(
            "apns: no alert", nil, #"{"aps":{"mutable-content":1},\#(apnsAttachment)}"#,
            ["error missing_alert /aps/alert"]),
        PreflightCase(
            "apns: an empty alert", nil, #"{"aps":{"alert":{"title":""},"mutable-content":1},\#(apnsAttachment)}"#,
            ["error missing_alert /aps/alert"]),
        PreflightCase(
            "apns: silent push", nil, #"{"aps":{"content-available":1,"mutable-content":1},\#(apnsAttachment)}"#,
            ["error silent_push /aps/content-available"]),
        PreflightCase(
            "apns: http URL", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"http://cdn.example.com/a.jpg"}]}"#,
            ["error insecure_url /attachments/0/url"]),
        PreflightCase(
            "apns: http URL with an ATS exception", nil, allowHTTP: true,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"http://cdn.example.com/a.jpg"}]}"#,
            ["warning insecure_url /attachments/0/url"]),
        PreflightCase(
            "apns: no extension", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"https://cdn.example.com/media/42?size=large"}]}"#,
            ["error missing_extension /attachments/0/url"]),
        PreflightCase(
            "apns: a WebP URL", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"https://cdn.example.com/a.webp"}]}"#,
            ["error unsupported_extension /attachments/0/url"]),
        PreflightCase(
            "apns: an unknown extension", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"https://cdn.example.com/a.php"}]}"#,
            ["error unsupported_extension /attachments/0/url"]),
        PreflightCase(
            "apns: type disagrees with the extension", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"https://cdn.example.com/a.png","type":"public.jpeg","options":{"UNNotificationAttachmentOptionsTypeHintKey":"public.jpeg"}}]}"#,
            [
                "error type_mismatch /attachments/0/type",
                "error type_mismatch /attachments/0/options/UNNotificationAttachmentOptionsTypeHintKey",
            ]),
        PreflightCase(
            "apns: a type hint iOS does not accept", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"\#(jpg)","type":"org.webmproject.webp"}]}"#,
            ["warning unknown_type_hint /attachments/0/type"]),
        PreflightCase(
            "apns: not a URL", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"a.jpg"},{"id":"b","url":"ftp://x.example/b.jpg"}]}"#,
            ["error invalid_url /attachments/0/url", "error invalid_url /attachments/1/url"]),
        PreflightCase(
            "apns: attachment without url, url not a string, entry not an object", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a"},{"url":5},"x"]}"#,
            [
                "error invalid_attachment /attachments/0/url", "error invalid_attachment /attachments/1/url",
                "error invalid_attachment /attachments/2",
            ]),
        PreflightCase(
            "apns: attachments not an array", nil, #"{"aps":{"alert":"B","mutable-content":1},"attachments":{}}"#,
            ["error invalid_attachment /attachments"]),
        PreflightCase(
            "apns: invalid interruption level", nil,
            #"{"aps":{"alert":"B","mutable-content":1,"interruption-level":"loud"},\#(apnsAttachment)}"#,
            ["error invalid_interruption_level /aps/interruption-level"]),
        PreflightCase(
            "apns: relevance score out of range", nil,
            #"{"aps":{"alert":"B","mutable-content":1,"relevance-score":1.5},\#(apnsAttachment)}"#,
            ["error invalid_relevance_score /aps/relevance-score"]),
        PreflightCase(
            "apns: relevance score as a string", nil,
            #"{"aps":{"alert":"B","mutable-content":1,"relevance-score":"0.5"},\#(apnsAttachment)}"#,
            ["error invalid_relevance_score /aps/relevance-score"]),
        PreflightCase(
            "apns: custom key inside aps", nil,
            #"{"aps":{"alert":"B","mutable-content":1,"image-url":"x"},\#(apnsAttachment)}"#,
            ["warning unknown_aps_key /aps/image-url"]),
        PreflightCase(
            "apns: wrong types of known keys", nil,
            #"{"aps":{"alert":"B","mutable-content":1,"category":5,"badge":"3","thread-id":1},\#(apnsAttachment)}"#,
            [
                "error invalid_value /aps/category", "error invalid_value /aps/badge",
                "error invalid_value /aps/thread-id",
            ]),
        PreflightCase(
            "apns: duplicate key", nil, #"{"aps":{"alert":"A","alert":"B","mutable-content":1},\#(apnsAttachment)}"#,
            ["warning duplicate_key /aps/alert"]),
        PreflightCase(
            "apns: 4096 bytes fit", nil, apsPayload(bytes: 4096), ["info no_attachments "]),
        PreflightCase(
            "apns: 4097 bytes do not", nil, apsPayload(bytes: 4097),
            ["error payload_too_large ", "info no_attachments "]),
        PreflightCase(
            "apns: 4097 bytes fit a VoIP push", nil, pushType: .voip, apsPayload(bytes: 4097),
            ["info no_attachments "]),
        PreflightCase(
            "apns: 5121 bytes do not fit a VoIP push", nil, pushType: .voip, apsPayload(bytes: 5121),
            ["error payload_too_large ", "info no_attachments "]),
        PreflightCase(
            "apns: attachments on a background push", nil, pushType: .background,
            #"{"aps":{"alert":"B","mutable-content":1},\#(apnsAttachment)}"#,
            ["error push_type_without_extension "]),
        PreflightCase(
            "apns: not JSON", nil, #"{"aps": {"#, ["error invalid_json "]),
        PreflightCase("apns: an array", nil, "[1,2]", ["error not_an_object "]),
        PreflightCase(
            "apns: no aps", .apns, "{\(apnsAttachment)}",
            [
                "error missing_aps /aps", "error missing_alert /aps/alert",
                "error missing_mutable_content /aps/mutable-content",
            ]),
        PreflightCase(
            "apns: aps not a dictionary", .apns, #"{"aps":"alert",\#(apnsAttachment)}"#,
            [
                "error aps_not_object /aps", "error missing_alert /aps/alert",
                "error missing_mutable_content /aps/mutable-content",
            ]),
    ]

    static let oneSignal: [PreflightCase] = [
        PreflightCase(
            "onesignal: valid REST body", nil,
            #"{"app_id":"0b5c","include_subscription_ids":["s1"],"headings":{"en":"T"},"contents":{"en":"B"},"ios_attachments":{"a":"\#(jpg)"},"mutable_content":true,"ios_interruption_level":"time_sensitive"}"#,
            []),
        PreflightCase(
            "onesignal: mutable_content is set by OneSignal", nil,
            #"{"app_id":"0b5c","contents":{"en":"B"},"ios_attachments":{"a":"\#(jpg)"}}"#, []),
        PreflightCase(
            "onesignal: mutable_content false", nil,
            #"{"app_id":"0b5c","contents":{"en":"B"},"ios_attachments":{"a":"\#(jpg)"},"mutable_content":false}"#,
            ["error invalid_mutable_content /mutable_content"]),
        PreflightCase(
            "onesignal: no contents", nil, #"{"app_id":"0b5c","ios_attachments":{"a":"\#(jpg)"}}"#,
            ["error missing_alert /contents"]),
        PreflightCase(
            "onesignal: silent", nil,
            #"{"app_id":"0b5c","content_available":true,"ios_attachments":{"a":"\#(jpg)"}}"#,
            ["error silent_push /content_available"]),
        PreflightCase(
            "onesignal: an extension its SDK does not download", nil,
            #"{"app_id":"0b5c","contents":{"en":"B"},"ios_attachments":{"a":"https://cdn.example.com/a.aif"}}"#,
            ["error provider_extension /ios_attachments/a"]),
        PreflightCase(
            "onesignal: APNs spelling of the interruption level", nil,
            #"{"app_id":"0b5c","contents":{"en":"B"},"ios_attachments":{"a":"\#(jpg)"},"ios_interruption_level":"time-sensitive"}"#,
            ["error invalid_interruption_level /ios_interruption_level"]),
        PreflightCase(
            "onesignal: ios_attachments not an object", nil,
            #"{"app_id":"0b5c","contents":{"en":"B"},"ios_attachments":["\#(jpg)"]}"#,
            ["error invalid_attachment /ios_attachments"]),
        PreflightCase(
            "onesignal: valid device payload", nil,
            #"{"aps":{"alert":{"body":"B"},"mutable-content":1},"att":{"a":"\#(jpg)"},"custom":{"i":"5f1c"}}"#, []),
        PreflightCase(
            "onesignal: device payload without mutable-content", nil,
            #"{"aps":{"alert":{"body":"B"}},"att":{"a":"\#(jpg)"},"custom":{"i":"5f1c"}}"#,
            ["error missing_mutable_content /aps/mutable-content"]),
    ]

    static let airship: [PreflightCase] = [
        PreflightCase(
            "airship: valid push object", nil,
            #"{"audience":"all","device_types":["ios"],"notification":{"alert":"B","ios":{"mutable_content":true,"media_attachment":{"url":"\#(jpg)","options":{"time":1}}}}}"#,
            []),
        PreflightCase(
            "airship: mutable_content is set by Airship", nil,
            #"{"audience":"all","notification":{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}}}}"#, []),
        PreflightCase(
            "airship: no alert", nil,
            #"{"audience":"all","notification":{"ios":{"media_attachment":{"url":"\#(jpg)"}}}}"#,
            ["error missing_alert /notification/ios/alert"]),
        PreflightCase(
            "airship: silent", nil,
            #"{"audience":"all","notification":{"ios":{"content_available":true,"media_attachment":{"url":"\#(jpg)"}}}}"#,
            ["error silent_push /notification/ios/content_available"]),
        PreflightCase(
            "airship: a WebP", nil,
            #"{"audience":"all","notification":{"alert":"B","ios":{"media_attachment":{"url":"https://cdn.example.com/a.webp"}}}}"#,
            ["error unsupported_extension /notification/ios/media_attachment/url"]),
        PreflightCase(
            "airship: valid device payload", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"com.urbanairship.media_attachment":{"url":["\#(jpg)"]}}"#,
            []),
        PreflightCase(
            "airship: device payload with an http URL", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"com.urbanairship.media_attachment":{"url":["http://cdn.example.com/a.jpg"]}}"#,
            ["error insecure_url /com.urbanairship.media_attachment/url/0"]),
    ]

    static let braze: [PreflightCase] = [
        PreflightCase(
            "braze: valid /messages/send body", nil,
            #"{"external_user_ids":["u1"],"messages":{"apple_push":{"alert":{"title":"T","body":"B"},"asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":true}}}"#,
            []),
        PreflightCase(
            "braze: valid apple_push at the top", nil,
            #"{"apple_push":{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":true}}"#, []),
        PreflightCase(
            "braze: mutable_content is set by Braze for rich pushes", nil,
            #"{"messages":{"apple_push":{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg"}}}"#, []),
        PreflightCase(
            "braze: mutable_content false", nil,
            #"{"messages":{"apple_push":{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":false}}}"#,
            ["error invalid_mutable_content /messages/apple_push/mutable_content"]),
        PreflightCase(
            "braze: asset_file_type missing", nil,
            #"{"messages":{"apple_push":{"alert":"B","asset_url":"\#(jpg)"}}}"#,
            ["error invalid_attachment /messages/apple_push/asset_file_type"]),
        PreflightCase(
            "braze: asset_file_type Braze does not list", nil,
            #"{"messages":{"apple_push":{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpeg"}}}"#,
            ["error provider_extension /messages/apple_push/asset_file_type"]),
        PreflightCase(
            "braze: asset_file_type disagrees", nil,
            #"{"messages":{"apple_push":{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"png","mutable_content":true}}}"#,
            ["error type_mismatch /messages/apple_push/asset_file_type"]),
        PreflightCase(
            "braze: an extension Braze does not download", nil,
            #"{"messages":{"apple_push":{"alert":"B","asset_url":"https://cdn.example.com/a.aiff","asset_file_type":"aif","mutable_content":true}}}"#,
            ["error provider_extension /messages/apple_push/asset_url"]),
        PreflightCase(
            "braze: alert + extra over 1912 bytes", nil,
            #"{"messages":{"apple_push":{"alert":"\#(String(repeating: "x", count: 1850))","extra":{"k":"\#(String(repeating: "y", count: 53))"},"asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":true}}}"#,
            ["error payload_too_large /messages/apple_push"]),
        PreflightCase(
            "braze: alert + extra of exactly 1912 bytes", nil,
            #"{"messages":{"apple_push":{"alert":"\#(String(repeating: "x", count: 1850))","extra":{"k":"\#(String(repeating: "y", count: 52))"},"asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":true}}}"#,
            []),
        PreflightCase(
            "braze: valid device payload", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(jpg)","type":"jpg"}}}"#, []),
        PreflightCase(
            "braze: device payload with a wrong type", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"ab":{"att":{"url":"\#(jpg)","type":"gif"}}}"#,
            ["error type_mismatch /ab/att/type"]),
    ]

    static let fcm: [PreflightCase] = [
        PreflightCase(
            "fcm: valid message", nil,
            #"{"message":{"token":"t","notification":{"title":"T","body":"B"},"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpg)"}}}}"#,
            []),
        PreflightCase(
            "fcm: mutable-content missing", nil,
            #"{"message":{"token":"t","notification":{"body":"B"},"apns":{"fcm_options":{"image":"\#(jpg)"}}}}"#,
            ["error missing_mutable_content /message/apns/payload/aps/mutable-content"]),
        PreflightCase(
            "fcm: no notification and no alert", nil,
            #"{"message":{"token":"t","apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpg)"}}}}"#,
            ["error missing_alert /message/notification"]),
        PreflightCase(
            "fcm: a movie in the image key", nil,
            #"{"message":{"token":"t","notification":{"body":"B"},"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"https://cdn.example.com/a.mp4"}}}}"#,
            ["error provider_extension /message/apns/fcm_options/image"]),
        PreflightCase(
            "fcm: a background push type header", nil,
            #"{"message":{"token":"t","notification":{"body":"B"},"apns":{"headers":{"apns-push-type":"background"},"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpg)"}}}}"#,
            ["error push_type_without_extension /message/apns/headers/apns-push-type"]),
        PreflightCase(
            "fcm: unknown key inside aps", nil,
            #"{"message":{"token":"t","notification":{"body":"B"},"apns":{"payload":{"aps":{"mutable-content":1,"image":"x"}},"fcm_options":{"image":"\#(jpg)"}}}}"#,
            ["warning unknown_aps_key /message/apns/payload/aps/image"]),
        PreflightCase(
            "fcm: valid device payload", nil,
            #"{"aps":{"alert":"B","mutable-content":1},"fcm_options":{"image":"\#(jpg)"}}"#, []),
    ]

    @Test(arguments: apns + oneSignal + airship + braze + fcm)
    func findings(_ testCase: PreflightCase) {
        let report = Preflight.check(Array(testCase.payload.utf8), file: "payload.json", options: testCase.options)
        let found = report.findings.map { "\($0.severity.rawValue) \($0.code.rawValue) \($0.pointer)" }
        #expect(found.sorted() == testCase.expected.sorted(), "\(report.findings.map(\.message))")
        for finding in report.findings {
            #expect(!finding.message.isEmpty)
        }
        if let dialect = testCase.dialect { #expect(report.dialect == dialect) }
    }

    @Test(
        "each dialect is detected from its keys",
        arguments: [
            (apns.first!, PushDialect.apns), (oneSignal.first!, .onesignal), (oneSignal.last!, .onesignal),
            (airship.first!, .airship), (airship[5], .airship), (braze.first!, .braze), (braze[1], .braze),
            (braze.first { $0.name == "braze: valid device payload" }!, .braze), (fcm.first!, .fcm),
            (fcm.last!, .fcm),
        ])
    func detection(_ testCase: PreflightCase, _ dialect: PushDialect) throws {
        let payload = try JSONValue.parse(Array(testCase.payload.utf8)).value
        #expect(PushDialect.detect(payload) == dialect)
        #expect(
            Preflight.check(Array(testCase.payload.utf8), file: "-", options: PreflightOptions()).dialect == dialect)
    }

    @Test("the size counted is the compact JSON's, and the report lists every attachment")
    func sizeAndAttachments() {
        let compact =
            #"{"aps":{"alert":"Bonjour café ☕","mutable-content":1},"attachments":[{"id":"a","url":"\#(jpg)"},{"id":"b","url":"https://cdn.example.com/b.mp4"}]}"#
        let pretty = compact.replacingOccurrences(of: ",", with: ",\n    ")
        for text in [compact, pretty] {
            let report = Preflight.check(Array(text.utf8), file: "p.json", options: PreflightOptions())
            #expect(report.bytes == compact.utf8.count, "UTF-8 bytes of the compact form, whatever the file's layout")
            #expect(report.limit == 4096)
            #expect(report.attachments.map(\.pointer) == ["/attachments/0/url", "/attachments/1/url"])
            #expect(report.attachments.map(\.id) == ["a", "b"])
            #expect(report.findings.isEmpty)
        }
    }

    @Test("exit status: errors 1, warnings 3 only when strict, else 0")
    func exitStatus() {
        func status(_ text: String, strict: Bool) -> Int32 {
            Preflight.check(Array(text.utf8), file: "-", options: PreflightOptions()).exitStatus(strict: strict)
        }
        let clean = Self.apns[0].payload
        let warning = Self.apns.first { $0.name.contains("custom key") }!.payload
        let error = Self.apns.first { $0.name.contains("mutable-content missing") }!.payload
        #expect(status(clean, strict: true) == 0)
        #expect(status(warning, strict: false) == 0)
        #expect(status(warning, strict: true) == 3)
        #expect(status(error, strict: false) == 1)
        #expect(status(error, strict: true) == 1)
    }

    @Test("every finding code and error code is documented in the README")
    func documented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        for code in PreflightCode.allCases {
            #expect(readme.contains("| `\(code.rawValue)` |"), "README lacks the finding code \(code.rawValue)")
        }
        for code in PushPrepError.Code.all {
            #expect(readme.contains("| `\(code.rawValue)` |"), "README lacks the error code \(code.rawValue)")
        }
    }

    @Test("a declared type is spelled the provider's way: Braze's aif and jpg")
    func declaredSpelling() {
        let braze = PushDialect.braze.acceptedExtensions
        let ext = PayloadLayout.DeclaredType(value: "aif", path: .root, spelling: .fileExtension)
        #expect(ext.names(.aiff) && !ext.names(.wav))
        #expect(ext.spelling(of: .aiff, accepted: braze) == "aif")
        #expect(ext.spelling(of: .jpeg, accepted: braze) == "jpg")
        #expect(ext.spelling(of: .aiff, accepted: nil) == "aiff")
        let uti = PayloadLayout.DeclaredType(value: "public.jpeg", path: .root, spelling: .uti)
        #expect(uti.names(.jpeg) && !uti.names(.png))
        #expect(uti.spelling(of: .png, accepted: braze) == "public.png")
    }
}
