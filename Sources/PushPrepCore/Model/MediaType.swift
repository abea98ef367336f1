/// What an attachment is for the phone: an image, a movie or a sound.
public enum MediaKind: String, Sendable, Codable, CaseIterable {
    case image
    case video
    case audio

    /// The prefix of attachment ids of this kind.
    var idPrefix: String {
        switch self {
        case .image: "img"
        case .video: "vid"
        case .audio: "aud"
        }
    }
}

/// A file type PushPrep recognises from its bytes.
public enum MediaType: String, Sendable, Codable, CaseIterable {
    case jpeg, png, gif, webp, heic, avif, tiff, bmp, svg
    case mp4, mov, m4a, matroska, webm, avi, mpegts, mp3, aac, wav, aiff, ogg, flac

    /// Image, video or audio. Containers that can hold either (MP4, Matroska, Ogg) are
    /// classified by their brand or doc type where the first bytes tell, else as video.
    public var kind: MediaKind {
        switch self {
        case .jpeg, .png, .gif, .webp, .heic, .avif, .tiff, .bmp, .svg: .image
        case .mp4, .mov, .matroska, .webm, .avi, .mpegts: .video
        case .m4a, .mp3, .aac, .wav, .aiff, .ogg, .flac: .audio
        }
    }

    /// The Uniform Type Identifier of the type.
    public var uti: String {
        switch self {
        case .jpeg: "public.jpeg"
        case .png: "public.png"
        case .gif: "com.compuserve.gif"
        case .webp: "org.webmproject.webp"
        case .heic: "public.heic"
        case .avif: "public.avif"
        case .tiff: "public.tiff"
        case .bmp: "com.microsoft.bmp"
        case .svg: "public.svg-image"
        case .mp4: "public.mpeg-4"
        case .mov: "com.apple.quicktime-movie"
        case .m4a: "public.mpeg-4-audio"
        case .matroska: "org.matroska.mkv"
        case .webm: "org.webmproject.webm"
        case .avi: "public.avi"
        case .mpegts: "public.mpeg-2-transport-stream"
        case .mp3: "public.mp3"
        case .aac: "public.aac-audio"
        case .wav: "com.microsoft.waveform-audio"
        case .aiff: "public.aiff-audio"
        case .ogg: "org.xiph.ogg"
        case .flac: "org.xiph.flac"
        }
    }

    /// The MIME type.
    public var mime: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .heic: "image/heic"
        case .avif: "image/avif"
        case .tiff: "image/tiff"
        case .bmp: "image/bmp"
        case .svg: "image/svg+xml"
        case .mp4: "video/mp4"
        case .mov: "video/quicktime"
        case .m4a: "audio/mp4"
        case .matroska: "video/x-matroska"
        case .webm: "video/webm"
        case .avi: "video/x-msvideo"
        case .mpegts: "video/mp2t"
        case .mp3: "audio/mpeg"
        case .aac: "audio/aac"
        case .wav: "audio/wav"
        case .aiff: "audio/aiff"
        case .ogg: "audio/ogg"
        case .flac: "audio/flac"
        }
    }

    /// The extension a file of this type is published with.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .matroska: "mkv"
        case .mpegts: "ts"
        case .aiff: "aiff"
        case .tiff: "tiff"
        default: rawValue
        }
    }

    /// Extensions that name this type, lowercase, without the dot.
    public var knownExtensions: Set<String> {
        switch self {
        case .jpeg: ["jpg", "jpeg", "jpe", "jfif"]
        case .png: ["png", "apng"]
        case .gif: ["gif"]
        case .webp: ["webp"]
        case .heic: ["heic", "heif", "hif"]
        case .avif: ["avif"]
        case .tiff: ["tif", "tiff"]
        case .bmp: ["bmp", "dib"]
        case .svg: ["svg", "svgz"]
        case .mp4: ["mp4", "m4v", "3gp", "3g2"]
        case .mov: ["mov", "qt"]
        case .m4a: ["m4a", "m4b", "mp4"]
        case .matroska: ["mkv", "mka", "mk3d"]
        case .webm: ["webm"]
        case .avi: ["avi"]
        case .mpegts: ["ts", "mts", "m2ts"]
        case .mp3: ["mp3"]
        case .aac: ["aac", "adts"]
        case .wav: ["wav", "wave"]
        case .aiff: ["aif", "aiff", "aifc"]
        case .ogg: ["ogg", "oga", "ogv", "opus", "spx"]
        case .flac: ["flac"]
        }
    }

    /// Whether Apple's `UNNotificationAttachment` accepts this type as it is.
    public var acceptedByApple: Bool {
        switch self {
        case .jpeg, .png, .gif, .mp4, .m4a, .mp3, .wav, .aiff, .avi: true
        default: false
        }
    }

    /// The extensions of every type, for telling "an extension PushPrep knows that disagrees"
    /// from "no meaningful extension".
    package static let allKnownExtensions: Set<String> = Set(allCases.flatMap(\.knownExtensions))
}
