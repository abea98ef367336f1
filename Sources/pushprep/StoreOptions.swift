import ArgumentParser
import Foundation
import PushPrep
import PushPrepStorage

/// Where outputs go (`--store`, or `--out` as its short form) and, for an `s3://` store, how
/// they are uploaded and which URLs the manifest gives; shared by `process` and `worker`.
///
/// None of this enters the processing settings: an output's id and bytes do not depend on
/// where it is stored, and the store URL and the key must not reach a manifest or a job.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where outputs go: file:DIR (as --out DIR) or s3://BUCKET/PREFIX[?region=R&endpoint=URL&path-style=true].",
            discussion: "Credentials, region and endpoint are found as the AWS CLI finds them (AWS_ACCESS_KEY_ID, "
                + "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3, AWS_PROFILE with "
                + "~/.aws/credentials and ~/.aws/config); the URL's own region=, endpoint= and path-style= win.",
            valueName: "url"))
    var store: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With an s3:// store: give presigned GET URLs valid this long (7d, 24h, 90m, 3600s; at most 7 days).",
            valueName: "duration"))
    var presign: String?

    @Option(name: .customLong("cache-control"), help: "With an s3:// store: the Cache-Control stored with each object.")
    var cacheControl: String = S3Configuration.defaultCacheControl

    @Option(
        name: .customLong("multipart-threshold"),
        help: "With an s3:// store: files larger than this many bytes go up in parts.")
    var multipartThreshold: Int = S3Configuration.Limits().multipartThreshold

    @Option(
        name: .customLong("part-size"), help: "With an s3:// store: the size of each part in bytes (at least 5 MiB).")
    var partSize: Int = S3Configuration.Limits().partSize

    @Option(name: .customLong("parallel-parts"), help: "With an s3:// store: parts of one file sent at once (1...64).")
    var parallelParts: Int = S3Configuration.Limits().parallelParts

    /// The store: `--store`, else `--out` (`out`), else `defaultOut`; a usage error for both, or
    /// for a location that does not parse.
    func location(out: String?, defaultOut: String) throws -> StoreLocation {
        do {
            switch (store, out) {
            case (.some, .some):
                throw ValidationError("give --out DIR or --store URL, not both (--out DIR is --store file:DIR)")
            case (let store?, nil):
                return try StoreLocation(parsing: store)
            case (nil, let out):
                return try StoreLocation.directory(checking: out ?? defaultOut)
            }
        } catch let error as PushPrepError {
            throw ValidationError(error.message)
        }
    }

    /// Checks the options against the store and `--base-url`, resolving the configuration of
    /// an `s3://` store (so a missing key or a bad region is a usage error, before any work).
    func validate(location: StoreLocation, baseURL: String?) throws {
        guard case .s3(let s3) = location else {
            if presign != nil { throw ValidationError("--presign needs an s3:// store (--store s3://BUCKET/PREFIX)") }
            return
        }
        if presign != nil, baseURL != nil {
            throw ValidationError("give --presign or --base-url, not both: each names the attachments' URLs")
        }
        do {
            _ = try urls(baseURL: baseURL)
            _ = try configuration(for: s3)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The URLs the manifest gives: `--base-url` joined with the key, presigned, or the bucket's.
    func urls(baseURL: String?) throws(PushPrepError) -> ObjectURLStyle {
        if let baseURL { return .baseURL(baseURL) }
        if let presign { return .presigned(seconds: try ObjectURLStyle.presignSeconds(parsing: presign)) }
        return .bucket
    }

    /// The client's configuration for `location`, with the key, region and endpoint found in
    /// this process's environment and the AWS files.
    func configuration(for location: S3Location) throws(PushPrepError) -> S3Configuration {
        let aws = try AWSConfiguration.resolve(for: location, environment: ProcessInfo.processInfo.environment)
        var limits = S3Configuration.Limits()
        limits.multipartThreshold = multipartThreshold
        limits.partSize = partSize
        limits.parallelParts = parallelParts
        return try S3Configuration(aws, location: location, limits: limits, cacheControl: cacheControl)
    }
}

/// A private local folder (mode 0700, in the system's temporary directory) where outputs bound
/// for a bucket are written before they are uploaded.
enum LocalStaging {
    /// A folder named `pushprep-<name>-<random>` (new), or `pushprep-<name>` (shared by the
    /// workers of this host, whose staging folders are told apart by worker id, so that one
    /// can remove what a killed one left).
    static func makeFolder(_ name: String, unique: Bool = true) throws -> String {
        let suffix = unique ? "-\(UUID().uuidString.lowercased())" : ""
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pushprep-\(name)\(suffix)").path
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CommandFailure(message: "cannot create a staging folder \(path): \(error.localizedDescription)")
        }
        return path
    }
}
