package import PushPrepCore
package import PushPrepJSON
package import PushPrepPayload

/// The pictures a payload gives Android phones and browsers, where each provider's API puts them
/// (iOS's are the payload's attachments, which ``PreflightPresentation`` reads):
/// - FCM v1: `message.android.notification.image`, else the shared `message.notification.image`
///   (Android); `message.webpush.notification.image` and `icon` (web);
/// - OneSignal: `big_picture` (Android); `chrome_web_image`, `chrome_web_icon` (web);
/// - Airship: `notification.android.style.big_picture` (Android); `notification.web.image.url`
///   and `notification.web.icon.url` (web);
/// - Braze: `android_push.image_url` (Android; inside `messages` or at the top);
/// - APNs: none.
package struct PlatformImages: Sendable, Equatable {
    /// One picture: what it is for, where it is (a JSON Pointer) and its URL.
    package struct Image: Sendable, Equatable {
        package var platform: Platform
        /// `image` (Android's big picture, the web's large image) or `icon` (the web's icon).
        package var role: Role
        package var pointer: String
        package var url: String
    }

    /// What a picture is for.
    package enum Role: String, Sendable, Equatable {
        case image
        case icon
    }

    /// The pictures found, Android's first, then the web's image and icon.
    package var images: [Image]

    /// The pictures of `payload` (read as `dialect`, else as its keys say); none for a payload
    /// that is not a JSON object.
    package init(payload: [UInt8], dialect: PushDialect?) {
        guard let document = try? JSONValue.parse(payload), document.value.objectValue != nil else {
            self.init(images: [])
            return
        }
        self.init(payload: document.value, dialect: dialect ?? PushDialect.detect(document.value))
    }

    /// These pictures.
    package init(images: [Image]) {
        self.images = images
    }

    /// The pictures of a parsed payload read as `dialect`.
    package init(payload: JSONValue, dialect: PushDialect) {
        var images: [Image] = []
        /// The first of `paths` that holds a non-empty string.
        func add(_ platform: Platform, _ role: Role, _ paths: [JSONPath]) {
            for path in paths {
                if let url = payload[path]?.stringValue, !url.isEmpty {
                    images.append(Image(platform: platform, role: role, pointer: path.pointer, url: url))
                    return
                }
            }
        }
        let root = JSONPath.root
        switch dialect {
        case .apns:
            break
        case .fcm:
            let message = payload["message"] != nil ? root.appending("message") : root
            add(
                .android, .image,
                [
                    message.appending("android").appending("notification").appending("image"),
                    message.appending("notification").appending("image"),
                ])
            let web = message.appending("webpush").appending("notification")
            add(.web, .image, [web.appending("image")])
            add(.web, .icon, [web.appending("icon")])
        case .onesignal:
            add(.android, .image, [root.appending("big_picture")])
            add(.web, .image, [root.appending("chrome_web_image")])
            add(.web, .icon, [root.appending("chrome_web_icon")])
        case .airship:
            let notification = root.appending("notification")
            add(.android, .image, [notification.appending("android").appending("style").appending("big_picture")])
            let web = notification.appending("web")
            add(.web, .image, [web.appending("image").appending("url")])
            add(.web, .icon, [web.appending("icon").appending("url")])
        case .braze:
            add(
                .android, .image,
                [
                    root.appending("messages").appending("android_push").appending("image_url"),
                    root.appending("android_push").appending("image_url"),
                ])
        }
        self.init(images: images)
    }

    /// The picture for `platform` in `role`, if the payload has one.
    package func image(_ platform: Platform, _ role: Role = .image) -> Image? {
        images.first { $0.platform == platform && $0.role == role }
    }

    /// Whether the payload gives `platform` any picture.
    package func has(_ platform: Platform) -> Bool { images.contains { $0.platform == platform } }
}
