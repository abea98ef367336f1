import Foundation
import PushPrepCore
import PushPrepStorage
import Testing

/// `--store` values: what parses to what, what is refused and why, keys, and object URLs in
/// both addressing styles.
@Suite struct StoreLocationTests {
    /// Good values and the location each is.
    static let good: [(String, StoreLocation)] = {
        func s3(
            _ bucket: String, _ prefix: String = "", region: String? = nil, endpoint: String? = nil,
            pathStyle: Bool? = nil
        ) -> StoreLocation {
            // The table's own values are valid; a mistake in it fails the test that reads it.
            guard
                let location = try? S3Location(
                    bucket: bucket, prefix: prefix, region: region, endpoint: endpoint, pathStyle: pathStyle)
            else { return .directory("invalid table entry for \(bucket)") }
            return .s3(location)
        }
        return [
            ("file:out", .directory("out")),
            ("file:./out/", .directory("./out/")),
            ("file:/srv/push", .directory("/srv/push")),
            ("FILE:out", .directory("out")),
            ("file:a%20b", .directory("a%20b")),
            ("file:///srv/push%20files", .directory("/srv/push files")),
            ("file://localhost/srv/push", .directory("/srv/push")),
            ("s3://bucket-1", s3("bucket-1")),
            ("s3://bucket-1/", s3("bucket-1")),
            ("S3://bucket-1/push", s3("bucket-1", "push/")),
            ("s3://my.bucket/push/", s3("my.bucket", "push/")),
            ("s3://b12//a//b//", s3("b12", "a/b/")),
            ("s3://b12/caf%C3%A9/x%3Fy%23z", s3("b12", "café/x?y#z/")),
            ("s3://b12/p?region=eu-west-3", s3("b12", "p/", region: "eu-west-3")),
            (
                "s3://b12/p?endpoint=https://minio.example:9000&path-style=true",
                s3("b12", "p/", endpoint: "https://minio.example:9000", pathStyle: true)
            ),
            (
                "s3://b12/p?endpoint=https%3A%2F%2FR2.Example.COM%2F",
                s3("b12", "p/", endpoint: "https://r2.example.com")
            ),
            ("s3://b12?path-style=false&region=auto", s3("b12", region: "auto", pathStyle: false)),
            ("s3://b12/p?endpoint=http://127.0.0.1:5000&", s3("b12", "p/", endpoint: "http://127.0.0.1:5000")),
            ("s3://b12/p?endpoint=http://[::1]:9000", s3("b12", "p/", endpoint: "http://[::1]:9000")),
        ]
    }()

    @Test("good --store values parse to the location they name", arguments: good)
    func parses(text: String, expected: StoreLocation) throws {
        #expect(try StoreLocation(parsing: text) == expected)
    }

    @Test("an s3:// location's description parses back to the same location", arguments: good)
    func roundTrips(text: String, expected: StoreLocation) throws {
        let location = try StoreLocation(parsing: text)
        #expect(try StoreLocation(parsing: location.description) == location, "\(location)")
    }

    @Test("a directory's description parses back to it, also one starting with //")
    func directoryRoundTrips() throws {
        for path in ["out", "/srv/push", "a%20b", "//srv/a%20b?x#y", "//"] {
            let location = StoreLocation.directory(path)
            #expect(try StoreLocation(parsing: location.description) == location, "\(location)")
        }
    }

    @Test("the endpoint is normalized to scheme://host[:port]")
    func endpointNormalized() throws {
        let location = try S3Location(bucket: "b12", endpoint: "HTTPS://MinIO.Example:9000/")
        #expect(location.endpoint?.absoluteString == "https://minio.example:9000")
        #expect(try S3Location(bucket: "b12", endpoint: "http://h:80").endpoint?.absoluteString == "http://h:80")
    }

    /// Bad values and a piece of the message each must give.
    static let bad: [(String, String)] = [
        ("out", "not a path"),
        ("/srv/push", "not a path"),
        ("http://example.com/push", "not a \"http\" URL"),
        ("s3:bucket", "two slashes"),
        ("s3://", "names no bucket"),
        ("s3:///push", "names no bucket"),
        ("s3://ab", "3 to 63 characters"),
        ("s3://" + String(repeating: "a", count: 64), "3 to 63 characters"),
        ("s3://My-Bucket", "lowercase letters, digits"),
        ("s3://my_bucket", "lowercase letters, digits"),
        ("s3://bucket:9000/p", "lowercase letters, digits"),
        ("s3://user@bucket/p", "carries user:password@: a store URL takes no credentials"),
        ("s3://-bucket", "start and end"),
        ("s3://bucket-", "start and end"),
        ("s3://bucket.", "start and end"),
        ("s3://my..bucket", "two dots in a row"),
        ("s3://192.168.5.4", "IP address"),
        ("s3://xn--bucket", "reserved by AWS"),
        ("s3://bucket--ol-s3", "reserved by AWS"),
        ("s3://b12/a/../b", ". or .. segments"),
        ("s3://b12/./b", ". or .. segments"),
        ("s3://b12/%2E%2E/b", ". or .. segments"),
        ("s3://b12/..", ". or .. segments"),
        ("s3://b12/a%0Ab", "control character"),
        ("s3://b12/a%zz", "bad %-escape"),
        ("s3://b12/p#part", "no fragment"),
        ("s3://b12/p?regoin=us-east-1", "unknown parameter \"regoin\" (known: region, endpoint, path-style)"),
        ("s3://b12/p?Region=us-east-1", "unknown parameter \"Region\""),
        ("s3://b12/p?region=us-east-1&region=eu-west-1", "region= twice"),
        ("s3://b12/p?region=", "region= is empty"),
        ("s3://b12/p?region", "region= is empty"),
        ("s3://b12/p?region=US-EAST-1", "not a region name"),
        ("s3://b12/p?region=us/east", "not a region name"),
        ("s3://b12/p?path-style=yes", "true or false, not \"yes\""),
        ("s3://b12/p?endpoint=ftp://h", "must be an http:// or https:// URL"),
        ("s3://b12/p?endpoint=h:9000", "must be an http:// or https:// URL"),
        ("s3://b12/p?endpoint=https://", "has no host"),
        ("s3://b12/p?endpoint=https://h/path", "without a path, query or fragment"),
        ("s3://b12/p?endpoint=https://h?x=1", "without a path, query or fragment"),
        ("s3://b12/p?endpoint=https://h:70000", "port outside 1 to 65535"),
        ("s3://b12/p?endpoint=https://AKIDKEY:s3cr3t@h", "it may hold credentials"),
        ("file:", "output directory is empty"),
        ("file://", "output directory is empty"),
        ("file://server/share", "names the host \"server\""),
        ("file:///a?b", "no query or fragment"),
        ("file:///a%zz", "bad %-escape"),
        ("file:///a%00b", "NUL byte"),
    ]

    @Test("bad --store values are invalid_settings naming what is wrong", arguments: bad)
    func refuses(text: String, expected: String) {
        #expect {
            try StoreLocation(parsing: text)
        } throws: { error in
            guard let error = error as? PushPrepError else { return false }
            return error.code == .invalidSettings && error.message.contains(expected)
        }
    }

    @Test("no message quotes an endpoint's password")
    func passwordNotQuoted() {
        for text in ["s3://b12/p?endpoint=https://AKIDKEY:s3cr3t@h", "s3://b12/p?endpoint=ftp://u:s3cr3t@h/x"] {
            do {
                _ = try StoreLocation(parsing: text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(!error.message.contains("s3cr3t"), "\(error)")
            }
        }
        do {
            _ = try StoreLocation(parsing: "https://AKIDKEY:s3cr3t@bucket.example/p")
            Issue.record("an https store was accepted")
        } catch {
            #expect(!error.message.contains("s3cr3t"), "\(error)")
        }
    }

    @Test("--out DIR is file:DIR")
    func outIsFile() throws {
        #expect(try StoreLocation.directory(checking: "pushprep-out") == StoreLocation(parsing: "file:pushprep-out"))
        #expect(throws: PushPrepError.self) { try StoreLocation.directory(checking: "") }
    }

    // MARK: - Keys

    @Test("an attachment's key is the prefix and its file name; its poster's sits beside it")
    func keys() throws {
        let location = try S3Location(bucket: "media-bucket", prefix: "/push/2026/")
        #expect(location.prefix == "push/2026/")
        #expect(try location.key(forFile: "3f9a.mp4") == "push/2026/3f9a.mp4")
        #expect(try location.key(forFile: "3f9a-poster.jpg") == "push/2026/3f9a-poster.jpg")
        #expect(try S3Location(bucket: "media-bucket").key(forFile: "3f9a.jpg") == "3f9a.jpg")
        for name in ["", ".", "..", "a/b.jpg", "/a.jpg", "a\nb.jpg"] {
            #expect(throws: PushPrepError.self, "\(String(reflecting: name))") {
                try location.key(forFile: name)
            }
        }
    }

    // MARK: - Object URLs

    static let awsParis = URL(string: "https://s3.eu-west-3.amazonaws.com")

    @Test("object URLs in both addressing styles, the key percent-encoded as S3 encodes it")
    func objectURLs() throws {
        let endpoint = try #require(Self.awsParis)
        let key = "push/a b+c/é~_-.jpg"
        let virtual = try S3BucketAddress(bucket: "media-bucket", endpoint: endpoint, pathStyle: nil)
        #expect(!virtual.pathStyle)
        #expect(
            virtual.objectURL(key: key).absoluteString
                == "https://media-bucket.s3.eu-west-3.amazonaws.com/push/a%20b%2Bc/%C3%A9~_-.jpg")
        #expect(virtual.bucketURL.absoluteString == "https://media-bucket.s3.eu-west-3.amazonaws.com/")
        let path = try S3BucketAddress(bucket: "media-bucket", endpoint: endpoint, pathStyle: true)
        #expect(
            path.objectURL(key: key).absoluteString
                == "https://s3.eu-west-3.amazonaws.com/media-bucket/push/a%20b%2Bc/%C3%A9~_-.jpg")
        #expect(path.bucketURL.absoluteString == "https://s3.eu-west-3.amazonaws.com/media-bucket/")
        #expect(S3BucketAddress.encodedKey("a%2F?#&=;:@!*'()[]") == "a%252F%3F%23%26%3D%3B%3A%40%21%2A%27%28%29%5B%5D")
        #expect(try S3BucketAddress.awsEndpoint(region: "eu-west-3") == endpoint)
    }

    @Test("the signer signs an object URL's path as written: no second encoding, nothing decoded")
    func objectURLMatchesSignedPath() throws {
        let endpoint = try #require(URL(string: "http://127.0.0.1:9000"))
        let address = try S3BucketAddress(bucket: "media-bucket", endpoint: endpoint, pathStyle: nil)
        let signer = try SigV4Signer(
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1")
        for key in ["push/a b+c/é~.jpg", "odd/%41%zz/$&'()*,;=:@.png", "p/[x]{y}|\\^`\".gif"] {
            let url = address.objectURL(key: key)
            let request = try signer.headerCanonicalRequest(
                method: "GET", url: url, headers: [], payloadHash: SigV4Signer.unsignedPayload, date: Date())
            #expect(request.uri == "/media-bucket/" + S3BucketAddress.encodedKey(key), "\(key)")
            #expect(URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath == request.uri)
        }
    }

    /// Endpoint, bucket, path style asked for, path style used (nil: refused).
    static let styles: [(String, String, Bool?, Bool?)] = [
        ("https://s3.eu-west-3.amazonaws.com", "media-bucket", nil, false),
        ("https://s3.eu-west-3.amazonaws.com", "media.example.com", nil, true),
        ("http://minio.internal:9000", "media.example.com", nil, false),
        ("https://minio.example:9000", "media-bucket", true, true),
        ("http://127.0.0.1:9000", "media-bucket", nil, true),
        ("http://localhost:9000", "media-bucket", nil, true),
        ("http://minio.localhost:9000", "media-bucket", nil, true),
        ("http://[::1]:9000", "media-bucket", nil, true),
        ("http://127.0.0.1:9000", "media-bucket", false, nil),
        ("http://localhost", "media-bucket", false, nil),
        ("http://[::1]:9000", "media-bucket", true, true),
    ]

    @Test("path style by default only for IP and localhost endpoints and dotted buckets over HTTPS", arguments: styles)
    func addressingStyle(endpoint: String, bucket: String, asked: Bool?, used: Bool?) throws {
        let url = try #require(URL(string: endpoint))
        if let used {
            let address = try S3BucketAddress(bucket: bucket, endpoint: url, pathStyle: asked)
            #expect(address.pathStyle == used)
            let expected =
                used
                ? "\(endpoint)/\(bucket)/k.jpg"
                : endpoint.replacingOccurrences(of: "://", with: "://\(bucket).") + "/k.jpg"
            #expect(address.objectURL(key: "k.jpg").absoluteString == expected)
        } else {
            #expect {
                try S3BucketAddress(bucket: bucket, endpoint: url, pathStyle: asked)
            } throws: { error in
                (error as? PushPrepError)?.message.contains("path-style=false cannot reach") == true
            }
        }
    }
}
