package import PushPrepCore

extension PlatformPreview {
    /// The other platforms' previews of a processed attachment: Android's always (without a
    /// picture when there is no Android rendition, saying why), the web's when the attachment has
    /// a web rendition or the run was made for the web.
    ///
    /// - Parameters:
    ///   - platforms: the platforms the run was made for (the manifest's settings), or nil when
    ///     not known (a job's entry): the reason for a missing rendition is then less precise.
    ///   - pictures: what loads each rendition's picture (`android`, `web`, `webIcon`); a
    ///     rendition without one is drawn without its picture.
    ///   - notes: why a rendition that exists has no picture here (a spent budget, a URL the page
    ///     may not load).
    package static func previews(
        of attachment: Attachment, platforms: PlatformSet?, pictures: [Renditions.Key: Picture],
        notes: [Renditions.Key: String] = [:], appName: String = NotificationPreview.defaultAppName,
        title: String? = nil, body: String? = nil
    ) -> [PlatformPreview] {
        var previews = [
            PlatformPreview(
                platform: .android, appName: appName, title: title, body: body,
                picture: attachment.renditions.android.flatMap { _ in pictures[.android] },
                note: note(.android, of: attachment, platforms: platforms, pictures: pictures, notes: notes),
                caption: attachment.renditions.android.map { caption(.android, $0) })
        ]
        if attachment.renditions.has(.web) || platforms?.contains(.web) == true {
            previews.append(
                PlatformPreview(
                    platform: .web, appName: appName, title: title, body: body,
                    picture: attachment.renditions.web.flatMap { _ in pictures[.web] },
                    icon: attachment.renditions.webIcon.flatMap { _ in pictures[.webIcon] },
                    note: note(.web, of: attachment, platforms: platforms, pictures: pictures, notes: notes),
                    caption: attachment.renditions.web.map { caption(.web, $0) }))
        }
        return previews
    }

    /// Why the `key` rendition's picture is not drawn, in one line; nil when it is.
    static func note(
        _ key: Renditions.Key, of attachment: Attachment, platforms: PlatformSet?,
        pictures: [Renditions.Key: Picture], notes: [Renditions.Key: String]
    ) -> String? {
        let platform = key.platform
        let what = platform == .android ? "No picture on Android" : "No image in the browser"
        guard let rendition = attachment.renditions[key] else {
            if attachment.kind == .audio {
                return "\(what): a sound has no \(label(platform)) rendition (only a still picture can be shown)."
            }
            if let platforms, !platforms.contains(platform) {
                return "\(what): this run was not made for \(platform) (--platforms \(platforms))."
            }
            if platforms != nil {
                return "\(what): no \(platform) rendition could be made (see the warnings)."
            }
            return "\(what): this attachment has no \(platform) rendition (made without \(platform) in --platforms,"
                + " or by an older PushPrep)."
        }
        guard pictures[key] == nil else { return nil }
        return "\(what): \(notes[key] ?? "\(rendition.file) is not drawn here")."
    }

    /// What a rendition is: `JPEG 1024×512, 98.3 kB of FCM's 1.05 MB cap; cropped from
    /// 4032×2016 at 0,128 of the source`.
    static func caption(_ key: Renditions.Key, _ rendition: Rendition) -> String {
        let type = rendition.mime == "image/png" ? "PNG" : rendition.mime == "image/jpeg" ? "JPEG" : rendition.mime
        let cap =
            key == .android
            ? " of FCM's \(ReportFormat.bytes(AndroidRules.maxBytes)) cap"
            : key == .web ? " of \(ReportFormat.bytes(WebRules.maxBytes))" : ""
        let crop = rendition.crop
        return "\(type) \(rendition.width)×\(rendition.height), \(ReportFormat.bytes(rendition.bytes))\(cap);"
            + " cropped from \(crop.width)×\(crop.height) at \(crop.x),\(crop.y) of the source"
    }
}
