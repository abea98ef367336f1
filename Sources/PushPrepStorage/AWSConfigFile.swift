package import PushPrepCore

/// An AWS shared configuration file (`~/.aws/config` or `~/.aws/credentials`), read the way the
/// AWS CLI reads it (botocore's `configloader`, on Python's `RawConfigParser`), so a file that
/// works with the CLI works here and one the CLI refuses is refused here too:
///
/// - `[NAME]` starts a section; whitespace inside the brackets is trimmed, the name's case kept.
/// - `key = value` or `key: value`; keys are lowercased, keys and values trimmed; an empty value
///   is allowed.
/// - A line whose first non-blank character is `#` or `;` is a comment; a `#` after a value is
///   part of the value (the CLI has no inline comments).
/// - A line indented more than its key continues that key's value. A key with an empty value
///   followed by indented `name = value` lines is a nested section (`s3 =` then
///   `  addressing_style = path`), read into ``Section/nested``.
/// - A key before any section, a line that is none of these, a repeated section or a repeated
///   key in one section is an error naming the file and the line, never the line's text (it may
///   hold a secret).
/// - Blank lines are skipped; `\r\n` line ends and a leading UTF-8 byte order mark are accepted.
///
/// No package available to the project parses INI (swift-configuration reads JSON, YAML and the
/// environment; TOMLKit reads TOML, which needs quoted strings), hence this small reader.
package struct AWSConfigFile: Sendable, Equatable {
    /// One `[NAME]` section.
    package struct Section: Sendable, Equatable {
        /// The name between the brackets, trimmed (`default`, `profile prod`, `services local`).
        package var name: String
        /// The keys (lowercased) and their values (trimmed; the joined lines of a multi-line value).
        package var values: [String: String] = [:]
        /// Nested sections by key (lowercased), their keys lowercased.
        package var nested: [String: [String: String]] = [:]
    }

    /// The sections, in file order.
    package private(set) var sections: [Section] = []

    /// Parses `text`; `path` names the file in error messages.
    package init(parsing text: String, path: String) throws(PushPrepError) {
        var text = Substring(text)
        if text.hasPrefix("\u{FEFF}") { text = text.dropFirst() }
        var seen: Set<String> = []
        // The key whose value indented lines continue, with its indentation.
        var open: (key: String, indent: Int)?
        // "\r\n" is one Character in Swift, so it is a separator of its own.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (offset, line) in lines.enumerated() {
            let number = offset + 1
            let content = line.trimmingSpaces()
            if content.isEmpty || content.hasPrefix("#") || content.hasPrefix(";") { continue }
            let indent = line.prefix { $0 == " " || $0 == "\t" }.count
            if let current = open, indent > current.indent, !sections.isEmpty {
                try continueValue(of: current.key, with: content, line: number, path: path)
                continue
            }
            open = nil
            if content.hasPrefix("[") {
                guard content.hasSuffix("]"), content.count > 2 else {
                    throw Self.error(path, number, "a section header must be [NAME]")
                }
                let name = String(content.dropFirst().dropLast().trimmingSpaces())
                guard !name.isEmpty else { throw Self.error(path, number, "a section header must be [NAME]") }
                guard seen.insert(name).inserted else {
                    throw Self.error(path, number, "the section [\(Self.quoted(name))] appears twice")
                }
                sections.append(Section(name: name))
                continue
            }
            guard let delimiter = content.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                throw Self.error(path, number, "expected [SECTION] or key = value")
            }
            let key = String(content[..<delimiter].trimmingSpaces()).lowercased()
            guard !key.isEmpty else { throw Self.error(path, number, "a key = value line has no key") }
            guard !sections.isEmpty else {
                throw Self.error(path, number, "key \(Self.quoted(key)) comes before any [SECTION]")
            }
            let last = sections.count - 1
            guard sections[last].values[key] == nil else {
                throw Self.error(
                    path, number, "key \(Self.quoted(key)) appears twice in [\(Self.quoted(sections[last].name))]")
            }
            sections[last].values[key] = String(content[content.index(after: delimiter)...].trimmingSpaces())
            open = (key, indent)
        }
    }

    /// The section named `name`, if there is one.
    package func section(_ name: String) -> Section? {
        sections.first { $0.name == name }
    }

    /// An indented line after `key`: a nested `name = value` when the key's own value is empty
    /// (or already nested), otherwise another line of the value.
    private mutating func continueValue(of key: String, with content: Substring, line: Int, path: String)
        throws(PushPrepError)
    {
        let last = sections.count - 1
        let value = sections[last].values[key] ?? ""
        if value.isEmpty || sections[last].nested[key] != nil {
            guard let delimiter = content.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                throw Self.error(path, line, "a nested line under \(Self.quoted(key)) must be name = value")
            }
            let name = String(content[..<delimiter].trimmingSpaces()).lowercased()
            guard !name.isEmpty else {
                throw Self.error(path, line, "a nested line under \(Self.quoted(key)) has no name")
            }
            guard sections[last].nested[key]?[name] == nil else {
                throw Self.error(path, line, "\(Self.quoted(key)).\(Self.quoted(name)) appears twice")
            }
            sections[last].nested[key, default: [:]][name] = String(
                content[content.index(after: delimiter)...].trimmingSpaces())
        } else {
            sections[last].values[key] = value + "\n" + content
        }
    }

    private static func error(_ path: String, _ line: Int, _ problem: String) -> PushPrepError {
        PushPrepError(.invalidSettings, "\(path), line \(line): \(problem)")
    }

    /// A section or key name for a message: control characters escaped, so a line break in a
    /// file cannot split a log line. (Names only: values may be secrets and are never quoted.)
    static func quoted(_ name: some StringProtocol) -> String {
        String(String(reflecting: String(name)).dropFirst().dropLast())
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (what Python's `str.strip` removes from an
    /// INI line that matters here).
    fileprivate func trimmingSpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
