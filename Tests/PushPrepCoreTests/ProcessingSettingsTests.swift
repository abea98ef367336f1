import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrep

/// The settings as jobs and manifests carry them: encoding, decoding what earlier versions
/// wrote, validation, and which settings change the attachment ids.
@Suite struct ProcessingSettingsTests {
    @Test("settings survive a JSON round trip")
    func roundTrip() throws {
        var settings = ProcessingSettings()
        settings.width = 1179
        settings.gifAsVideo = .never
        settings.gifMaxMemory = 5_000_000
        settings.baseURL = "https://cdn.example.com/push"
        let decoded = try JSONDecoder().decode(ProcessingSettings.self, from: try JSONEncoder().encode(settings))
        #expect(decoded == settings)
    }

    @Test("a job queued by an earlier version, without the newer keys, keeps their defaults")
    func earlierPayload() throws {
        let earlier =
            #"{"width":1179,"quality":80,"imageMaxBytes":9000000,"maxPixels":1000,"maxInputBytes":5000,"jobs":3,"baseURL":null,"gifAsVideo":"never"}"#
        let decoded = try JSONDecoder().decode(ProcessingSettings.self, from: Data(earlier.utf8))
        #expect(decoded.width == 1179 && decoded.quality == 80 && decoded.jobs == 3 && decoded.baseURL == nil)
        #expect(decoded.gifAsVideo == .never)
        #expect(decoded.gifMaxMemory == ProcessingSettings().gifMaxMemory)
        #expect(decoded.videoWidth == ProcessingSettings().videoWidth)
    }

    @Test("a key of the wrong type is still an error")
    func wrongType() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ProcessingSettings.self, from: Data(#"{"gifMaxMemory":"big"}"#.utf8))
        }
    }

    /// Queued settings are JSON anyone could write: every number must be finite and bounded,
    /// or the job is refused before a conversion to a time stamp traps (a start of 1e13 s
    /// overflows FFmpeg's microsecond Int64).
    @Test(
        "settings with numbers out of range do not validate",
        arguments: [
            #"{"videoStart":1e13}"#, #"{"videoStart":86400.5}"#, #"{"videoStart":-1}"#, #"{"videoSeconds":1e300}"#,
            #"{"audioSeconds":0}"#, #"{"timeout":1e300}"#, #"{"maxPixels":1000000001}"#,
            #"{"maxInputBytes":9223372036854775807}"#, #"{"maxPixels":0}"#,
        ])
    func outOfRangeNumbersDoNotValidate(_ json: String) throws {
        let settings = try JSONDecoder().decode(ProcessingSettings.self, from: Data(json.utf8))
        let error = #expect(throws: PushPrepError.self) { try settings.validate() }
        #expect(error?.code == .invalidSettings)
    }

    @Test("non-finite numbers set in code do not validate")
    func nonFiniteNumbersDoNotValidate() {
        for value in [Double.infinity, -.infinity, .nan] {
            for keyPath in [\ProcessingSettings.videoStart, \.videoSeconds, \.audioSeconds, \.timeout] {
                var settings = ProcessingSettings()
                settings[keyPath: keyPath] = value
                #expect(throws: PushPrepError.self, "\(keyPath) = \(value)") { try settings.validate() }
            }
        }
        var edge = ProcessingSettings()
        edge.videoStart = ProcessingSettings.maxVideoStart
        #expect(throws: Never.self) { try edge.validate() }
    }

    @Test("the GIF memory budget is at most the extension's 24 MB", arguments: [999_999, 24_000_001])
    func gifMemoryRange(_ bytes: Int) {
        var settings = ProcessingSettings()
        settings.gifMaxMemory = bytes
        #expect(throws: PushPrepError.self) { try settings.validate() }
        settings.gifMaxMemory = AppleLimits.extensionMemoryBytes
        #expect(throws: Never.self) { try settings.validate() }
    }

    @Test("the GIF memory budget changes image ids; the base URL and jobs do not")
    func fingerprints() {
        let base = ProcessingSettings()
        var budget = base
        budget.gifMaxMemory = 6_000_000
        #expect(budget.imageFingerprint != base.imageFingerprint)
        var hosting = base
        hosting.baseURL = "https://cdn.example.com/push"
        hosting.jobs = base.jobs + 1
        #expect(hosting.imageFingerprint == base.imageFingerprint)
    }

    /// `--base-url` with a query was joined by concatenation (`https://cdn/x?sig=1/<id>.jpg`);
    /// now the file name joins the path and the query follows, and a poster's URL keeps it too.
    @Test func baseURLWithAQuery() throws {
        #expect(URLJoin.join("https://cdn/x?sig=1", "a.jpg") == "https://cdn/x/a.jpg?sig=1")
        #expect(URLJoin.join("https://cdn/x/?sig=1/2", "a.jpg") == "https://cdn/x/a.jpg?sig=1/2")
        #expect(URLJoin.join("https://cdn/x", "a.jpg") == "https://cdn/x/a.jpg")
        #expect(URLJoin.join("https://cdn", "a.jpg") == "https://cdn/a.jpg")
        #expect(URLJoin.sibling(of: "https://cdn/x/a.mp4?sig=1/2", named: "a.jpg") == "https://cdn/x/a.jpg?sig=1/2")
        #expect(URLJoin.sibling(of: "https://cdn/a.mp4", named: "a.jpg") == "https://cdn/a.jpg")
        #expect(URLJoin.sibling(of: "https://cdn", named: "a.jpg") == nil)
        #expect(URLJoin.sibling(of: "https://cdn/", named: "a.jpg") == nil)
        try ProcessingSettings.validate(baseURL: "https://cdn.example.com/push?sv=1&sig=abc")
        for bad in ["https://cdn.example.com/push#top", "https:///push", "https://", "cdn.example.com"] {
            #expect(throws: PushPrepError.self, "\(bad)") { try ProcessingSettings.validate(baseURL: bad) }
        }
    }
}
