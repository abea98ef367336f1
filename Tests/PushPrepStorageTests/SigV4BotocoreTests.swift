import Foundation
import PushPrepStorage
import PushPrepTestSupport
import Testing

/// botocore, the AWS SDK for Python, signs the requests of `scripts/sigv4_reference.py` (odd and
/// unicode keys, repeated and empty query parameters, a session token, non-default ports,
/// path-style and virtual-hosted URLs, both forms); the signer must produce the same canonical
/// requests, strings to sign and signatures.
enum Botocore {
    /// An interpreter that imports botocore: `make test`'s `.build/pyenv` (pinned), else
    /// `python3` on `PATH`; nil when neither has it.
    static let python: String? = {
        let pyenv = TestTools.packageRoot.appendingPathComponent(".build/pyenv/bin/python").path
        return [pyenv, "python3"].first { candidate in
            TestTools.programPath(candidate) != nil
                && (try? TestTools.run(candidate, ["-c", "import botocore"], timeout: .seconds(60)).status) == 0
        }
    }()

    /// What the script prints.
    struct Reference: Decodable {
        let botocore: String
        let accessKey: String
        let secretKey: String
        let sessionToken: String
        let epochSeconds: Double
        let cases: [Case]
    }

    struct Case: Decodable {
        let name: String
        let form: String
        let method: String
        let url: String
        let region: String
        let token: Bool
        let headers: [[String]]?
        let payloadHash: String?
        let expires: Int?
        let canonicalRequest: String
        let stringToSign: String
        let authorization: String?
        let xAmzDate: String?
        let securityToken: String?
        let presignedUrl: String?
    }

    static func reference(_ python: String) throws -> Reference {
        let script = TestTools.packageRoot.appendingPathComponent("scripts/sigv4_reference.py").path
        let result = try TestTools.run(python, [script], timeout: .seconds(120))
        guard result.status == 0 else {
            throw TestTools.Failure(
                description: "sigv4_reference.py exited with \(result.status): "
                    + String(decoding: result.stderr, as: UTF8.self))
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Reference.self, from: result.stdout)
    }
}

@Suite struct SigV4BotocoreTests {
    @Test(
        "the signer agrees with botocore's S3 signers, header form and presigned URLs",
        .enabled(
            if: Botocore.python != nil,
            "needs Python with botocore: `make test` installs it in .build/pyenv (make pyenv)"))
    func agreesWithBotocore() throws {
        let reference = try Botocore.reference(try #require(Botocore.python))
        let date = Date(timeIntervalSince1970: reference.epochSeconds)
        #expect(reference.cases.count >= 12)
        #expect(reference.cases.contains { $0.form == "header" } && reference.cases.contains { $0.form == "presign" })
        for item in reference.cases {
            let comment = Comment(rawValue: "\(item.name) (botocore \(reference.botocore))")
            let signer = try SigV4Signer(
                credentials: AWSCredentials(
                    accessKeyID: reference.accessKey, secretAccessKey: reference.secretKey,
                    sessionToken: item.token ? reference.sessionToken : nil),
                region: item.region)
            let url = try #require(URL(string: item.url), comment)
            if item.form == "header" {
                let headers = (item.headers ?? []).map { (name: $0[0], value: $0[1]) }
                let payloadHash = try #require(item.payloadHash, comment)
                let request = try signer.headerCanonicalRequest(
                    method: item.method, url: url, headers: headers, payloadHash: payloadHash, date: date)
                #expect(request.text == item.canonicalRequest, comment)
                #expect(
                    try signer.stringToSign(canonicalRequest: request.text, date: date) == item.stringToSign, comment)
                let added = Dictionary(
                    uniqueKeysWithValues: try signer.authorizationHeaders(
                        method: item.method, url: url, headers: headers, payloadHash: payloadHash, date: date
                    ).map { ($0.name.lowercased(), $0.value) })
                // botocore separates the Authorization parts with ", ", AWS's examples with ",".
                #expect(
                    added["authorization"] == item.authorization?.replacingOccurrences(of: ", ", with: ","), comment)
                #expect(added["x-amz-date"] == item.xAmzDate, comment)
                #expect(added["x-amz-content-sha256"] == payloadHash, comment)
                #expect(added["x-amz-security-token"] == item.securityToken, comment)
            } else {
                let expires = try #require(item.expires, comment)
                let presign = try signer.presignCanonicalRequest(
                    method: item.method, url: url, expires: expires, date: date)
                #expect(presign.request.text == item.canonicalRequest, comment)
                #expect(
                    try signer.stringToSign(canonicalRequest: presign.request.text, date: date) == item.stringToSign,
                    comment)
                // The same URL up to the order of its query parameters (botocore puts the
                // request's own first, the signer writes them sorted as signed).
                let ours = try #require(
                    URLComponents(
                        url: signer.presignedURL(method: item.method, url: url, expires: expires, date: date),
                        resolvingAgainstBaseURL: false), comment)
                let presigned = try #require(item.presignedUrl, comment)
                let theirs = try #require(URLComponents(string: presigned), comment)
                #expect(ours.scheme == theirs.scheme && ours.percentEncodedHost == theirs.percentEncodedHost, comment)
                #expect(ours.port == theirs.port && ours.percentEncodedPath == theirs.percentEncodedPath, comment)
                let pairs = { (components: URLComponents) in
                    (components.percentEncodedQuery ?? "").split(separator: "&").map(String.init).sorted()
                }
                #expect(pairs(ours) == pairs(theirs), comment)
                #expect(pairs(ours).contains { $0.hasPrefix("X-Amz-Signature=") }, comment)
            }
        }
    }
}
