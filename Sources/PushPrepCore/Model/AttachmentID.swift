import Crypto

/// Deterministic attachment ids: the same source bytes with the same effective settings give
/// the same id on any machine, and a change to either gives another.
///
/// The id is the kind's prefix and the first 40 hex digits (160 bits) of
/// SHA-256(source SHA-256 ‖ settings fingerprint): lowercase `[a-z0-9-]`, 44 characters.
package enum AttachmentID {
    package static func make(kind: MediaKind, sourceSHA256: String, fingerprint: String) -> String {
        make(prefix: kind.idPrefix, sourceSHA256: sourceSHA256, fingerprint: fingerprint)
    }

    /// A rendition's id (`and-…`, `web-…`, `wic-…`), made the same way from its own fingerprint
    /// (``ProcessingSettings/renditionFingerprint(_:source:)``).
    package static func make(rendition key: Renditions.Key, sourceSHA256: String, fingerprint: String) -> String {
        make(prefix: key.idPrefix, sourceSHA256: sourceSHA256, fingerprint: fingerprint)
    }

    private static func make(prefix: String, sourceSHA256: String, fingerprint: String) -> String {
        let digest = SHA256.hash(data: Array("\(sourceSHA256)\n\(fingerprint)".utf8))
        return "\(prefix)-\(digest.hexString.prefix(40))"
    }
}

extension Sequence<UInt8> {
    /// Lowercase hexadecimal.
    package var hexString: String {
        var text = ""
        text.reserveCapacity(64)
        for byte in self {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return text
    }
}

private let hexDigits = Array("0123456789abcdef")

/// The value of one hexadecimal digit (either case), or nil for any other byte.
package func hexDigitValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}
