import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrepCore
@testable import PushPrepRemote

/// Which URLs are fetched at all, and how a response's Content-Type is judged.
@Suite struct RemoteURLTests {
    @Test("http and https URLs parse with host, port and extension")
    func parses() throws {
        let url = try RemoteURL("https://CDN.example.com/a/b/Photo.JPG?x=1")
        #expect(url.scheme == "https" && url.host == "cdn.example.com" && url.port == 443)
        #expect(url.text == "https://cdn.example.com/a/b/Photo.JPG?x=1")
        #expect(url.pathExtension == "jpg")
        #expect(url.literalAddress == nil)
        let literal = try RemoteURL("http://[::ffff:127.0.0.1]:8080/x")
        #expect(literal.host == "::ffff:127.0.0.1" && literal.port == 8080)
        #expect(literal.literalAddress == IPAddress("::ffff:127.0.0.1"))
        #expect(try RemoteURL("http://example.com/noext").pathExtension == "")
        #expect(try RemoteURL("http://example.com/").pathExtension == "")
    }

    @Test(
        "a host has one ASCII spelling: checked, pinned and requested alike",
        arguments: [
            ("http://bücher.test/a.jpg", "xn--bcher-kva.test"),
            ("http://BÜCHER.test/a.jpg", "xn--bcher-kva.test"),
            ("http://xn--bcher-kva.test/a.jpg", "xn--bcher-kva.test"),
            ("http://XN--BCHER-KVA.TEST/a.jpg", "xn--bcher-kva.test"),
            ("http://ＥＸＡＭＰＬＥ.com/a.jpg", "example.com"),
            ("http://127.0.0.1:8080/a.jpg", "127.0.0.1"),
            ("http://[0:0:0:0:0:0:0:1]/a.jpg", "::1"),
        ])
    func canonicalHost(_ text: String, _ host: String) throws {
        let url = try RemoteURL(text)
        #expect(url.host == host)
        // async-http-client reads the host from the URL text: it must find the checked one.
        #expect(RemoteURL.requestHost(of: url.text) == host)
        #expect(try RemoteURL(url.text) == url)
    }

    @Test(
        "hosts that are neither a DNS name nor an IP literal are refused",
        arguments: ["http://b%C3%BCcher.test/a.jpg", "http://exa%6dple.com/a.jpg", "http://[fe80::1%25eth0]/a.jpg"])
    func refusesEncodedHosts(_ text: String) {
        #expect {
            _ = try RemoteURL(text)
        } throws: { error in
            (error as? PushPrepError)?.code == .fetchFailed
        }
    }

    @Test("--allow-host matches a host in either spelling")
    func allowHostSpellings() {
        var settings = RemoteSettings()
        settings.allowedHosts = ["bücher.test"]
        #expect(settings.isAllowedHost("xn--bcher-kva.test"))
        settings.allowedHosts = ["XN--BCHER-KVA.test."]
        #expect(settings.isAllowedHost("xn--bcher-kva.test"))
        #expect(!settings.isAllowedHost("bucher.test"))
    }

    @Test(
        "other schemes, credentials and host-less URLs are refused with fetch_failed",
        arguments: [
            "ftp://example.com/a.jpg", "file:///etc/passwd", "gopher://example.com/",
            "http://user:pass@example.com/a.jpg",
            "https://user@example.com/a.jpg", "http:///a.jpg", "http://example.com:0/a.jpg",
        ])
    func refuses(_ text: String) {
        #expect {
            _ = try RemoteURL(text)
        } throws: { error in
            (error as? PushPrepError)?.code == .fetchFailed
        }
    }

    @Test("credentials never appear in the error message")
    func redactsCredentials() {
        do {
            _ = try RemoteURL("http://alice:s3cret@example.com/a.jpg")
            Issue.record("a URL with credentials was accepted")
        } catch {
            #expect(!error.message.contains("s3cret") && !error.message.contains("alice"))
        }
    }

    @Test("redirect locations resolve against the current URL and are checked again")
    func redirects() throws {
        let base = try RemoteURL("http://127.0.0.1:8080/a/b.jpg")
        #expect(try base.redirected(to: "/c.jpg").text == "http://127.0.0.1:8080/c.jpg")
        #expect(try base.redirected(to: "d.jpg").text == "http://127.0.0.1:8080/a/d.jpg")
        #expect(try base.redirected(to: "http://169.254.169.254/x").host == "169.254.169.254")
        #expect(throws: PushPrepError.self) { try base.redirected(to: "file:///etc/passwd") }
    }

    @Test("URL-like inputs are remote sources; paths are not")
    func remoteInputs() {
        #expect(InputItem(source: "http://example.com/a.jpg", path: "http://example.com/a.jpg").isRemote)
        #expect(InputItem(source: "ftp://example.com/a.jpg", path: "ftp://example.com/a.jpg").isRemote)
        #expect(!InputItem(source: "photos/a.jpg", path: "photos/a.jpg").isRemote)
        #expect(!InputItem(source: "a:b.jpg", path: "a:b.jpg").isRemote)
        #expect(
            InputExpander.expand(["https://example.com/x", "-"], readStandardInput: { ["http://example.com/y"] })
                == [
                    InputItem(source: "https://example.com/x", path: "https://example.com/x"),
                    InputItem(source: "http://example.com/y", path: "http://example.com/y"),
                ])
    }

    @Test("a Content-Type that disagrees with the bytes is a warning; generic and matching ones are not")
    func contentType() throws {
        #expect(ContentTypeCheck.mismatch(contentType: "image/jpeg", detected: .jpeg) == nil)
        #expect(ContentTypeCheck.mismatch(contentType: "Image/JPG; charset=binary", detected: .jpeg) == nil)
        #expect(ContentTypeCheck.mismatch(contentType: "application/octet-stream", detected: .png) == nil)
        #expect(ContentTypeCheck.mismatch(contentType: nil, detected: .png) == nil)
        let mismatch = try #require(ContentTypeCheck.mismatch(contentType: "Image/PNG; x=1", detected: .jpeg))
        #expect(mismatch.contentType == "image/png" && mismatch.detected == .jpeg)
        #expect(mismatch.description == "the Content-Type image/png does not match the content, which is jpeg")
        #expect(mismatch.processingWarning.message == mismatch.description + "; processed as jpeg")
        #expect(ContentTypeCheck.mismatch(contentType: "text/html", detected: .gif) != nil)
    }

    /// Found by fuzzing: Foundation's NSString.pathExtension traps on a path with `//` and then
    /// a non-ASCII character (as do lastPathComponent and deletingLastPathComponent), and a URL
    /// (or a queued job's local path) reached it.
    @Test func extensionOfHostilePaths() throws {
        let url = try RemoteURL("http://[::ff]/HTT44442222c://\u{FFFD}")
        #expect(url.pathExtension == "")
        #expect(ExtensionCheck.warnings(path: "/uploads//\u{e9}", detected: .jpeg).isEmpty)
        #expect(ExtensionCheck.warnings(path: "/uploads//\u{e9}t\u{e9}.png", detected: .jpeg).count == 1)
        #expect(PathName.lowercasedExtension(of: "/a//b/photo.JPG") == "jpg")
        #expect(PathName.lowercasedExtension(of: "/a/.hidden") == "")
        #expect(PathName.lowercasedExtension(of: "/a/b.d/") == "d")
        #expect(PathName.lowercasedExtension(of: "") == "")
        #expect(PathName.directoryAndName(of: "/HTT44442222c://\u{FFFD}") == ("/HTT44442222c:/", "\u{FFFD}"))
        #expect(PathName.directoryAndName(of: "out/a.jpg") == ("out", "a.jpg"))
        #expect(PathName.directoryAndName(of: "/a.jpg") == ("/", "a.jpg"))
        #expect(PathName.directoryAndName(of: "a.jpg") == (".", "a.jpg"))

        // An output named the same way is written where it was asked for.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushprep-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try AtomicFile.write([1, 2, 3], to: "\(directory)//\u{e9}")
        #expect(FileManager.default.contents(atPath: "\(directory)/\u{e9}") == Data([1, 2, 3]))
    }
}
