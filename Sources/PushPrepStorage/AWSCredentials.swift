/// An AWS access key: the id, its secret and, for temporary credentials, the session token.
///
/// The secret and the token never leave this value in text: `description`, `debugDescription`,
/// `String(reflecting:)`, `dump` and `Mirror` show the key id and `<redacted>`, so a credentials
/// value logged, interpolated into an error or printed by a test failure gives nothing away.
package struct AWSCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access key id (`AKIA…`, `ASIA…` for temporary credentials); not a secret, it names the key.
    package let accessKeyID: String
    /// The secret access key: signs requests, never sent, never shown.
    package let secretAccessKey: String
    /// The session token of temporary credentials (STS, an instance role); sent with each request
    /// (`x-amz-security-token`, `X-Amz-Security-Token`), never shown.
    package let sessionToken: String?

    /// Creates credentials from their parts.
    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    package var description: String {
        "AWSCredentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>"
            + (sessionToken == nil ? ")" : ", sessionToken: <redacted>)")
    }

    package var debugDescription: String { description }

    /// What `dump` and `Mirror` see: without this they would list the stored secret.
    package var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [
            ("accessKeyID", accessKeyID), ("secretAccessKey", "<redacted>"),
        ]
        if sessionToken != nil { children.append(("sessionToken", "<redacted>")) }
        return Mirror(self, children: children, displayStyle: .struct)
    }
}
