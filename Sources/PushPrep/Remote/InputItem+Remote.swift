extension InputItem {
    /// Whether this input is a URL to fetch (`http://`, `https://`, or another scheme that is
    /// then refused with `fetch_failed`) rather than a path to read.
    public var isRemote: Bool { path == source && RemoteURL.looksLikeURL(source) }
}
