import Foundation
import PushPrepCore
import Testing

@testable import PushPrepStorage

/// What PushPrep presigns, pre-flight and `payload` read back: the expiry a presigned URL carries
/// is the signing time plus the lifetime asked for.
struct PresignedExpiryTests {
    @Test("a URL presigned for N seconds is read back as expiring N seconds after its signing time")
    func roundTrip() throws {
        let signer = try SigV4Signer(credentials: SigV4SignerTests.exampleCredentials, region: "eu-west-3")
        let signedAt = Date(timeIntervalSince1970: 1_764_000_123)
        for lifetime in [1, 3600, 86_400, 604_800] {
            let url = try signer.presignedURL(
                method: "GET", url: URL(string: "https://bucket.s3.eu-west-3.amazonaws.com/push/img-1.jpg")!,
                expires: lifetime, date: signedAt)
            #expect(SignedURLExpiry.expiry(of: url.absoluteString) == signedAt.addingTimeInterval(Double(lifetime)))
        }
    }
}
