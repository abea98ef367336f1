import Foundation
import PushPrepCore
import PushPrepStorage
import Testing

/// The secret and the session token never show in text: not in descriptions, reflection, dumps,
/// nor in the message of any error the signer throws.
@Suite struct AWSCredentialsTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    static let token = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN"
    static let credentials = AWSCredentials(
        accessKeyID: "ASIAIOSFODNN7EXAMPLE", secretAccessKey: secret, sessionToken: token)

    /// Every way a value becomes text in a log line, an interpolation or a test failure.
    static func texts(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [
            String(describing: value), String(reflecting: value), "\(value)", dumped,
            Mirror(reflecting: value).children.map { "\($0.label ?? ""): \($0.value)" }.joined(separator: ", "),
        ]
    }

    @Test("credentials show the key id and <redacted>, never the secret or the token")
    func credentialsRedacted() {
        #expect(
            Self.credentials.description
                == "AWSCredentials(accessKeyID: ASIAIOSFODNN7EXAMPLE, secretAccessKey: <redacted>, sessionToken: <redacted>)"
        )
        for text in Self.texts(Self.credentials) {
            #expect(text.contains("ASIAIOSFODNN7EXAMPLE"), "\(text)")
            #expect(text.contains("<redacted>"), "\(text)")
            #expect(!text.contains(Self.secret) && !text.contains(Self.token), "\(text)")
            #expect(!text.contains("wJalr") && !text.contains("IQoJ"), "\(text)")
        }
        let permanent = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: Self.secret)
        #expect(permanent.description == "AWSCredentials(accessKeyID: AKIDEXAMPLE, secretAccessKey: <redacted>)")
        for text in Self.texts(permanent) { #expect(!text.contains(Self.secret), "\(text)") }
        // Inside a collection or another value, printing goes through the same descriptions.
        for text in Self.texts([Self.credentials]) + Self.texts((1, Self.credentials)) {
            #expect(!text.contains(Self.secret) && !text.contains(Self.token), "\(text)")
        }
    }

    @Test("a signer's text shows its region and the redacted credentials")
    func signerRedacted() throws {
        let signer = try SigV4Signer(credentials: Self.credentials, region: "eu-west-3")
        for text in Self.texts(signer) {
            #expect(text.contains("eu-west-3") && text.contains("ASIAIOSFODNN7EXAMPLE"), "\(text)")
            #expect(!text.contains(Self.secret) && !text.contains(Self.token), "\(text)")
        }
    }

    @Test("no error the signer throws names the secret or the token")
    func errorsRedacted() throws {
        let signer = try SigV4Signer(credentials: Self.credentials, region: "us-east-1")
        let date = Date(timeIntervalSince1970: 1_369_353_600)
        let url = try #require(URL(string: "https://b.example/k"))
        var errors: [PushPrepError] = []
        func collect(_ body: () throws -> Void) {
            do {
                try body()
            } catch let error as PushPrepError {
                errors.append(error)
            } catch {
                Issue.record("not a PushPrepError: \(error)")
            }
        }
        // A header value that is itself a secret, with a line break: refused without quoting it.
        collect {
            _ = try signer.authorizationHeaders(
                method: "GET", url: url, headers: [("x-amz-server-side-encryption-customer-key", "\(Self.secret)\n")],
                payloadHash: SigV4Signer.unsignedPayload, date: date)
        }
        collect {
            _ = try signer.authorizationHeaders(
                method: "GET", url: url, headers: [("x-amz-security-token", Self.token)],
                payloadHash: SigV4Signer.unsignedPayload, date: date)
        }
        collect {
            _ = try signer.authorizationHeaders(
                method: "GET", url: url, payloadHash: Self.secret, date: date)
        }
        collect { _ = try signer.presignedURL(method: "GET", url: url, expires: 604_801, date: date) }
        collect {
            _ = try signer.presignedURL(
                method: "GET", url: url, expires: 60, date: .init(timeIntervalSince1970: .infinity))
        }
        if let signed = URL(string: "https://b.example/k?X-Amz-Security-Token=\(Self.token)") {
            collect { _ = try signer.presignedURL(method: "GET", url: signed, expires: 60, date: date) }
        }
        // Credentials that cannot sign: a token with a line break, a secret given as the key id.
        collect {
            _ = try SigV4Signer(
                credentials: AWSCredentials(
                    accessKeyID: "AKID", secretAccessKey: Self.secret, sessionToken: Self.token + "\n"),
                region: "us-east-1")
        }
        collect {
            _ = try SigV4Signer(
                credentials: AWSCredentials(accessKeyID: Self.secret, secretAccessKey: Self.secret), region: "us-east-1"
            )
        }
        collect {
            _ = try SigV4Signer(
                credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: ""), region: "us-east-1")
        }

        #expect(errors.count == 9)
        for error in errors {
            for text in [error.message, error.description, String(reflecting: error), "\(error)"] {
                #expect(!text.contains(Self.secret) && !text.contains(Self.token), "\(text)")
                #expect(!text.contains("wJalr") && !text.contains("IQoJ"), "\(text)")
            }
        }
    }
}
