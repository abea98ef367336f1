import Foundation
public import Logging
public import PushPrepCore
import PushPrepPayload
public import PushPrepRemote

/// The pictures of `preflight --fetch --report`'s Android and web previews: each image URL the
/// payload gives those platforms (FCM's `android.notification.image`, OneSignal's
/// `big_picture`, …) downloaded once for the page, with every rule of ``RemoteFetcher`` (the
/// address policy, the image byte cap, the deadlines), drawn as ``PreflightPictures`` draws the
/// iOS attachment, and removed. Pre-flight's own checks of those URLs are its business; this is
/// only what the page shows.
public struct PlatformPictures: Sendable {
    /// One picture: the expanded copy and the small one, `data:` URLs of JPEGs.
    public struct Picture: Sendable, Equatable {
        public var expanded: String
        public var banner: String
        public var width: Int
        public var height: Int
    }

    /// What a set of downloads gave: a picture or a reason, by URL.
    public struct Result: Sendable {
        public var pictures: [String: Picture] = [:]
        /// Why a URL has no picture, in a few words (`it is not an image (a movie)`).
        public var notes: [String: String] = [:]
        /// The JPEG bytes of all pictures: what counts against the page's budget.
        public var bytes = 0
    }

    let remote: RemoteSettings
    let pictures: PreflightPictures
    let logger: Logger

    /// Downloads with `remote`'s rules, drawn by `pictures` (its sizes and pixel cap).
    public init(remote: RemoteSettings, pictures: PreflightPictures, logger: Logger) {
        self.remote = remote
        self.pictures = pictures
        self.logger = logger
    }

    /// A picture to draw: its URL and, for Android's, the rules of the phone that shows it.
    public struct Request: Sendable, Equatable {
        public var url: String
        /// Whether the picture is Android's (FCM's `image`): one over ``AndroidRules/maxBytes``
        /// or of a type `BitmapFactory` does not decode is not drawn, as the phone shows none.
        public var android: Bool

        public init(url: String, android: Bool) {
            self.url = url
            self.android = android
        }
    }

    /// The pictures of `requests` (each URL once, one after another); a URL not drawn gets a
    /// note. Once `budgetBytes` are spent, the rest get the page's budget note.
    public func make(_ requests: [Request], budgetBytes: Int) async -> Result {
        var result = Result()
        var seen = Set<String>()
        // A URL that is Android's anywhere is held to Android's rules.
        let android = Set(requests.filter(\.android).map(\.url))
        let unique = requests.map(\.url).filter { seen.insert($0).inserted }
        guard !unique.isEmpty else { return result }
        let fetcher = RemoteFetcher(settings: remote, logger: logger)
        let scratch: String
        do {
            scratch = try Directories.scratch("preflight-pictures")
        } catch {
            for url in unique { result.notes[url] = "no place to download it (\(error.code.rawValue))" }
            await fetcher.shutdown()
            return result
        }
        for url in unique {
            guard result.bytes < budgetBytes else {
                result.notes[url] = pictures.budgetNote
                continue
            }
            switch await picture(of: url, android: android.contains(url), fetcher: fetcher, into: scratch) {
            case .success(let picture):
                result.pictures[url] = picture.picture
                result.bytes += picture.bytes
            case .failure(let note):
                result.notes[url] = note.text
            }
        }
        await fetcher.shutdown()
        try? FileManager.default.removeItem(atPath: scratch)
        return result
    }

    /// Why a URL has no picture.
    struct Note: Error {
        var text: String
    }

    /// One URL's picture, or why there is none.
    private func picture(
        of url: String, android: Bool, fetcher: RemoteFetcher, into directory: String
    ) async -> Swift.Result<(picture: Picture, bytes: Int), Note> {
        let download: RemoteFetcher.Download
        do throws(PushPrepError) {
            guard
                case .downloaded(let downloaded) = try await fetcher.fetch(
                    url, into: directory, maxInputBytes: remote.downloadCap(for: .image))
            else { return .failure(Note(text: "the server answered 304 to an unconditional request")) }
            download = downloaded
        } catch {
            return .failure(Note(text: "could not download it (\(error.code.rawValue): \(error.message))"))
        }
        defer { unlink(download.path) }
        guard let type = MediaDetector.detect(download.prefix) else {
            return .failure(Note(text: "what it downloads is not a picture PushPrep recognises"))
        }
        guard type.kind == .image else {
            return .failure(Note(text: "it is not a still picture (\(type.rawValue))"))
        }
        if android {
            guard download.size <= AndroidRules.maxBytes else {
                return .failure(
                    Note(
                        text: "at \(download.size) bytes it is over the FCM SDK's \(AndroidRules.maxBytes)-byte cap, "
                            + "so the phone shows the notification without it"))
            }
            guard AndroidRules.decodableMIMETypes.contains(type.mime) else {
                return .failure(Note(text: "Android's BitmapFactory does not decode \(type.rawValue)"))
            }
        }
        guard let picture = await pictures.picture(ofImageAt: download.path, type: type, frame: 0) else {
            return .failure(Note(text: "it could not be drawn (unreadable, or over --max-pixels)"))
        }
        return .success(
            (
                Picture(
                    expanded: picture.expanded, banner: picture.banner, width: picture.width, height: picture.height),
                picture.bytes
            ))
    }
}
