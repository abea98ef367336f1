import Foundation

/// Hiding the `user:password@` of URLs that reach messages and logs: store URLs
/// (`s3://KEY:SECRET@bucket`, `file://user:pass@host/dir`), queue URLs
/// (`postgres://user:password@host/db`) and sources. Every place that prints such a URL the user
/// gave prints it through ``redacted(_:)``.
public enum URLCredentials {
    /// `text` with its user information replaced by `***` whenever it may hold a secret, whether
    /// or not it parses: after `://`, everything up to the last `@` (`s3://***@bucket/p`); without
    /// `://`, everything between the first `:` and the last `@` (`postgres:***@db`). A user name
    /// alone (`postgres://app@db/q`, letters, digits and `-._~%`) is no secret and is kept. A
    /// password may hold `#`, `/`, `?` or `@`, which break URL parsing, so this goes by pattern
    /// and never by parsing; a URL whose path holds an `@` is hidden up to it, which is the safe
    /// side of the mistake.
    public static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        if let scheme = text.range(of: "://"), scheme.upperBound <= at {
            let userInfo = text[scheme.upperBound..<at]
            guard !isUserName(userInfo) else { return text }
            return String(text[..<scheme.upperBound]) + "***" + String(text[at...])
        }
        guard let colon = text.firstIndex(of: ":"), colon < at else { return text }
        return String(text[...colon]) + "***" + String(text[at...])
    }

    /// Whether `text` (a URL the user gave) has a user information part that ``redacted(_:)``
    /// hides: such a URL must be refused without quoting it.
    public static func hasSecret(_ text: String) -> Bool {
        redacted(text) != text
    }

    /// Whether `userInfo` is only a user name, without a password or anything that may be one.
    private static func isUserName(_ userInfo: Substring) -> Bool {
        !userInfo.isEmpty && userInfo.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~%".contains($0)) }
    }
}
