import PushPrepCore
import PushPrepRemote

/// The attachment types iOS accepts, by UTI and by the file extensions that name them
/// (UNNotificationAttachment's documented list).
enum AcceptedTypes {
    /// Every UTI `UNNotificationAttachment` accepts.
    static let utis: Set<String> = [
        "public.jpeg", "public.png", "com.compuserve.gif",
        "public.mp3", "public.mpeg-4-audio", "com.microsoft.waveform-audio", "public.aiff-audio",
        "public.mpeg-4", "public.mpeg", "public.mpeg-2-video", "public.avi",
    ]

    /// The extensions of the accepted types (lowercase) and the UTI and kind each names.
    static let extensions: [String: (uti: String, kind: MediaKind)] = [
        "jpg": ("public.jpeg", .image), "jpeg": ("public.jpeg", .image), "png": ("public.png", .image),
        "gif": ("com.compuserve.gif", .image),
        "mp3": ("public.mp3", .audio), "m4a": ("public.mpeg-4-audio", .audio),
        "wav": ("com.microsoft.waveform-audio", .audio), "wave": ("com.microsoft.waveform-audio", .audio),
        "aif": ("public.aiff-audio", .audio), "aiff": ("public.aiff-audio", .audio),
        "mp4": ("public.mpeg-4", .video), "m4v": ("public.mpeg-4", .video),
        "mpeg": ("public.mpeg", .video), "mpg": ("public.mpeg", .video), "m2v": ("public.mpeg-2-video", .video),
        "avi": ("public.avi", .video),
    ]

    /// The UTI an extension names, when iOS accepts it.
    static func uti(forExtension ext: String) -> String? { extensions[ext.lowercased()]?.uti }
}
