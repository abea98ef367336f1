/// Output URLs under `--base-url`: the file name joins the base's path with exactly one slash,
/// and the base's query, if any, is kept after it (`https://cdn/x?sv=1&sig=…` gives
/// `https://cdn/x/<id>.jpg?sv=1&sig=…`, as a container-wide token such as an Azure SAS wants).
/// ``ProcessingSettings/validate(baseURL:)`` refuses a base with a fragment or without a host.
package enum URLJoin {
    /// `base` with `name` appended to its path, its query kept.
    package static func join(_ base: String, _ name: String) -> String {
        let (path, query) = split(base)
        return (path.hasSuffix("/") ? path + name : path + "/" + name) + query
    }

    /// `url` (made by ``join(_:_:)``) with its last path component replaced by `name`, its query
    /// kept: a poster's URL beside its movie's. Nil when `url` has no path to replace.
    package static func sibling(of url: String, named name: String) -> String? {
        let (path, query) = split(url)
        guard let scheme = path.firstRange(of: "://"), let slash = path.lastIndex(of: "/"), slash > scheme.upperBound,
            path[path.index(after: slash)...].isEmpty == false
        else { return nil }
        return path[..<slash] + "/" + name + query
    }

    /// The part before the query and the query with its `?` ("" when there is none).
    private static func split(_ url: String) -> (path: String, query: String) {
        guard let mark = url.firstIndex(of: "?") else { return (url, "") }
        return (String(url[..<mark]), String(url[mark...]))
    }
}
