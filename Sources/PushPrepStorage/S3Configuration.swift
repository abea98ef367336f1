package import Foundation
package import PushPrepCore

/// Where an ``S3Client`` sends requests, with which key, and within which limits.
///
/// Any S3-compatible endpoint works (AWS, R2, MinIO, Ceph, moto in tests). How the bucket is
/// addressed (path style or virtual-hosted, the object URL) is ``S3BucketAddress``'s alone, and
/// the key and region come from ``AWSConfiguration``: this type adds what only the client needs
/// (timeouts, retries, multipart sizes, `Cache-Control`), checked once in
/// ``init(address:signer:limits:cacheControl:)``, so a client never starts with settings it
/// cannot use.
package struct S3Configuration: Sendable {
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
        /// so that many workers retrying against one bucket spread out. A `Retry-After` on a
        /// retryable answer is waited instead, up to `cap` (and the request timeout).
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

    /// The bucket, its endpoint and addressing style.
    package let address: S3BucketAddress
    /// Signs every request (the key and the region).
    package let signer: SigV4Signer
    /// Timeouts, retries and multipart settings.
    package let limits: Limits
    /// `Cache-Control` stored with each object: content-addressed keys never change content.
    package let cacheControl: String

    /// `scheme://host[:port]` of the service, without the bucket.
    package var endpoint: URL { address.endpoint }
    /// The bucket name.
    package var bucket: String { address.bucket }
    /// The region requests are signed for.
    package var region: String { signer.region }

    /// The default `Cache-Control`: a year, and `immutable` so browsers do not even revalidate.
    package static let defaultCacheControl = "public, max-age=31536000, immutable"

    /// Checks and keeps the client's own settings; throws `invalid_settings` naming what is
    /// wrong (never a secret).
    package init(
        address: S3BucketAddress, signer: SigV4Signer, limits: Limits = Limits(),
        cacheControl: String = defaultCacheControl
    ) throws(PushPrepError) {
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
        self.address = address
        self.signer = signer
        self.limits = limits
        self.cacheControl = cacheControl
    }

    /// The client's configuration for `location` as `aws` resolved it (endpoint, addressing,
    /// key and region), with the client's own `limits` and `cacheControl`.
    package init(
        _ aws: AWSConfiguration, location: S3Location, limits: Limits = Limits(),
        cacheControl: String = defaultCacheControl
    ) throws(PushPrepError) {
        try self.init(
            address: try aws.address(of: location), signer: try aws.signer(), limits: limits,
            cacheControl: cacheControl)
    }

    /// A configuration from its parts, for a known endpoint (tests, a fault server): path style
    /// unless `pathStyle` says otherwise.
    package init(
        endpoint: URL, bucket: String, region: String, pathStyle: Bool? = true, credentials: AWSCredentials,
        limits: Limits = Limits(), cacheControl: String = defaultCacheControl
    ) throws(PushPrepError) {
        try self.init(
            address: try S3BucketAddress(bucket: bucket, endpoint: endpoint, pathStyle: pathStyle),
            signer: try SigV4Signer(credentials: credentials, region: region), limits: limits,
            cacheControl: cacheControl)
    }

    /// The URL of `key` in the bucket (`key` nil: the bucket itself), with `query` already
    /// encoded (`uploads=`, `partNumber=1&uploadId=…`): ``S3BucketAddress``'s, so what is signed
    /// and sent is the URL the manifest names.
    func url(key: String?, query: String? = nil) throws(PushPrepError) -> URL {
        let base = key.map { address.objectURL(key: $0) } ?? address.bucketURL
        guard let query else { return base }
        guard let url = URL(string: base.absoluteString + "?" + query) else {
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
}
