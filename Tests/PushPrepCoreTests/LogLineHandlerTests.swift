import Foundation
import Logging
import PushPrepCore
import PushPrepTestSupport
import Synchronization
import Testing

/// The one place log lines are written: whatever a value, a key or a message holds, a line is
/// one line and its fields are the fields the code logged.
@Suite struct LogLineHandlerTests {
    /// A handler whose lines the test reads back.
    final class Lines: Sendable {
        let written = Mutex<String>("")

        func logger(metadata: Logger.Metadata = [:]) -> Logger {
            var logger = Logger(label: "pushprep") { label in
                LogLineHandler(label: label, level: .trace) { text in self.written.withLock { $0 += text } }
            }
            for (key, value) in metadata { logger[metadataKey: key] = value }
            return logger
        }

        var text: String { written.withLock { $0 } }
    }

    static let forgedFilename = "a.png key=admin request_id=forged"
    static let forgedLine = "a.jpg\n2026-01-01T00:00:00+0000 error pushprep: forged=1 [PushPrepQueue] FORGED"
    static let terminalEscape = "http://x.example/a\u{1B}]0;PWN\u{07}\u{1B}[31m.jpg"

    @Test func hostileValuesStayInTheirField() throws {
        let lines = Lines()
        let logger = lines.logger(metadata: ["request_id": "real-id"])
        logger.info(
            "upload stored\nforged message line",
            metadata: [
                "filename": "\(Self.forgedFilename)", "source": "\(Self.forgedLine)",
                "url": "\(Self.terminalEscape)", "empty": "", "a key": "x",
            ])
        let text = lines.text
        #expect(text.hasSuffix("\n"))
        #expect(text.filter { $0 == "\n" }.count == 1, "one event, one line: \(text)")
        #expect(!text.dropLast().unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        let line = try LogfmtLine(String(text.dropLast()))
        #expect(line.level == "info")
        #expect(line.fields.map(\.key) == ["a key", "empty", "filename", "request_id", "source", "url"])
        #expect(line.value("filename") == Self.forgedFilename)
        #expect(line.value("request_id") == "real-id")
        #expect(line.value("source") == Self.forgedLine)
        #expect(line.value("url") == Self.terminalEscape)
        #expect(line.value("empty") == "")
        #expect(line.source == "PushPrepCoreTests")
        #expect(line.message == #"upload stored\nforged message line"#)
    }

    /// Plain values are written as they are, so lines read as before for ordinary values.
    @Test func plainValuesAreUnquoted() {
        let lines = Lines()
        lines.logger().info("job succeeded", metadata: ["job": "7", "request_id": "test-request-1"])
        #expect(lines.text.contains(": job=7 request_id=test-request-1 [PushPrepCoreTests] job succeeded\n"))
    }
}
