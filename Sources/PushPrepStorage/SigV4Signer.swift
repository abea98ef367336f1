import Crypto
package import Foundation
package import PushPrepCore

/// AWS Signature Version 4 for S3, in both forms: an `Authorization` header for a request PushPrep
/// sends, and a presigned URL (query-string authentication) for a request someone else sends.
///
/// There is no AWS SDK for Swift to lean on, so this is the one place that signs, following the
/// S3 rules ("Authenticating Requests (AWS Signature Version 4)"): the canonical request, the
/// string to sign and the signing key are exposed for tests, which check them against AWS's
/// published examples and against botocore.
///
/// S3's canonical form, as built here:
/// - the path: each segment percent-decoded once and URI-encoded again (RFC 3986 unreserved
///   characters kept, `/` kept between segments, encoded once: S3 does not double-encode), so
///   `test$file.text` and `test%24file.text` sign alike; an empty path is `/`;
/// - the query: each name and value decoded and encoded the same way, sorted by encoded name then
///   value, an empty value written `name=`; a bare `+` is refused (a plus sign to RFC 3986, a
///   space to HTML forms: write `%2B` or `%20`);
/// - the headers: names lowercased, values trimmed with inner runs of spaces and tabs collapsed,
///   repeated names joined with `,`; `host` is always signed, with the port when it is not the
///   scheme's default.
///
/// The secret never appears in the text of this value or of any error it throws.
package struct SigV4Signer: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The payload hash for a body that is not signed (always the case for presigned URLs).
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// How long a presigned URL may live, in seconds: AWS refuses more than 7 days.
    package static let presignedExpiry: ClosedRange<Int> = 1...604_800

    private static let algorithm = "AWS4-HMAC-SHA256"
    /// The query parameters of query-string authentication; a URL that already has one of them is
    /// already signed (or forged), and signing it again would send two.
    private static let authParameters: Set<String> = [
        "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-expires", "x-amz-signedheaders",
        "x-amz-security-token", "x-amz-signature",
    ]
    /// Headers the signer writes itself; a caller giving one would sign a value it does not send.
    private static let headersSetBySigner: Set<String> = [
        "host", "authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token",
    ]

    /// The key that signs.
    package let credentials: AWSCredentials
    /// The bucket's region (`us-east-1`, `eu-west-3`, `auto` for R2, …).
    package let region: String
    /// The service signed for; `s3` (the S3 path rules above are the only ones implemented).
    package let service: String

    /// Creates a signer; throws `invalid_settings` for credentials or a region that cannot be
    /// part of a signature (the message names what is wrong, never the secret or the token).
    package init(credentials: AWSCredentials, region: String, service: String = "s3") throws(PushPrepError) {
        guard Self.isScopePart(credentials.accessKeyID) else {
            throw PushPrepError(.invalidSettings, "the AWS access key id must be letters and digits, and not empty")
        }
        guard !credentials.secretAccessKey.isEmpty else {
            throw PushPrepError(.invalidSettings, "the AWS secret access key is empty")
        }
        if let token = credentials.sessionToken {
            guard !token.isEmpty, Self.isHeaderValue(token) else {
                throw PushPrepError(
                    .invalidSettings, "the AWS session token is empty or holds a line break or control character")
            }
        }
        guard Self.isScopePart(region) else {
            throw PushPrepError(
                .invalidSettings, "\(String(reflecting: region)) is not an AWS region name (like us-east-1)")
        }
        guard Self.isScopePart(service) else {
            throw PushPrepError(.invalidSettings, "\(String(reflecting: service)) is not an AWS service name (like s3)")
        }
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    package var description: String {
        "SigV4Signer(region: \(region), service: \(service), credentials: \(credentials))"
    }

    package var debugDescription: String { description }

    /// What `dump` and `Mirror` see: the credentials through their own redacting mirror.
    package var customMirror: Mirror {
        Mirror(
            self, children: ["credentials": credentials, "region": region, "service": service],
            displayStyle: .struct)
    }

    // MARK: - Header form

    /// The headers that authenticate a request: `Authorization`, `x-amz-date`,
    /// `x-amz-content-sha256` and, with temporary credentials, `x-amz-security-token`.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, uppercase (`GET`, `PUT`, …).
    ///   - url: the URL the request goes to (`http` or `https`); its host (and port) is signed
    ///     as the `host` header.
    ///   - headers: the other headers sent and signed (`Range`, `Content-Type`, `x-amz-meta-*`,
    ///     …); not `Host`, `Authorization` or the `x-amz-` headers this adds, and nothing a proxy
    ///     may rewrite on the way (`User-Agent`, `Expect`, hop-by-hop headers).
    ///   - payloadHash: the lowercase hex SHA-256 of the body (of the empty string when there is
    ///     none), or ``unsignedPayload``.
    ///   - date: the signing time; S3 refuses a request more than 15 minutes off its clock.
    package func authorizationHeaders(
        method: String, url: URL, headers: [(name: String, value: String)] = [], payloadHash: String, date: Date
    ) throws(PushPrepError) -> [(name: String, value: String)] {
        let request = try headerCanonicalRequest(
            method: method, url: url, headers: headers, payloadHash: payloadHash, date: date)
        let time = try SigningTime(date)
        let signed = signature(stringToSign: stringToSign(canonicalRequest: request.text, date: time), date: time)
        let authorization =
            "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope(time)),"
            + "SignedHeaders=\(request.signedHeaders),Signature=\(signed)"
        var result = [
            (name: "Authorization", value: authorization), (name: "x-amz-date", value: time.amzDate),
            (name: "x-amz-content-sha256", value: payloadHash),
        ]
        if let token = credentials.sessionToken { result.append((name: "x-amz-security-token", value: token)) }
        return result
    }

    /// The canonical request of the header form (see ``authorizationHeaders(method:url:headers:payloadHash:date:)``).
    package func headerCanonicalRequest(
        method: String, url: URL, headers: [(name: String, value: String)], payloadHash: String, date: Date
    ) throws(PushPrepError) -> CanonicalRequest {
        let time = try SigningTime(date)
        guard payloadHash == Self.unsignedPayload || Self.isSHA256Hex(payloadHash) else {
            throw PushPrepError(
                .invalidSettings, "the payload hash must be a lowercase hex SHA-256 or \(Self.unsignedPayload)")
        }
        let target = try Target(url)
        var values: [String: [String]] = [:]
        for (name, value) in headers {
            let lowercased = name.lowercased()
            guard Self.isToken(name) else {
                throw PushPrepError(.invalidSettings, "\(String(reflecting: name)) is not a valid HTTP header name")
            }
            guard !Self.headersSetBySigner.contains(lowercased) else {
                throw PushPrepError(.invalidSettings, "the \(lowercased) header is set by the request signer itself")
            }
            // The value is not quoted: a header such as the SSE-C key is a secret of its own.
            guard Self.isHeaderValue(value) else {
                throw PushPrepError(
                    .invalidSettings, "the \(lowercased) header's value holds a line break or control character")
            }
            values[lowercased, default: []].append(Self.trimmed(value))
        }
        values["host"] = [target.host]
        values["x-amz-date"] = [time.amzDate]
        values["x-amz-content-sha256"] = [payloadHash]
        if let token = credentials.sessionToken { values["x-amz-security-token"] = [token] }
        let sorted = values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        return CanonicalRequest(
            method: try Self.checkedMethod(method), uri: target.canonicalURI,
            query: Self.canonicalQuery(target.query),
            headers: sorted.map { "\($0.key):\($0.value.joined(separator: ","))\n" }.joined(),
            signedHeaders: sorted.map(\.key).joined(separator: ";"), payloadHash: payloadHash)
    }

    // MARK: - Query-string form

    /// A presigned URL: `url` with `X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`,
    /// `X-Amz-Expires`, `X-Amz-SignedHeaders=host`, `X-Amz-Security-Token` (temporary
    /// credentials) and `X-Amz-Signature`, valid for `expires` seconds from `date` for anyone who
    /// has it, with an unsigned payload.
    ///
    /// The URL comes back in canonical form (path and query encoded as signed, the query sorted,
    /// a default port dropped); it addresses the same object. Throws `invalid_settings` for an
    /// expiry outside 1...604800 seconds (AWS's 7-day limit) or a URL that already carries
    /// query-string authentication.
    package func presignedURL(method: String, url: URL, expires: Int, date: Date) throws(PushPrepError) -> URL {
        let presigned = try presignCanonicalRequest(method: method, url: url, expires: expires, date: date)
        let time = try SigningTime(date)
        let signed = signature(
            stringToSign: stringToSign(canonicalRequest: presigned.request.text, date: time), date: time)
        let text =
            "\(presigned.scheme)://\(presigned.host)\(presigned.request.uri)?\(presigned.request.query)"
            + "&X-Amz-Signature=\(signed)"
        guard let result = URL(string: text) else {
            throw PushPrepError(.invalidSettings, "the presigned URL for \(presigned.host) cannot be written")
        }
        return result
    }

    /// The canonical request of the query-string form, with the scheme and host the URL is
    /// written with (see ``presignedURL(method:url:expires:date:)``).
    package func presignCanonicalRequest(
        method: String, url: URL, expires: Int, date: Date
    ) throws(PushPrepError) -> (request: CanonicalRequest, scheme: String, host: String) {
        guard Self.presignedExpiry.contains(expires) else {
            throw PushPrepError(
                .invalidSettings,
                "a presigned URL expires after 1 to 604800 seconds (7 days, AWS's limit), not \(expires)")
        }
        let time = try SigningTime(date)
        let target = try Target(url)
        if let signed = target.query.first(where: { Self.authParameters.contains($0.name.lowercased()) }) {
            throw PushPrepError(
                .invalidSettings, "the URL already carries query-string authentication (\(signed.name))")
        }
        var query = target.query
        query.append(("X-Amz-Algorithm", Self.algorithm))
        query.append(("X-Amz-Credential", Self.uriEncode(Array("\(credentials.accessKeyID)/\(scope(time))".utf8))))
        query.append(("X-Amz-Date", time.amzDate))
        query.append(("X-Amz-Expires", String(expires)))
        query.append(("X-Amz-SignedHeaders", "host"))
        if let token = credentials.sessionToken {
            query.append(("X-Amz-Security-Token", Self.uriEncode(Array(token.utf8))))
        }
        let request = CanonicalRequest(
            method: try Self.checkedMethod(method), uri: target.canonicalURI, query: Self.canonicalQuery(query),
            headers: "host:\(target.host)\n", signedHeaders: "host", payloadHash: Self.unsignedPayload)
        return (request, target.scheme, target.host)
    }

    // MARK: - The pieces

    /// A canonical request, in its parts and as the text whose hash is signed.
    package struct CanonicalRequest: Sendable, Equatable {
        /// The HTTP method.
        package let method: String
        /// The URI-encoded path.
        package let uri: String
        /// The sorted, encoded query (`a=1&b=`), empty without one.
        package let query: String
        /// One `name:value\n` line per signed header, sorted.
        package let headers: String
        /// The signed header names, sorted and joined with `;`.
        package let signedHeaders: String
        /// The payload hash, or `UNSIGNED-PAYLOAD`.
        package let payloadHash: String

        /// The six parts joined with newlines (the headers block ends with its own, hence the
        /// blank line AWS's examples show before the signed header names).
        package var text: String {
            [method, uri, query, headers, signedHeaders, payloadHash].joined(separator: "\n")
        }
    }

    /// The string to sign for a canonical request at `date`: the algorithm, the time, the
    /// credential scope and the hex SHA-256 of the canonical request, one per line.
    package func stringToSign(canonicalRequest: String, date: Date) throws(PushPrepError) -> String {
        stringToSign(canonicalRequest: canonicalRequest, date: try SigningTime(date))
    }

    /// The signing key for `date`'s day: HMAC-SHA256 chained over `"AWS4" + secret`, the day
    /// (`yyyyMMdd`), the region, the service and `aws4_request`.
    package func signingKey(date: Date) throws(PushPrepError) -> [UInt8] {
        signingKey(try SigningTime(date))
    }

    /// The hex signature of a string to sign with `date`'s signing key.
    package func signature(stringToSign: String, date: Date) throws(PushPrepError) -> String {
        signature(stringToSign: stringToSign, date: try SigningTime(date))
    }

    /// The `yyyyMMdd'T'HHmmss'Z'` form of a date, in UTC (`x-amz-date`, `X-Amz-Date`).
    package static func amzDate(_ date: Date) throws(PushPrepError) -> String { try SigningTime(date).amzDate }

    private func scope(_ time: SigningTime) -> String { "\(time.day)/\(region)/\(service)/aws4_request" }

    private func stringToSign(canonicalRequest: String, date time: SigningTime) -> String {
        let hash = SHA256.hash(data: Array(canonicalRequest.utf8)).hexString
        return [Self.algorithm, time.amzDate, scope(time), hash].joined(separator: "\n")
    }

    private func signingKey(_ time: SigningTime) -> [UInt8] {
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [time.day, region, service, "aws4_request"] {
            key = Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: SymmetricKey(data: key)))
        }
        return key
    }

    private func signature(stringToSign: String, date time: SigningTime) -> String {
        let key = SymmetricKey(data: signingKey(time))
        return HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key).hexString
    }
}
