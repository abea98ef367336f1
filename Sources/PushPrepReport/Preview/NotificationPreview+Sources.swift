package import PushPrepCore
package import PushPrepPayload

extension NotificationPreview {
    /// The preview of a processed attachment (a manifest entry).
    ///
    /// - Parameters:
    ///   - imageSource: what loads the picture: for an image its output (or a thumbnail of it),
    ///     for a movie its poster, which PushPrep takes at the movie's `ThumbnailTime` (so the
    ///     poster is the frame the phone's thumbnail shows); nil for a sound, or when there is
    ///     nothing to show.
    ///   - thumbnailSource: a smaller copy of the same picture for the banner's box, or nil.
    ///   - clip: the thumbnail clipping rectangle the payload will carry (the manifest has none).
    ///   - title: the notification's title; the report passes the source's name.
    ///   - body: the notification's body; the report passes what the output is.
    package init(
        attachment: Attachment, imageSource: String?, thumbnailSource: String? = nil, clip: ClippingRect? = nil,
        appName: String = NotificationPreview.defaultAppName, title: String? = nil, body: String? = nil
    ) {
        let options = attachment.options
        var picture: Picture?
        var placeholder: String?
        switch attachment.kind {
        case .image:
            if let imageSource, let width = attachment.width, let height = attachment.height {
                let frames = attachment.frames ?? 1
                let caption =
                    frames > 1
                    ? "Animated, \(frames) frames; the thumbnail is frame \(attachment.thumbnailFrame)"
                        + " (ThumbnailTime)" : nil
                picture = Picture(
                    source: imageSource, width: width, height: height, caption: caption,
                    thumbnailSource: thumbnailSource)
            }
        case .video:
            if let imageSource, let poster = attachment.poster {
                picture = Picture(
                    source: imageSource, width: poster.width, height: poster.height,
                    caption: "Poster: the frame at \(Self.seconds(options.thumbnailTime ?? 0)) (ThumbnailTime)",
                    thumbnailSource: thumbnailSource)
            } else {
                placeholder = "No poster frame for this movie"
            }
        case .audio:
            break
        }
        self.init(
            appName: appName, title: title, body: body, kind: attachment.kind, picture: picture, clip: clip,
            thumbnailTime: options.thumbnailTime, thumbnailHidden: options.thumbnailHidden ?? false,
            duration: attachment.duration, placeholder: placeholder)
    }

    /// The preview of a pre-flight's payload: its title and body as the dialect spells them, and
    /// its first attachment (or the one at `attachmentIndex`) with its thumbnail options.
    ///
    /// - Parameters:
    ///   - report: the pre-flight report (its attachments carry what `--fetch` learnt).
    ///   - payload: the payload's bytes, as checked.
    ///   - options: the options the payload was checked with (its dialect).
    ///   - imageSource: what loads the attachment's picture, when the caller has one (a downloaded
    ///     image); without it the preview shows a placeholder that says why.
    ///   - picture: the pictures `--fetch` made of the attachment while it held the download (see
    ///     ``AttachmentPicture``); they take the place of `imageSource`.
    ///   - pictureNote: why a downloaded attachment has no picture (a spent budget), for the placeholder.
    ///   - notDownloadedNote: what the placeholder of an attachment not downloaded says (how to
    ///     download it where the preview is shown); the CLI's `--fetch` by default.
    package init(
        preflight report: PreflightReport, payload: [UInt8], options: PreflightOptions = PreflightOptions(),
        attachmentIndex: Int = 0, imageSource: String? = nil, picture fetchedPicture: AttachmentPicture? = nil,
        pictureNote: String? = nil, notDownloadedNote: String? = nil,
        appName: String = NotificationPreview.defaultAppName
    ) {
        var options = options
        options.dialect = report.dialect ?? options.dialect
        let presentation = Preflight.presentation(of: payload, options: options)
        let shown =
            presentation?.attachments.indices.contains(attachmentIndex) == true
            ? presentation?.attachments[attachmentIndex] : nil
        let checked = report.attachments.first { $0.pointer == shown?.pointer }
        let fetched = checked?.fetched
        // A picture is of an image: after `--fix`, maybe the poster or still that replaced the
        // movie or animation downloaded.
        let kind = fetchedPicture != nil ? .image : fetched?.kind ?? shown.flatMap { Self.kind(of: $0) }
        var picture: Picture?
        var placeholder: String?
        if shown == nil {
            placeholder = "No attachment in this payload"
        } else if let fetchedPicture {
            let frames = fetchedPicture.frames
            picture = Picture(
                source: fetchedPicture.expanded, width: fetchedPicture.width, height: fetchedPicture.height,
                // The frame the picture was made of: the payload's time, clamped as the picture is.
                caption: frames > 1
                    ? "Animated, \(frames) frames; the thumbnail is frame"
                        + " \(min(frames - 1, shown?.thumbnailFrame ?? 0)) (ThumbnailTime)" : nil,
                thumbnailSource: fetchedPicture.banner)
        } else if let imageSource, let width = fetched?.width, let height = fetched?.height {
            picture = Picture(source: imageSource, width: width, height: height)
        } else if let fetched {
            let size = fetched.width.flatMap { w in fetched.height.map { "\(w)×\($0), " } } ?? ""
            placeholder =
                "Downloaded (\(fetched.type ?? "unrecognised type"), \(size)\(fetched.bytes) bytes); "
                + (pictureNote ?? "not drawn here")
        } else {
            placeholder = notDownloadedNote ?? "Not downloaded: check with --fetch to see the attachment"
        }
        self.init(
            appName: appName, title: presentation?.title, body: presentation?.body, kind: kind, picture: picture,
            clip: shown?.clip.map { ClippingRect(x: $0.x, y: $0.y, width: $0.width, height: $0.height) },
            thumbnailTime: shown?.thumbnailTime, thumbnailHidden: shown?.thumbnailHidden ?? false,
            duration: nil, placeholder: placeholder)
    }

    /// The kind the payload declares, else the one the URL's extension names.
    private static func kind(of attachment: PreflightPresentation.Attachment) -> MediaKind? {
        if let declared = attachment.declaredType { return declared.kind }
        let path = attachment.url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? attachment.url
        let ext = PathName.lowercasedExtension(of: path)
        return MediaType.allCases.first { $0.knownExtensions.contains(ext) }?.kind
    }

    /// Seconds with at most two decimals: `1.5 s`, `0 s`.
    private static func seconds(_ time: Double) -> String {
        "\(ThumbnailCrop.number(time)) s"
    }
}
