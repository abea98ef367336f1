import Foundation
import PushPrepCore
import PushPrepJSON
import PushPrepPayload

/// Reads the manifest `payload` and `preflight --manifest` take, and says in words what it got
/// when that is not a manifest: not JSON (where), a job as `jobs show --json` prints it (and the
/// commands that take a job), a list of jobs, a manifest entry, a push payload, or a manifest
/// whose field at a JSON Pointer is of the wrong type. Never the decoder's own text.
enum ManifestDocument {
    /// What a manifest is, for the messages.
    static let expected =
        "expected a manifest: the manifest.json `pushprep process` writes, or `pushprep jobs show ID --manifest`"

    /// The manifest in `data`, read from `name` (a file, or `-`); `invalid_payload` naming what
    /// the document is instead.
    static func decode(_ data: Data, name: String) throws -> Manifest {
        do {
            return try manifest(in: data)
        } catch {
            throw CommandFailure(
                message: "\(PushPrepError.Code.invalidPayload): \(name) is not a PushPrep manifest: \(error.text)")
        }
    }

    /// Why a document is not a manifest, in words.
    struct Reason: Error {
        var text: String
    }

    /// The manifest in `data`, or the ``Reason`` it is not one.
    static func manifest(in data: Data) throws(Reason) -> Manifest {
        let bytes = Array(data)
        guard bytes.contains(where: { !" \t\r\n".utf8.contains($0) }) else {
            throw Reason(text: "got nothing (an empty input); \(expected)")
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes).value
        } catch {
            throw Reason(text: "not JSON at line \(error.line), column \(error.column) (\(error.message)); \(expected)")
        }
        if let reason = whatElse(value) { throw Reason(text: reason) }
        let readable = Manifest.readableVersions
        if let version = value["version"], let number = version.doubleValue,
            !(Double(readable.lowerBound)...Double(readable.upperBound)).contains(number)
        {
            throw Reason(
                text: "a manifest of version \(version.serialized()); this PushPrep reads versions"
                    + " \(readable.lowerBound) to \(readable.upperBound)")
        }
        do {
            return try JSONDecoder().decode(Manifest.self, from: data)
        } catch let error as DecodingError {
            throw Reason(text: describe(error, in: value))
        } catch {
            throw Reason(text: "\(expected)")
        }
    }

    /// What a document that is not a manifest is, in words with what to do; nil when it has a
    /// manifest's shape (an object with `attachments`), to be decoded.
    static func whatElse(_ value: JSONValue) -> String? {
        switch value {
        case .array(let elements):
            if !elements.isEmpty && elements.allSatisfy(isJob) {
                let ids = elements.compactMap(jobID)
                let options = ids.prefix(3).map { "--job \($0)" }.joined(separator: " ")
                return "got a list of jobs (from `jobs list --json`): use `pushprep payload \(options)`"
            }
            if !elements.isEmpty && elements.allSatisfy(isEntry) {
                return "got a JSON array of manifest entries; a manifest is an object whose attachments are the"
                    + " entries, with version, generator and settings beside them"
            }
            return "got a JSON array; \(expected)"
        case .object(let members):
            if isJob(value) {
                let id = jobID(value).map(String.init) ?? "ID"
                return "got a job (from `jobs show --json`): use `pushprep payload --job \(id)`, or"
                    + " `pushprep jobs show \(id) --manifest` for its manifest"
            }
            if isEntry(value) {
                return "got one manifest entry; a manifest is an object whose attachments are the entries, with"
                    + " version, generator and settings beside them"
            }
            if isPayload(value) {
                return "got a push payload (\(PushDialect.detect(value).displayName)); payload makes one from a"
                    + " manifest, and `pushprep preflight` checks one; \(expected)"
            }
            if members["reports"] != nil {
                return "got a pre-flight report (from `preflight --json`); \(expected)"
            }
            if members["attachments"] == nil {
                let keys = members.keys.sorted()
                let listed = keys.prefix(8).map { "\"\($0)\"" }.joined(separator: ", ")
                return keys.isEmpty
                    ? "got an empty JSON object; \(expected)"
                    : "got a JSON object with the keys \(listed)\(keys.count > 8 ? " and \(keys.count - 8) more" : "")"
                        + " and no \"attachments\"; \(expected)"
            }
            return nil
        default:
            return "got a JSON \(value.typeName); \(expected)"
        }
    }

    /// A job as `jobs show --json` or `GET /v1/jobs/ID` shows one.
    private static func isJob(_ value: JSONValue) -> Bool {
        guard let members = value.objectValue else { return false }
        return members["id"]?.doubleValue != nil && members["state"]?.stringValue != nil
            && members["attempt"] != nil
    }

    /// The id of a job (a whole number a queue could hold), or nil.
    private static func jobID(_ value: JSONValue) -> Int64? {
        value["id"]?.doubleValue.flatMap { Int64(exactly: $0) }
    }

    /// One manifest entry: an attachment or a failure.
    private static func isEntry(_ value: JSONValue) -> Bool {
        guard let members = value.objectValue, let status = members["status"]?.stringValue else { return false }
        return (status == "ok" || status == "failed") && members["source"] != nil
    }

    /// A push payload in one of the dialects' keys (none of which a manifest has).
    private static func isPayload(_ value: JSONValue) -> Bool {
        guard let members = value.objectValue else { return false }
        return ["aps", "message", "messages", "notification", "ios_attachments", "contents", "apple_push"]
            .contains { members[$0] != nil }
    }

    /// A decoding error in words, at the JSON Pointer of the field, with what the document holds
    /// there.
    static func describe(_ error: DecodingError, in document: JSONValue) -> String {
        func at(_ context: DecodingError.Context, appending key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            return keys.isEmpty ? "the manifest" : pointer(keys)
        }
        func found(_ context: DecodingError.Context) -> String {
            guard let path = JSONPath(pointer: pointer(context.codingPath)), let value = document[path] else {
                return "nothing"
            }
            return value.typeName == "object" || value.typeName == "array" ? "an \(value.typeName)" : value.serialized()
        }
        switch error {
        case .keyNotFound(let key, let context):
            return context.codingPath.isEmpty
                ? "the document has no \"\(key.stringValue)\"; \(expected)"
                : "\(at(context)) has no \"\(key.stringValue)\", which a manifest has there"
        case .typeMismatch(let type, let context):
            return "\(at(context)) must be \(words(type)), got \(found(context))"
        case .valueNotFound(let type, let context):
            return "\(at(context)) must be \(words(type)), got null"
        case .dataCorrupted(let context):
            // The manifest's own checks say what they want; an enumeration's raw value does not.
            if context.debugDescription.hasPrefix("Cannot initialize") {
                return "\(at(context)) holds \(found(context)), which is not one of the values it takes"
            }
            return "\(at(context)): \(context.debugDescription)"
        @unknown default:
            return expected
        }
    }

    /// The JSON Pointer of a coding path.
    private static func pointer(_ keys: [any CodingKey]) -> String {
        keys.map { key in
            "/"
                + (key.intValue.map(String.init) ?? key.stringValue).replacingOccurrences(of: "~", with: "~0")
                .replacingOccurrences(of: "/", with: "~1")
        }.joined()
    }

    /// A Swift type as the JSON it is read from.
    private static func words(_ type: Any.Type) -> String {
        let name = String(describing: type)
        if name.hasPrefix("Array") { return "an array" }
        if name.hasPrefix("Dictionary") { return "an object" }
        if name == "String" { return "a string" }
        if name == "Bool" { return "true or false" }
        if ["Int", "Int64", "Double", "Float"].contains(name) { return "a number" }
        return "an object"
    }
}
