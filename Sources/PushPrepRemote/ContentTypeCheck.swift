import Foundation
package import PushPrepCore

/// Warns when a response's `Content-Type` names another type than its bytes. The bytes decide;
/// a wrong or missing header is common (CDNs, object stores) and never an error.
package enum ContentTypeCheck {
    /// Headers that say nothing about the type.
    private static let unspecific: Set<String> = [
        "application/octet-stream", "binary/octet-stream", "application/binary", "application/unknown",
        "application/x-download", "application/force-download",
    ]

    /// Other names servers use, beside each type's own ``MediaType/mime``.
    private static let aliases: [String: Set<MediaType>] = [
        "image/jpg": [.jpeg], "image/pjpeg": [.jpeg], "image/x-png": [.png], "image/apng": [.png],
        "image/heif": [.heic], "image/heic-sequence": [.heic], "image/heif-sequence": [.heic],
        "image/x-ms-bmp": [.bmp], "image/x-bmp": [.bmp], "image/tif": [.tiff],
        "video/mp4": [.mp4, .m4a], "audio/mp4": [.m4a, .mp4], "audio/x-m4a": [.m4a], "audio/m4a": [.m4a],
        "video/x-m4v": [.mp4], "audio/mp3": [.mp3], "audio/x-mpeg": [.mp3], "audio/mpeg3": [.mp3],
        "audio/x-wav": [.wav], "audio/wave": [.wav], "audio/vnd.wave": [.wav], "audio/x-aiff": [.aiff],
        "video/avi": [.avi], "video/msvideo": [.avi], "audio/x-flac": [.flac], "video/ogg": [.ogg],
        "application/ogg": [.ogg], "audio/webm": [.webm], "video/x-mkv": [.matroska], "audio/x-matroska": [.matroska],
    ]

    /// A `Content-Type` that names another type than the bytes.
    package struct Mismatch: CustomStringConvertible {
        /// The header's media type, lowercased, without parameters.
        package let contentType: String
        package let detected: MediaType

        /// What disagrees: a pre-flight finding's message.
        package var description: String {
            "the Content-Type \(contentType) does not match the content, which is \(detected.rawValue)"
        }

        /// The manifest's warning: what disagrees and what processing did about it.
        package var processingWarning: ProcessingWarning {
            ProcessingWarning.contentTypeMismatch(contentType: contentType, detected: detected)
        }
    }

    /// How `contentType` disagrees with content detected as `detected`; nil when it agrees or
    /// says nothing.
    package static func mismatch(contentType: String?, detected: MediaType) -> Mismatch? {
        guard let contentType else { return nil }
        let mime =
            contentType.split(separator: ";", maxSplits: 1).first.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            } ?? ""
        guard !mime.isEmpty, !unspecific.contains(mime) else { return nil }
        if mime == detected.mime || aliases[mime]?.contains(detected) == true { return nil }
        return Mismatch(contentType: mime, detected: detected)
    }
}
