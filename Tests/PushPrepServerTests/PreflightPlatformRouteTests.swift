import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushPrepCore
import PushPrepRemote
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// `POST /v1/preflight` checks the Android image as `pushprep preflight` does, with the same
/// `assume_bandwidth` setting, against the API running in this process and a real file server
/// on 127.0.0.1 (a host no phone reaches: every answer also has its `unreachable_url`).
@Suite(
    .serialized, .enabled(if: TestTools.programAvailable("vips"), "needs the vips program"),
    .timeLimit(.minutes(2)))
struct PreflightPlatformRouteTests {
    /// An FCM message whose Android image is `url`.
    static func payload(_ url: String) -> String {
        #"{"message":{"token":"t","notification":{"title":"T","body":"B"},"android":{"notification":{"image":"\#(url)"}}}}"#
    }

    /// The codes the answer's report has at the Android image.
    static func androidCodes(_ response: TestResponse) throws -> [String] {
        let report = try #require((try HostileRequestTests.json(response)["reports"] as? [[String: Any]])?.first)
        return (report["findings"] as? [[String: Any]] ?? []).filter {
            $0["pointer"] as? String == "/message/android/notification/image"
        }.compactMap { $0["code"] as? String }.sorted()
    }

    @Test func assumeBandwidth() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let path = dir.appendingPathComponent("wide.jpg").path
        try TestTools.vips("gaussnoise", path, "400", "200")
        // A 2:1 JPEG padded to 700,000 bytes: 5.6 s at 1 Mbit/s, over FCM's 5 s.
        let jpeg = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let files = ["wide.jpg": jpeg + [UInt8](repeating: 0, count: 700_000 - jpeg.count)]
        try await TestServer.with(files: files) { host in
            let payload = Self.payload(host.url("/files/wide.jpg"))
            try await HostileRequestTests.withRouter({ $0.remote.allowedHosts = ["127.0.0.1"] }) { client, _ in
                func preflight(_ extra: String) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/v1/preflight", method: .post, headers: [.contentType: "application/json"],
                        body: ByteBuffer(
                            string: #"{"payload": \#(payload), "fetch": true, "allow_http": true\#(extra)}"#))
                }
                let slow = try await preflight("")
                #expect(slow.status == .ok)
                #expect(
                    try Self.androidCodes(slow) == ["android_image_insecure", "android_image_slow", "unreachable_url"])
                for fast in [#", "assume_bandwidth": "10mbit""#, #", "assume_bandwidth": 10000000"#] {
                    let answer = try await preflight(fast)
                    #expect(answer.status == .ok, "\(fast)")
                    #expect(try Self.androidCodes(answer) == ["android_image_insecure", "unreachable_url"], "\(fast)")
                }
                let slower = try await preflight(#", "assume_bandwidth": "500kbit""#)
                #expect(
                    try Self.androidCodes(slower) == [
                        "android_image_insecure", "android_image_slow", "unreachable_url",
                    ])
                for bad in [#""fast""#, "0", #""20gbit""#, "true"] {
                    let refused = try await preflight(#", "assume_bandwidth": \#(bad)"#)
                    #expect(refused.status == .unprocessableContent, "\(bad)")
                    let problem = try HostileRequestTests.json(refused)
                    #expect(problem["code"] as? String == "invalid_settings", "\(bad): \(problem)")
                    #expect((problem["detail"] as? String)?.contains("assume_bandwidth") == true, "\(problem)")
                }
            }
        }
    }
}
