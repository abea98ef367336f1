import Testing

@testable import PushPrepServer

/// The limiters' table of buckets stays bounded, and making room is paid once per half table.
@Suite struct TokenBucketsTests {
    @Test("a full table makes room for half a table of new keys at once, even when one bucket refills per new key")
    func evictionFreesHalf() {
        let start = ContinuousClock.now
        var buckets = TokenBuckets(capacity: 1, rate: 1, maxKeys: 10)
        // Ten spent buckets, a tenth of a second apart: from `start + 1 s` one refills every 0.1 s.
        for index in 0..<10 {
            buckets.set("old-\(index)", tokens: 0, now: start + .milliseconds(100 * index))
        }
        #expect(buckets.count == 10)
        // A new key as the first bucket has just refilled: dropping the refilled buckets alone
        // would free that one place, and the next new key would need another pass.
        buckets.set("new-0", tokens: 0, now: start + .milliseconds(1_050))
        #expect(buckets.count <= 6, "\(buckets.count) keys after making room")
        // The most recently updated spent buckets are kept; the oldest are forgotten (full again).
        #expect(buckets.tokens("old-9", now: start + .milliseconds(1_050)) < 1)
        #expect(buckets.tokens("old-1", now: start + .milliseconds(1_050)) == 1)
        // Four more new keys fit without another pass, and the table never grows past its bound.
        for index in 1..<200 {
            buckets.set("new-\(index)", tokens: 0, now: start + .milliseconds(1_050 + index))
            #expect(buckets.count <= 10)
        }
    }
}
