/// One of an attachment's warnings in the manifest: its kind and its text.
///
/// A manifest of version 3 (``Manifest/structuredVersion``) writes it as `{code, message}`;
/// earlier versions, and the HTTP API, as its text alone (an encoder without
/// `CodingUserInfoKey.manifestVersion` writes the text). Either form reads: a text's code is
/// recognised from its fixed parts (``WarningCode/init(message:)``), nil for a text this version
/// does not write.
public struct AttachmentWarning: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The kind; nil for a text from an older PushPrep that no kind writes.
    public var code: WarningCode?
    /// The text, as earlier manifest versions wrote it.
    public var message: String

    /// A warning of kind `code` saying `message`.
    public init(code: WarningCode?, message: String) {
        self.code = code
        self.message = message
    }

    /// A warning read from its text (a manifest before version 3): its code recognised again.
    public init(message: String) {
        self.init(code: WarningCode(message: message), message: message)
    }

    /// The warning processing gave.
    package init(_ warning: ProcessingWarning) {
        self.init(code: warning.code, message: warning.message)
    }

    /// The text.
    public var description: String { message }

    private enum CodingKeys: String, CodingKey {
        case code, message
    }

    /// `{code, message}` (version 3), or the text alone (earlier versions); an entry that is
    /// not an object reads as text, so a wrong type is reported as a text's.
    public init(from decoder: any Decoder) throws {
        if let structured = try? decoder.container(keyedBy: CodingKeys.self) {
            self.init(
                code: try structured.decode(WarningCode?.self, forKey: .code),
                message: try structured.decode(String.self, forKey: .message))
        } else {
            self.init(message: try decoder.singleValueContainer().decode(String.self))
        }
    }

    /// `{code, message}` for an encoder writing version 3 or later, the text otherwise.
    public func encode(to encoder: any Encoder) throws {
        let version = encoder.userInfo[.manifestVersion] as? Int ?? Manifest.currentVersion
        if version >= Manifest.structuredVersion {
            var structured = encoder.container(keyedBy: CodingKeys.self)
            try structured.encode(code, forKey: .code)
            try structured.encode(message, forKey: .message)
        } else {
            var text = encoder.singleValueContainer()
            try text.encode(message)
        }
    }
}
