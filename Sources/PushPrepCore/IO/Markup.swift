/// Escaping for text written into HTML or XML by hand (outside a template engine): the report's
/// HTML fragments (``HTML``) and the XML of the S3 client's request bodies.
package enum Markup {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references, `'` by
    /// `apostrophe` (`&#39;` for HTML, `&apos;` for XML). Read scalar by scalar: a combining mark
    /// after `&` or `<` makes one `Character` with it, and must not hide it from the escaping.
    package static func escape(_ text: String, apostrophe: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += apostrophe
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
