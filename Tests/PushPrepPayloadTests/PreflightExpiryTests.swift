import Foundation
import PushPrepPayload
import Testing

@testable import PushPrepCore

/// Pre-flight on signed attachment URLs: an expired one is an error, one that expires within a
/// day a warning, and the finding points at the URL in every dialect.
struct PreflightExpiryTests {
    /// Signed 2013-05-24T00:00:00Z for 86400 s: expires 2013-05-25T00:00:00Z.
    static let url =
        "https://b.s3.example/a.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20130524T000000Z"
        + "&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=ab"
    static let expires = Date(timeIntervalSince1970: 1_369_440_000)

    private func findings(_ payload: String, now: Date) -> [String] {
        var options = PreflightOptions()
        options.now = now
        let report = Preflight.check(Array(payload.utf8), file: "p.json", options: options)
        return report.findings.map { "\($0.severity) \($0.code.rawValue) \($0.pointer)" }
    }

    @Test("expired, expiring within a day, and lasting: APNs and FCM")
    func expiry() {
        let apns = #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"\#(Self.url)"}]}"#
        let fcm =
            #"{"message":{"notification":{"title":"T"},"apns":{"payload":{"aps":{"mutable-content":1}},"#
            + #""fcm_options":{"image":"\#(Self.url)"}}}}"#
        #expect(findings(apns, now: Self.expires) == ["error url_expired /attachments/0/url"])
        #expect(
            findings(apns, now: Self.expires.addingTimeInterval(-3600))
                == ["warning url_expires_soon /attachments/0/url"])
        #expect(findings(apns, now: Self.expires.addingTimeInterval(-86_400)) == [])
        #expect(
            findings(fcm, now: Self.expires.addingTimeInterval(-60))
                == ["warning url_expires_soon /message/apns/fcm_options/image"])
    }

    @Test("without a clock given, the check's own time decides: AWS's 2013 example has long expired")
    func realClock() {
        let apns = #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"id":"a","url":"\#(Self.url)"}]}"#
        let report = Preflight.check(Array(apns.utf8), file: "p.json", options: PreflightOptions())
        #expect(report.findings.map(\.code) == [.urlExpired])
        #expect(report.findings.first?.message.contains("expired at 2013-05-25T00:00:00Z") == true)
    }
}
