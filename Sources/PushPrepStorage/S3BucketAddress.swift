package import Foundation
package import PushPrepCore

/// How a bucket is reached over HTTP: its endpoint and addressing style, and the URL of an
/// object in it.
///
/// S3 addresses a bucket two ways:
/// - virtual-hosted (`https://BUCKET.s3.eu-west-3.amazonaws.com/KEY`), AWS's default, where the
///   bucket is part of the host name;
/// - path style (`http://127.0.0.1:9000/BUCKET/KEY`), where it is the first path segment.
///
/// Path style is the default only where virtual-hosted names cannot work: an endpoint that is
/// an IP address or `localhost` (there is no `BUCKET.127.0.0.1` to resolve), and a bucket with
/// dots over HTTPS (the endpoint's wildcard certificate covers one label, not `a.b.s3…`, as
/// botocore also concludes). Everything else (AWS, R2, a MinIO behind a DNS name with wildcard
/// records) gets virtual-hosted names unless `path-style=true` or the profile's
/// `s3.addressing_style = path` says otherwise.
package struct S3BucketAddress: Sendable, Equatable {
    /// The bucket.
    package let bucket: String
    /// `scheme://host[:port]`.
    package let endpoint: URL
    /// Whether the bucket is the first path segment (true) or part of the host name (false).
    package let pathStyle: Bool

    /// Combines a checked bucket and endpoint with an addressing style (nil: the default, see
    /// above); throws `invalid_settings` when virtual-hosted names are asked for where they
    /// cannot work (an IP or `localhost` endpoint, a dotted bucket over https).
    package init(bucket: String, endpoint: URL, pathStyle: Bool?) throws(PushPrepError) {
        try S3Location.checkBucketName(bucket)
        let endpoint = try S3Location.checkedEndpoint(endpoint.absoluteString)
        if pathStyle == false, Self.isAddressOrLocalhost(endpoint) {
            throw PushPrepError(
                .invalidSettings,
                "path-style=false cannot reach \(endpoint.absoluteString): a bucket cannot be a host name under an IP "
                    + "address or localhost (leave path-style out, or set it to true)")
        }
        if pathStyle == false, bucket.contains("."), endpoint.scheme == "https" {
            // *.s3.amazonaws.com's certificate covers one label: a dotted bucket fails TLS there.
            throw PushPrepError(
                .invalidSettings, "a bucket name with dots needs path-style addressing over https")
        }
        self.bucket = bucket
        self.endpoint = endpoint
        self.pathStyle = pathStyle ?? Self.defaultsToPathStyle(bucket: bucket, endpoint: endpoint)
    }

    /// AWS's own S3 endpoint for `region`: `https://s3.REGION.amazonaws.com`.
    package static func awsEndpoint(region: String) throws(PushPrepError) -> URL {
        let region = try S3Location.checkedRegion(region)
        guard let url = URL(string: "https://s3.\(region).amazonaws.com") else {
            throw PushPrepError(.invalidSettings, "no S3 endpoint for the region \(region)")
        }
        return url
    }

    /// Whether `bucket` at `endpoint` is addressed path style when nothing says: for an IP
    /// address or `localhost` endpoint, and a dotted bucket over HTTPS (see the type's description).
    package static func defaultsToPathStyle(bucket: String, endpoint: URL) -> Bool {
        isAddressOrLocalhost(endpoint) || (endpoint.scheme == "https" && bucket.contains("."))
    }

    /// The bucket's own URL, ending in `/`.
    package var bucketURL: URL { url(path: "") }

    /// The URL of the object `key`: the key percent-encoded as S3 and SigV4 encode it (RFC 3986
    /// unreserved characters and `/` kept, every other UTF-8 byte `%XX`).
    package func objectURL(key: String) -> URL { url(path: Self.encodedKey(key)) }

    /// `key` percent-encoded for a URL path (see ``objectURL(key:)``).
    package static func encodedKey(_ key: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(key.utf8.count)
        for byte in key.utf8 {
            if S3Location.isLowercaseAlphanumeric(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || "-._~/".utf8.contains(byte)
            {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private func url(path: String) -> URL {
        let scheme = endpoint.scheme ?? "https"
        let authority = Self.authority(endpoint)
        let text =
            pathStyle ? "\(scheme)://\(authority)/\(bucket)/\(path)" : "\(scheme)://\(bucket).\(authority)/\(path)"
        // Every part was checked (bucket, endpoint) or encoded (path), so the text is a URL.
        return URL(string: text) ?? endpoint
    }

    /// `host[:port]` of a checked endpoint.
    private static func authority(_ endpoint: URL) -> String {
        let text = endpoint.absoluteString
        guard let range = text.range(of: "://") else { return text }
        return String(text[range.upperBound...])
    }

    /// An IPv4 or IPv6 literal, `localhost` or a name under `.localhost`.
    private static func isAddressOrLocalhost(_ endpoint: URL) -> Bool {
        let authority = authority(endpoint)
        if authority.hasPrefix("[") { return true }
        let host = authority.split(separator: ":").first.map(String.init) ?? authority
        return host == "localhost" || host.hasSuffix(".localhost") || S3Location.isIPv4Address(host)
    }
}
