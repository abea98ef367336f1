import Foundation
public import PushPrepCore
import PushPrepJSON
import PushPrepMedia
import PushPrepPayload
import PushPrepRemote

/// One entry per fuzz target: untrusted bytes in, the code PushPrep runs on such bytes, a result
/// or a ``PushPrepError`` out. The libFuzzer executables in `Fuzz/` and the regression test that
/// replays `Tests/FuzzCorpus` call these same functions, so a crash the fuzzer finds is replayed
/// by `make test` through exactly the code that crashed.
///
/// Each entry also checks the invariants its code promises (a decoded bitmap has the size it
/// says, parsed JSON and valid settings survive being written and read back): a broken invariant
/// stops the process like a crash, which is how the fuzzer reports it.
@_spi(Fuzzing) public enum FuzzEntry {
    /// The fuzz targets, by the name of their executable (`fuzz-<name>`) and corpus folder.
    public static let targets = ["detect", "bmp", "json", "url", "settings", "demux"]

    /// Runs the target named `name` on `bytes`.
    public static func run(_ name: String, _ bytes: [UInt8]) throws(PushPrepError) {
        switch name {
        case "detect": try detect(bytes)
        case "bmp": try bmp(bytes)
        case "json": json(bytes)
        case "url": try url(bytes)
        case "settings": try settings(bytes)
        case "demux": try demux(bytes)
        default: preconditionFailure("no fuzz target \(name)")
        }
    }

    /// Type detection on a file's first bytes, as every input goes through it.
    public static func detect(_ bytes: [UInt8]) throws(PushPrepError) {
        let prefix = Array(bytes.prefix(MediaDetector.prefixLength))
        let type = MediaDetector.detect(bytes)
        precondition(type == MediaDetector.detect(prefix), "detection looked past its prefix")
        _ = MediaDetector.unsupportedFormatName(bytes)
        _ = try MediaDetector.require(prefix)
    }

    /// The BMP decoder: headers, then the full decode under a 4-megapixel limit (the fuzzer's
    /// memory, not the product's limit).
    public static func bmp(_ bytes: [UInt8]) throws(PushPrepError) {
        let header = try BMPDecoder.header(bytes)
        let bitmap = try BMPDecoder.decode(bytes, maxPixels: 4_000_000)
        precondition(bitmap.width == header.width && bitmap.height == header.height, "decode disagrees with header")
        precondition(bitmap.bands == (header.hasAlpha ? 4 : 3), "bands disagree with the header's alpha")
        precondition(bitmap.pixels.count == bitmap.width * bitmap.height * bitmap.bands, "pixel buffer size")
    }

    /// The JSON parser (a parsed value is written and read back unchanged), then the offline
    /// pre-flight check of the bytes as a push payload, as `pushprep preflight` runs it.
    public static func json(_ bytes: [UInt8]) {
        if let document = try? JSONValue.parse(bytes) {
            let text = document.value.serialized()
            let again = try? JSONValue.parse(Array(text.utf8))
            precondition(again?.value == document.value, "serialized JSON does not read back: \(text)")
        }
        let report = Preflight.check(bytes, file: "fuzz.json", options: PreflightOptions())
        _ = report.exitStatus(strict: true)
    }

    /// A remote source's URL: the first line is the URL, the optional second line a redirect's
    /// `Location`; the host is checked as `--allow-host` spells it and every address literal goes
    /// through the address policy, as the fetcher does before connecting.
    public static func url(_ bytes: [UInt8]) throws(PushPrepError) {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", maxSplits: 1)
        let text = lines.first.map(String.init) ?? ""
        _ = InputItem.looksLikeURL(text)
        _ = RemoteURL.asciiHost(text)
        _ = URLCredentials.redacted(text)
        _ = UntrustedText.escaped(text)
        _ = UntrustedText.logfmtValue(text)
        if let address = IPAddress(text) {
            _ = AddressPolicy().verdict(for: address)
            precondition(IPAddress(address.description) == address, "address does not read back: \(address)")
        }
        var url = try RemoteURL(text)
        if lines.count > 1 { url = try url.redirected(to: String(lines[1])) }
        // The canonical host reads back as itself: an IPv6 literal (kept without brackets) as the
        // address, anything else as a host name.
        let canonical = url.host.contains(":") ? RemoteURL.asciiHost("[\(url.host)]") : RemoteURL.asciiHost(url.host)
        precondition(canonical == url.host, "the canonical host is not canonical: \(url.host)")
        precondition(RemoteURL.requestHost(of: url.text) == url.host, "the request would go to another host")
        _ = url.pathExtension
        _ = url.origin
        if let address = url.literalAddress { _ = AddressPolicy().verdict(for: address) }
    }

    /// A queued job's settings, decoded and validated as the worker does; settings that pass
    /// are written as `enqueue` writes them and read back unchanged.
    public static func settings(_ bytes: [UInt8]) throws(PushPrepError) {
        let settings: ProcessingSettings
        do {
            settings = try JSONDecoder().decode(ProcessingSettings.self, from: Data(bytes))
        } catch {
            throw PushPrepError(.invalidSettings, "the job's settings: \(error)")
        }
        try settings.validate()
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(settings)
        } catch {
            preconditionFailure("valid settings do not encode: \(error)")
        }
        let again = try? JSONDecoder().decode(ProcessingSettings.self, from: encoded)
        precondition(again == settings, "valid settings do not read back: \(String(decoding: encoded, as: UTF8.self))")
    }

    /// The demuxer entry: see ``MediaInput/fuzzDemux(_:)``.
    public static func demux(_ bytes: [UInt8]) throws(PushPrepError) {
        try MediaInput.fuzzDemux(bytes)
    }
}
