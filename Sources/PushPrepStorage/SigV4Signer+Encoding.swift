import Foundation
import PushPrepCore

/// Parsing a URL into what it signs, and S3's canonical encodings and checks.
extension SigV4Signer {
    /// What a URL contributes to a signature: scheme, `host` value, canonical path, query pairs
    /// (already in canonical encoding).
    struct Target {
        let scheme: String
        let host: String
        let canonicalURI: String
        let query: [(name: String, value: String)]

        init(_ url: URL) throws(PushPrepError) {
            guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
                throw PushPrepError(.invalidSettings, "a storage URL cannot be parsed")
            }
            let scheme = (components.scheme ?? "").lowercased()
            guard scheme == "https" || scheme == "http" else {
                throw PushPrepError(.invalidSettings, "a storage URL must be http or https, not \"\(scheme)\"")
            }
            // Credentials in the URL would be sent, logged and signed by nobody's intent.
            guard components.user == nil, components.password == nil else {
                throw PushPrepError(.invalidSettings, "a storage URL must not carry user:password@")
            }
            guard var host = components.encodedHost?.lowercased(), !host.isEmpty else {
                throw PushPrepError(.invalidSettings, "a storage URL has no host")
            }
            if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
            if let port = components.port, port != (scheme == "https" ? 443 : 80) { host += ":\(port)" }
            self.scheme = scheme
            self.host = host

            let path = components.percentEncodedPath
            canonicalURI =
                path.isEmpty
                ? "/"
                : path.split(separator: "/", omittingEmptySubsequences: false)
                    .map { SigV4Signer.uriEncode(SigV4Signer.percentDecoded($0)) }
                    .joined(separator: "/")
            // RFC 3986 reads a bare + in a query as a plus sign, HTML forms (and some AWS SDKs) as
            // a space: S3 and the signer could each read it their way and disagree on the signature.
            let rawQuery = components.percentEncodedQuery ?? ""
            guard !rawQuery.contains("+") else {
                throw PushPrepError(
                    .invalidSettings, "a storage URL's query must write a plus sign as %2B (and a space as %20)")
            }
            query = rawQuery.split(separator: "&").map { pair in
                let name = pair.prefix { $0 != "=" }
                let value = pair.dropFirst(name.count + 1)
                return (
                    SigV4Signer.uriEncode(SigV4Signer.percentDecoded(name)),
                    SigV4Signer.uriEncode(SigV4Signer.percentDecoded(value))
                )
            }
        }
    }

    /// `name=value` pairs sorted by encoded name, then value (byte order), joined with `&`.
    static func canonicalQuery(_ pairs: [(name: String, value: String)]) -> String {
        pairs.sorted {
            $0.name == $1.name
                ? $0.value.utf8.lexicographicallyPrecedes($1.value.utf8)
                : $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
        }
        .map { "\($0.name)=\($0.value)" }
        .joined(separator: "&")
    }

    /// RFC 3986 percent-encoding of bytes: `A-Z a-z 0-9 - . _ ~` kept, everything else `%XX`
    /// (uppercase hex).
    static func uriEncode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), upperHexDigits[Int(byte >> 4)], upperHexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes a percent-encoded string stands for; a `%` not followed by two hex digits is
    /// itself (and is encoded as `%25` again).
    static func percentDecoded(_ text: Substring) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexDigitValue(bytes[index + 1]), let low = hexDigitValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// `0-9A-F`, for percent-encoding.
    private static let upperHexDigits = Array("0123456789ABCDEF".utf8)

    /// Trimmed, with inner runs of spaces and tabs collapsed to one space (SigV4's "Trimall").
    static func trimmed(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// `method` when it is an HTTP method's spelling (uppercase letters only), else an error.
    static func checkedMethod(_ method: String) throws(PushPrepError) -> String {
        guard !method.isEmpty, method.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw PushPrepError(.invalidSettings, "\(String(reflecting: method)) is not an HTTP method (GET, PUT, …)")
        }
        return method
    }

    /// A token of HTTP (RFC 9110 §5.6.2): what a header name may be.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }

    /// A header value without line breaks or other control characters (tab allowed).
    static func isHeaderValue(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }
    }

    /// A part of the credential scope (key id, region, service): `/` separates them there.
    static func isScopePart(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    /// 64 lowercase hex digits: a SHA-256 payload hash as S3 takes it.
    static func isSHA256Hex(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { hexDigitValue($0) != nil } && text == text.lowercased()
    }
}
