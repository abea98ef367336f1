/// Warns when a file's extension names another type than its bytes.
package enum ExtensionCheck {
    package static func warnings(path: String, detected: MediaType) -> [String] {
        let ext = PathName.lowercasedExtension(of: path)
        guard !ext.isEmpty, MediaType.allKnownExtensions.contains(ext), !detected.knownExtensions.contains(ext) else {
            return []
        }
        return [
            "the extension .\(ext) does not match the content, which is \(detected.rawValue); processed as \(detected.rawValue)"
        ]
    }
}
