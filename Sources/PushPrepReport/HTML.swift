/// Escaping for text that goes into HTML outside a template (attribute values and text built in
/// Swift); Mustache's `{{name}}` escapes on its own.
package enum HTML {
    /// `text` with `& < > " '` replaced by their character references.
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
