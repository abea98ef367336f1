import ArgumentParser
import Foundation
import PushPrepCommandLine
import PushPrepCore
import PushPrepStorage

/// Which store (`--store`, or `--out` as its short form) and which URLs its objects get
/// (`--presign`, with the command's own `--base-url`): what every command that names objects in
/// a bucket shares. `payload` takes only this (it uploads nothing); ``StoreOptions`` adds the
/// upload settings for the commands that publish.
///
/// None of this enters the processing settings: an output's id and bytes do not depend on
/// where it is stored, and the store URL and the key must not reach a manifest or a job.
struct StoreSelection: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The store: file:DIR (as --out DIR) or s3://BUCKET/PREFIX[?region=R&endpoint=URL&path-style=true].",
            discussion: "Credentials, region and endpoint are found as the AWS CLI finds them (AWS_ACCESS_KEY_ID, "
                + "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3, AWS_PROFILE with "
                + "~/.aws/credentials and ~/.aws/config); the URL's own region=, endpoint= and path-style= win.",
            valueName: "url"))
    var store: String?

    @Option(
        help: ArgumentHelp(
            "With an s3:// store: give presigned GET URLs valid this long (7d, 24h, 90m, 3600s; at most 7 days).",
            valueName: "duration"))
    var presign: String?

    /// The store: `--store`, else `--out` (`out`), else `defaultOut`; a usage error for both, or
    /// for a location that does not parse.
    func location(out: String?, defaultOut: String) throws -> StoreLocation {
        switch (store, out) {
        case (.some, .some):
            throw ValidationError("give --out DIR or --store URL, not both (--out DIR is --store file:DIR)")
        case (let store?, nil):
            return try asUsageError { try StoreLocation(parsing: store) }
        case (nil, let out):
            return try asUsageError { try StoreLocation.directory(checking: out ?? defaultOut) }
        }
    }

    /// Checks `--presign` against the store and `--base-url`, resolving the configuration of an
    /// `s3://` store (so a missing key or a bad region is a usage error, before any work).
    func validate(location: StoreLocation, baseURL: String?) throws {
        guard case .s3(let s3) = location else {
            if presign != nil { throw ValidationError("--presign needs an s3:// store (--store s3://BUCKET/PREFIX)") }
            return
        }
        if presign != nil, baseURL != nil {
            throw ValidationError("give --presign or --base-url, not both: each names the attachments' URLs")
        }
        try asUsageError {
            _ = try urls(baseURL: baseURL)
            _ = try configuration(for: s3)
        }
    }

    /// The URLs objects get: `--base-url` joined with the key, presigned, or the bucket's.
    func urls(baseURL: String?) throws(PushPrepError) -> ObjectURLStyle {
        if let baseURL { return .baseURL(baseURL) }
        if let presign { return .presigned(seconds: try ObjectURLStyle.presignSeconds(parsing: presign)) }
        return .bucket
    }

    /// The client's configuration for `location`, with the key, region and endpoint found in
    /// this process's environment and the AWS files, and the upload settings given (the
    /// defaults for a command that uploads nothing).
    func configuration(
        for location: S3Location, limits: S3Configuration.Limits = S3Configuration.Limits(),
        cacheControl: String = S3Configuration.defaultCacheControl
    ) throws(PushPrepError) -> S3Configuration {
        let aws = try AWSConfiguration.resolve(for: location, environment: ProcessInfo.processInfo.environment)
        return try S3Configuration(aws, location: location, limits: limits, cacheControl: cacheControl)
    }
}

/// Where outputs go and, for an `s3://` store, how they are uploaded and which URLs the manifest
/// gives: ``StoreSelection`` and the upload settings; shared by `process`, `worker` and
/// `preflight --fix`.
struct StoreOptions: ParsableArguments {
    @OptionGroup var selection: StoreSelection

    @Option(help: "With an s3:// store: the Cache-Control stored with each object.")
    var cacheControl: String = S3Configuration.defaultCacheControl

    @Option(help: "With an s3:// store: files larger than this many bytes go up in parts.")
    var multipartThreshold: Int = S3Configuration.Limits().multipartThreshold

    @Option(help: "With an s3:// store: the size of each part in bytes (at least 5 MiB).")
    var partSize: Int = S3Configuration.Limits().partSize

    @Option(help: "With an s3:// store: parts of one file sent at once (1...64).")
    var parallelParts: Int = S3Configuration.Limits().parallelParts

    /// `--store`, else `--out`, else `defaultOut` (see ``StoreSelection/location(out:defaultOut:)``).
    func location(out: String?, defaultOut: String) throws -> StoreLocation {
        try selection.location(out: out, defaultOut: defaultOut)
    }

    /// Checks the options against the store and `--base-url`, the upload settings included.
    func validate(location: StoreLocation, baseURL: String?) throws {
        try selection.validate(location: location, baseURL: baseURL)
        guard case .s3(let s3) = location else { return }
        _ = try asUsageError { try configuration(for: s3) }
    }

    /// The URLs the manifest gives (see ``StoreSelection/urls(baseURL:)``).
    func urls(baseURL: String?) throws(PushPrepError) -> ObjectURLStyle {
        try selection.urls(baseURL: baseURL)
    }

    /// The client's configuration for `location`, with these upload settings.
    func configuration(for location: S3Location) throws(PushPrepError) -> S3Configuration {
        var limits = S3Configuration.Limits()
        limits.multipartThreshold = multipartThreshold
        limits.partSize = partSize
        limits.parallelParts = parallelParts
        return try selection.configuration(for: location, limits: limits, cacheControl: cacheControl)
    }
}

/// `--out` and the store it is the short form of: where `process`, `worker` and `serve` put
/// their outputs.
struct OutputOptions: ParsableArguments {
    @Option(help: "The out directory (the same as --store file:DIR; default ./pushprep-out).")
    var out: String?

    @OptionGroup(title: "Object storage") var storage: StoreOptions

    /// `--store`, else `--out`, else `./pushprep-out`.
    var location: StoreLocation {
        get throws { try storage.location(out: out, defaultOut: "./pushprep-out") }
    }

    /// Checks the store's options against the location and `baseURL` (see
    /// ``StoreOptions/validate(location:baseURL:)``).
    func validate(baseURL: String?) throws {
        try storage.validate(location: try location, baseURL: baseURL)
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
