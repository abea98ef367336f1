package import Foundation
package import PushPrepCore

/// The key, region, endpoint and addressing style an `s3://` store is used with, found the way
/// the AWS CLI finds them, so an operator's existing setup works unchanged.
///
/// Precedence, first found wins:
/// - credentials: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with `AWS_SESSION_TOKEN`),
///   then the profile's `aws_access_key_id` and `aws_secret_access_key` (with
///   `aws_session_token`) in the shared credentials file `[NAME]`, then in the config file
///   (`[profile NAME]`, or `[default]`);
/// - region: the store URL's `region=`, `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's
///   `region` in the config file, else `us-east-1` (as botocore does for S3);
/// - endpoint: the store URL's `endpoint=`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the
///   profile's `services` section's `s3 = endpoint_url`, the profile's `endpoint_url`, else AWS's
///   own for the region; `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true` (or the profile's
///   `ignore_configured_endpoint_urls = true`) skips all but the URL's;
/// - addressing: the store URL's `path-style=`, the profile's `s3 = addressing_style`
///   (`path`, `virtual`, `auto`), else ``S3BucketAddress``'s default.
///
/// The profile is `AWS_PROFILE`, else `default`; the files `AWS_SHARED_CREDENTIALS_FILE` and
/// `AWS_CONFIG_FILE`, else `~/.aws/credentials` and `~/.aws/config` (`~` is `HOME`). A profile
/// named by `AWS_PROFILE` must exist in one of them. An empty variable counts as unset.
///
/// The environment and the files' contents are inputs, so tests need no home directory. No
/// message, description or dump of this value holds the secret or the session token.
package struct AWSConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key requests are signed with.
    package let credentials: AWSCredentials
    /// The region requests are signed for (and AWS's endpoint is in).
    package let region: String
    /// The endpoint configured (`scheme://host[:port]`); nil for AWS's own.
    package let endpoint: URL?
    /// Path style as configured (URL, then profile); nil for the default.
    package let pathStyle: Bool?
    /// The profile that was read (`default` unless `AWS_PROFILE` names another).
    package let profile: String
    /// Where the key came from (`AWS_ACCESS_KEY_ID`, `[work] in /home/me/.aws/credentials`):
    /// a name and a place, never a value, for logs and messages.
    package let credentialsSource: String

    /// Reads a file for ``resolve(for:environment:readFile:)``: its text, or nil when it does
    /// not exist; throws `invalid_settings` when it exists but cannot be read as UTF-8 text.
    package typealias FileReader = (_ path: String) throws(PushPrepError) -> String?

    /// Finds the configuration for `location` (its `region=`, `endpoint=` and `path-style=` win)
    /// in `environment` and the files `readFile` reads; throws `invalid_settings` naming what is
    /// missing or wrong and where it looked.
    package static func resolve(
        for location: S3Location? = nil, environment: [String: String],
        readFile: FileReader = AWSConfiguration.readFileIfPresent
    ) throws(PushPrepError) -> AWSConfiguration {
        let environment = environment.filter { !$0.value.isEmpty }
        let profile = try Profile(environment: environment, readFile: readFile)
        let credentials = try profile.credentials(environment: environment)

        let region: String
        if let given = location?.region {
            region = given
        } else if let (value, source) = environment.first(of: ["AWS_REGION", "AWS_DEFAULT_REGION"]) {
            region = try checked(source) { () throws(PushPrepError) in try S3Location.checkedRegion(value) }
        } else if let value = profile.config?.values["region"] {
            region = try checked(profile.configPlace) { () throws(PushPrepError) in try S3Location.checkedRegion(value)
            }
        } else {
            region = "us-east-1"
        }

        // Checked now, so a key or region the signer cannot use fails at start, not at the first upload.
        _ = try checked(credentials.source) { () throws(PushPrepError) in
            try SigV4Signer(credentials: credentials.value, region: region)
        }

        var endpoint = location?.endpoint
        let ignoreConfigured =
            environment["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"]?.lowercased() == "true"
            || profile.config?.values["ignore_configured_endpoint_urls"]?.lowercased() == "true"
        if endpoint == nil, !ignoreConfigured {
            if let (value, source) = environment.first(of: ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]) {
                endpoint = try checked(source) { () throws(PushPrepError) in try S3Location.checkedEndpoint(value) }
            } else if let (value, place) = profile.configuredEndpoint() {
                endpoint = try checked(place) { () throws(PushPrepError) in try S3Location.checkedEndpoint(value) }
            }
        }

        var pathStyle = location?.pathStyle
        if pathStyle == nil, let style = profile.config?.nested["s3"]?["addressing_style"] {
            switch style.lowercased() {
            case "path": pathStyle = true
            case "virtual": pathStyle = false
            case "auto": pathStyle = nil
            default:
                throw PushPrepError(
                    .invalidSettings,
                    "\(profile.configPlace): s3.addressing_style is path, virtual or auto, not "
                        + String(reflecting: style))
            }
        }
        return AWSConfiguration(
            credentials: credentials.value, region: region, endpoint: endpoint, pathStyle: pathStyle,
            profile: profile.name, credentialsSource: credentials.source)
    }

    /// The signer for requests with this key in this region (both were checked by
    /// ``resolve(for:environment:readFile:)``).
    package func signer() throws(PushPrepError) -> SigV4Signer {
        try SigV4Signer(credentials: credentials, region: region)
    }

    /// How `location`'s bucket is reached with this configuration: the configured endpoint or
    /// AWS's for the region, path style as configured or by default.
    package func address(of location: S3Location) throws(PushPrepError) -> S3BucketAddress {
        let endpoint: URL
        if let configured = self.endpoint {
            endpoint = configured
        } else {
            endpoint = try S3BucketAddress.awsEndpoint(region: region)
        }
        return try S3BucketAddress(bucket: location.bucket, endpoint: endpoint, pathStyle: pathStyle)
    }

    /// The largest credentials or config file read: real ones are a few KiB; the cap keeps a
    /// path such as `AWS_CONFIG_FILE=/dev/zero` from filling memory.
    static let maxFileBytes = 1 << 20

    /// The real file system's ``FileReader``: a regular file, read once through ``InputFile``
    /// within ``maxFileBytes``; nil when there is none.
    package static func readFileIfPresent(_ path: String) throws(PushPrepError) -> String? {
        let contents: [UInt8]
        do {
            contents = try InputFile.read(path: path, maxBytes: maxFileBytes) { _ in true }.contents ?? []
        } catch  where error.code == .notFound {
            return nil
        } catch  where error.code == .corruptInput {
            return ""  // an empty file: no profiles
        } catch {
            throw PushPrepError(.invalidSettings, "cannot read \(path): \(error.message)")
        }
        guard let text = String(validating: contents, as: UTF8.self) else {
            throw PushPrepError(.invalidSettings, "\(path) is not UTF-8 text")
        }
        return text
    }

    package var description: String {
        "AWSConfiguration(profile: \(profile), region: \(region), endpoint: \(endpoint?.absoluteString ?? "AWS"), "
            + "pathStyle: \(pathStyle.map(String.init) ?? "default"), credentials: \(credentials) from "
            + "\(credentialsSource))"
    }

    package var debugDescription: String { description }

    /// What `dump` and `Mirror` see: the credentials through their own redacting mirror.
    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "credentials": credentials, "region": region, "endpoint": endpoint as Any,
                "pathStyle": pathStyle as Any,
                "profile": profile, "credentialsSource": credentialsSource,
            ], displayStyle: .struct)
    }

    /// Runs `check`, prefixing its error's message with where the value came from.
    private static func checked<T>(_ source: String, _ check: () throws(PushPrepError) -> T) throws(PushPrepError) -> T
    {
        do {
            return try check()
        } catch {
            throw PushPrepError(error.code, "\(source): \(error.message)")
        }
    }
}

extension [String: String] {
    /// The first of `names` that is set, with its name.
    fileprivate func first(of names: [String]) -> (value: String, name: String)? {
        for name in names { if let value = self[name] { return (value, name) } }
        return nil
    }
}

/// The profile's sections in the two files, and where they are.
private struct Profile {
    let name: String
    let credentialsPath: String?
    let configPath: String?
    /// `[NAME]` in the credentials file.
    let credentialsSection: AWSConfigFile.Section?
    /// `[profile NAME]` (or `[default]`) in the config file.
    let config: AWSConfigFile.Section?
    /// The config file as a whole (for `[services NAME]`).
    let configFile: AWSConfigFile?

    init(environment: [String: String], readFile: AWSConfiguration.FileReader) throws(PushPrepError) {
        name = environment["AWS_PROFILE"] ?? "default"
        let home = environment["HOME"]
        func path(_ variable: String, _ defaultName: String) -> String? {
            if let given = environment[variable] {
                guard given == "~" || given.hasPrefix("~/") else { return given }
                return home.map { $0 + given.dropFirst() }
            }
            return home.map { ($0.hasSuffix("/") ? String($0.dropLast()) : $0) + "/.aws/" + defaultName }
        }
        credentialsPath = path("AWS_SHARED_CREDENTIALS_FILE", "credentials")
        configPath = path("AWS_CONFIG_FILE", "config")
        let credentialsFile = try credentialsPath.flatMap { (path: String) throws(PushPrepError) in
            try readFile(path).map { (text: String) throws(PushPrepError) in
                try AWSConfigFile(parsing: text, path: path)
            }
        }
        configFile = try configPath.flatMap { (path: String) throws(PushPrepError) in
            try readFile(path).map { (text: String) throws(PushPrepError) in
                try AWSConfigFile(parsing: text, path: path)
            }
        }
        credentialsSection = credentialsFile?.section(name)
        let name = name
        // `[profile default]` is also the default profile; the CLI prefers it to `[default]`.
        config =
            configFile?.sections.first { Self.profileName(ofConfigSection: $0.name) == name }
            ?? (name == "default" ? configFile?.section("default") : nil)
        if environment["AWS_PROFILE"] != nil, credentialsSection == nil, config == nil {
            throw PushPrepError(
                .invalidSettings,
                "the profile \(AWSConfigFile.quoted(name)) (AWS_PROFILE) is in neither "
                    + "\(Self.describe(credentialsPath, "AWS_SHARED_CREDENTIALS_FILE")) nor "
                    + "\(Self.describe(configPath, "AWS_CONFIG_FILE"))")
        }
    }

    /// `NAME` of a config file section `[profile NAME]` (whitespace between the two words
    /// trimmed, as the CLI does), nil for other sections.
    static func profileName(ofConfigSection section: String) -> String? {
        guard section.hasPrefix("profile"), let first = section.dropFirst(7).first, first == " " || first == "\t"
        else { return nil }
        return String(section.dropFirst(7).drop { $0 == " " || $0 == "\t" })
    }

    var configPlace: String {
        "[\(config?.name ?? "profile \(name)")] in \(configPath ?? "the config file")"
    }

    /// The key: the environment's, the credentials file's, the config file's.
    func credentials(environment: [String: String]) throws(PushPrepError) -> (value: AWSCredentials, source: String) {
        let key = environment["AWS_ACCESS_KEY_ID"]
        let secret = environment["AWS_SECRET_ACCESS_KEY"]
        switch (key, secret) {
        case (let key?, let secret?):
            return (
                AWSCredentials(
                    accessKeyID: key, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"]),
                "AWS_ACCESS_KEY_ID"
            )
        case (.some, nil):
            throw PushPrepError(.invalidSettings, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
        case (nil, .some):
            throw PushPrepError(.invalidSettings, "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not")
        case (nil, nil):
            break
        }
        let places: [(AWSConfigFile.Section?, String?)] = [(credentialsSection, credentialsPath), (config, configPath)]
        for case (let section?, let path?) in places {
            if let found = try Self.credentials(in: section, place: "[\(section.name)] in \(path)") { return found }
        }
        throw PushPrepError(
            .invalidSettings,
            "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give the profile "
                + "\(AWSConfigFile.quoted(name)) aws_access_key_id and aws_secret_access_key in "
                + "\(Self.describe(credentialsPath, "AWS_SHARED_CREDENTIALS_FILE")) or "
                + "\(Self.describe(configPath, "AWS_CONFIG_FILE")) (AWS_PROFILE names another profile)")
    }

    /// The key a section holds, nil when it holds none; throws for half a key, and for a
    /// profile that gets its key in a way PushPrep does not support (roles, SSO, a process).
    private static func credentials(
        in section: AWSConfigFile.Section, place: String
    ) throws(PushPrepError) -> (value: AWSCredentials, source: String)? {
        let key = section.values["aws_access_key_id"].flatMap { $0.isEmpty ? nil : $0 }
        let secret = section.values["aws_secret_access_key"].flatMap { $0.isEmpty ? nil : $0 }
        switch (key, secret) {
        case (let key?, let secret?):
            let token = section.values["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 }
            return (AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token), place)
        case (.some, nil):
            throw PushPrepError(.invalidSettings, "\(place) has aws_access_key_id but no aws_secret_access_key")
        case (nil, .some):
            throw PushPrepError(.invalidSettings, "\(place) has aws_secret_access_key but no aws_access_key_id")
        case (nil, nil):
            let unsupported = [
                "role_arn", "credential_process", "sso_session", "sso_start_url", "web_identity_token_file",
            ]
            if let setting = unsupported.first(where: { section.values[$0] != nil }) {
                throw PushPrepError(
                    .invalidSettings,
                    "\(place) gets its key through \(setting), which PushPrep does not support: give "
                        + "aws_access_key_id and aws_secret_access_key (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
                )
            }
            return nil
        }
    }

    /// The endpoint the config file sets for S3: the profile's services section's
    /// `s3 = endpoint_url`, then the profile's `endpoint_url`; with where it was found.
    func configuredEndpoint() -> (value: String, place: String)? {
        if let services = config?.values["services"],
            let section = configFile?.sections.first(where: { Self.servicesName(of: $0.name) == services }),
            let url = section.nested["s3"]?["endpoint_url"]
        {
            return (url, "[\(section.name)] in \(configPath ?? "the config file")")
        }
        if let url = config?.values["endpoint_url"] { return (url, configPlace) }
        return nil
    }

    private static func servicesName(of section: String) -> String? {
        guard section.hasPrefix("services"), let first = section.dropFirst(8).first, first == " " || first == "\t"
        else { return nil }
        return String(section.dropFirst(8).drop { $0 == " " || $0 == "\t" })
    }

    private static func describe(_ path: String?, _ variable: String) -> String {
        path ?? "\(variable) (unset, and no HOME for the default)"
    }
}
