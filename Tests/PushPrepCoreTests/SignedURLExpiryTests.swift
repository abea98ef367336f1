import Foundation
import Testing

@testable import PushPrepCore

/// Reading a signed URL's expiry from its query, in each form object stores and CDNs sign with.
struct SignedURLExpiryTests {
    /// 2013-05-24T00:00:00Z, the date of AWS's published SigV4 examples.
    static let signed = Date(timeIntervalSince1970: 1_369_353_600)

    @Test(
        "the expiry each signing scheme writes into the URL",
        arguments: [
            // AWS's published presigned example: signed 2013-05-24T00:00:00Z for 86400 s.
            (
                "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                    + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                    + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                    + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
                signed.addingTimeInterval(86_400)
            ),
            // Names are case-insensitive for SigV4 (some clients lowercase them).
            (
                "https://r2.example/b/k.jpg?x-amz-date=20130524T000000Z&x-amz-expires=600&x-amz-signature=ab",
                signed.addingTimeInterval(600)
            ),
            (
                "https://storage.googleapis.com/b/o.jpg?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Date=20130524T000000Z"
                    + "&X-Goog-Expires=3600&X-Goog-Signature=ab", signed.addingTimeInterval(3600)
            ),
            (
                "https://acct.blob.core.windows.net/c/a.jpg?sv=2022-11-02&se=2013-05-25T06%3A00%3A00Z&sr=b&sp=r&sig=ab",
                signed.addingTimeInterval(30 * 3600)
            ),
            ("https://acct.blob.core.windows.net/c/a.jpg?se=2013-05-26&sig=ab", signed.addingTimeInterval(2 * 86_400)),
            ("https://d111.cloudfront.net/a.jpg?Expires=1369353600&Signature=ab&Key-Pair-Id=K", signed),
            // pushprep serve --sign-attachments.
            ("https://push.example/v1/attachments/img-a.jpg?expires=1369353600&signature=ab", signed),
            (
                "https://bucket.s3.amazonaws.com/a.jpg?AWSAccessKeyId=AK&Expires=1369440000&Signature=ab",
                signed.addingTimeInterval(86_400)
            ),
        ] as [(String, Date)])
    func expiry(url: String, expected: Date) {
        #expect(SignedURLExpiry.expiry(of: url) == expected)
    }

    @Test(
        "no expiry from unsigned URLs or malformed signatures",
        arguments: [
            "https://cdn.example.com/a.jpg",
            "https://cdn.example.com/a.jpg?v=2",
            "https://cdn.example.com/a.jpg?Expires=1369353600",  // no Signature: not a signed URL
            "https://cdn.example.com/a.jpg?se=2013-05-25",  // no sig
            "https://b.s3.example/a.jpg?X-Amz-Date=20130524T000000Z",  // no X-Amz-Expires
            "https://b.s3.example/a.jpg?X-Amz-Date=20130230T000000Z&X-Amz-Expires=60",  // 30 February
            "https://b.s3.example/a.jpg?X-Amz-Date=2013-05-24T00:00:00Z&X-Amz-Expires=60",
            "https://b.s3.example/a.jpg?X-Amz-Date=20130524T246000Z&X-Amz-Expires=60",
            "https://b.s3.example/a.jpg?X-Amz-Date=20130524T000000Z&X-Amz-Expires=-5",
            "https://b.s3.example/a.jpg?X-Amz-Date=20130524T000000Z&X-Amz-Expires=99999999999999999999",
            "not a url at all %%%",
        ])
    func noExpiry(url: String) {
        #expect(SignedURLExpiry.expiry(of: url) == nil)
    }

    @Test("a URL expired, expiring within a day, or lasting longer")
    func concerns() throws {
        let url = "https://b.s3.example/a.jpg?X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-Signature=ab"
        let expires = Self.signed.addingTimeInterval(86_400)
        #expect(SignedURLExpiry.concern(about: url, now: expires) == .expired(expires))
        #expect(SignedURLExpiry.concern(about: url, now: expires.addingTimeInterval(1)) == .expired(expires))
        let soon = try #require(SignedURLExpiry.concern(about: url, now: expires.addingTimeInterval(-3 * 3600)))
        #expect(soon == .expiresSoon(expires, left: 3 * 3600))
        #expect(soon.message.contains("2013-05-25T00:00:00Z") && soon.message.contains("in 3 h"), "\(soon.message)")
        let minutes = SignedURLExpiry.concern(about: url, now: expires.addingTimeInterval(-600))
        #expect(minutes?.message.contains("in 10 min") == true, "\(String(describing: minutes))")
        // Signed at the check's time for a whole day: not a concern.
        #expect(SignedURLExpiry.concern(about: url, now: Self.signed) == nil)
        #expect(SignedURLExpiry.concern(about: "https://cdn.example.com/a.jpg", now: expires) == nil)
        #expect(SignedURLExpiry.Concern.expired(expires).message.contains("expired at 2013-05-25T00:00:00Z"))
    }
}
