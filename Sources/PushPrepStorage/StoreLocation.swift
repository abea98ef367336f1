import Foundation
package import PushPrepCore

/// Where outputs go, from `--store URL` (or `--out DIR`, the short form of `file:DIR`):
///
/// - `file:DIR`: a local directory, the path as written (relative to the working directory
///   unless it starts with `/`); `file:///abs/dir` (or `file://localhost/abs/dir`) is the URL
///   form, percent-decoded. `--out DIR` is ``directory(checking:)``.
/// - `s3://BUCKET/PREFIX?region=R&endpoint=https://host:port&path-style=true`: a bucket and a
///   key prefix (percent-decoded); the query is optional and only those three names are
///   accepted, each once (see ``S3Location`` for the checks and the defaults).
///
/// Anything else is `invalid_settings`, naming what is wrong.
package enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// A local directory.
    case directory(String)
    /// A bucket and prefix.
    case s3(S3Location)

    /// The query parameters an `s3://` URL may have.
    package static let s3Parameters = ["region", "endpoint", "path-style"]

    /// Parses `--store`'s value. A message never quotes credentials: `user:password@` in an
    /// `s3://` or `file://` URL is refused without quoting it, and when any other check fails
    /// on a text that may hold some (``URLCredentials``), the message shows the text redacted
    /// instead of the part that failed.
    package init(parsing text: String) throws(PushPrepError) {
        let lowercased = text.lowercased()
        if let scheme = text.range(of: "://") {
            let authority = text[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if let at = authority.lastIndex(of: "@") {
                // Not even a user name alone is quoted: for S3 it is the access key id.
                throw PushPrepError(
                    .invalidSettings,
                    "the store \(text[..<scheme.upperBound])***\(text[at...]) carries user:password@: a store URL "
                        + "takes no credentials (give S3 keys as AWS does: AWS_ACCESS_KEY_ID and "
                        + "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)")
            }
        }
        do {
            self = try Self.parse(text, lowercased: lowercased)
        } catch {
            guard URLCredentials.hasSecret(text) else { throw error }
            throw PushPrepError(
                .invalidSettings,
                "the store \(URLCredentials.redacted(text)) is not valid (not quoted further: it may hold "
                    + "credentials, which a store URL does not take)")
        }
    }

    /// Parses `--store`'s value once credentials are ruled out.
    private static func parse(_ text: String, lowercased: String) throws(PushPrepError) -> StoreLocation {
        if lowercased.hasPrefix("s3://") {
            return .s3(try Self.parseS3(text.dropFirst(5)))
        } else if lowercased.hasPrefix("file:") {
            return .directory(try Self.parseFile(text.dropFirst(5)))
        } else {
            // Only the scheme is quoted: a URL given by mistake may carry user:password@.
            let scheme = text.prefix { $0 != ":" }
            let given = scheme.count == text.count ? "a path" : "a \(String(reflecting: String(scheme))) URL"
            throw PushPrepError(
                .invalidSettings,
                "the store must be file:DIR or s3://BUCKET/PREFIX, not \(given)"
                    + (lowercased.hasPrefix("s3:") ? " (s3: takes two slashes: s3://BUCKET)" : "")
                    + (scheme.count == text.count ? " (write file:DIR or --out DIR for a directory)" : ""))
        }
    }

    /// `--out DIR`: the directory, checked as `file:DIR` is.
    package static func directory(checking path: String) throws(PushPrepError) -> StoreLocation {
        .directory(try checkedDirectory(path))
    }

    /// `file:DIR` or the `s3://` URL, in a form that parses back to the same location.
    package var description: String {
        switch self {
        case .directory(let path):
            // file://… is the URL form: a path starting with // goes there, with what it decodes escaped.
            path.hasPrefix("//")
                ? "file://"
                    + path.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "?", with: "%3F")
                    .replacingOccurrences(of: "#", with: "%23")
                : "file:\(path)"
        case .s3(let location): location.description
        }
    }

    // MARK: - Parsing

    private static func parseFile(_ rest: Substring) throws(PushPrepError) -> String {
        guard rest.hasPrefix("//") else { return try checkedDirectory(String(rest)) }
        // The URL form: file://[localhost]/absolute/path, percent-encoded.
        let afterSlashes = rest.dropFirst(2)
        let host = afterSlashes.prefix { $0 != "/" }
        guard host.isEmpty || host.lowercased() == "localhost" else {
            throw PushPrepError(
                .invalidSettings,
                "the file URL names the host \(String(reflecting: String(host))): write file:///ABSOLUTE/DIR "
                    + "or file:DIR")
        }
        let path = afterSlashes.dropFirst(host.count)
        guard !path.contains("?"), !path.contains("#") else {
            throw PushPrepError(
                .invalidSettings, "a file: URL has no query or fragment (write ? as %3F and # as %23)")
        }
        guard let decoded = String(path).removingPercentEncoding else {
            throw PushPrepError(
                .invalidSettings, "the file URL's path \(String(reflecting: String(path))) has a bad %-escape")
        }
        return try checkedDirectory(decoded)
    }

    private static func checkedDirectory(_ path: String) throws(PushPrepError) -> String {
        guard !path.isEmpty else { throw PushPrepError(.invalidSettings, "the output directory is empty") }
        guard !path.contains("\0") else {
            throw PushPrepError(.invalidSettings, "the output directory \(String(reflecting: path)) holds a NUL byte")
        }
        return path
    }

    private static func parseS3(_ rest: Substring) throws(PushPrepError) -> S3Location {
        guard !rest.contains("#") else {
            throw PushPrepError(.invalidSettings, "an s3:// store has no fragment (write # in a prefix as %23)")
        }
        let beforeQuery = rest.prefix { $0 != "?" }
        let query = rest.dropFirst(beforeQuery.count + 1)
        let bucket = beforeQuery.prefix { $0 != "/" }
        let encodedPrefix = beforeQuery.dropFirst(bucket.count)
        guard !bucket.isEmpty else { throw PushPrepError(.invalidSettings, "the s3:// store names no bucket") }
        guard let prefix = String(encodedPrefix).removingPercentEncoding else {
            throw PushPrepError(
                .invalidSettings, "the key prefix \(String(reflecting: String(encodedPrefix))) has a bad %-escape")
        }
        var values: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let name = String(pair.prefix { $0 != "=" })
            guard Self.s3Parameters.contains(name) else {
                throw PushPrepError(
                    .invalidSettings,
                    "the s3:// store has an unknown parameter \(String(reflecting: name)) (known: "
                        + Self.s3Parameters.joined(separator: ", ") + ")")
            }
            guard values[name] == nil else {
                throw PushPrepError(.invalidSettings, "the s3:// store gives \(name)= twice")
            }
            let encoded = pair.dropFirst(name.count + 1)
            guard let value = String(encoded).removingPercentEncoding, !value.isEmpty else {
                throw PushPrepError(.invalidSettings, "the s3:// store's \(name)= is empty or has a bad %-escape")
            }
            values[name] = value
        }
        var pathStyle: Bool?
        switch values["path-style"] {
        case nil: pathStyle = nil
        case "true": pathStyle = true
        case "false": pathStyle = false
        case let other?:
            throw PushPrepError(
                .invalidSettings, "path-style= is true or false, not \(String(reflecting: other))")
        }
        return try S3Location(
            bucket: String(bucket), prefix: prefix, region: values["region"], endpoint: values["endpoint"],
            pathStyle: pathStyle)
    }
}
