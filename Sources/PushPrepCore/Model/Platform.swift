import Foundation

/// A platform a push reaches: each gets its own rendition of an attachment, under its own rules
/// (`docs/platforms.md`).
public enum Platform: String, Sendable, Codable, CaseIterable, Comparable, CustomStringConvertible {
    /// iPhones: the attachment itself (Apple's types and limits).
    case ios
    /// Android phones through FCM: a 2:1 still of at most 1 MiB (``AndroidRules``).
    case android
    /// Browsers (web push): a 2:1 image and a square icon (``WebRules``).
    case web

    public var description: String { rawValue }

    public static func < (lhs: Platform, rhs: Platform) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// The platforms a run prepares for (`--platforms ios,android,web`): a set, always written in
/// the order of ``Platform/allCases`` (`ios,android,web`), in JSON as an array of names.
public struct PlatformSet: Sendable, Codable, Equatable, Hashable, CustomStringConvertible {
    /// The platforms, in canonical order, without repeats.
    public let platforms: [Platform]

    /// The platforms given, in canonical order.
    public init(_ platforms: some Sequence<Platform>) {
        let set = Set(platforms)
        self.platforms = Platform.allCases.filter(set.contains)
    }

    /// `ios,android` (the default): iPhones and Android phones.
    public static let `default` = PlatformSet([.ios, .android])

    /// Whether `platform` is one of them.
    public func contains(_ platform: Platform) -> Bool { platforms.contains(platform) }

    /// `ios,android`: the CLI's and the fingerprints' spelling.
    public var description: String { platforms.map(\.rawValue).joined(separator: ",") }

    /// Reads `ios,android,web` (names separated by commas, any order, spaces allowed); nil for
    /// an unknown name or an empty list.
    public init?(text: String) {
        var platforms: [Platform] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let platform = Platform(rawValue: part.trimmingCharacters(in: .whitespaces).lowercased()) else {
                return nil
            }
            platforms.append(platform)
        }
        guard !platforms.isEmpty else { return nil }
        self.init(platforms)
    }

    /// An array of names (`["ios", "android"]`), or the CLI's text (`"ios,android"`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let set = PlatformSet(text: text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "platforms must be names among ios, android, web, got \(text)")
            }
            self = set
            return
        }
        let names = try container.decode([String].self)
        guard let set = PlatformSet(text: names.joined(separator: ",")) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "platforms must be names among ios, android, web, got \(names)")
        }
        self = set
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(platforms.map(\.rawValue))
    }
}

/// Where a 2:1 crop of a picture falls (`--crop`).
public enum CropStrategy: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// libvips' attention strategy: the region with the most skin tones, saturation and edges.
    case attention
    /// The middle of the picture.
    case centre
    /// No crop: the whole picture at its own ratio, within the 2:1 box.
    case fit

    public var description: String { rawValue }
}

/// A per-input focal point (`focus=x,y`, each in 0…1 from the top left): the crop is centred
/// on it, whatever the strategy. Written as the text `x,y`.
public struct FocalPoint: Sendable, Codable, Equatable, Hashable, CustomStringConvertible {
    public let x: Double
    public let y: Double

    /// A point with both coordinates in 0…1; nil otherwise (NaN included).
    public init?(x: Double, y: Double) {
        guard (0...1).contains(x), (0...1).contains(y) else { return nil }
        self.x = x
        self.y = y
    }

    /// Reads `0.3,0.6`; nil for anything else.
    public init?(text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let x = Double(parts[0].trimmingCharacters(in: .whitespaces)),
            let y = Double(parts[1].trimmingCharacters(in: .whitespaces))
        else { return nil }
        self.init(x: x, y: y)
    }

    /// `0.3,0.6`.
    public var description: String { "\(x),\(y)" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let point = FocalPoint(text: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "focus must be x,y with each in 0...1, got \(text)")
        }
        self = point
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// What FCM's Android SDK does with `image` (firebase-android-sdk `ImageDownload.java`,
/// `DisplayNotification.java`; `docs/platforms.md`).
public enum AndroidRules {
    /// The SDK's hard cap: it refuses a larger `Content-Length` and reads at most this + 1 bytes.
    public static let maxBytes = 1_048_576
    /// The SDK's download timeout, in seconds.
    public static let downloadTimeout: Double = 5
    /// The expanded `BigPictureStyle` picture's shape: width / height.
    public static let aspectRatio = 2.0
    /// The widest rendition PushPrep makes (Airship's largest: 2048×1024).
    public static let maxWidth = 2048
    /// The narrowest (Braze's smallest: 600×300).
    public static let minWidth = 600
    /// The image types `BitmapFactory` decodes (GIF as its first frame only).
    public static let decodableMIMETypes: Set<String> = [
        "image/jpeg", "image/png", "image/webp", "image/bmp", "image/x-ms-bmp", "image/gif",
    ]
}

/// What browsers do with a web push's `image` and `icon` (`docs/platforms.md`).
public enum WebRules {
    /// The largest web push image PushPrep makes: 1350×675 (2:1, as Chrome and Edge show it).
    public static let imageWidth = 1350
    /// The byte cap PushPrep keeps a web image under.
    public static let maxBytes = 1_000_000
    /// The shape of the large image: width / height.
    public static let aspectRatio = 2.0
    /// The icon's side: at least 192 px square.
    public static let iconSize = 192
}
