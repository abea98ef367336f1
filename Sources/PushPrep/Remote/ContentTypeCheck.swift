import Foundation

/// Warns when a response's `Content-Type` names another type than its bytes. The bytes decide;
/// a wrong or missing header is common (CDNs, object stores) and never an error.
enum ContentTypeCheck {
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

    /// The warning for `contentType` on content detected as `detected`, if they disagree.
    static func warnings(contentType: String?, detected: MediaType) -> [String] {
        guard let contentType else { return [] }
        let mime =
            contentType.split(separator: ";", maxSplits: 1).first.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            } ?? ""
        guard !mime.isEmpty, !unspecific.contains(mime) else { return [] }
        if mime == detected.mime || aliases[mime]?.contains(detected) == true { return [] }
        return [
            "the Content-Type \(mime) does not match the content, which is \(detected.rawValue); "
                + "processed as \(detected.rawValue)"
        ]
    }
}
