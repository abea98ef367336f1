import Foundation
import PushPrep
import Testing

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

// MARK: - Payload text

private let jpg = "https://cdn.example.com/push/a.jpg"
private let mp4 = "https://cdn.example.com/push/b.mp4"
private let m4a = "https://cdn.example.com/push/c.m4a"
private let hint = "UNNotificationAttachmentOptionsTypeHintKey"
/// PushPrep's APNs attachment entry for `jpg`, with its type.
private let jpgEntry = #"{"id":"a","url":"\#(jpg)","type":"public.jpeg"}"#

/// An APNs payload: `aps`, then PushPrep's `attachments`.
private func apns(_ aps: String, attachments: String = "[\(jpgEntry)]") -> String {
    #"{"aps":\#(aps),"attachments":\#(attachments)}"#
}

/// A OneSignal `POST /notifications` body: the app id, then `members`.
private func oneSignal(_ members: String) -> String {
    #"{"app_id":"5eb5a37e-b458-11e3-ac11-000c2940e62c",\#(members)}"#
}

/// An Airship push object with this `notification`.
private func airship(_ notification: String) -> String {
    #"{"audience":"all","device_types":["ios"],"notification":\#(notification)}"#
}

/// A Braze `/messages/send` body with this `apple_push`.
private func braze(_ applePush: String) -> String {
    #"{"external_user_ids":["u1"],"messages":{"apple_push":\#(applePush)}}"#
}

/// An FCM HTTP v1 request: `message` with a token, then `members`.
private func fcm(_ members: String) -> String {
    #"{"message":{"token":"t0k3n",\#(members)}}"#
}

/// FCM's `apns` member with this `aps` and an image.
private func fcmAPNs(_ aps: String, image: String = jpg) -> String {
    #""apns":{"payload":{"aps":\#(aps)},"fcm_options":{"image":"\#(image)"}}"#
}

/// An APNs payload as the phone receives it: `aps`, then the provider SDK's keys.
private func device(_ aps: String, _ rest: String) -> String {
    #"{"aps":\#(aps),\#(rest)}"#
}

/// `template` with `PAD` replaced by as many `x` as make its UTF-8 exactly `bytes` long.
private func padded(_ template: String, to bytes: Int) -> String {
    let fill = bytes - (template.utf8.count - "PAD".utf8.count)
    precondition(fill >= 0, "the template is longer than \(bytes) bytes")
    return template.replacingOccurrences(of: "PAD", with: String(repeating: "x", count: fill))
}

/// `count` letters, to pad a string value.
private func pad(_ count: Int) -> String { String(repeating: "x", count: count) }

// MARK: - The table

/// `pushprep preflight` without the network: a table of payloads in every dialect and form,
/// valid and broken in each way the issue names, each asserting the complete list of findings
/// (severity, code, JSON Pointer), the dialect, and the bytes counted against the limit.
@Suite struct PreflightTableTests {
    static let apnsCases: [PreflightCase] = [
        PreflightCase(
            "apns: valid, with the type hint in options", .apns,
            apns(
                #"{"alert":{"title":"T","subtitle":"S","body":"B"},"mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"\#(jpg)","type":"public.jpeg","options":{"\#(hint)":"public.jpeg"}}]"#),
            []),
        PreflightCase(
            "apns: valid image, video and audio with every presentation key; the category is noted", .apns,
            apns(
                #"{"alert":"B","badge":3,"sound":"default","thread-id":"t","category":"NEWS","interruption-level":"time-sensitive","relevance-score":0.25,"mutable-content":1}"#,
                attachments:
                    #"[\#(jpgEntry),{"id":"b","url":"\#(mp4)","type":"public.mpeg-4"},{"id":"c","url":"\#(m4a)","type":"public.mpeg-4-audio"}]"#
            ),
            [.info(.categoryNoted, "/aps/category")]),
        PreflightCase(
            "apns: content-available beside an alert is not silent", .apns,
            apns(#"{"alert":"B","content-available":1,"mutable-content":1}"#), []),
        PreflightCase(
            "apns: relevance scores 0 and 1 are in range, passive is a level", .apns,
            apns(#"{"alert":"B","mutable-content":1,"relevance-score":1,"interruption-level":"passive"}"#), []),
        PreflightCase(
            "apns: an upper-case extension is accepted", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"https://cdn.example.com/push/A.JPG","type":"public.jpeg"}]"#), []),
        PreflightCase(
            "apns: mutable-content missing", .apns, apns(#"{"alert":"B"}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "apns: mutable-content as the string \"1\"", .apns, apns(#"{"alert":"B","mutable-content":"1"}"#),
            [.error(.invalidMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "apns: mutable-content 0", .apns, apns(#"{"alert":"B","mutable-content":0}"#),
            [.error(.invalidMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "apns: mutable-content true", .apns, apns(#"{"alert":"B","mutable-content":true}"#),
            [.error(.invalidMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "apns: no alert", .apns, apns(#"{"mutable-content":1}"#), [.error(.missingAlert, "/aps/alert")]),
        PreflightCase(
            "apns: an alert without text", .apns, apns(#"{"alert":{"title":"","body":""},"mutable-content":1}"#),
            [.error(.missingAlert, "/aps/alert")]),
        PreflightCase(
            "apns: an alert that is a number", .apns, apns(#"{"alert":5,"mutable-content":1}"#),
            [.error(.invalidValue, "/aps/alert"), .error(.missingAlert, "/aps/alert")]),
        PreflightCase(
            "apns: silent push", .apns, apns(#"{"content-available":1,"mutable-content":1}"#),
            [.error(.silentPush, "/aps/content-available")]),
        PreflightCase(
            "apns: http URL", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"http://cdn.example.com/a.jpg"}]"#),
            [.error(.insecureURL, "/attachments/0/url")]),
        PreflightCase(
            "apns: http URL with an ATS exception", .apns, allowHTTP: true,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"http://cdn.example.com/a.jpg"}]"#),
            [.warning(.insecureURL, "/attachments/0/url")]),
        PreflightCase(
            "apns: no extension (the query does not count)", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"https://cdn.example.com/media/42?format=jpg"}]"#),
            [.error(.missingExtension, "/attachments/0/url")]),
        PreflightCase(
            "apns: WebP, HEIC and an unknown extension", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"url":"https://cdn.example.com/a.webp"},{"url":"https://cdn.example.com/b.heic"},{"url":"https://cdn.example.com/c.php"}]"#
            ),
            [
                .error(.unsupportedExtension, "/attachments/0/url"),
                .error(.unsupportedExtension, "/attachments/1/url"),
                .error(.unsupportedExtension, "/attachments/2/url"),
            ]),
        PreflightCase(
            "apns: type and type hint disagree with the extension", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"a","url":"https://cdn.example.com/a.png","type":"public.jpeg","options":{"\#(hint)":"public.jpeg"}}]"#
            ),
            [
                .error(.typeMismatch, "/attachments/0/type"),
                .error(.typeMismatch, "/attachments/0/options/\(hint)"),
            ]),
        PreflightCase(
            "apns: only the type hint disagrees", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"a","url":"\#(mp4)","type":"public.mpeg-4","options":{"\#(hint)":"public.mpeg-4-audio"}}]"#
            ),
            [.error(.typeMismatch, "/attachments/0/options/\(hint)")]),
        PreflightCase(
            "apns: a type and a type hint iOS does not accept", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"a","url":"\#(jpg)","type":"org.webmproject.webp","options":{"\#(hint)":"public.heic"}}]"#),
            [
                .warning(.unknownTypeHint, "/attachments/0/type"),
                .warning(.unknownTypeHint, "/attachments/0/options/\(hint)"),
            ]),
        PreflightCase(
            "apns: not URLs: no scheme, ftp, credentials", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"url":"a.jpg"},{"url":"ftp://cdn.example.com/b.jpg"},{"url":"https://user:pw@cdn.example.com/c.jpg"}]"#
            ),
            [
                .error(.invalidURL, "/attachments/0/url"), .error(.invalidURL, "/attachments/1/url"),
                .error(.invalidURL, "/attachments/2/url"),
            ]),
        PreflightCase(
            "apns: attachment entries without a usable url", .apns,
            apns(#"{"alert":"B","mutable-content":1}"#, attachments: #"[{"id":"a"},{"url":5},{"url":""},"x"]"#),
            [
                .error(.invalidAttachment, "/attachments/0/url"), .error(.invalidAttachment, "/attachments/1/url"),
                .error(.invalidAttachment, "/attachments/2/url"), .error(.invalidAttachment, "/attachments/3"),
            ]),
        PreflightCase(
            "apns: attachments not an array", .apns,
            apns(#"{"alert":"B","mutable-content":1}"#, attachments: #"{"url":"\#(jpg)"}"#),
            [.error(.invalidAttachment, "/attachments")]),
        PreflightCase(
            "apns: an invalid interruption level", .apns,
            apns(#"{"alert":"B","mutable-content":1,"interruption-level":"loud"}"#),
            [.error(.invalidInterruptionLevel, "/aps/interruption-level")]),
        PreflightCase(
            "apns: OneSignal's spelling of time-sensitive", .apns,
            apns(#"{"alert":"B","mutable-content":1,"interruption-level":"time_sensitive"}"#),
            [.error(.invalidInterruptionLevel, "/aps/interruption-level")]),
        PreflightCase(
            "apns: critical needs the entitlement", .apns,
            apns(#"{"alert":"B","mutable-content":1,"interruption-level":"critical"}"#),
            [.info(.criticalNeedsEntitlement, "/aps/interruption-level")]),
        PreflightCase(
            "apns: relevance score 1.5", .apns, apns(#"{"alert":"B","mutable-content":1,"relevance-score":1.5}"#),
            [.error(.invalidRelevanceScore, "/aps/relevance-score")]),
        PreflightCase(
            "apns: relevance score \"0.5\"", .apns, apns(#"{"alert":"B","mutable-content":1,"relevance-score":"0.5"}"#),
            [.error(.invalidRelevanceScore, "/aps/relevance-score")]),
        PreflightCase(
            "apns: relevance score -0.1", .apns, apns(#"{"alert":"B","mutable-content":1,"relevance-score":-0.1}"#),
            [.error(.invalidRelevanceScore, "/aps/relevance-score")]),
        PreflightCase(
            "apns: custom keys inside aps, escaped in the pointer", .apns,
            apns(#"{"alert":"B","mutable-content":1,"image-url":"x","a/b~c":1}"#),
            [.warning(.unknownAPSKey, "/aps/image-url"), .warning(.unknownAPSKey, "/aps/a~1b~0c")]),
        PreflightCase(
            "apns: a category that is not a string", .apns, apns(#"{"alert":"B","mutable-content":1,"category":5}"#),
            [.error(.invalidValue, "/aps/category")]),
        PreflightCase(
            "apns: badge, sound and thread-id of the wrong type", .apns,
            apns(#"{"alert":"B","mutable-content":1,"badge":"3","sound":1,"thread-id":[]}"#),
            [
                .error(.invalidValue, "/aps/badge"), .error(.invalidValue, "/aps/sound"),
                .error(.invalidValue, "/aps/thread-id"),
            ]),
        PreflightCase(
            "apns: a key repeated inside aps", .apns, counted: .wholeTextWithout(#""alert":"A","#),
            apns(#"{"alert":"A","alert":"B","mutable-content":1}"#), [.warning(.duplicateKey, "/aps/alert")]),
        PreflightCase(
            "apns: attachments repeated: the last one is read", .apns,
            counted: .wholeTextWithout(#""attachments":[{"url":"http://cdn.example.com/a.jpg"}],"#),
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"url":"http://cdn.example.com/a.jpg"}],"attachments":[\#(jpgEntry)]}"#,
            [.warning(.duplicateKey, "/attachments")]),
        PreflightCase(
            "apns: 4096 bytes fit", .apns, padded(#"{"aps":{"alert":"PAD"}}"#, to: 4096),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: 4097 bytes do not", .apns, padded(#"{"aps":{"alert":"PAD"}}"#, to: 4097),
            [.error(.payloadTooLarge, ""), .info(.noAttachments, "")]),
        PreflightCase(
            "apns: 4097 bytes with an attachment do not", .apns,
            padded(apns(#"{"alert":"PAD","mutable-content":1}"#), to: 4097), [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "apns: bytes, not characters, count", .apns,
            apns(#"{"alert":"\#(String(repeating: "é", count: 2048))","mutable-content":1}"#),
            [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "apns: 4097 bytes fit a VoIP push", .apns, pushType: .voip, padded(#"{"aps":{"alert":"PAD"}}"#, to: 4097),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: 5120 bytes fit a VoIP push", .apns, pushType: .voip, padded(#"{"aps":{"alert":"PAD"}}"#, to: 5120),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: 5121 bytes do not fit a VoIP push", .apns, pushType: .voip,
            padded(#"{"aps":{"alert":"PAD"}}"#, to: 5121), [.error(.payloadTooLarge, ""), .info(.noAttachments, "")]),
        PreflightCase(
            "apns: attachments on a background push", .apns, pushType: .background,
            apns(#"{"alert":"B","mutable-content":1}"#), [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "apns: attachments on a VoIP push", .apns, pushType: .voip, apns(#"{"alert":"B","mutable-content":1}"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "apns: no attachments", .apns, #"{"aps":{"alert":"B"},"deeplink":"app://x"}"#, [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: an empty attachments array", .apns, apns(#"{"alert":"B","mutable-content":1}"#, attachments: "[]"),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: no aps", .apns, #"{"attachments":[\#(jpgEntry)]}"#,
            [
                .error(.missingAPS, "/aps"), .error(.missingAlert, "/aps/alert"),
                .error(.missingMutableContent, "/aps/mutable-content"),
            ]),
        PreflightCase(
            "apns: no aps and no attachments", .apns, explicitOnly: true, #"{"deeplink":"app://x"}"#,
            [.error(.missingAPS, "/aps"), .info(.noAttachments, "")]),
        PreflightCase(
            "apns: aps a string", .apns, apns(#""alert""#),
            [
                .error(.apsNotObject, "/aps"), .error(.missingAlert, "/aps/alert"),
                .error(.missingMutableContent, "/aps/mutable-content"),
            ]),
        PreflightCase(
            "apns: aps an array", .apns, apns(#"[{"alert":"B"}]"#),
            [
                .error(.apsNotObject, "/aps"), .error(.missingAlert, "/aps/alert"),
                .error(.missingMutableContent, "/aps/mutable-content"),
            ]),
        PreflightCase(
            "apns: read as FCM, PushPrep's attachments are not FCM's keys", .fcm, explicitOnly: true,
            apns(#"{"alert":"B","mutable-content":1}"#), [.info(.noAttachments, "")]),
    ]

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

    static let oneSignalCases: [PreflightCase] = [
        PreflightCase(
            "onesignal: valid REST body with image, video and audio", .onesignal,
            oneSignal(
                #""include_subscription_ids":["s1"],"headings":{"en":"T"},"subtitle":{"en":"S"},"contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)","vid":"\#(mp4)","aud":"\#(m4a)"},"mutable_content":true"#
            ), []),
        PreflightCase(
            "onesignal: valid with category, interruption level and relevance", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_category":"NEWS","ios_interruption_level":"time_sensitive","ios_relevance_score":0.5,"thread_id":"t","ios_sound":"default""#
            ), [.info(.categoryNoted, "/ios_category")]),
        PreflightCase(
            "onesignal: mutable_content left to OneSignal", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"}"#), []),
        PreflightCase(
            "onesignal: mutable_content false", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"mutable_content":false"#),
            [.error(.invalidMutableContent, "/mutable_content")]),
        PreflightCase(
            "onesignal: mutable_content 1 (APNs' spelling)", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"mutable_content":1"#),
            [.error(.invalidMutableContent, "/mutable_content")]),
        PreflightCase(
            "onesignal: mutable_content \"true\"", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"mutable_content":"true""#),
            [.error(.invalidMutableContent, "/mutable_content")]),
        PreflightCase(
            "onesignal: no contents", .onesignal, oneSignal(#""ios_attachments":{"img":"\#(jpg)"}"#),
            [.error(.missingAlert, "/contents")]),
        PreflightCase(
            "onesignal: empty contents", .onesignal,
            oneSignal(#""contents":{"en":""},"ios_attachments":{"img":"\#(jpg)"}"#),
            [.error(.missingAlert, "/contents")]
        ),
        PreflightCase(
            "onesignal: silent", .onesignal,
            oneSignal(#""content_available":true,"ios_attachments":{"img":"\#(jpg)"}"#),
            [.error(.silentPush, "/content_available")]),
        PreflightCase(
            "onesignal: http URL, the id escaped in the pointer", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"a/b~c":"http://cdn.example.com/a.jpg"}"#),
            [.error(.insecureURL, "/ios_attachments/a~1b~0c")]),
        PreflightCase(
            "onesignal: http URL with an ATS exception", .onesignal, allowHTTP: true,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"http://cdn.example.com/a.jpg"}"#),
            [.warning(.insecureURL, "/ios_attachments/img")]),
        PreflightCase(
            "onesignal: no extension", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"https://cdn.example.com/media/42"}"#),
            [.error(.missingExtension, "/ios_attachments/img")]),
        PreflightCase(
            "onesignal: WebP", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"https://cdn.example.com/a.webp"}"#),
            [.error(.unsupportedExtension, "/ios_attachments/img")]),
        PreflightCase(
            "onesignal: .aif and .m2v, which iOS takes and OneSignal's SDK does not", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"aud":"https://cdn.example.com/a.aif","vid":"https://cdn.example.com/b.m2v"}"#
            ),
            [.error(.providerExtension, "/ios_attachments/aud"), .error(.providerExtension, "/ios_attachments/vid")]),
        PreflightCase(
            "onesignal: not a URL", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"cdn.example.com/a.jpg"}"#),
            [.error(.invalidURL, "/ios_attachments/img")]),
        PreflightCase(
            "onesignal: ios_attachments an array", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":["\#(jpg)"]"#),
            [.error(.invalidAttachment, "/ios_attachments")]),
        PreflightCase(
            "onesignal: ios_attachments values that are not URL strings", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":5,"vid":""}"#),
            [.error(.invalidAttachment, "/ios_attachments/img"), .error(.invalidAttachment, "/ios_attachments/vid")]),
        PreflightCase(
            "onesignal: APNs' spelling of time-sensitive", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_interruption_level":"time-sensitive""#),
            [.error(.invalidInterruptionLevel, "/ios_interruption_level")]),
        PreflightCase(
            "onesignal: critical", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_interruption_level":"critical""#),
            [.info(.criticalNeedsEntitlement, "/ios_interruption_level")]),
        PreflightCase(
            "onesignal: relevance score 1.5", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_relevance_score":1.5"#),
            [.error(.invalidRelevanceScore, "/ios_relevance_score")]),
        PreflightCase(
            "onesignal: relevance score \"0.5\"", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_relevance_score":"0.5""#),
            [.error(.invalidRelevanceScore, "/ios_relevance_score")]),
        PreflightCase(
            "onesignal: a category that is not a string", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_category":["NEWS"]"#),
            [.error(.invalidValue, "/ios_category")]),
        PreflightCase(
            "onesignal: contents repeated", .onesignal, counted: .wholeTextWithout(#""contents":{"en":"A"},"#),
            oneSignal(#""contents":{"en":"A"},"contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"}"#),
            [.warning(.duplicateKey, "/contents")]),
        PreflightCase(
            "onesignal: a 4096-byte body fits", .onesignal,
            padded(oneSignal(#""contents":{"en":"PAD"},"ios_attachments":{"img":"\#(jpg)"}"#), to: 4096), []),
        PreflightCase(
            "onesignal: a 4097-byte body does not", .onesignal,
            padded(oneSignal(#""contents":{"en":"PAD"},"ios_attachments":{"img":"\#(jpg)"}"#), to: 4097),
            [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "onesignal: attachments on a background push", .onesignal, pushType: .background,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"}"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "onesignal: no attachments", .onesignal, oneSignal(#""contents":{"en":"B"}"#), [.info(.noAttachments, "")]),
        PreflightCase(
            "onesignal device: valid", .onesignal,
            device(#"{"alert":{"body":"B"},"mutable-content":1}"#, #""att":{"img":"\#(jpg)"},"custom":{"i":"5f1c"}"#),
            []),
        PreflightCase(
            "onesignal device: mutable-content missing", .onesignal,
            device(#"{"alert":{"body":"B"}}"#, #""att":{"img":"\#(jpg)"},"custom":{"i":"5f1c"}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "onesignal device: mutable-content true", .onesignal,
            device(#"{"alert":{"body":"B"},"mutable-content":true}"#, #""att":{"img":"\#(jpg)"}"#),
            [.error(.invalidMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "onesignal device: silent", .onesignal,
            device(#"{"content-available":1,"mutable-content":1}"#, #""att":{"img":"\#(jpg)"}"#),
            [.error(.silentPush, "/aps/content-available")]),
        PreflightCase(
            "onesignal device: http URL", .onesignal,
            device(#"{"alert":"B","mutable-content":1}"#, #""att":{"img":"http://cdn.example.com/a.jpg"}"#),
            [.error(.insecureURL, "/att/img")]),
        PreflightCase(
            "onesignal device: .aif", .onesignal,
            device(#"{"alert":"B","mutable-content":1}"#, #""att":{"aud":"https://cdn.example.com/a.aif"}"#),
            [.error(.providerExtension, "/att/aud")]),
        PreflightCase(
            "onesignal device: the phone's spelling of the interruption level", .onesignal,
            device(
                #"{"alert":"B","mutable-content":1,"interruption-level":"time_sensitive"}"#, #""att":{"img":"\#(jpg)"}"#
            ),
            [.error(.invalidInterruptionLevel, "/aps/interruption-level")]),
        PreflightCase(
            "onesignal device: a custom key inside aps", .onesignal,
            device(#"{"alert":"B","mutable-content":1,"att":{}}"#, #""att":{"img":"\#(jpg)"}"#),
            [.warning(.unknownAPSKey, "/aps/att")]),
        PreflightCase(
            "onesignal device: att a string", .onesignal,
            device(#"{"alert":"B","mutable-content":1}"#, #""att":"\#(jpg)""#), [.error(.invalidAttachment, "/att")]),
        PreflightCase(
            "onesignal device: no attachment", .onesignal,
            device(#"{"alert":"B"}"#, #""custom":{"i":"5f1c"}"#), [.info(.noAttachments, "")]),
    ]

    static let airshipCases: [PreflightCase] = [
        PreflightCase(
            "airship: valid push object", .airship,
            airship(
                #"{"alert":"B","ios":{"title":"T","subtitle":"S","mutable_content":true,"media_attachment":{"url":"\#(mp4)","options":{"time":1.5,"hidden":false},"content":{"title":"T","body":"B"}}}}"#
            ), []),
        PreflightCase(
            "airship: valid with category, interruption level and relevance", .airship,
            airship(
                #"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"category":"NEWS","interruption_level":"time-sensitive","relevance_score":0.5,"thread_id":"t"}}"#
            ), [.info(.categoryNoted, "/notification/ios/category")]),
        PreflightCase(
            "airship: mutable_content left to Airship", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}}}"#), []),
        PreflightCase(
            "airship: the iOS title alone is an alert", .airship,
            airship(#"{"ios":{"title":"T","media_attachment":{"url":"\#(jpg)"}}}"#), []),
        PreflightCase(
            "airship: the iOS alert override alone is an alert", .airship,
            airship(#"{"ios":{"alert":"B","media_attachment":{"url":"\#(jpg)"}}}"#), []),
        PreflightCase(
            "airship: mutable_content false", .airship,
            airship(#"{"alert":"B","ios":{"mutable_content":false,"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.invalidMutableContent, "/notification/ios/mutable_content")]),
        PreflightCase(
            "airship: mutable_content 1", .airship,
            airship(#"{"alert":"B","ios":{"mutable_content":1,"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.invalidMutableContent, "/notification/ios/mutable_content")]),
        PreflightCase(
            "airship: no alert", .airship, airship(#"{"ios":{"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.missingAlert, "/notification/ios/alert")]),
        PreflightCase(
            "airship: silent", .airship,
            airship(#"{"ios":{"content_available":true,"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.silentPush, "/notification/ios/content_available")]),
        PreflightCase(
            "airship: http URL", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"http://cdn.example.com/a.jpg"}}}"#),
            [.error(.insecureURL, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: http URL with an ATS exception", .airship, allowHTTP: true,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"http://cdn.example.com/a.jpg"}}}"#),
            [.warning(.insecureURL, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: no extension", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"https://cdn.example.com/media/42/"}}}"#),
            [.error(.missingExtension, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: WebP", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"https://cdn.example.com/a.webp"}}}"#),
            [.error(.unsupportedExtension, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: any extension iOS takes (.m2v)", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"https://cdn.example.com/a.m2v"}}}"#), []),
        PreflightCase(
            "airship: not a URL", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"/push/a.jpg"}}}"#),
            [.error(.invalidURL, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: a url that is not a string", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":5}}}"#),
            [.error(.invalidAttachment, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: media_attachment without url", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"options":{"time":1}}}}"#),
            [.error(.invalidAttachment, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: media_attachment a bare URL string", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":"\#(jpg)"}}"#),
            [.error(.invalidAttachment, "/notification/ios/media_attachment")]),
        PreflightCase(
            "airship: an invalid interruption level", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"interruption_level":"urgent"}}"#),
            [.error(.invalidInterruptionLevel, "/notification/ios/interruption_level")]),
        PreflightCase(
            "airship: critical", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"interruption_level":"critical"}}"#),
            [.info(.criticalNeedsEntitlement, "/notification/ios/interruption_level")]),
        PreflightCase(
            "airship: relevance score 1.5", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"relevance_score":1.5}}"#),
            [.error(.invalidRelevanceScore, "/notification/ios/relevance_score")]),
        PreflightCase(
            "airship: relevance score \"0.5\"", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"relevance_score":"0.5"}}"#),
            [.error(.invalidRelevanceScore, "/notification/ios/relevance_score")]),
        PreflightCase(
            "airship: a category that is not a string", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"category":7}}"#),
            [.error(.invalidValue, "/notification/ios/category")]),
        PreflightCase(
            "airship: alert repeated", .airship, counted: .wholeTextWithout(#""alert":"A","#),
            airship(#"{"alert":"A","alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.warning(.duplicateKey, "/notification/alert")]),
        PreflightCase(
            "airship: a 4097-byte push object", .airship,
            padded(airship(#"{"alert":"PAD","ios":{"media_attachment":{"url":"\#(jpg)"}}}"#), to: 4097),
            [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "airship: attachments on a background push", .airship, pushType: .background,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "airship: no attachment", .airship, airship(#"{"alert":"B"}"#), [.info(.noAttachments, "")]),
        PreflightCase(
            "airship device: valid", .airship,
            device(#"{"alert":"B","mutable-content":1}"#, #""com.urbanairship.media_attachment":{"url":["\#(jpg)"]}"#),
            []),
        PreflightCase(
            "airship device: a url string instead of an array", .airship,
            device(#"{"alert":"B","mutable-content":1}"#, #""com.urbanairship.media_attachment":{"url":"\#(jpg)"}"#), []
        ),
        PreflightCase(
            "airship device: mutable-content missing", .airship,
            device(#"{"alert":"B"}"#, #""com.urbanairship.media_attachment":{"url":["\#(jpg)"]}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "airship device: http URL", .airship,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""com.urbanairship.media_attachment":{"url":["http://cdn.example.com/a.jpg"]}"#),
            [.error(.insecureURL, "/com.urbanairship.media_attachment/url/0")]),
        PreflightCase(
            "airship device: WebP", .airship,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""com.urbanairship.media_attachment":{"url":["https://cdn.example.com/a.webp"]}"#),
            [.error(.unsupportedExtension, "/com.urbanairship.media_attachment/url/0")]),
        PreflightCase(
            "airship device: a url that is not a string", .airship,
            device(#"{"alert":"B","mutable-content":1}"#, #""com.urbanairship.media_attachment":{"url":[5]}"#),
            [.error(.invalidAttachment, "/com.urbanairship.media_attachment/url/0")]),
    ]

    /// Braze counts `alert` + `extra`: `"B"` is 3 bytes, `{"title":"T","body":"B"}` 24.
    static let brazeAlert = #"{"title":"T","body":"B"}"#
    static let brazeCases: [PreflightCase] = [
        PreflightCase(
            "braze: valid /messages/send body", .braze, counted: .bytes(24, limit: 1912),
            braze(#"{"alert":\#(brazeAlert),"asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":true}"#),
            []),
        PreflightCase(
            "braze: valid apple_push at the top", .braze, counted: .bytes(3, limit: 1912),
            #"{"apple_push":{"alert":"B","asset_url":"\#(mp4)","asset_file_type":"mp4","mutable_content":true}}"#, []),
        PreflightCase(
            "braze: valid audio with category, interruption level, relevance and extra", .braze,
            counted: .bytes(3 + #"{"k":"v"}"#.utf8.count, limit: 1912),
            braze(
                #"{"alert":"B","asset_url":"\#(m4a)","asset_file_type":"m4a","category":"NEWS","interruption_level":"time-sensitive","relevance_score":0.5,"extra":{"k":"v"}}"#
            ), [.info(.categoryNoted, "/messages/apple_push/category")]),
        PreflightCase(
            "braze: valid .aif, Braze's spelling of AIFF", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https://cdn.example.com/a.aif","asset_file_type":"aif"}"#), []),
        PreflightCase(
            "braze: mutable_content left to Braze", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg"}"#), []),
        PreflightCase(
            "braze: mutable_content false", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":false}"#),
            [.error(.invalidMutableContent, "/messages/apple_push/mutable_content")]),
        PreflightCase(
            "braze: mutable_content 1", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":1}"#),
            [.error(.invalidMutableContent, "/messages/apple_push/mutable_content")]),
        PreflightCase(
            "braze: no alert", .braze, counted: .bytes(0, limit: 1912),
            braze(#"{"asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            [.error(.missingAlert, "/messages/apple_push/alert")]),
        PreflightCase(
            "braze: no alert, apple_push at the top", .braze, counted: .bytes(0, limit: 1912),
            #"{"apple_push":{"asset_url":"\#(jpg)","asset_file_type":"jpg"}}"#,
            [.error(.missingAlert, "/apple_push/alert")]),
        PreflightCase(
            "braze: silent", .braze, counted: .bytes(0, limit: 1912),
            braze(#"{"content-available":true,"asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            [.error(.silentPush, "/messages/apple_push/content-available")]),
        PreflightCase(
            "braze: http URL", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"http://cdn.example.com/a.jpg","asset_file_type":"jpg"}"#),
            [.error(.insecureURL, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: http URL with an ATS exception", .braze, allowHTTP: true, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"http://cdn.example.com/a.jpg","asset_file_type":"jpg"}"#),
            [.warning(.insecureURL, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: no extension", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https://cdn.example.com/media/42","asset_file_type":"jpg"}"#),
            [.error(.missingExtension, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: WebP", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https://cdn.example.com/a.webp","asset_file_type":"jpg"}"#),
            [.error(.unsupportedExtension, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: .aiff, which iOS takes and Braze does not", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https://cdn.example.com/a.aiff","asset_file_type":"aif"}"#),
            [.error(.providerExtension, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: asset_file_type disagrees with the URL", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"png"}"#),
            [.error(.typeMismatch, "/messages/apple_push/asset_file_type")]),
        PreflightCase(
            "braze: asset_file_type jpeg, not Braze's jpg", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpeg"}"#),
            [.error(.providerExtension, "/messages/apple_push/asset_file_type")]),
        PreflightCase(
            "braze: asset_file_type webp", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"webp"}"#),
            [
                .error(.providerExtension, "/messages/apple_push/asset_file_type"),
                .warning(.unknownTypeHint, "/messages/apple_push/asset_file_type"),
            ]),
        PreflightCase(
            "braze: asset_file_type missing", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)"}"#),
            [.error(.invalidAttachment, "/messages/apple_push/asset_file_type")]),
        PreflightCase(
            "braze: asset_file_type not a string", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":1}"#),
            [.error(.invalidAttachment, "/messages/apple_push/asset_file_type")]),
        PreflightCase(
            "braze: asset_url not a string", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":{"url":"\#(jpg)"},"asset_file_type":"jpg"}"#),
            [.error(.invalidAttachment, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: not a URL", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https//cdn.example.com/a.jpg","asset_file_type":"jpg"}"#),
            [.error(.invalidURL, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: OneSignal's spelling of time-sensitive", .braze, counted: .bytes(3, limit: 1912),
            braze(
                #"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","interruption_level":"time_sensitive"}"#),
            [.error(.invalidInterruptionLevel, "/messages/apple_push/interruption_level")]),
        PreflightCase(
            "braze: critical", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","interruption_level":"critical"}"#),
            [.info(.criticalNeedsEntitlement, "/messages/apple_push/interruption_level")]),
        PreflightCase(
            "braze: relevance score 1.5", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","relevance_score":1.5}"#),
            [.error(.invalidRelevanceScore, "/messages/apple_push/relevance_score")]),
        PreflightCase(
            "braze: relevance score \"0.5\"", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","relevance_score":"0.5"}"#),
            [.error(.invalidRelevanceScore, "/messages/apple_push/relevance_score")]),
        PreflightCase(
            "braze: a category that is not a string", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","category":{}}"#),
            [.error(.invalidValue, "/messages/apple_push/category")]),
        PreflightCase(
            "braze: asset_url repeated: the last one is read", .braze, counted: .bytes(3, limit: 1912),
            braze(
                #"{"alert":"B","asset_url":"http://cdn.example.com/a.jpg","asset_url":"\#(jpg)","asset_file_type":"jpg"}"#
            ),
            [.warning(.duplicateKey, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: alert + extra of 1912 bytes fit", .braze, counted: .bytes(1912, limit: 1912),
            braze(#"{"alert":"\#(pad(1912 - 11))","extra":{"k":"v"},"asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            []),
        PreflightCase(
            "braze: alert + extra of 1913 bytes do not", .braze, counted: .bytes(1913, limit: 1912),
            braze(#"{"alert":"\#(pad(1913 - 11))","extra":{"k":"v"},"asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            [.error(.payloadTooLarge, "/messages/apple_push")]),
        PreflightCase(
            "braze: alert of 1913 bytes, apple_push at the top", .braze, counted: .bytes(1913, limit: 1912),
            #"{"apple_push":{"alert":"\#(pad(1911))","asset_url":"\#(jpg)","asset_file_type":"jpg"}}"#,
            [.error(.payloadTooLarge, "/apple_push")]),
        PreflightCase(
            "braze: attachments on a background push", .braze, pushType: .background,
            counted: .bytes(3, limit: 1912), braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "braze: no attachment", .braze, counted: .bytes(3, limit: 1912), braze(#"{"alert":"B"}"#),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "braze device: valid", .braze,
            device(#"{"alert":"B","mutable-content":1}"#, #""ab":{"att":{"url":"\#(jpg)","type":"jpg"}}"#), []),
        PreflightCase(
            "braze device: type disagrees with the URL", .braze,
            device(#"{"alert":"B","mutable-content":1}"#, #""ab":{"att":{"url":"\#(jpg)","type":"gif"}}"#),
            [.error(.typeMismatch, "/ab/att/type")]),
        PreflightCase(
            "braze device: type jpeg", .braze,
            device(#"{"alert":"B","mutable-content":1}"#, #""ab":{"att":{"url":"\#(jpg)","type":"jpeg"}}"#),
            [.error(.providerExtension, "/ab/att/type")]),
        PreflightCase(
            "braze device: .aiff", .braze,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""ab":{"att":{"url":"https://cdn.example.com/a.aiff","type":"aif"}}"#),
            [.error(.providerExtension, "/ab/att/url")]),
        PreflightCase(
            "braze device: mutable-content missing", .braze,
            device(#"{"alert":"B"}"#, #""ab":{"att":{"url":"\#(jpg)","type":"jpg"}}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "braze device: http URL", .braze,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""ab":{"att":{"url":"http://cdn.example.com/a.jpg","type":"jpg"}}"#
            ),
            [.error(.insecureURL, "/ab/att/url")]),
        PreflightCase(
            "braze device: critical", .braze,
            device(
                #"{"alert":"B","mutable-content":1,"interruption-level":"critical"}"#,
                #""ab":{"att":{"url":"\#(mp4)","type":"mp4"}}"#),
            [.info(.criticalNeedsEntitlement, "/aps/interruption-level")]),
    ]

    static let fcmCases: [PreflightCase] = [
        PreflightCase(
            "fcm: valid message", .fcm,
            fcm(#""notification":{"title":"T","body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#), []),
        PreflightCase(
            "fcm: valid with an aps alert, sound and category", .fcm,
            fcm(
                #""notification":{"title":"T","body":"B"},\#(fcmAPNs(#"{"alert":{"subtitle":"S"},"sound":"default","category":"NEWS","mutable-content":1}"#))"#
            ), [.info(.categoryNoted, "/message/apns/payload/aps/category")]),
        PreflightCase(
            "fcm: valid notification.image", .fcm,
            fcm(#""notification":{"body":"B","image":"\#(jpg)"},"apns":{"payload":{"aps":{"mutable-content":1}}}"#), []),
        PreflightCase(
            "fcm: valid without the message wrapper", .fcm,
            #"{"token":"t0k3n","notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#))}"#, []),
        PreflightCase(
            "fcm: an aps alert instead of notification", .fcm, fcm(fcmAPNs(#"{"alert":"B","mutable-content":1}"#)),
            []),
        PreflightCase(
            "fcm: an alert push type header", .fcm,
            fcm(
                #""notification":{"body":"B"},"apns":{"headers":{"apns-push-type":"alert"},"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpg)"}}"#
            ), []),
        PreflightCase(
            "fcm: mutable-content missing", .fcm,
            fcm(#""notification":{"body":"B"},"apns":{"fcm_options":{"image":"\#(jpg)"}}"#),
            [.error(.missingMutableContent, "/message/apns/payload/aps/mutable-content")]),
        PreflightCase(
            "fcm: mutable-content missing without the message wrapper", .fcm,
            #"{"token":"t0k3n","notification":{"body":"B"},\#(fcmAPNs(#"{"sound":"default"}"#))}"#,
            [.error(.missingMutableContent, "/apns/payload/aps/mutable-content")]),
        PreflightCase(
            "fcm: mutable-content true", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":true}"#))"#),
            [.error(.invalidMutableContent, "/message/apns/payload/aps/mutable-content")]),
        PreflightCase(
            "fcm: mutable-content \"1\"", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":"1"}"#))"#),
            [.error(.invalidMutableContent, "/message/apns/payload/aps/mutable-content")]),
        PreflightCase(
            "fcm: no notification and no alert", .fcm, fcm(fcmAPNs(#"{"mutable-content":1}"#)),
            [.error(.missingAlert, "/message/notification")]),
        PreflightCase(
            "fcm: a notification with only an image", .fcm,
            fcm(#""notification":{"image":"\#(jpg)"},"apns":{"payload":{"aps":{"mutable-content":1}}}"#),
            [.error(.missingAlert, "/message/notification")]),
        PreflightCase(
            "fcm: silent", .fcm, fcm(fcmAPNs(#"{"content-available":1,"mutable-content":1}"#)),
            [.error(.silentPush, "/message/apns/payload/aps/content-available")]),
        PreflightCase(
            "fcm: http URL", .fcm,
            fcm(
                #""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "http://cdn.example.com/a.jpg"))"#
            ),
            [.error(.insecureURL, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: http URL with an ATS exception", .fcm, allowHTTP: true,
            fcm(
                #""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "http://cdn.example.com/a.jpg"))"#
            ),
            [.warning(.insecureURL, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: http notification.image", .fcm,
            fcm(
                #""notification":{"body":"B","image":"http://cdn.example.com/a.png"},"apns":{"payload":{"aps":{"mutable-content":1}}}"#
            ),
            [.error(.insecureURL, "/message/notification/image")]),
        PreflightCase(
            "fcm: no extension", .fcm,
            fcm(
                #""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "https://cdn.example.com/i/42"))"#
            ),
            [.error(.missingExtension, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: WebP", .fcm,
            fcm(
                #""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "https://cdn.example.com/a.webp"))"#
            ),
            [.error(.unsupportedExtension, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: a movie in the image key", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: mp4))"#),
            [.error(.providerExtension, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: a sound in the image key", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: m4a))"#),
            [.error(.providerExtension, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: not a URL", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "gs://bucket/a.jpg"))"#),
            [.error(.invalidURL, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: an image that is not a string", .fcm,
            fcm(
                #""notification":{"body":"B"},"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":5}}"#
            ),
            [.error(.invalidAttachment, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: an invalid interruption level", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"interruption-level":"Active"}"#))"#),
            [.error(.invalidInterruptionLevel, "/message/apns/payload/aps/interruption-level")]),
        PreflightCase(
            "fcm: critical", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"interruption-level":"critical"}"#))"#),
            [.info(.criticalNeedsEntitlement, "/message/apns/payload/aps/interruption-level")]),
        PreflightCase(
            "fcm: relevance score 1.5", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"relevance-score":1.5}"#))"#),
            [.error(.invalidRelevanceScore, "/message/apns/payload/aps/relevance-score")]),
        PreflightCase(
            "fcm: relevance score \"0.5\"", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"relevance-score":"0.5"}"#))"#),
            [.error(.invalidRelevanceScore, "/message/apns/payload/aps/relevance-score")]),
        PreflightCase(
            "fcm: a custom key inside aps", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"image":"x"}"#))"#),
            [.warning(.unknownAPSKey, "/message/apns/payload/aps/image")]),
        PreflightCase(
            "fcm: a category that is not a string", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"category":true}"#))"#),
            [.error(.invalidValue, "/message/apns/payload/aps/category")]),
        PreflightCase(
            "fcm: aps not a dictionary", .fcm, fcm(#""notification":{"body":"B"},\#(fcmAPNs(#""mutable-content""#))"#),
            [
                .error(.apsNotObject, "/message/apns/payload/aps"),
                .error(.missingMutableContent, "/message/apns/payload/aps/mutable-content"),
            ]),
        PreflightCase(
            "fcm: token repeated", .fcm, counted: .wholeTextWithout(#""token":"again","#),
            fcm(#""token":"again","notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#),
            [.warning(.duplicateKey, "/message/token")]),
        PreflightCase(
            "fcm: a 4096-byte message fits", .fcm,
            padded(fcm(#""notification":{"body":"PAD"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#), to: 4096), []),
        PreflightCase(
            "fcm: a 4097-byte message does not", .fcm,
            padded(fcm(#""notification":{"body":"PAD"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#), to: 4097),
            [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "fcm: attachments on a background push", .fcm, pushType: .background,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "fcm: apns-push-type background in the message", .fcm,
            fcm(
                #""notification":{"body":"B"},"apns":{"headers":{"apns-push-type":"background"},"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpg)"}}"#
            ),
            [.error(.pushTypeWithoutExtension, "/message/apns/headers/apns-push-type")]),
        PreflightCase(
            "fcm: apns-push-type voip in the message", .fcm,
            fcm(
                #""notification":{"body":"B"},"apns":{"headers":{"apns-push-type":"voip"},"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpg)"}}"#
            ),
            [.error(.pushTypeWithoutExtension, "/message/apns/headers/apns-push-type")]),
        PreflightCase(
            "fcm: no attachment", .fcm, fcm(#""notification":{"body":"B"}"#), [.info(.noAttachments, "")]),
        PreflightCase(
            "fcm device: valid", .fcm,
            device(#"{"alert":"B","mutable-content":1}"#, #""fcm_options":{"image":"\#(jpg)"}"#), []),
        PreflightCase(
            "fcm device: a movie", .fcm,
            device(#"{"alert":"B","mutable-content":1}"#, #""fcm_options":{"image":"\#(mp4)"}"#),
            [.error(.providerExtension, "/fcm_options/image")]),
        PreflightCase(
            "fcm device: mutable-content missing", .fcm,
            device(#"{"alert":"B"}"#, #""fcm_options":{"image":"\#(jpg)"}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "fcm device: http URL", .fcm,
            device(#"{"alert":"B","mutable-content":1}"#, #""fcm_options":{"image":"http://cdn.example.com/a.jpg"}"#),
            [.error(.insecureURL, "/fcm_options/image")]),
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
            #"{"aps":{"alert":"Café ☕ / 5€","mutable-content":1},"attachments":[\#(jpgEntry),{"id":"b","url":"\#(mp4)"}]}"#
        let pretty = """
            {
              "aps" : { "alert" : "Caf\\u00e9 \\u2615 \\/ 5\\u20ac", "mutable-content" : 1 },
              "attachments" : [
                { "id" : "a", "url" : "https:\\/\\/cdn.example.com\\/push\\/a.jpg", "type" : "public.jpeg" },
                { "id" : "b", "url" : "\(mp4)" }
              ]
            }

            """
        // "é" is 2 bytes, "☕" and "€" 3: the compact text's bytes, not its characters.
        #expect(compact.utf8.count == compact.count + 1 + 2 + 2)
        for text in [compact, pretty] {
            let report = Preflight.check(Array(text.utf8), file: "p.json", options: PreflightOptions())
            #expect(report.bytes == compact.utf8.count)
            #expect(report.limit == 4096)
            #expect(report.findings.isEmpty, "\(report.findings)")
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
        let apnsPayload = apns(
            #"{"alert":"B","mutable-content":1}"#,
            attachments: #"[\#(jpgEntry),{"url":5},{"id":"b","url":"\#(mp4)"},{"url":"http://x.example/c.m4a"}]"#)
        #expect(
            listed(apnsPayload) == [
                "/attachments/0/url \(jpg) a",
                "/attachments/2/url \(mp4) b",
                "/attachments/3/url http://x.example/c.m4a -",
            ])
        #expect(
            listed(oneSignal(#""contents":{"en":"B"},"ios_attachments":{"vid":"\#(mp4)","img":"\#(jpg)"}"#)) == [
                "/ios_attachments/vid \(mp4) vid",
                "/ios_attachments/img \(jpg) img",
            ])
        #expect(
            listed(device(#"{"alert":"B"}"#, #""com.urbanairship.media_attachment":{"url":["\#(jpg)","\#(mp4)"]}"#))
                == [
                    "/com.urbanairship.media_attachment/url/0 \(jpg) -",
                    "/com.urbanairship.media_attachment/url/1 \(mp4) -",
                ])
        #expect(
            listed(braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg"}"#)) == [
                "/messages/apple_push/asset_url \(jpg) -"
            ])
        #expect(
            listed(fcm(fcmAPNs(#"{"alert":"B","mutable-content":1}"#))) == [
                "/message/apns/fcm_options/image \(jpg) -"
            ])
    }

    @Test("exit status: 1 on an error, 3 on warnings only when strict, else 0 (infos allowed)")
    func exitStatus() {
        func status(_ text: String, strict: Bool) -> Int32 {
            Preflight.check(Array(text.utf8), file: "-", options: PreflightOptions()).exitStatus(strict: strict)
        }
        let clean = apns(#"{"alert":"B","mutable-content":1,"category":"NEWS"}"#)
        let warning = apns(#"{"alert":"B","mutable-content":1,"image-url":"x"}"#)
        let error = apns(#"{"alert":"B"}"#)
        #expect(status(clean, strict: true) == 0)
        #expect(status(warning, strict: false) == 0)
        #expect(status(warning, strict: true) == 3)
        #expect(status(error, strict: false) == 1)
        #expect(status(error, strict: true) == 1)
        #expect(status("[]", strict: false) == 1)
    }

    @Test("every finding code and error code is in the README's tables")
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
}
