import Testing

@testable import PushPrepCore

/// ``ByteCountText``: the sizes `--memory-limit` accepts, as people and Kubernetes write them.
@Suite struct ByteCountTextTests {
    static let any = 1...Int.max

    @Test(
        "decimal and binary units, with or without B, any case",
        arguments: [
            ("500MB", 500_000_000), ("500mb", 500_000_000), ("500M", 500_000_000), ("2GiB", 2_147_483_648),
            ("2Gi", 2_147_483_648), ("512Mi", 536_870_912), ("512MiB", 536_870_912), ("1.5GB", 1_500_000_000),
            ("0.5GiB", 536_870_912), ("300000000", 300_000_000), ("300000000B", 300_000_000), ("64kB", 64_000),
            ("64KiB", 65_536), (" 1 TB ", 1_000_000_000_000), ("1Ti", 1_099_511_627_776),
        ])
    func parses(_ text: String, _ bytes: Int) throws {
        #expect(try ByteCountText.bytes(parsing: text, option: "--memory-limit", in: Self.any) == bytes)
    }

    @Test(
        "anything else is invalid_settings naming the option",
        arguments: ["", "MB", "-5MB", "5 XB", "1e9", "1.2.3GB", ".5GB", "5.GB", "12345678901234567", "0x10", "5MBB"])
    func refuses(_ text: String) {
        #expect {
            try ByteCountText.bytes(parsing: text, option: "--memory-limit", in: Self.any)
        } throws: { error in
            let error = error as? PushPrepError
            return error?.code == .invalidSettings && error?.message.contains("--memory-limit") == true
        }
    }

    @Test("sizes in words: the unit they are a whole number of, else decimal")
    func describe() {
        #expect(ByteCountText.describe(16 << 20) == "16 MiB")
        #expect(ByteCountText.describe(500_000_000) == "500 MB")
        #expect(ByteCountText.describe(2 << 30) == "2 GiB")
        #expect(ByteCountText.describe(12_638_255_104) == "12.6 GB")
        #expect(ByteCountText.describe(512) == "512 bytes")
    }

    @Test("a size out of the range is refused with the range in words")
    func range() {
        #expect {
            try ByteCountText.bytes(parsing: "1MB", option: "--memory-limit", in: 16_777_216...Int.max)
        } throws: { error in
            (error as? PushPrepError)?.message.contains("must be at least 16 MiB, not 1MB") == true
        }
        #expect(throws: PushPrepError.self) {
            try ByteCountText.bytes(parsing: "99999999999999TiB", option: "--memory-limit", in: Self.any)
        }
    }
}
