import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

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

    /// The worker fails such a job with the error's text, which names the key.
    @Test("a key of the wrong type is still an error")
    func wrongType() {
        let error = #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ProcessingSettings.self, from: Data(#"{"gifMaxMemory":"big"}"#.utf8))
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("gifMaxMemory"), "\(text)")
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

    /// Which kinds of output each setting changes, so which ids: a setting added without a
    /// decision here fails the test.
    static let changes: [String: Set<String>] = [
        "width": ["image", "animation"], "quality": ["image", "animation", "android", "web"],
        "imageMaxBytes": ["image", "animation"],
        "maxPixels": ["image", "video", "animation"], "maxInputBytes": ["image", "video", "audio", "animation"],
        "jobs": [], "baseURL": [], "videoStart": ["video"], "videoSeconds": ["video"],
        "videoWidth": ["video", "animation"], "videoMaxBytes": ["video", "animation"], "audioSeconds": ["audio"],
        "audioMaxBytes": ["audio"], "timeout": [], "gifAsVideo": ["animation"], "gifMaxMemory": ["image", "animation"],
        // Which renditions are made, not what any of them is.
        "platforms": [], "androidWidth": ["android"], "androidMaxBytes": ["android"], "webWidth": ["web"],
        "crop": ["android", "web"], "focus": ["android", "web"],
    ]

    /// Each setting alone changed from its default (through the JSON a queued job carries, so
    /// the others keep their defaults) changes exactly the fingerprints of the kinds it decides.
    @Test("each setting changes the ids of the outputs it decides, and only those")
    func fingerprints() throws {
        func fingerprints(_ settings: ProcessingSettings) -> [String: String] {
            [
                "image": settings.imageFingerprint, "video": settings.videoFingerprint,
                "audio": settings.audioFingerprint, "animation": settings.animationVideoFingerprint,
                // A rendition's own settings, after its source's (which the kinds above cover).
                "android": settings.renditionFingerprint(.android, source: ""),
                "web": settings.renditionFingerprint(.web, source: ""),
            ]
        }
        let base = fingerprints(ProcessingSettings())
        let changed = try #require(
            try JSONSerialization.jsonObject(with: try JSONEncoder().encode(SettingsFixtures.changed)) as? [String: Any]
        )
        #expect(Set(changed.keys) == Set(Self.changes.keys))
        for setting in ProcessingSettings.Declared.all {
            let value = try #require(changed[setting.key], "\(setting.key) is encoded")
            let one = try JSONSerialization.data(withJSONObject: [setting.key: value])
            let alone = fingerprints(try JSONDecoder().decode(ProcessingSettings.self, from: one))
            let kinds = Set(base.keys.filter { base[$0] != alone[$0] })
            #expect(kinds == Self.changes[setting.key], "\(setting.key) changes the ids of \(kinds.sorted())")
        }
    }

    /// The table is the one list of settings: a stored property missing from it would be left
    /// out of the JSON, the validation and the CLI.
    @Test("every stored setting is declared, once, under its property's name and its own CLI option")
    func everySettingIsDeclared() {
        let properties = Mirror(reflecting: ProcessingSettings()).children.compactMap(\.label)
        let declared = ProcessingSettings.Declared.all
        #expect(declared.map(\.key).sorted() == properties.sorted())
        #expect(Set(declared.map(\.option)).count == declared.count, "every option is its own")
        for setting in declared {
            #expect(
                "\(setting.value(in: SettingsFixtures.changed))" != "\(setting.value(in: ProcessingSettings()))",
                "the test settings change \(setting.key), or the CLI tests could not see it copied")
        }
    }

    /// The help shows what the validation accepts, in the words of its error.
    @Test func helpSaysWhatIsAccepted() throws {
        #expect(ProcessingSettings.Declared.quality.help == "JPEG quality to start from. Must be between 1 and 100.")
        #expect(
            ProcessingSettings.Declared.videoStart.help
                == "Where video previews start, in seconds. Must be in 0...86400 seconds.")
        #expect(
            ProcessingSettings.Declared.baseURL.help(summary: "Prefix.")
                == "Prefix. Must be an http(s) URL with a host and no fragment.")
        #expect(!ProcessingSettings.Declared.gifAsVideo.help.contains("Must be"), "its values are its type's")
    }

    @Test("validated settings are the settings; invalid ones throw instead")
    func validated() throws {
        #expect(try SettingsFixtures.changed.validated().settings == SettingsFixtures.changed)
        var settings = SettingsFixtures.changed
        settings.quality = 0
        let error = #expect(throws: PushPrepError.self) { try settings.validated() }
        #expect(error?.message == "--quality must be between 1 and 100, got 0")
    }

    /// Attachment ids are SHA-256 over these strings: a changed label, order or number format
    /// would give every output a new id (and orphan every published file). Written from the
    /// code before the settings were declared once.
    @Test("the fingerprint strings are frozen")
    func frozenFingerprints() {
        let base = ProcessingSettings()
        #expect(
            base.imageFingerprint
                == "pipeline=2;kind=image;width=1290;quality=82;imageMaxBytes=10000000;maxPixels=100000000;"
                + "maxInputBytes=200000000;gifMaxMemory=12000000")
        #expect(
            base.videoFingerprint
                == "pipeline=2;kind=video;start=0.0;seconds=15.0;width=720;videoMaxBytes=50000000;maxPixels=100000000;"
                + "maxInputBytes=200000000")
        #expect(
            base.audioFingerprint == "pipeline=2;kind=audio;seconds=30.0;audioMaxBytes=5000000;maxInputBytes=200000000")
        #expect(
            base.animationVideoFingerprint
                == "pipeline=2;kind=image;width=1290;quality=82;imageMaxBytes=10000000;maxPixels=100000000;"
                + "maxInputBytes=200000000;gifMaxMemory=12000000;asVideo=auto;videoWidth=720;videoMaxBytes=50000000")

        #expect(
            base.renditionFingerprint(.android, source: "S")
                == "S;pipeline=2;kind=rendition-android;width=1024;maxBytes=1048576;quality=82;crop=attention;focus=none"
        )
        #expect(
            base.renditionFingerprint(.webIcon, source: "S")
                == "S;pipeline=2;kind=rendition-webIcon;width=1350;quality=82;crop=attention;focus=none")

        let changed = SettingsFixtures.changed
        #expect(
            changed.renditionFingerprint(.android, source: "S")
                == "S;pipeline=2;kind=rendition-android;width=720;maxBytes=500000;quality=70;crop=centre;focus=0.25,0.75"
        )
        #expect(
            changed.imageFingerprint
                == "pipeline=2;kind=image;width=1179;quality=70;imageMaxBytes=2000000;maxPixels=50000000;"
                + "maxInputBytes=1000000;gifMaxMemory=6000000")
        #expect(
            changed.videoFingerprint
                == "pipeline=2;kind=video;start=2.5;seconds=10.0;width=640;videoMaxBytes=20000000;maxPixels=50000000;"
                + "maxInputBytes=1000000")
        #expect(
            changed.audioFingerprint
                == "pipeline=2;kind=audio;seconds=12.25;audioMaxBytes=1000000;maxInputBytes=1000000")
        #expect(
            changed.animationVideoFingerprint
                == "pipeline=2;kind=image;width=1179;quality=70;imageMaxBytes=2000000;maxPixels=50000000;"
                + "maxInputBytes=1000000;gifMaxMemory=6000000;asVideo=never;videoWidth=640;videoMaxBytes=20000000")
    }

    /// Manifests carry the settings and a job's dedup key hashes them (both with sorted keys,
    /// `baseURL` as an explicit null when unset): their JSON is frozen too.
    @Test("the settings' JSON is frozen")
    func frozenJSON() throws {
        var base = ProcessingSettings()
        base.jobs = 2
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(
            String(decoding: try encoder.encode(base), as: UTF8.self)
                == #"{"androidMaxBytes":1048576,"androidWidth":1024,"audioMaxBytes":5000000,"audioSeconds":30,"#
                + #""baseURL":null,"crop":"attention","focus":null,"gifAsVideo":"auto","#
                + #""gifMaxMemory":12000000,"imageMaxBytes":10000000,"jobs":2,"maxInputBytes":200000000,"#
                + #""maxPixels":100000000,"platforms":["ios","android"],"quality":82,"timeout":120,"#
                + #""videoMaxBytes":50000000,"videoSeconds":15,"videoStart":0,"videoWidth":720,"webWidth":1350,"#
                + #""width":1290}"#)
        #expect(
            String(decoding: try encoder.encode(SettingsFixtures.changed), as: UTF8.self)
                == #"{"androidMaxBytes":500000,"androidWidth":720,"audioMaxBytes":1000000,"audioSeconds":12.25,"#
                + #""baseURL":"https://cdn.example.com/push","crop":"centre","focus":"0.25,0.75","#
                + #""gifAsVideo":"never","gifMaxMemory":6000000,"imageMaxBytes":2000000,"jobs":13,"maxInputBytes":1000000,"#
                + #""maxPixels":50000000,"platforms":["ios","android","web"],"quality":70,"timeout":30,"#
                + #""videoMaxBytes":20000000,"videoSeconds":10,"videoStart":2.5,"videoWidth":640,"webWidth":1000,"#
                + #""width":1179}"#)
        let decoded = try JSONDecoder().decode(
            ProcessingSettings.self, from: try encoder.encode(SettingsFixtures.changed))
        #expect(decoded == SettingsFixtures.changed)
    }

    /// The messages name the CLI option, the accepted range and the value; the CLI prints them
    /// as usage errors and the worker as a job's `invalid_settings` message.
    @Test(
        "each out-of-range setting is refused with its message",
        arguments: [
            (#"{"width":15}"#, "--width must be between 16 and 16384, got 15"),
            (#"{"androidWidth":2049}"#, "--android-width must be between 600 and 2048, got 2049"),
            (
                #"{"androidMaxBytes":1048577}"#,
                "--android-max-bytes must be between 50000 and 1048576 (FCM's download cap), got 1048577"
            ),
            (
                #"{"platforms":["android"]}"#,
                "--platforms must be a list of ios, android and web that includes ios, got android"
            ),
            (#"{"quality":101}"#, "--quality must be between 1 and 100, got 101"),
            (
                #"{"imageMaxBytes":9999}"#,
                "--image-max-bytes must be between 10000 and 10000000 (Apple's limit), got 9999"
            ),
            (#"{"maxPixels":0}"#, "--max-pixels must be between 1 and 1000000000, got 0"),
            (#"{"maxInputBytes":0}"#, "--max-input-bytes must be between 1 and 10000000000, got 0"),
            (#"{"jobs":257}"#, "--jobs must be between 1 and 256, got 257"),
            (#"{"baseURL":"ftp://cdn"}"#, "--base-url must start with https:// (or http://), got ftp://cdn"),
            (#"{"videoStart":-0.5}"#, "--video-start must be in 0...86400 seconds, got -0.5"),
            (#"{"videoSeconds":0}"#, "--video-seconds must be in (0, 3600], got 0.0"),
            (#"{"videoWidth":3841}"#, "--video-width must be between 16 and 3840, got 3841"),
            (
                #"{"videoMaxBytes":99999}"#,
                "--video-max-bytes must be between 100000 and 50000000 (Apple's limit), got 99999"
            ),
            (#"{"audioSeconds":3600.5}"#, "--audio-seconds must be in (0, 3600], got 3600.5"),
            (
                #"{"audioMaxBytes":49999}"#,
                "--audio-max-bytes must be between 50000 and 5000000 (Apple's limit), got 49999"
            ),
            (#"{"timeout":1e300}"#, "--timeout must be in (0, 86400] seconds, got 1e+300"),
            (
                #"{"gifMaxMemory":999999}"#,
                "--gif-max-memory must be between 1000000 and 24000000 (the service extension's budget), got 999999"
            ),
        ])
    func outOfRangeMessages(_ json: String, _ message: String) throws {
        let settings = try JSONDecoder().decode(ProcessingSettings.self, from: Data(json.utf8))
        let error = #expect(throws: PushPrepError.self) { try settings.validate() }
        #expect(error?.code == .invalidSettings)
        #expect(error?.message == message)
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
