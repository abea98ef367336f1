import Foundation
import PushPrep
import PushPrepCore
import PushPrepReport

/// The notification previews of a job's attachment (PushPrepReport's: iOS, Android, and the web
/// when it has a web rendition), with the pictures loaded from this server or from
/// `--base-url`'s origin (the only image sources the pages' CSP allows): the output of an image,
/// the poster of a movie, the renditions' files; from anywhere else (a presigned bucket URL)
/// a preview draws without its picture.
enum ConsolePreview {
    static func html(for resource: JobResource, publicURL: String?, pictureOrigin: String? = nil) -> String? {
        guard let attachment = resource.attachment?.attachment else { return nil }
        let url = attachment.kind == .video ? attachment.poster?.url : attachment.url
        let source = url.flatMap { url in
            sameOrigin(url, publicURL: publicURL) ?? pictureOrigin.flatMap { fromOrigin(url, $0) }
        }
        // The report's units (kB and MB of 10^3 and 10^6 bytes, as Apple states its limits).
        var facts = [attachment.mime, ReportFormat.bytes(attachment.bytes)]
        if let width = attachment.width, let height = attachment.height { facts.insert("\(width)×\(height)", at: 1) }
        // A job has no payload: the title and body stand in for it, as in the batch report, and
        // say so; the file's name is the page's heading, not the notification's title.
        let title = BatchReport.defaultSampleTitle
        let body = BatchReport.defaultSampleBody
        let note =
            "<p class=\"muted preview-note\">Output: \(HTML.escape(facts.joined(separator: ", "))). The title and "
            + "body stand in for your payload's.</p>"
        let preview = NotificationPreview(attachment: attachment, imageSource: source, title: title, body: body)
        // The renditions' files, from the same places as the attachment's.
        var pictures: [Renditions.Key: PlatformPreview.Picture] = [:]
        var notes: [Renditions.Key: String] = [:]
        for (key, rendition) in attachment.renditions.all {
            guard let url = rendition.url else {
                notes[key] = "\(rendition.file) has no URL (published without --base-url)"
                continue
            }
            guard
                let source = sameOrigin(url, publicURL: publicURL) ?? pictureOrigin.flatMap({ fromOrigin(url, $0) })
            else {
                notes[key] = "\(rendition.file) is not on this server or --base-url's origin, which this page may load"
                continue
            }
            pictures[key] = PlatformPreview.Picture(source: source, width: rendition.width, height: rendition.height)
        }
        let others = PlatformPreview.previews(
            of: attachment, platforms: nil, pictures: pictures, notes: notes, title: title, body: body)
        return "<div class=\"preview\">" + PlatformPreview.row(ios: preview.html, others: others) + "</div>" + note
    }

    /// `url` itself when it is an address under `origin` (`--base-url`'s), else nil. The scheme
    /// and host compare without regard to ASCII case: `origin` is lowercased, while the outputs'
    /// URLs keep `--base-url` as it was written (`https://CDN.example.com/push/...`). The `/`
    /// right after the origin ends the authority, so `origin.evil/` or `origin@evil/` never match.
    static func fromOrigin(_ url: String, _ origin: String) -> String? {
        let expected = Array((origin + "/").utf8)
        let head = url.utf8.prefix(expected.count)
        guard head.count == expected.count,
            zip(head, expected).allSatisfy({ (65...90).contains($0) ? $0 + 32 == $1 : $0 == $1 })
        else { return nil }
        return url
    }

    /// `url` as a path of this server when it is one (`/v1/attachments/...`, its query kept for a
    /// signature), else nil.
    static func sameOrigin(_ url: String, publicURL: String?) -> String? {
        guard let publicURL, url.hasPrefix(publicURL + "/") else { return nil }
        return String(url.dropFirst(publicURL.count))
    }
}

/// The scheme, host and port of an `http(s)` base URL, as a CSP source expression; nil for
/// anything else, or a host with characters a CSP header could not carry.
struct ImageOrigin: Equatable {
    let origin: String

    init?(baseURL: String) {
        guard let components = URLComponents(string: baseURL),
            let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = components.host?.lowercased(), !host.isEmpty,
            host.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || "0123456789.-[]:".unicodeScalars.contains($0))
            })
        else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        origin = "\(scheme)://\(bracketed)\(port)"
    }
}
