import Foundation
import PushPrepCore
import PushPrepStorage
import PushPrepTestSupport
import Testing

/// Credentials, region, endpoint and addressing found as the AWS CLI finds them, from an
/// environment and files given as values (no real home directory is read).
@Suite struct AWSConfigurationTests {
    static let home = "/home/op"
    static let credentialsPath = "/home/op/.aws/credentials"
    static let configPath = "/home/op/.aws/config"
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    static let token = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN"

    /// Resolves with `environment` (plus HOME) and `files` by path.
    static func resolve(
        _ environment: [String: String] = [:], files: [String: String] = [:], location: S3Location? = nil
    ) throws(PushPrepError) -> AWSConfiguration {
        var environment = environment
        if environment["HOME"] == nil { environment["HOME"] = home }
        return try AWSConfiguration.resolve(for: location, environment: environment) { path in files[path] }
    }

    static let keyEnvironment = [
        "AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": token,
    ]

    static let profiles = [
        credentialsPath: """
        [default]
        aws_access_key_id = AKIDDEFAULT
        aws_secret_access_key = \(secret)

        [work]
        aws_access_key_id = AKIDWORK
        aws_secret_access_key = \(secret)
        aws_session_token = \(token)
        """,
        configPath: """
        [default]
        region = eu-west-1

        [profile work]
        region = eu-west-3
        aws_access_key_id = AKIDWORKCONFIG
        aws_secret_access_key = \(secret)

        [profile   config-only]
        region = ap-south-1
        aws_access_key_id = AKIDCONFIGONLY
        aws_secret_access_key = \(secret)
        """,
    ]

    // MARK: - Credentials

    @Test("the environment's key wins over every profile, with its session token")
    func environmentKey() throws {
        let configuration = try Self.resolve(
            Self.keyEnvironment.merging(["AWS_PROFILE": "work"]) { $1 }, files: Self.profiles)
        #expect(configuration.credentials.accessKeyID == "AKIDENV")
        #expect(configuration.credentials.secretAccessKey == Self.secret)
        #expect(configuration.credentials.sessionToken == Self.token)
        #expect(configuration.credentialsSource == "AWS_ACCESS_KEY_ID")
        #expect(configuration.region == "eu-west-3")
        let signer = try configuration.signer()
        #expect(signer.region == "eu-west-3" && signer.credentials.accessKeyID == "AKIDENV")
    }

    /// AWS_PROFILE, the key id used, where it came from, the region.
    static let profileCases: [(String?, String, String, String)] = [
        (nil, "AKIDDEFAULT", "[default] in /home/op/.aws/credentials", "eu-west-1"),
        ("work", "AKIDWORK", "[work] in /home/op/.aws/credentials", "eu-west-3"),
        ("config-only", "AKIDCONFIGONLY", "[profile   config-only] in /home/op/.aws/config", "ap-south-1"),
    ]

    @Test(
        "a profile's key comes from the credentials file, then the config file; its region from the config file",
        arguments: profileCases)
    func profileKey(profile: String?, keyID: String, source: String, region: String) throws {
        let environment = profile.map { ["AWS_PROFILE": $0] } ?? [:]
        let configuration = try Self.resolve(environment, files: Self.profiles)
        #expect(configuration.profile == profile ?? "default")
        #expect(configuration.credentials.accessKeyID == keyID)
        #expect(configuration.credentialsSource == source)
        #expect(configuration.region == region)
        #expect(configuration.credentials.sessionToken == (profile == "work" ? Self.token : nil))
    }

    @Test("[profile default] in the config file is the default profile, before [default]")
    func profileDefaultSection() throws {
        let files = [
            Self.configPath: """
            [default]
            region = eu-west-1
            [profile default]
            region = eu-north-1
            aws_access_key_id = AKIDPROFILEDEFAULT
            aws_secret_access_key = \(Self.secret)
            """
        ]
        let configuration = try Self.resolve(files: files)
        #expect(configuration.region == "eu-north-1")
        #expect(configuration.credentials.accessKeyID == "AKIDPROFILEDEFAULT")
    }

    @Test("AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE replace the files in ~/.aws (~ expanded)")
    func fileOverrides() throws {
        let files = [
            "/etc/pushprep/credentials": "[default]\naws_access_key_id = AKIDELSEWHERE\naws_secret_access_key = x\n",
            "/home/op/conf/aws": "[default]\nregion = sa-east-1\n",
        ].merging(Self.profiles) { $1 }
        let configuration = try Self.resolve(
            ["AWS_SHARED_CREDENTIALS_FILE": "/etc/pushprep/credentials", "AWS_CONFIG_FILE": "~/conf/aws"], files: files)
        #expect(configuration.credentials.accessKeyID == "AKIDELSEWHERE")
        #expect(configuration.region == "sa-east-1")
        #expect(configuration.credentialsSource == "[default] in /etc/pushprep/credentials")
    }

    @Test("an empty variable counts as unset")
    func emptyVariables() throws {
        let configuration = try Self.resolve(
            [
                "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_REGION": "",
                "AWS_DEFAULT_REGION": "ca-central-1",
                "AWS_PROFILE": "",
            ],
            files: Self.profiles)
        #expect(configuration.credentials.accessKeyID == "AKIDDEFAULT")
        #expect(configuration.region == "ca-central-1")
    }

    /// Environment, files, a piece of the message.
    static let missing: [([String: String], [String: String], String)] = [
        (
            [:], [:],
            "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give the profile default "
                + "aws_access_key_id and aws_secret_access_key in /home/op/.aws/credentials or /home/op/.aws/config"
        ),
        (
            ["AWS_SHARED_CREDENTIALS_FILE": "/srv/creds", "AWS_CONFIG_FILE": "/srv/conf"], [:],
            "in /srv/creds or /srv/conf"
        ),
        (["HOME": ""], [:], "AWS_SHARED_CREDENTIALS_FILE (unset, and no HOME for the default)"),
        (["AWS_ACCESS_KEY_ID": "AKIDENV"], [:], "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"),
        (["AWS_SECRET_ACCESS_KEY": secret], [:], "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"),
        (
            ["AWS_PROFILE": "nope"], profiles,
            "the profile nope (AWS_PROFILE) is in neither /home/op/.aws/credentials nor /home/op/.aws/config"
        ),
        (
            [:], [credentialsPath: "[default]\naws_secret_access_key = \(secret)\n"],
            "[default] in /home/op/.aws/credentials has aws_secret_access_key but no aws_access_key_id"
        ),
        (
            [:], [configPath: "[default]\naws_access_key_id = AKID\n"],
            "[default] in /home/op/.aws/config has aws_access_key_id but no aws_secret_access_key"
        ),
        (
            ["AWS_PROFILE": "role"],
            [configPath: "[profile role]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = default\n"],
            "gets its key through role_arn, which PushPrep does not support"
        ),
        (
            ["AWS_REGION": "Paris"].merging(keyEnvironment) { $1 }, [:],
            "AWS_REGION: the region \"Paris\" is not a region name"
        ),
        (
            keyEnvironment, [configPath: "[default]\nregion = eu-west-3 # Paris\n"],
            "[default] in /home/op/.aws/config: the region \"eu-west-3 # Paris\" is not a region name"
        ),
        (
            ["AWS_ENDPOINT_URL_S3": "minio:9000"].merging(keyEnvironment) { $1 }, [:],
            "AWS_ENDPOINT_URL_S3: the endpoint \"minio:9000\" must be an http:// or https:// URL"
        ),
        (
            keyEnvironment, [configPath: "[default]\ns3 =\n  addressing_style = sideways\n"],
            "s3.addressing_style is path, virtual or auto, not \"sideways\""
        ),
        (keyEnvironment, [configPath: "[default]\nregion = a\nregion = b\n"], "/home/op/.aws/config, line 3"),
        (
            ["AWS_ACCESS_KEY_ID": "AKID EXAMPLE", "AWS_SECRET_ACCESS_KEY": secret], [:],
            "AWS_ACCESS_KEY_ID: the AWS access key id must be letters and digits"
        ),
        (
            [:],
            [
                credentialsPath:
                    "[default]\naws_access_key_id = AKID\naws_secret_access_key = x\naws_session_token = a\n  b\n"
            ],
            "[default] in /home/op/.aws/credentials: the AWS session token is empty or holds a line break"
        ),
    ]

    @Test("missing or half-given settings are invalid_settings naming what was looked at", arguments: missing)
    func missingSettings(environment: [String: String], files: [String: String], expected: String) {
        do {
            let configuration = try Self.resolve(environment, files: files)
            Issue.record("resolved: \(configuration)")
        } catch {
            #expect(error.code == .invalidSettings)
            #expect(error.message.contains(expected), "\(error)")
        }
    }

    @Test("no error, description or dump holds the secret or the session token")
    func secretsNeverShown() throws {
        var messages: [String] = []
        for (environment, files, _) in Self.missing {
            do { _ = try Self.resolve(environment, files: files) } catch { messages.append(error.description) }
        }
        // The places a secret sits next to a mistake.
        let mistakes: [([String: String], [String: String])] = [
            ([:], [Self.credentialsPath: "[default]\naws_secret_access_key \(Self.secret)\n"]),
            ([:], [Self.credentialsPath: "aws_secret_access_key = \(Self.secret)\n[default]\n"]),
            (
                [:],
                [
                    Self.credentialsPath:
                        "[default]\naws_secret_access_key = \(Self.secret)\naws_secret_access_key = \(Self.token)\n"
                ]
            ),
            ([:], [Self.credentialsPath: "[default]\ns3 =\n  \(Self.secret)\n"]),
            (["AWS_SESSION_TOKEN": Self.token, "AWS_SECRET_ACCESS_KEY": Self.secret], [:]),
            (["AWS_ENDPOINT_URL": "https://AKID:\(Self.secret)@h"].merging(Self.keyEnvironment) { $1 }, [:]),
        ]
        for (environment, files) in mistakes {
            do {
                let configuration = try Self.resolve(environment, files: files)
                Issue.record("resolved: \(configuration)")
            } catch {
                messages.append(error.description)
            }
        }
        #expect(messages.count == Self.missing.count + mistakes.count)
        let resolved = try Self.resolve(Self.keyEnvironment, files: Self.profiles)
        var dumped = ""
        dump(resolved, to: &dumped)
        messages += [resolved.description, String(reflecting: resolved), "\(resolved)", dumped]
        for message in messages {
            #expect(!message.contains(Self.secret) && !message.contains(Self.token), "\(message)")
            #expect(!message.contains("wJalr") && !message.contains("IQoJ"), "\(message)")
        }
        #expect(dumped.contains("AKIDENV"))
    }

    // MARK: - Region, endpoint, addressing

    /// The store URL's region, the environment, the config file, the region used.
    static let regions: [(String?, [String: String], String?, String)] = [
        (
            "ap-northeast-1", ["AWS_REGION": "eu-west-2", "AWS_DEFAULT_REGION": "eu-west-1"], "us-west-2",
            "ap-northeast-1"
        ),
        (nil, ["AWS_REGION": "eu-west-2", "AWS_DEFAULT_REGION": "eu-west-1"], "us-west-2", "eu-west-2"),
        (nil, ["AWS_DEFAULT_REGION": "eu-west-1"], "us-west-2", "eu-west-1"),
        (nil, [:], "us-west-2", "us-west-2"),
        (nil, [:], nil, "us-east-1"),
    ]

    @Test("region: the store URL's, AWS_REGION, AWS_DEFAULT_REGION, the profile's, us-east-1", arguments: regions)
    func regionPrecedence(url: String?, environment: [String: String], profile: String?, expected: String) throws {
        let location = try S3Location(bucket: "media-bucket", region: url)
        let files = profile.map { [Self.configPath: "[default]\nregion = \($0)\n"] } ?? [:]
        let configuration = try Self.resolve(
            environment.merging(Self.keyEnvironment) { $1 }, files: files, location: location)
        #expect(configuration.region == expected)
    }

    static let endpointConfig = """
        [default]
        endpoint_url = http://profile.example:9000
        services = local-s3

        [services local-s3]
        s3 =
          endpoint_url = http://services.example:9000
        sqs =
          endpoint_url = http://sqs.example:9000
        """

    /// The store URL's endpoint, the environment, the config file, the endpoint used (nil: AWS's).
    static let endpoints: [(String?, [String: String], String?, String?)] = [
        (
            "https://url.example",
            ["AWS_ENDPOINT_URL_S3": "http://s3env.example", "AWS_ENDPOINT_URL": "http://env.example"],
            endpointConfig, "https://url.example"
        ),
        (
            nil, ["AWS_ENDPOINT_URL_S3": "http://s3env.example", "AWS_ENDPOINT_URL": "http://env.example"],
            endpointConfig, "http://s3env.example"
        ),
        (nil, ["AWS_ENDPOINT_URL": "http://env.example"], endpointConfig, "http://env.example"),
        (nil, [:], endpointConfig, "http://services.example:9000"),
        (nil, [:], "[default]\nendpoint_url = http://profile.example:9000\n", "http://profile.example:9000"),
        (nil, [:], nil, nil),
        (
            nil, ["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true", "AWS_ENDPOINT_URL": "http://env.example"],
            endpointConfig, nil
        ),
        (
            "https://url.example", ["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"], endpointConfig,
            "https://url.example"
        ),
        (nil, [:], "[default]\nignore_configured_endpoint_urls = true\n" + "endpoint_url = http://p.example\n", nil),
    ]

    @Test(
        "endpoint: the store URL's, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's services, its endpoint_url",
        arguments: endpoints)
    func endpointPrecedence(url: String?, environment: [String: String], config: String?, expected: String?) throws {
        let location = try S3Location(bucket: "media-bucket", endpoint: url)
        let files = config.map { [Self.configPath: $0] } ?? [:]
        let configuration = try Self.resolve(
            environment.merging(Self.keyEnvironment) { $1 }, files: files, location: location)
        #expect(configuration.endpoint?.absoluteString == expected)
    }

    @Test("addressing: the store URL's path-style, the profile's s3.addressing_style, the default")
    func addressing() throws {
        let files = [Self.configPath: "[default]\nregion = eu-west-3\ns3 =\n  addressing_style = path\n"]
        let plain = try S3Location(bucket: "media-bucket", prefix: "push")
        let configuration = try Self.resolve(Self.keyEnvironment, files: files, location: plain)
        #expect(configuration.pathStyle == true)
        #expect(
            try configuration.address(of: plain).objectURL(key: plain.key(forFile: "a.jpg")).absoluteString
                == "https://s3.eu-west-3.amazonaws.com/media-bucket/push/a.jpg")

        let virtual = try S3Location(bucket: "media-bucket", prefix: "push", pathStyle: false)
        let overridden = try Self.resolve(Self.keyEnvironment, files: files, location: virtual)
        #expect(overridden.pathStyle == false)
        #expect(
            try overridden.address(of: virtual).objectURL(key: "push/a.jpg").absoluteString
                == "https://media-bucket.s3.eu-west-3.amazonaws.com/push/a.jpg")

        let auto = [Self.configPath: "[default]\ns3 =\n  addressing_style = auto\n"]
        let local = try S3Location(bucket: "media-bucket", endpoint: "http://127.0.0.1:9000")
        let byDefault = try Self.resolve(Self.keyEnvironment, files: auto, location: local)
        #expect(byDefault.pathStyle == nil)
        #expect(try byDefault.address(of: local).pathStyle)
        #expect(
            try byDefault.address(of: local).objectURL(key: "a.jpg").absoluteString
                == "http://127.0.0.1:9000/media-bucket/a.jpg")
    }

    @Test("the real file reader: nil for a missing file, the text of one that exists, an error for non-UTF-8")
    func realFiles() throws {
        try TestTools.withTemporaryDirectory { directory in
            let missing = directory.appendingPathComponent("missing").path
            #expect(try AWSConfiguration.readFileIfPresent(missing) == nil)
            let good = directory.appendingPathComponent("config")
            try Data("[default]\nregion = eu-west-3\n".utf8).write(to: good)
            #expect(try AWSConfiguration.readFileIfPresent(good.path) == "[default]\nregion = eu-west-3\n")
            let bad = directory.appendingPathComponent("bad")
            try Data([0x5B, 0xFF, 0x5D]).write(to: bad)
            #expect(throws: PushPrepError.self) { try AWSConfiguration.readFileIfPresent(bad.path) }
        }
    }
}
