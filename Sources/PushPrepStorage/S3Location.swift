package import Foundation
package import PushPrepCore

/// A bucket and a key prefix, with what the `s3://` URL itself says about reaching them
/// (`region=`, `endpoint=`, `path-style=`); the environment and the AWS profile fill in the rest
/// (``AWSConfiguration``).
///
/// Every part is checked when the value is made, so a bad `--store` fails at start, naming what
/// is wrong, rather than at the first upload:
/// - the bucket follows S3's naming rules for general purpose buckets: 3 to 63 characters,
///   lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit,
///   no `..`, not an IPv4 address, none of the prefixes and suffixes AWS reserves;
/// - the prefix is normalized: empty segments dropped (so no leading slash, no `//`, one
///   trailing slash), `.` and `..` refused (a CDN or client normalizing the URL would fetch
///   another key), no control characters;
/// - the endpoint is `http` or `https` with a host and at most a port: no path, query, fragment
///   or `user:password@`.
package struct S3Location: Sendable, Equatable, CustomStringConvertible {
    /// The bucket's name.
    package let bucket: String
    /// The key prefix: `""` or segments each followed by `/` (`push/attachments/`).
    package let prefix: String
    /// The region the URL names (`?region=`), before the environment's and the profile's.
    package let region: String?
    /// The endpoint the URL names (`?endpoint=`), normalized to `scheme://host[:port]`.
    package let endpoint: URL?
    /// Path-style addressing as the URL says (`?path-style=true|false`); nil leaves it to the
    /// profile's `s3.addressing_style`, then to ``S3BucketAddress/defaultsToPathStyle(bucket:endpoint:)``.
    package let pathStyle: Bool?

    /// Checks and normalizes each part (see the type's description); throws `invalid_settings`.
    package init(
        bucket: String, prefix: String = "", region: String? = nil, endpoint: String? = nil, pathStyle: Bool? = nil
    ) throws(PushPrepError) {
        try Self.checkBucketName(bucket)
        self.bucket = bucket
        self.prefix = try Self.normalizedPrefix(prefix)
        self.region = try region.map { (text: String) throws(PushPrepError) in try Self.checkedRegion(text) }
        self.endpoint = try endpoint.map { (text: String) throws(PushPrepError) in try Self.checkedEndpoint(text) }
        self.pathStyle = pathStyle
    }

    /// The key of an output file: the prefix and the file's name (`push/<id>.jpg`; a movie's
    /// poster, `push/<id>-poster.jpg`, lands beside it). The name must be one path segment.
    package func key(forFile name: String) throws(PushPrepError) -> String {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !Self.hasControlCharacter(name) else {
            throw PushPrepError(
                .invalidSettings,
                "\(String(reflecting: name)) cannot be an object's file name (one path segment, not . or ..)")
        }
        return prefix + name
    }

    /// The location as an `s3://` URL (the prefix and query values percent-encoded).
    package var description: String {
        var query: [String] = []
        if let region { query.append("region=\(region)") }
        if let endpoint { query.append("endpoint=\(Self.queryEncoded(endpoint.absoluteString))") }
        if let pathStyle { query.append("path-style=\(pathStyle)") }
        let path = S3BucketAddress.encodedKey(prefix)
        return "s3://\(bucket)/\(path)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    // MARK: - Checks

    /// Throws `invalid_settings` naming the rule `name` breaks, if it breaks one of S3's naming
    /// rules for general purpose buckets.
    package static func checkBucketName(_ name: String) throws(PushPrepError) {
        let quoted = String(reflecting: name)
        func refuse(_ rule: String) -> PushPrepError {
            PushPrepError(.invalidSettings, "the bucket name \(quoted) \(rule)")
        }
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { throw refuse("must be 3 to 63 characters long") }
        guard bytes.allSatisfy({ isLowercaseAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") })
        else { throw refuse("may hold only lowercase letters, digits, dots (.) and hyphens (-)") }
        guard let first = bytes.first, let last = bytes.last, isLowercaseAlphanumeric(first),
            isLowercaseAlphanumeric(last)
        else { throw refuse("must start and end with a lowercase letter or a digit") }
        guard !name.contains("..") else { throw refuse("must not hold two dots in a row") }
        guard !isIPv4Address(name) else { throw refuse("must not be an IP address") }
        for reserved in ["xn--", "sthree-", "amzn-s3-demo-"] where name.hasPrefix(reserved) {
            throw refuse("must not start with \(reserved) (reserved by AWS)")
        }
        for reserved in ["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"] where name.hasSuffix(reserved) {
            throw refuse("must not end with \(reserved) (reserved by AWS)")
        }
    }

    /// `text` without empty segments, each segment followed by `/` (`/a//b` → `a/b/`, `/` → ``);
    /// throws `invalid_settings` for a `.` or `..` segment or a control character.
    package static func normalizedPrefix(_ text: String) throws(PushPrepError) -> String {
        guard !hasControlCharacter(text) else {
            throw PushPrepError(
                .invalidSettings, "the key prefix \(String(reflecting: text)) holds a control character")
        }
        let segments = text.split(separator: "/", omittingEmptySubsequences: true)
        guard !segments.contains(where: { $0 == "." || $0 == ".." }) else {
            throw PushPrepError(
                .invalidSettings,
                "the key prefix \(String(reflecting: text)) must not hold . or .. segments "
                    + "(URLs with them are rewritten by clients and CDNs, and would name other keys)")
        }
        return segments.map { $0 + "/" }.joined()
    }

    /// A region name: lowercase letters, digits and hyphens, starting with a letter
    /// (`us-east-1`, `eu-west-3`, `auto` for R2); it becomes part of a host name.
    package static func checkedRegion(_ text: String) throws(PushPrepError) -> String {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first), bytes.count <= 63,
            bytes.allSatisfy({ isLowercaseAlphanumeric($0) || $0 == UInt8(ascii: "-") })
        else {
            throw PushPrepError(
                .invalidSettings,
                "the region \(String(reflecting: text)) is not a region name "
                    + "(lowercase letters, digits and hyphens, like us-east-1)")
        }
        return text
    }

    /// An endpoint as `scheme://host[:port]`, lowercased; throws `invalid_settings` naming what
    /// is wrong (not http or https, no host, a path, query, fragment or credentials, a bad port).
    package static func checkedEndpoint(_ text: String) throws(PushPrepError) -> URL {
        // Checked before anything quotes the text: a password must not reach a message.
        guard !text.contains("@") else {
            throw PushPrepError(.invalidSettings, "an endpoint must not carry user:password@ (give keys as AWS does)")
        }
        let quoted = String(reflecting: text)
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else {
            throw PushPrepError(.invalidSettings, "the endpoint \(quoted) must be an http:// or https:// URL")
        }
        guard let host = components.encodedHost?.lowercased(), !host.isEmpty else {
            throw PushPrepError(.invalidSettings, "the endpoint \(quoted) has no host")
        }
        guard components.percentEncodedPath.isEmpty || components.percentEncodedPath == "/",
            components.percentEncodedQuery == nil, components.percentEncodedFragment == nil
        else {
            throw PushPrepError(
                .invalidSettings,
                "the endpoint \(quoted) must be scheme://host[:port], without a path, query or fragment")
        }
        var authority = host
        if let port = components.port {
            guard (1...65_535).contains(port) else {
                throw PushPrepError(.invalidSettings, "the endpoint \(quoted) has a port outside 1 to 65535")
            }
            authority += ":\(port)"
        }
        guard let url = URL(string: "\(scheme)://\(authority)") else {
            throw PushPrepError(.invalidSettings, "the endpoint \(quoted) cannot be used as a URL")
        }
        return url
    }

    // MARK: - Helpers

    static func isLowercaseAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Four dot-separated decimal numbers of at most 3 digits (`192.168.5.4`): what AWS means by
    /// a bucket name "formatted as an IP address".
    static func isIPv4Address(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                (1...3).contains(part.utf8.count)
                    && part.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            }
    }

    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// Percent-encoded for a query value: RFC 3986 unreserved characters kept, `:` and `/` too
    /// (legal in a query and easier to read in an endpoint).
    private static func queryEncoded(_ text: String) -> String {
        var allowed = CharacterSet(charactersIn: "-._~:/")
        allowed.formUnion(CharacterSet(charactersIn: "a"..."z"))
        allowed.formUnion(CharacterSet(charactersIn: "A"..."Z"))
        allowed.formUnion(CharacterSet(charactersIn: "0"..."9"))
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
