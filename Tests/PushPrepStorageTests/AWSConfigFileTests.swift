import PushPrepCore
import PushPrepStorage
import Testing

/// The INI reader behind ~/.aws/config and ~/.aws/credentials, on files formatted the odd ways
/// people write them, and on the files the AWS CLI refuses.
@Suite struct AWSConfigFileTests {
    @Test("comments, blank lines, indentation, CRLF, a BOM, ':' and case are read as the AWS CLI reads them")
    func oddFormatting() throws {
        let text =
            "\u{FEFF}# written by hand\r\n"
            + "; another comment\r\n"
            + "\r\n"
            + "[ default ]\r\n"
            + "AWS_Access_Key_ID=AKIDDEFAULT\r\n"
            + "  # an indented comment line\r\n"
            + "aws_secret_access_key :  se#cret;value  \r\n"
            + "region:eu-west-3\r\n"
            + "empty =\r\n"
            + "\r\n"
            + "[profile\t  Work Profile]\n"
            + "s3 =\n"
            + "    addressing_style = path\n"
            + "\n"
            + "    Endpoint_URL = http://127.0.0.1:9000\n"
            + "note = first line\n"
            + "  second line\n"
            + "[services local]\n"
            + "s3 =\n"
            + "  endpoint_url = http://localhost:9000\n"
        let file = try AWSConfigFile(parsing: text, path: "config")
        #expect(file.sections.map(\.name) == ["default", "profile\t  Work Profile", "services local"])
        let defaults = try #require(file.section("default"))
        #expect(
            defaults.values == [
                "aws_access_key_id": "AKIDDEFAULT", "aws_secret_access_key": "se#cret;value", "region": "eu-west-3",
                "empty": "",
            ])
        let work = try #require(file.section("profile\t  Work Profile"))
        #expect(work.nested["s3"] == ["addressing_style": "path", "endpoint_url": "http://127.0.0.1:9000"])
        #expect(work.values["note"] == "first line\nsecond line")
        #expect(file.section("services local")?.nested["s3"]?["endpoint_url"] == "http://localhost:9000")
        #expect(file.section("Default") == nil)
        #expect(try AWSConfigFile(parsing: "", path: "empty").sections.isEmpty)
    }

    /// Files the AWS CLI refuses, the line number, and a piece of the message.
    static let refused: [(String, Int, String)] = [
        ("aws_access_key_id = AKID\n[default]\n", 1, "comes before any [SECTION]"),
        ("[default]\nregion = us-east-1\n[default]\n", 3, "[default] appears twice"),
        ("[default]\nregion = us-east-1\nREGION = eu-west-1\n", 3, "key region appears twice in [default]"),
        ("[default]\naws_secret_access_key SECRETVALUE\n", 2, "expected [SECTION] or key = value"),
        ("[default]\n= SECRETVALUE\n", 2, "has no key"),
        ("[]\n", 1, "must be [NAME]"),
        ("[default\n", 1, "must be [NAME]"),
        ("[ ]\n", 1, "must be [NAME]"),
        ("[default]\ns3 =\n  SECRETVALUE\n", 3, "must be name = value"),
        ("[default]\ns3 =\n  a = 1\n  A = 2\n", 4, "s3.a appears twice"),
    ]

    @Test(
        "a file the AWS CLI refuses is invalid_settings naming the file and line, never the line's text",
        arguments: refused)
    func refuses(text: String, line: Int, expected: String) {
        do {
            _ = try AWSConfigFile(parsing: text, path: "/home/op/.aws/credentials")
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidSettings)
            #expect(error.message.hasPrefix("/home/op/.aws/credentials, line \(line): "), "\(error)")
            #expect(error.message.contains(expected), "\(error)")
            #expect(!error.message.contains("SECRETVALUE"), "\(error)")
        }
    }

    @Test("a section or key name with a line break is escaped in a message")
    func namesEscaped() {
        do {
            _ = try AWSConfigFile(parsing: "[a\u{1B}b]\n[a\u{1B}b]\n", path: "config")
            Issue.record("accepted")
        } catch {
            #expect(!error.message.contains("\u{1B}"), "\(error)")
            #expect(error.message.contains("a\\u{1B}b"), "\(error)")
        }
    }
}
