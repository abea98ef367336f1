/// A path's last component, read without Foundation's `NSString` path methods, which trap on
/// some paths from outside (`pathExtension`, `lastPathComponent` and `deletingLastPathComponent` on a `//` followed by a non-ASCII character: found
/// by fuzzing remote URLs, and a queued job's local path reaches it the same way).
package enum PathName {
    /// The extension of the last component, lowercased; "" when it has none (or is a dot file).
    package static func lowercasedExtension(of path: String) -> String {
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    /// The directory part of a file path ("." when it has none, "/" for a file at the root)
    /// and its last component.
    package static func directoryAndName(of path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = path[..<slash]
        return (directory.isEmpty ? "/" : String(directory), String(path[path.index(after: slash)...]))
    }
}
