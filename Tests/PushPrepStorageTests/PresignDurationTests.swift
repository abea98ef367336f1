import PushPrepCore
import PushPrepStorage
import Testing

/// `--presign`'s durations: the forms an operator writes, and AWS's 7-day limit.
struct PresignDurationTests {
    @Test(
        "durations with and without a unit",
        arguments: [
            ("7d", 604_800), ("24h", 86_400), ("90m", 5_400), ("3600s", 3_600), ("3600", 3_600), ("1", 1),
            (" 2D ", 172_800),
        ])
    func accepted(_ text: String, _ seconds: Int) throws {
        #expect(try ObjectURLStyle.presignSeconds(parsing: text) == seconds)
    }

    @Test(
        "more than 7 days, nothing, a negative, an unknown unit or a fraction is invalid_settings",
        arguments: ["8d", "604801", "169h", "0", "0s", "", "d", "-1h", "1w", "1.5h", "١٢s", "99999999999999d"])
    func refused(_ text: String) {
        #expect {
            try ObjectURLStyle.presignSeconds(parsing: text)
        } throws: { error in
            (error as? PushPrepError)?.code == .invalidSettings
        }
    }
}
