import Foundation
import PushPrepTestSupport
import Testing

/// A store URL or a queue URL with credentials in it, given to a command that fails: no part of
/// the credentials appears anywhere in what the command prints (standard output and standard
/// error, debug logs included), and the redacted form (`***`) shows what was refused.
@Suite struct CredentialRedactionTests {
    static let accessKey = "AKIAIOSFODNN7EXAMPLE"
    static let secretKey = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
    static let password = "hunter2pass"

    /// Every fragment of a secret a message could quote on its own.
    static let fragments = [accessKey, secretKey, "wJalrX", "EXAMPLEKEY", password, "hunter2"]

    @Test(arguments: [
        ["process", "--store", "s3://\(accessKey):\(secretKey)@push-media/p", "in.bmp"],
        ["process", "--store", "s3://\(accessKey):wJalrX/UtnFEMI?K7#MDENGbPxRfiCYEXAMPLEKEY@push-media/p", "in.bmp"],
        ["process", "--store", "S3://\(accessKey)@push-media/p", "in.bmp"],
        ["process", "--store", "file://admin:\(password)@files.example.com/dir", "in.bmp"],
        ["process", "--store", "file://admin:hun/ter2pass@host/dir", "in.bmp"],
        ["process", "--store", "https://admin:\(password)@files.example.com/dir", "in.bmp"],
        ["worker", "--store", "s3://\(accessKey):\(secretKey)@push-media/p", "--queue", "sqlite:q.db"],
        ["serve", "--port", "0", "--store", "s3://\(accessKey):\(secretKey)@push-media/p", "--queue", "sqlite:q.db"],
        ["jobs", "list", "--queue", "postgres://app:\(password)@127.0.0.1:1/jobs"],
        ["jobs", "list", "--queue", "postgres://app:hun#ter2pass@127.0.0.1:1/jobs"],
        ["enqueue", "--queue", "postgres://app:\(password)@127.0.0.1:1/jobs", "in.bmp"],
    ])
    func failingCommandsPrintNoCredentials(_ arguments: [String]) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        try Data(TinyBMP.bytes(3)).write(to: dir.appendingPathComponent("in.bmp"))
        let result = try await PushPrepCLI.runAsync(arguments + ["--log-level", "debug"], in: dir)
        let printed = result.stdoutText + result.stderrText
        #expect(result.status != 0, "the command fails: \(printed)")
        for fragment in Self.fragments {
            #expect(!printed.contains(fragment), "\(fragment) printed by \(arguments[0]):\n\(printed)")
        }
        #expect(printed.contains("***") || printed.contains("postgres://app@127.0.0.1:1/jobs"), "\(printed)")
    }
}
