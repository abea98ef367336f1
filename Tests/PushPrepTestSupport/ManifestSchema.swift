package import Foundation

/// The manifest's JSON Schema (`schema/manifest.schema.json`), checked by Python's `jsonschema`
/// (draft 2020-12) through `scripts/check-json-schema.py`, as the tests check media with the
/// `ffmpeg` and `vips` programs. `make deps` installs Debian's `python3-jsonschema`.
package enum ManifestSchema {
    /// One violation: where (a JSON pointer in URI-fragment form, `#` is the root), which keyword
    /// failed, and jsonschema's message.
    package struct Violation: Decodable, Equatable, CustomStringConvertible {
        package let pointer: String
        package let keyword: String
        package let message: String

        package var description: String { "\(pointer): \(keyword): \(message)" }
    }

    private static let python = TestTools.python

    /// Whether the checker can run here (Debian's python3 with its jsonschema package).
    package static let available: Bool =
        (try? TestTools.run(python, ["-c", "import jsonschema"], timeout: .seconds(60)).status) == 0

    /// The violations of `document` against the project's manifest schema; empty when it is valid.
    package static func violations(of document: Data) throws -> [Violation] {
        guard available else {
            throw TestTools.Failure(
                description: "checking a manifest needs \(python) with jsonschema (python3-jsonschema; make deps)")
        }
        let root = TestTools.packageRoot
        let result = try TestTools.run(
            python,
            [
                root.appendingPathComponent("scripts/check-json-schema.py").path,
                root.appendingPathComponent("schema/manifest.schema.json").path,
            ],
            stdin: document, timeout: .seconds(60))
        guard result.status == 0 else {
            throw TestTools.Failure(
                description: "check-json-schema.py exited with \(result.status): "
                    + String(decoding: result.stderr, as: UTF8.self))
        }
        let decoder = JSONDecoder()
        return try result.stdout.split(separator: UInt8(ascii: "\n")).map {
            try decoder.decode(Violation.self, from: Data($0))
        }
    }
}
