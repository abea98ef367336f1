import PushPrepCore
import Testing

/// The storage codes' place among the others: what the queue retries, what the CLI and the
/// manifest can name.
@Suite("Storage error codes")
struct StorageErrorCodeTests {
    @Test("storage_denied is permanent (a queued job fails at once); storage_unavailable is retried")
    func retryRules() {
        #expect(PushPrepError.Code.storageDenied.isPermanent)
        #expect(!PushPrepError.Code.storageUnavailable.isPermanent)
    }

    @Test("both codes are listed and read back from their raw values")
    func listed() {
        for (code, raw) in [
            (PushPrepError.Code.storageDenied, "storage_denied"), (.storageUnavailable, "storage_unavailable"),
        ] {
            #expect(code.rawValue == raw)
            #expect(PushPrepError.Code(rawValue: raw) == code)
            #expect(PushPrepError.Code.all.contains(code))
        }
    }
}
