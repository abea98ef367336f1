/// Warns when a file's extension names another type than its bytes.
package enum ExtensionCheck {
    package static func warnings(path: String, detected: MediaType) -> [ProcessingWarning] {
        let ext = PathName.lowercasedExtension(of: path)
        guard !ext.isEmpty, MediaType.allKnownExtensions.contains(ext), !detected.knownExtensions.contains(ext) else {
            return []
        }
        return [ProcessingWarning.extensionMismatch(extension: ext, detected: detected)]
    }
}
