package import Foundation
package import PushPrepCore

/// Where an ``S3Client`` sends requests, with which key, and within which limits.
///
/// Any S3-compatible endpoint works (AWS, R2, MinIO, Ceph, moto in tests): the endpoint is a plain
/// `http(s)://host[:port]`, and the bucket goes either in the path (`host/bucket/key`, which
/// MinIO, moto and IP addresses need) or in the host name (`bucket.host/key`, AWS's default).
/// Everything is checked once, in ``init(endpoint:bucket:region:addressing:credentials:limits:cacheControl:)``,
/// so a client never starts with settings it cannot use.
package struct S3Configuration: Sendable {
    /// How the bucket is written into a request's URL.
    package enum Addressing: Sendable, Equatable {
        /// `https://host/bucket/key`.
        case pathStyle
        /// `https://bucket.host/key`; the bucket must then be a valid DNS label sequence.
        case virtualHosted
    }

    /// Timeouts, retries, multipart sizes and parallelism.
    package struct Limits: Sendable, Equatable {
        /// The smallest part S3 accepts (except the last one).
        package static let minimumPartSize = 5 * 1024 * 1024
        /// The most parts one multipart upload may have.
        package static let maximumParts = 10_000
        /// The largest object a single PUT may create (5 GiB).
        package static let maximumSinglePut = 5 * 1024 * 1024 * 1024

        /// Time allowed to open a TCP (and TLS) connection.
        package var connectTimeout: Duration = .seconds(10)
        /// Time allowed for one request, body and response included; a request past it is
        /// cancelled and counts as a failed try.
        package var requestTimeout: Duration = .seconds(120)
        /// Tries per request, the first included (a 503 `SlowDown` burst is absorbed by these).
        package var maxAttempts: Int = 4
        /// The wait between tries: exponential with full jitter (between none and the ceiling),
        /// so that many workers retrying against one bucket spread out.
        package var backoff = Backoff(base: .milliseconds(200), cap: .seconds(5), minimumFraction: 0)
        /// Files larger than this go up in parts (16 MiB).
        package var multipartThreshold: Int = 16 * 1024 * 1024
        /// The size of each part but the last (8 MiB); raised for a file that would need more
        /// than 10,000 parts.
        package var partSize: Int = 8 * 1024 * 1024
        /// Parts in flight at once for one upload.
        package var parallelParts: Int = 4

        /// The defaults.
        package init() {}
    }

    /// `scheme://host[:port]` of the service, without the bucket.
    package let endpoint: URL
    /// The bucket name.
    package let bucket: String
    /// The region requests are signed for.
    package let region: String
    /// Path-style or virtual-hosted URLs.
    package let addressing: Addressing
    /// Signs every request.
    package let signer: SigV4Signer
    /// Timeouts, retries and multipart settings.
    package let limits: Limits
    /// `Cache-Control` stored with each object: content-addressed keys never change content.
    package let cacheControl: String

    /// The default `Cache-Control`: a year, and `immutable` so browsers do not even revalidate.
    package static let defaultCacheControl = "public, max-age=31536000, immutable"

    /// Checks and keeps the settings; throws `invalid_settings` naming what is wrong (never a
    /// secret).
    package init(
        endpoint: URL, bucket: String, region: String, addressing: Addressing = .pathStyle,
        credentials: AWSCredentials, limits: Limits = Limits(), cacheControl: String = defaultCacheControl
    ) throws(PushPrepError) {
        guard let components = URLComponents(url: endpoint, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else {
            throw PushPrepError(.invalidSettings, "the storage endpoint must be an http:// or https:// URL with a host")
        }
        guard components.user == nil, components.password == nil, components.query == nil,
            components.fragment == nil, components.path.isEmpty || components.path == "/"
        else {
            throw PushPrepError(
                .invalidSettings, "the storage endpoint must be scheme://host[:port] only (no path, query or user)")
        }
        guard Self.isBucketName(bucket) else {
            throw PushPrepError(
                .invalidSettings,
                "\(String(reflecting: bucket)) is not a bucket name (3 to 63 lowercase letters, digits, '.' and '-')")
        }
        if addressing == .virtualHosted, bucket.contains("."), scheme == "https" {
            // *.s3.amazonaws.com's certificate covers one label: a dotted bucket fails TLS there.
            throw PushPrepError(
                .invalidSettings, "a bucket name with dots needs path-style addressing over https")
        }
        guard (1...20).contains(limits.maxAttempts) else {
            throw PushPrepError(
                .invalidSettings, "storage retries: 1 to 20 tries per request, not \(limits.maxAttempts)")
        }
        guard limits.connectTimeout > .zero, limits.requestTimeout > .zero else {
            throw PushPrepError(.invalidSettings, "storage timeouts must be positive")
        }
        guard limits.partSize >= Limits.minimumPartSize, limits.partSize <= Limits.maximumSinglePut else {
            throw PushPrepError(
                .invalidSettings, "the multipart part size must be 5 MiB to 5 GiB, not \(limits.partSize) bytes")
        }
        guard limits.multipartThreshold >= 0, limits.multipartThreshold <= Limits.maximumSinglePut else {
            throw PushPrepError(
                .invalidSettings,
                "the multipart threshold must be 0 to 5 GiB (a single PUT's limit), not \(limits.multipartThreshold)")
        }
        guard (1...64).contains(limits.parallelParts) else {
            throw PushPrepError(
                .invalidSettings, "parallel parts must be 1 to 64, not \(limits.parallelParts)")
        }
        guard !cacheControl.isEmpty, cacheControl.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F })
        else {
            throw PushPrepError(.invalidSettings, "Cache-Control must be printable ASCII without line breaks")
        }
        var base = URLComponents()
        base.scheme = scheme
        base.host = components.host
        base.port = components.port
        guard let normalized = base.url else {
            throw PushPrepError(.invalidSettings, "the storage endpoint cannot be written back as a URL")
        }
        self.endpoint = normalized
        self.bucket = bucket
        self.region = region
        self.addressing = addressing
        self.signer = try SigV4Signer(credentials: credentials, region: region)
        self.limits = limits
        self.cacheControl = cacheControl
    }

    /// The URL of `key` in the bucket (`key` nil: the bucket itself), with `query` already
    /// encoded (`uploads=`, `partNumber=1&uploadId=…`).
    ///
    /// The key is percent-encoded per segment (RFC 3986 unreserved characters and `/` kept), the
    /// way the signer reads it back, so what is signed is what is sent.
    func url(key: String?, query: String? = nil) throws(PushPrepError) -> URL {
        guard var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false), let host = components.host
        else {
            throw PushPrepError(.invalidSettings, "the storage endpoint cannot be parsed")
        }
        let encodedKey = key.map { "/" + Self.encodePath($0) } ?? "/"
        switch addressing {
        case .pathStyle:
            components.percentEncodedPath = "/\(bucket)" + (key == nil ? "" : encodedKey)
        case .virtualHosted:
            components.host = "\(bucket).\(host)"
            components.percentEncodedPath = encodedKey
        }
        components.percentEncodedQuery = query
        guard let url = components.url else {
            throw PushPrepError(.invalidSettings, "no request URL can be made for the key \(String(reflecting: key))")
        }
        return url
    }

    /// Checks an object key: 1 to 1024 bytes of UTF-8, no control characters, no `.`/`..`
    /// segment (which URL handling on the way could collapse into another key).
    static func checkKey(_ key: String) throws(PushPrepError) {
        guard !key.isEmpty, key.utf8.count <= 1024,
            key.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }),
            !key.hasPrefix("/"),
            !key.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." })
        else {
            throw PushPrepError(.invalidSettings, "\(String(reflecting: key)) is not an object key PushPrep writes")
        }
    }

    private static func encodePath(_ key: String) -> String {
        var allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        allowed.insert("/")
        return key.addingPercentEncoding(withAllowedCharacters: allowed) ?? key
    }

    /// S3's bucket naming rules, the common part: 3 to 63 characters of lowercase letters,
    /// digits, `.` and `-`, starting and ending with a letter or digit.
    private static func isBucketName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard let first = bytes.first, let last = bytes.last, alphanumeric(first), alphanumeric(last) else {
            return false
        }
        return bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
            && !name.contains("..")
    }
}
