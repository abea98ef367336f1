import Foundation
import PushPrepCore
import PushPrepJSON

/// The name an upload's client gave its file (the multipart part's `filename`, or a raw
/// upload's `?filename=`), shown as the job's `source_name` and in the console instead of the
/// stored `<sha256>.<ext>` path. Kept without a schema change in the job's metadata column,
/// under a member clients cannot send (``metadataKey``) and never shown as metadata.
enum UploadName {
    /// The metadata member that holds the name; clients' metadata may not use the prefix.
    static let metadataKey = "pushprep:source_name"
    /// The prefix reserved for PushPrep's own metadata members.
    static let reservedPrefix = "pushprep:"
    /// The longest name kept, in bytes (a file name's usual bound).
    static let maxBytes = 255

    /// `name` as a display name: what follows its last `/` or `\` (a client's path is not
    /// kept), control characters and line separators removed, at most ``maxBytes`` bytes cut
    /// at a character; nil when nothing is left.
    static func sanitized(_ name: String) -> String? {
        let last = name.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "/" || $0 == "\\" }).last
        var kept = String.UnicodeScalarView()
        for scalar in (last.map(String.init) ?? name).unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse:
                continue
            default:
                kept.append(scalar)
            }
        }
        var text = String(kept).trimmingCharacters(in: .whitespaces)
        while text.utf8.count > maxBytes { text.removeLast() }
        return text.isEmpty || text == "." || text == ".." ? nil : text
    }

    /// The metadata text `metadata` (a JSON object, or nil) with `name` added under
    /// ``metadataKey``.
    static func adding(_ name: String, to metadata: String?) -> String {
        var members: [JSONObject.Member] =
            metadata.flatMap { try? JSONValue.parse(Array($0.utf8)).value.objectValue }.map { Array($0) } ?? []
        members.removeAll { $0.key == metadataKey }
        members.append((metadataKey, .string(name)))
        return JSONValue.object(JSONObject(members)).serialized()
    }

    /// The display name stored in `metadata`, and the client's own metadata without it (nil
    /// when only the name was stored).
    static func split(_ metadata: JSONValue?) -> (name: String?, metadata: JSONValue?) {
        guard let object = metadata?.objectValue else { return (nil, metadata) }
        let members = Array(object)
        guard let stored = members.first(where: { $0.key == metadataKey }) else { return (nil, metadata) }
        let rest = members.filter { $0.key != metadataKey }
        return (stored.value.stringValue, rest.isEmpty ? nil : .object(JSONObject(rest)))
    }
}
