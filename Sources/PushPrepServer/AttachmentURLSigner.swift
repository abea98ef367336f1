import Crypto
package import Foundation
package import PushPrepCore

/// Signs and checks the URLs of published attachments (`--sign-attachments`), the way imgproxy
/// signs its URLs: `…/v1/attachments/<file>?expires=<unix>&signature=<sig>`, where `sig` is
/// the unpadded base64url HMAC-SHA256 of `"<file>:<expires>"` under a secret only this server
/// (and whoever the operator shares it with) holds.
///
/// The manifest stored with a job stays unsigned; URLs are signed each time the API renders a
/// job, so an expiry counts from when a client asked, and rotating the key only needs a
/// restart. A phone cannot send an API key, so the signature is what keeps the out directory
/// from being an open file server to anyone who guesses (or once saw) a name.
package struct AttachmentURLSigner: Sendable {
    /// The shortest key accepted: HMAC-SHA256's block of security, 256 bits.
    package static let minimumKeyBytes = 32
    /// The largest key file read: a key is a secret, not a document.
    static let maximumKeyBytes = 4096
    /// `--attachment-url-ttl`'s range: a minute to a year.
    package static let ttlSeconds: ClosedRange<Int> = 60...31_536_000
    /// `--attachment-url-ttl`'s default: 7 days, longer than APNs keeps a push for an offline
    /// phone (the phone downloads the attachment only when the push arrives).
    package static let defaultTTLSeconds = 604_800

    /// The secret's bytes (`SymmetricKey` is not `Sendable` in the swift-crypto this builds
    /// with, so one is made for each use).
    private let keyBytes: [UInt8]
    /// How long a rendered URL works.
    package let ttlSeconds: Int

    /// A signer with `key` (at least ``minimumKeyBytes``) whose URLs work for `ttlSeconds`.
    package init(key: [UInt8], ttlSeconds: Int) throws(PushPrepError) {
        guard key.count >= Self.minimumKeyBytes else {
            throw PushPrepError(
                .invalidSettings,
                "the attachment signing key must be at least \(Self.minimumKeyBytes) bytes, got \(key.count)")
        }
        guard Self.ttlSeconds.contains(ttlSeconds) else {
            throw PushPrepError(
                .invalidSettings,
                "--attachment-url-ttl must be \(Self.ttlSeconds.lowerBound) s to \(Self.ttlSeconds.upperBound) s")
        }
        keyBytes = key
        self.ttlSeconds = ttlSeconds
    }

    /// A signer with the key in the file at `path` (`--attachment-key-file`), read through the
    /// input reader (a regular file, bounded). The bytes are the key, except a final line break,
    /// so that `openssl rand -hex 32 > key` gives a working 64-byte key.
    package init(keyFile path: String, ttlSeconds: Int) throws(PushPrepError) {
        let file: InputFile
        do {
            file = try InputFile.read(path: path, maxBytes: Self.maximumKeyBytes, keepContents: { _ in true })
        } catch {
            throw PushPrepError(.invalidSettings, "--attachment-key-file: \(error.message)")
        }
        var bytes = file.contents ?? []
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        try self.init(key: bytes, ttlSeconds: ttlSeconds)
    }

    /// The signature of `file` expiring at `expires` (Unix seconds), base64url without padding.
    package func signature(file: String, expires: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data("\(file):\(expires)".utf8), using: SymmetricKey(data: keyBytes))
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// `url` (a published file's URL under this server's attachments, without a query) with an
    /// expiry `ttlSeconds` from `now` and its signature. The file is the URL's last component.
    package func sign(_ url: String, now: Date = Date()) -> String {
        let expires = Self.expiry(now: now, ttlSeconds: ttlSeconds)
        let file = url.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        return "\(url)?expires=\(expires)&signature=\(signature(file: file, expires: expires))"
    }

    /// When a URL signed at `now` stops working, in whole Unix seconds.
    static func expiry(now: Date, ttlSeconds: Int) -> Int64 {
        Int64(now.timeIntervalSince1970.rounded(.down)) + Int64(ttlSeconds)
    }

    /// Why a request for `file` is refused, or nil when `expires` and `signature` (the query's
    /// values) are a signature of ours that has not expired. The HMAC is compared in constant
    /// time (swift-crypto's `isValidAuthenticationCode`), so timing tells nothing of the
    /// expected signature.
    package func refusal(file: String, expires: String?, signature: String?, now: Date = Date()) -> String? {
        guard let expires, let signature else {
            return "this server only serves attachments by signed URL (expires and signature)"
        }
        guard (1...19).contains(expires.utf8.count), expires.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let seconds = Int64(expires), let mac = Self.base64URLDecoded(signature),
            HMAC<SHA256>.isValidAuthenticationCode(
                mac, authenticating: Data("\(file):\(seconds)".utf8), using: SymmetricKey(data: keyBytes))
        else {
            return "the attachment URL's signature is not valid"
        }
        // Checked after the signature, so that only our own URLs are told they expired.
        guard Double(seconds) > now.timeIntervalSince1970 else {
            return "the attachment URL expired at \(seconds) (Unix time); ask the API for the job again"
        }
        return nil
    }

    /// Unpadded base64url as bytes; nil for anything else (padding, `+`, `/`, other bytes).
    static func base64URLDecoded(_ text: String) -> Data? {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        guard text.utf8.count <= 128, text.utf8.allSatisfy(alphabet.contains) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

extension AttachmentURLSigner {
    /// Signs the URLs of `attachment`, its poster and its renditions that this server serves, those that are
    /// `base` + `/` + the file's name (`base` is the server's attachments URL, or `--base-url`
    /// when one fronts it), and records their expiry in `urlExpires`. Other URLs (a job's own
    /// base URL elsewhere) are left alone.
    package func sign(_ attachment: inout Attachment, under base: String, now: Date = Date()) {
        let expires = Date(timeIntervalSince1970: TimeInterval(Self.expiry(now: now, ttlSeconds: ttlSeconds)))
        let expiry = expires.formatted(.iso8601)
        let base = base.hasSuffix("/") ? String(base.dropLast()) : base
        if let url = attachment.url, url == "\(base)/\(attachment.file)" {
            attachment.url = sign(url, now: now)
            attachment.urlExpires = expiry
        }
        if let poster = attachment.poster, let url = poster.url, url == "\(base)/\(poster.file)" {
            attachment.poster?.url = sign(url, now: now)
            attachment.poster?.urlExpires = expiry
        }
        for (key, rendition) in attachment.renditions.all {
            guard let url = rendition.url, url == "\(base)/\(rendition.file)" else { continue }
            attachment.renditions[key]?.url = sign(url, now: now)
            attachment.renditions[key]?.urlExpires = expiry
        }
    }
}
