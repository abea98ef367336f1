import PushPrepCore

/// Escaping for text that goes into HTML outside a template (attribute values and text built in
/// Swift); Mustache's `{{name}}` escapes on its own.
package enum HTML {
    /// `text` with `& < > " '` replaced by their character references.
    package static func escape(_ text: String) -> String {
        Markup.escape(text, apostrophe: "&#39;")
    }
}
