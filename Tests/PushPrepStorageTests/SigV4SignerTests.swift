import Foundation
import PushPrepCore
import PushPrepStorage
import Testing

/// The signer against AWS's published examples (inputs and expected values as the S3 and IAM
/// documentation prints them), then the S3 rules one by one.
@Suite struct SigV4SignerTests {
    /// The example key of every S3 SigV4 example.
    static let exampleCredentials = AWSCredentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    /// 2013-05-24T00:00:00Z, the examples' signing time.
    static let exampleDate = Date(timeIntervalSince1970: 1_369_353_600)
    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    static func exampleSigner() throws -> SigV4Signer {
        try SigV4Signer(credentials: exampleCredentials, region: "us-east-1")
    }

    /// One of the S3 "Signature Calculations for the Authorization Header" examples.
    struct HeaderExample: Sendable, CustomTestStringConvertible {
        let name: String
        let method: String
        let url: String
        let headers: [String]  // "Name: value"
        let payloadHash: String
        let canonicalRequest: String
        let stringToSign: String
        let authorization: String

        var testDescription: String { name }
    }

    static let headerExamples: [HeaderExample] = [
        HeaderExample(
            name: "GET Object (Range)", method: "GET", url: "https://examplebucket.s3.amazonaws.com/test.txt",
            headers: ["Range: bytes=0-9"], payloadHash: emptySHA256,
            canonicalRequest: """
                GET
                /test.txt

                host:examplebucket.s3.amazonaws.com
                range:bytes=0-9
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;range;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            stringToSign: """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
                """,
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"),
        HeaderExample(
            name: "PUT Object (test$file.text)", method: "PUT",
            url: "https://examplebucket.s3.amazonaws.com/test$file.text",
            headers: ["Date: Fri, 24 May 2013 00:00:00 GMT", "x-amz-storage-class: REDUCED_REDUNDANCY"],
            // SHA-256 of the body "Welcome to Amazon S3."
            payloadHash: "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
            canonicalRequest: """
                PUT
                /test%24file.text

                date:Fri, 24 May 2013 00:00:00 GMT
                host:examplebucket.s3.amazonaws.com
                x-amz-content-sha256:44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072
                x-amz-date:20130524T000000Z
                x-amz-storage-class:REDUCED_REDUNDANCY

                date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class
                44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072
                """,
            stringToSign: """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d
                """,
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
                + "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"),
        HeaderExample(
            name: "GET Bucket Lifecycle", method: "GET", url: "https://examplebucket.s3.amazonaws.com/?lifecycle",
            headers: [], payloadHash: emptySHA256,
            canonicalRequest: """
                GET
                /
                lifecycle=
                host:examplebucket.s3.amazonaws.com
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            stringToSign: """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca
                """,
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
                + "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"),
        HeaderExample(
            name: "GET Bucket (List Objects)", method: "GET",
            url: "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J", headers: [], payloadHash: emptySHA256,
            canonicalRequest: """
                GET
                /
                max-keys=2&prefix=J
                host:examplebucket.s3.amazonaws.com
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            stringToSign: """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7
                """,
            authorization:
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
                + "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
    ]

    static func pairs(_ headers: [String]) -> [(name: String, value: String)] {
        headers.map { line in
            let name = line.prefix { $0 != ":" }
            return (String(name), String(line.dropFirst(name.count + 1).drop { $0 == " " }))
        }
    }

    static func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    // MARK: - AWS's published examples

    @Test("AWS's S3 header-form examples: canonical request, string to sign, Authorization", arguments: headerExamples)
    func awsHeaderExample(_ example: HeaderExample) throws {
        let signer = try Self.exampleSigner()
        let url = try Self.url(example.url)
        let headers = Self.pairs(example.headers)
        let request = try signer.headerCanonicalRequest(
            method: example.method, url: url, headers: headers, payloadHash: example.payloadHash, date: Self.exampleDate
        )
        #expect(request.text == example.canonicalRequest)
        #expect(try signer.stringToSign(canonicalRequest: request.text, date: Self.exampleDate) == example.stringToSign)

        let added = try signer.authorizationHeaders(
            method: example.method, url: url, headers: headers, payloadHash: example.payloadHash, date: Self.exampleDate
        )
        #expect(added.map(\.name) == ["Authorization", "x-amz-date", "x-amz-content-sha256"])
        #expect(added.map(\.value) == [example.authorization, "20130524T000000Z", example.payloadHash])
    }

    @Test("AWS's S3 presigned-URL example (GET /test.txt for 86400 s)")
    func awsPresignExample() throws {
        let signer = try Self.exampleSigner()
        let url = try Self.url("https://examplebucket.s3.amazonaws.com/test.txt")
        let presign = try signer.presignCanonicalRequest(
            method: "GET", url: url, expires: 86400, date: Self.exampleDate)
        #expect(
            presign.request.text == """
                GET
                /test.txt
                X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host
                host:examplebucket.s3.amazonaws.com

                host
                UNSIGNED-PAYLOAD
                """)
        let stringToSign = try signer.stringToSign(canonicalRequest: presign.request.text, date: Self.exampleDate)
        #expect(
            stringToSign == """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04
                """)
        let signature = "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
        #expect(try signer.signature(stringToSign: stringToSign, date: Self.exampleDate) == signature)
        let presigned = try signer.presignedURL(method: "GET", url: url, expires: 86400, date: Self.exampleDate)
        #expect(
            presigned.absoluteString
                == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=\(signature)")
    }

    /// IAM's "Examples of how to derive a signing key" (a different secret: `+` where S3's has `/`).
    @Test("AWS's signing-key derivation example (IAM, 20120215, us-east-1)")
    func awsSigningKeyExample() throws {
        let signer = try SigV4Signer(
            credentials: AWSCredentials(
                accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1", service: "iam")
        let key = try signer.signingKey(date: Date(timeIntervalSince1970: 1_329_264_000 + 86_399))
        #expect(
            key.map { String(format: "%02x", $0) }.joined()
                == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d")
    }

    // MARK: - Dates

    @Test(
        "the signing time is written yyyyMMdd'T'HHmmss'Z' in UTC, from whole seconds",
        arguments: [
            (0.0, "19700101T000000Z"), (1_369_353_600, "20130524T000000Z"), (1_709_251_199.999, "20240229T235959Z"),
            (951_782_400, "20000229T000000Z"), (951_868_800, "20000301T000000Z"), (-1, "19691231T235959Z"),
            (-62_135_596_800, "00010101T000000Z"), (253_402_300_799, "99991231T235959Z"),
        ])
    func amzDate(_ seconds: Double, _ expected: String) throws {
        #expect(try SigV4Signer.amzDate(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test("a time outside the years 1 to 9999 is refused")
    func amzDateOutOfRange() {
        for seconds in [-62_135_596_801.0, 253_402_300_800, .infinity] {
            #expect(throws: PushPrepError.self) { try SigV4Signer.amzDate(Date(timeIntervalSince1970: seconds)) }
        }
    }

    // MARK: - S3's canonical form

    func canonical(
        _ url: String, method: String = "GET", headers: [String] = [], signer: SigV4Signer? = nil
    ) throws -> SigV4Signer.CanonicalRequest {
        try (signer ?? Self.exampleSigner()).headerCanonicalRequest(
            method: method, url: Self.url(url), headers: Self.pairs(headers), payloadHash: Self.emptySHA256,
            date: Self.exampleDate)
    }

    @Test(
        "each path segment is decoded once and URI-encoded once (RFC 3986 unreserved kept, / kept)",
        arguments: [
            ("https://b.example/test$file.text", "/test%24file.text"),
            ("https://b.example/test%24file.text", "/test%24file.text"),
            ("https://b.example/a%20b/c%2Fd", "/a%20b/c%2Fd"),
            ("https://b.example/%7Euser/x-y_z.1", "/~user/x-y_z.1"),
            ("https://b.example/a+b=c&d@e:f,g;h!i*j'k(l)", "/a%2Bb%3Dc%26d%40e%3Af%2Cg%3Bh%21i%2Aj%27k%28l%29"),
            ("https://b.example/caf%C3%A9/%E6%97%A5.png", "/caf%C3%A9/%E6%97%A5.png"),
            ("https://b.example/a%2520b", "/a%2520b"),
            ("https://b.example//double//slash/", "//double//slash/"),
            ("https://b.example", "/"),
            ("https://b.example/", "/"),
        ])
    func canonicalPath(_ url: String, _ expected: String) throws {
        #expect(try canonical(url).uri == expected)
    }

    @Test("a non-ASCII key in the URL's own encoding signs as its UTF-8 bytes")
    func unicodePath() throws {
        var components = URLComponents()
        components.scheme = "https"
        components.host = "b.example"
        components.path = "/café/日.png"
        let url = try #require(components.url)
        let request = try Self.exampleSigner().headerCanonicalRequest(
            method: "GET", url: url, headers: [], payloadHash: Self.emptySHA256, date: Self.exampleDate)
        #expect(request.uri == "/caf%C3%A9/%E6%97%A5.png")
    }

    @Test(
        "the query is sorted by encoded name then value, an empty value written name=",
        arguments: [
            ("https://b.example/?prefix=b&prefix=a&Z=1&a=", "Z=1&a=&prefix=a&prefix=b"),
            ("https://b.example/?uploads", "uploads="),
            ("https://b.example/?versionId=x&uploadId", "uploadId=&versionId=x"),
            ("https://b.example/?prefix=a%20b&prefix=a", "prefix=a&prefix=a%20b"),
            ("https://b.example/?k=a%2Bb&k2=%7e*", "k=a%2Bb&k2=~%2A"),
            ("https://b.example/?delimiter=/&list-type=2", "delimiter=%2F&list-type=2"),
            ("https://b.example/?a&&b=1", "a=&b=1"),
            ("https://b.example/x", ""),
            ("https://b.example/x?", ""),
        ])
    func canonicalQuery(_ url: String, _ expected: String) throws {
        #expect(try canonical(url).query == expected)
    }

    @Test("header names are lowercased, values trimmed with inner spaces collapsed, repeats joined with commas")
    func canonicalHeaders() throws {
        let request = try canonical(
            "https://b.example/k",
            headers: [
                "X-Amz-Meta-Note:   hello    world\t ", "Content-Type: image/jpeg", "x-amz-meta-note: again",
                "X-Amz-Meta-Empty:",
            ])
        #expect(
            request.headers == """
                content-type:image/jpeg
                host:b.example
                x-amz-content-sha256:\(Self.emptySHA256)
                x-amz-date:20130524T000000Z
                x-amz-meta-empty:
                x-amz-meta-note:hello world,again

                """)
        #expect(
            request.signedHeaders
                == "content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-empty;x-amz-meta-note")
    }

    @Test(
        "host is signed with the port only when it is not the scheme's default",
        arguments: [
            ("https://b.example:443/k", "b.example"), ("http://b.example:80/k", "b.example"),
            ("https://b.example:80/k", "b.example:80"), ("http://127.0.0.1:9000/bucket/k", "127.0.0.1:9000"),
            ("https://S3.EU-West-1.Example.COM:8443/k", "s3.eu-west-1.example.com:8443"),
            ("http://[::1]:9000/k", "[::1]:9000"),
        ])
    func host(_ url: String, _ expected: String) throws {
        #expect(try canonical(url).headers.split(separator: "\n").contains("host:\(expected)"))
        let presign = try Self.exampleSigner().presignedURL(
            method: "GET", url: Self.url(url), expires: 60, date: Self.exampleDate)
        #expect(presign.absoluteString.hasPrefix("\(url.prefix { $0 != ":" })://\(expected)/"))
    }

    @Test("temporary credentials sign and send the session token, in either form")
    func sessionToken() throws {
        let token = "FQoGZXIvYXdzEJr//////////wEaDOtoken+with/odd=chars"
        let signer = try SigV4Signer(
            credentials: AWSCredentials(
                accessKeyID: "ASIAEXAMPLE", secretAccessKey: "secret", sessionToken: token),
            region: "eu-west-3")
        let url = try Self.url("https://b.s3.eu-west-3.amazonaws.com/k")
        let request = try signer.headerCanonicalRequest(
            method: "GET", url: url, headers: [], payloadHash: SigV4Signer.unsignedPayload, date: Self.exampleDate)
        #expect(request.headers.contains("\nx-amz-security-token:\(token)\n"))
        #expect(request.signedHeaders == "host;x-amz-content-sha256;x-amz-date;x-amz-security-token")
        let added = try signer.authorizationHeaders(
            method: "GET", url: url, payloadHash: SigV4Signer.unsignedPayload, date: Self.exampleDate)
        #expect(added.last?.name == "x-amz-security-token" && added.last?.value == token)

        let presigned = try signer.presignedURL(method: "GET", url: url, expires: 3600, date: Self.exampleDate)
        let items = try #require(URLComponents(url: presigned, resolvingAgainstBaseURL: false)?.queryItems)
        #expect(items.first { $0.name == "X-Amz-Security-Token" }?.value == token)
        #expect(items.map(\.name).last == "X-Amz-Signature")
        let query = try signer.presignCanonicalRequest(method: "GET", url: url, expires: 3600, date: Self.exampleDate)
            .request.query
        #expect(query.contains("&X-Amz-Security-Token=FQoGZXIvYXdzEJr%2F%2F%2F"))
    }

    @Test("a presigned URL keeps the request's own query, sorted with the authentication parameters")
    func presignKeepsQuery() throws {
        let presigned = try Self.exampleSigner().presignedURL(
            method: "PUT", url: Self.url("https://b.example/a%20b.jpg?uploadId=x%2By&partNumber=2"), expires: 900,
            date: Self.exampleDate)
        #expect(presigned.path(percentEncoded: true) == "/a%20b.jpg")
        let names = try #require(URLComponents(url: presigned, resolvingAgainstBaseURL: false)?.queryItems).map(\.name)
        #expect(
            names == [
                "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
                "partNumber", "uploadId", "X-Amz-Signature",
            ])
        #expect(presigned.query(percentEncoded: true)?.contains("uploadId=x%2By") == true)
    }

    @Test(
        "a presigned URL lives 1 to 604800 seconds (AWS's 7 days); other expiries are refused",
        arguments: [0, -1, 604_801, Int.max, Int.min])
    func expiryRefused(_ expires: Int) throws {
        let signer = try Self.exampleSigner()
        let error = #expect(throws: PushPrepError.self) {
            try signer.presignedURL(
                method: "GET", url: Self.url("https://b.example/k"), expires: expires, date: Self.exampleDate)
        }
        #expect(error?.code == .invalidSettings)
        #expect(error?.message.contains("604800") == true && error?.message.contains("\(expires)") == true)
    }

    @Test("the expiry limits themselves are accepted", arguments: [1, 604_800])
    func expiryLimits(_ expires: Int) throws {
        let url = try Self.exampleSigner().presignedURL(
            method: "GET", url: Self.url("https://b.example/k"), expires: expires, date: Self.exampleDate)
        #expect(url.absoluteString.contains("X-Amz-Expires=\(expires)&"))
    }

    @Test("requests the signer cannot sign faithfully are refused with invalid_settings")
    func refusals() throws {
        let signer = try Self.exampleSigner()
        func refused(_ body: () throws -> Void) {
            let error = #expect(throws: PushPrepError.self) { try body() }
            #expect(error?.code == .invalidSettings)
            // Messages go to logs on one line: what the caller gave is quoted, escapes and all.
            #expect(error?.message.contains(where: \.isNewline) == false, "\(String(describing: error))")
        }
        // Headers the signer writes itself, invalid names, values with line breaks.
        for header in [
            "Host: other.example", "Authorization: x", "X-Amz-Date: 20130524T000000Z", "Bad Name: x", "Bad\nName: x",
        ] {
            refused {
                _ = try signer.headerCanonicalRequest(
                    method: "GET", url: Self.url("https://b.example/k"), headers: Self.pairs([header]),
                    payloadHash: Self.emptySHA256, date: Self.exampleDate)
            }
        }
        refused {
            _ = try signer.headerCanonicalRequest(
                method: "GET", url: Self.url("https://b.example/k"), headers: [("x-amz-meta-a", "one\r\nx-evil: two")],
                payloadHash: Self.emptySHA256, date: Self.exampleDate)
        }
        // Payload hashes that are not one, methods that are not one, schemes and URLs that are not S3's.
        for hash in ["", "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", "unsigned-payload"] {
            refused {
                _ = try signer.authorizationHeaders(
                    method: "GET", url: Self.url("https://b.example/k"), payloadHash: hash, date: Self.exampleDate)
            }
        }
        for method in ["", "get", "GE T", "GET\r\nX: y"] {
            refused {
                _ = try signer.authorizationHeaders(
                    method: method, url: Self.url("https://b.example/k"), payloadHash: Self.emptySHA256,
                    date: Self.exampleDate)
            }
        }
        for url in ["ftp://b.example/k", "https://user:pw@b.example/k", "file:///etc/passwd"] {
            refused {
                _ = try signer.presignedURL(method: "GET", url: Self.url(url), expires: 60, date: Self.exampleDate)
            }
        }
        // A bare + in the query: a plus sign or a space, depending on who reads it.
        refused {
            _ = try signer.presignedURL(
                method: "GET", url: Self.url("https://b.example/k?prefix=a+b"), expires: 60, date: Self.exampleDate)
        }
        refused {
            _ = try signer.authorizationHeaders(
                method: "GET", url: Self.url("https://b.example/?prefix=a+b"), payloadHash: Self.emptySHA256,
                date: Self.exampleDate)
        }
        // A URL already presigned.
        refused {
            _ = try signer.presignedURL(
                method: "GET", url: Self.url("https://b.example/k?x-amz-signature=abc"), expires: 60,
                date: Self.exampleDate)
        }
        // Regions, services and key ids that cannot be part of the credential scope.
        for (key, region, service) in [
            ("AKID", "us east", "s3"), ("AKID", "", "s3"), ("AK/ID", "us-east-1", "s3"),
            ("AKID", "us-east-1", "s3/x"),
        ] {
            refused {
                _ = try SigV4Signer(
                    credentials: AWSCredentials(accessKeyID: key, secretAccessKey: "s"), region: region,
                    service: service)
            }
        }
    }

    @Test("the same request signs the same whether its path says $ or %24, ~ or %7E")
    func equivalentSpellings() throws {
        let signer = try Self.exampleSigner()
        let sign = { (url: String) throws -> String in
            try signer.authorizationHeaders(
                method: "GET", url: Self.url(url), payloadHash: Self.emptySHA256, date: Self.exampleDate)[0].value
        }
        #expect(try sign("https://b.example/a$b~c?x=~") == sign("https://b.example/a%24b%7Ec?x=%7E"))
        #expect(try sign("https://b.example/a$b") != sign("https://b.example/a%2524b"))
    }
}
