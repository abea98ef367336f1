import Foundation

/// One input as the user named it.
public struct InputItem: Sendable, Equatable {
    /// The source as given (a path, or a path inside a directory that was given).
    public var source: String
    /// The local path to read.
    public var path: String

    /// An input read from `path` and reported as `source`.
    public init(source: String, path: String) {
        self.source = source
        self.path = path
    }

    /// Whether this input is a URL to fetch (`http://`, `https://`, or another scheme that is
    /// then refused with `fetch_failed`) rather than a path to read.
    public var isRemote: Bool { path == source && Self.looksLikeURL(source) }

    /// Whether `text` starts like an absolute URL (`scheme://`): such an input is a remote
    /// source, never a path, and an unsupported scheme fails instead of being read as a file.
    package static func looksLikeURL(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return false }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }
}

/// Turns command-line arguments into inputs: files as they are, directories into their files
/// (recursively, sorted by path, hidden files skipped), `-` into one path per line of stdin.
package enum InputExpander {
    /// Expands the arguments. A path that does not exist is kept, so that it is reported as
    /// `not_found` in the manifest rather than silently dropped.
    package static func expand(
        _ arguments: [String], readStandardInput: () -> [String] = InputExpander.standardInputLines
    )
        -> [InputItem]
    {
        var items: [InputItem] = []
        for argument in arguments {
            if argument == "-" {
                for line in readStandardInput() {
                    let path = line.trimmingCharacters(in: .whitespacesAndNewlines)
                    if !path.isEmpty { items += expandPath(path) }
                }
            } else {
                items += expandPath(argument)
            }
        }
        return items
    }

    private static func expandPath(_ path: String) -> [InputItem] {
        // A URL is a remote source, never looked up on disk.
        if InputItem.looksLikeURL(path) { return [InputItem(source: path, path: path)] }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return [InputItem(source: path, path: path)]
        }
        let base = path.hasSuffix("/") ? String(path.dropLast()) : path
        var files: [String] = []
        collect(directory: base, into: &files)
        return files.sorted().map { InputItem(source: $0, path: $0) }
    }

    private static func collect(directory: String, into files: inout [String]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where !name.hasPrefix(".") {
            let path = "\(directory)/\(name)"
            var info = stat()
            // lstat: symbolic links to directories are not followed, so a link cycle cannot
            // make the walk endless; links to files are inputs like any other file.
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: collect(directory: path, into: &files)
            case S_IFREG, S_IFLNK: files.append(path)
            default: continue
            }
        }
    }

    /// Lines of standard input.
    package static func standardInputLines() -> [String] {
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        return lines
    }
}
