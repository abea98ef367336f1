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

    // MARK: - Parsing and encoding

    /// What a URL contributes to a signature: scheme, `host` value, canonical path, query pairs
    /// (already in canonical encoding).
    private struct Target {
        let scheme: String
        let host: String
        let canonicalURI: String
        let query: [(name: String, value: String)]

        init(_ url: URL) throws(PushPrepError) {
            guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
                throw PushPrepError(.invalidSettings, "a storage URL cannot be parsed")
            }
            let scheme = (components.scheme ?? "").lowercased()
            guard scheme == "https" || scheme == "http" else {
                throw PushPrepError(.invalidSettings, "a storage URL must be http or https, not \"\(scheme)\"")
            }
            // Credentials in the URL would be sent, logged and signed by nobody's intent.
            guard components.user == nil, components.password == nil else {
                throw PushPrepError(.invalidSettings, "a storage URL must not carry user:password@")
            }
            guard var host = components.encodedHost?.lowercased(), !host.isEmpty else {
                throw PushPrepError(.invalidSettings, "a storage URL has no host")
            }
            if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
            if let port = components.port, port != (scheme == "https" ? 443 : 80) { host += ":\(port)" }
            self.scheme = scheme
            self.host = host

            let path = components.percentEncodedPath
            canonicalURI =
                path.isEmpty
                ? "/"
                : path.split(separator: "/", omittingEmptySubsequences: false)
                    .map { SigV4Signer.uriEncode(SigV4Signer.percentDecoded($0)) }
                    .joined(separator: "/")
            // RFC 3986 reads a bare + in a query as a plus sign, HTML forms (and some AWS SDKs) as
            // a space: S3 and the signer could each read it their way and disagree on the signature.
            let rawQuery = components.percentEncodedQuery ?? ""
            guard !rawQuery.contains("+") else {
                throw PushPrepError(
                    .invalidSettings, "a storage URL's query must write a plus sign as %2B (and a space as %20)")
            }
            query = rawQuery.split(separator: "&").map { pair in
                let name = pair.prefix { $0 != "=" }
                let value = pair.dropFirst(name.count + 1)
                return (
                    SigV4Signer.uriEncode(SigV4Signer.percentDecoded(name)),
                    SigV4Signer.uriEncode(SigV4Signer.percentDecoded(value))
                )
            }
        }
    }

    /// `name=value` pairs sorted by encoded name, then value (byte order), joined with `&`.
    private static func canonicalQuery(_ pairs: [(name: String, value: String)]) -> String {
        pairs.sorted {
            $0.name == $1.name
                ? $0.value.utf8.lexicographicallyPrecedes($1.value.utf8)
                : $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
        }
        .map { "\($0.name)=\($0.value)" }
        .joined(separator: "&")
    }

    /// RFC 3986 percent-encoding of bytes: `A-Z a-z 0-9 - . _ ~` kept, everything else `%XX`
    /// (uppercase hex).
    private static func uriEncode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), upperHexDigits[Int(byte >> 4)], upperHexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes a percent-encoded string stands for; a `%` not followed by two hex digits is
    /// itself (and is encoded as `%25` again).
    private static func percentDecoded(_ text: Substring) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexDigitValue(bytes[index + 1]), let low = hexDigitValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    private static let upperHexDigits = Array("0123456789ABCDEF".utf8)

    /// Trimmed, with inner runs of spaces and tabs collapsed to one space (SigV4's "Trimall").
    private static func trimmed(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    private static func checkedMethod(_ method: String) throws(PushPrepError) -> String {
        guard !method.isEmpty, method.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw PushPrepError(.invalidSettings, "\(String(reflecting: method)) is not an HTTP method (GET, PUT, …)")
        }
        return method
    }

    /// A token of HTTP (RFC 9110 §5.6.2): what a header name may be.
    private static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }

    /// A header value without line breaks or other control characters (tab allowed).
    private static func isHeaderValue(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }
    }

    /// A part of the credential scope (key id, region, service): `/` separates them there.
    private static func isScopePart(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    private static func isSHA256Hex(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { hexDigitValue($0) != nil } && text == text.lowercased()
    }
}

/// A signing time in the two forms SigV4 writes it: `yyyyMMdd'T'HHmmss'Z'` and its day.
///
/// Formatted from the whole seconds since 1970 with the proleptic Gregorian calendar in UTC,
/// without a `DateFormatter` (whose locale, calendar and time zone are settings to get wrong,
/// and which costs an allocation per request).
private struct SigningTime {
    let amzDate: String
    var day: String { String(amzDate.prefix(8)) }

    init(_ date: Date) throws(PushPrepError) {
        let interval = date.timeIntervalSince1970
        // 0001-01-01T00:00:00Z ... 9999-12-31T23:59:59Z: four-digit years, as the format needs.
        guard interval.isFinite, interval >= -62_135_596_800, interval < 253_402_300_800 else {
            throw PushPrepError(.invalidSettings, "the signing time is outside the years 1 to 9999")
        }
        let seconds = Int64(interval.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        amzDate =
            digits(year, 4) + digits(month, 2) + digits(day, 2) + "T" + digits(secondOfDay / 3600, 2)
            + digits(secondOfDay / 60 % 60, 2) + digits(secondOfDay % 60, 2) + "Z"
    }
}
