import Mustache

extension MustacheLibrary {
    /// A library of templates kept in the source (`name: text`, registered in this order). The
    /// templates are constants and the tests render them, so one that does not parse is a bug:
    /// it stops the process with `what` (which templates) and the parser's error.
    static func constant(_ templates: KeyValuePairs<String, String>, what: String) -> MustacheLibrary {
        var library = MustacheLibrary()
        do {
            for (name, text) in templates {
                try library.register(text, named: name)
            }
        } catch {
            preconditionFailure("\(what) does not parse: \(error)")
        }
        return library
    }
}
