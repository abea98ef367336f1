import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// Parsing `--queue`, hiding its password, and the password's other sources.
@Suite struct QueueURLTests {
    /// Whatever the text, parsed or not, the password is not in the redacted form (nor the
    /// user name beside it: an access key id is half of a pair of credentials).
    @Test(arguments: [
        ("postgres://u:pa#ss@db:5432/q", "pa#ss", "postgres://***@db:5432/q"),
        ("postgres://u:p/a?s#s@db/q", "p/a?s#s", "postgres://***@db/q"),
        ("postgres://u:p@ss@db/q", "p@ss", "postgres://***@db/q"),
        ("postgresql://u#secret@db/q", "secret", "postgresql://***@db/q"),
        ("postgres:u:hidden@db", "hidden", "postgres:***@db"),
        ("mysql://root:tops3cret@db/q", "tops3cret", "mysql://***@db/q"),
        ("u:hunter2@db", "hunter2", "u:***@db"),
        ("s3://AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI@bucket/p", "AKIAIOSFODNN7EXAMPLE", "s3://***@bucket/p"),
        ("file://user:pass@host/dir", "pass", "file://***@host/dir"),
    ])
    func redactedHidesThePassword(_ text: String, _ password: String, _ expected: String) {
        let redacted = URLCredentials.redacted(text)
        #expect(!redacted.contains(password), "\(redacted)")
        #expect(redacted == expected)
    }

    @Test func redactedKeepsTextWithoutASecret() {
        #expect(URLCredentials.redacted("postgres://db/q") == "postgres://db/q")
        #expect(URLCredentials.redacted("postgres://user@db/q") == "postgres://user@db/q")
        #expect(URLCredentials.redacted("sqlite:./pushprep.db") == "sqlite:./pushprep.db")
    }

    /// A `#` in an unencoded password breaks parsing; the message still hides the password.
    @Test func unparsableURLsMessageHidesThePassword() {
        let error = #expect(throws: PushPrepError.self) {
            try QueueURL(parsing: "postgres://pushprep:se#cret@db.example.com:5432/jobs")
        }
        #expect(error?.code == .invalidSettings)
        #expect(error?.message.contains("cret") == false, "\(error?.message ?? "")")
        #expect(error?.message.contains("postgres://***@db.example.com") == true, "\(error?.message ?? "")")
    }

    @Test func passwordComesFromTheFileThenPGPASSWORD() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let url = try QueueURL(parsing: "postgres://app@db/jobs")
        func password(_ url: QueueURL) -> String? {
            guard case .postgres(let location) = url else { return nil }
            return location.password
        }

        let file = dir.appendingPathComponent("pw")
        try Data("from-file\n".utf8).write(to: file)
        #expect(password(try url.withPassword(file: file.path, environment: ["PGPASSWORD": "env"])) == "from-file")
        try Data("crlf\r\n".utf8).write(to: file)
        #expect(password(try url.withPassword(file: file.path, environment: [:])) == "crlf")
        try Data("two\n\n".utf8).write(to: file)
        #expect(password(try url.withPassword(file: file.path, environment: [:])) == "two\n", "one newline trimmed")
        #expect(password(try url.withPassword(file: nil, environment: ["PGPASSWORD": "env"])) == "env")
        #expect(password(try url.withPassword(file: nil, environment: [:])) == nil)

        let inURL = try QueueURL(parsing: "postgres://app:url@db/jobs")
        #expect(password(try inURL.withPassword(file: nil, environment: ["PGPASSWORD": "env"])) == "url")
        let both = #expect(throws: PushPrepError.self) { try inURL.withPassword(file: file.path, environment: [:]) }
        #expect(both?.code == .invalidSettings)

        let sqlite = try QueueURL(parsing: "sqlite:./q.db")
        #expect(try sqlite.withPassword(file: nil, environment: ["PGPASSWORD": "env"]) == sqlite)
        #expect(throws: PushPrepError.self) { try sqlite.withPassword(file: file.path, environment: [:]) }

        try Data("\n".utf8).write(to: file)
        let empty = #expect(throws: PushPrepError.self) { try url.withPassword(file: file.path, environment: [:]) }
        #expect(empty?.message.contains("empty") == true)
        let missing = dir.appendingPathComponent("missing").path
        let unreadable = #expect(throws: PushPrepError.self) { try url.withPassword(file: missing, environment: [:]) }
        #expect(unreadable?.message.contains(missing) == true, "\(unreadable?.message ?? "")")
    }
}
