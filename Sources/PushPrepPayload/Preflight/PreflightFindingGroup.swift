import Foundation

/// Findings that say the same thing about several places: the same severity and code, and the
/// same message once each finding's own attachment URL is taken out of it (seven `http://`
/// attachments give seven `insecure_url` findings that differ only in the URL). The pages show
/// a group once, with its places listed; the text and JSON outputs keep every finding.
package struct PreflightFindingGroup: Sendable, Equatable {
    /// One place the group's finding is at: its JSON Pointer and, when the finding is about an
    /// attachment or a platform image, that URL.
    package struct Place: Sendable, Equatable {
        package var pointer: String
        package var url: String?
    }

    package var severity: PreflightSeverity
    package var code: PreflightCode
    /// The message: the finding's own when the group has one place, else the shared message
    /// with the URL it named replaced by words (``urlWords``).
    package var message: String
    /// Where it was found, in the order of ``Preflight/sorted(_:)``.
    package var places: [Place]

    /// What stands for the URL in a group's shared message.
    package static let urlWords = "the attachment's URL"
}

extension Preflight {
    /// `findings` (in the order ``sorted(_:)`` gives them) grouped: each group is placed where
    /// its first finding is, so the order of the groups is the order of the findings. `urls`
    /// maps the pointers of the payload's attachments and platform images to their URLs (a
    /// report's ``PreflightReport/attachments`` and ``PreflightReport/platformImages``); a
    /// finding belongs to the one whose pointer is its own or inside whose entry it is.
    package static func grouped(_ findings: [PreflightFinding], urls: [String: String]) -> [PreflightFindingGroup] {
        struct Key: Hashable {
            var severity: PreflightSeverity
            var code: PreflightCode
            var message: String
        }
        var groups: [PreflightFindingGroup] = []
        var index: [Key: Int] = [:]
        for finding in findings {
            let url = Self.url(of: finding.pointer, in: urls)
            // The message with its URL taken out, for the key; a finding that names no URL
            // groups only with findings of the very same message.
            let shared =
                url.flatMap { url in
                    finding.message.contains(url)
                        ? finding.message.replacingOccurrences(of: url, with: PreflightFindingGroup.urlWords) : nil
                } ?? finding.message
            let key = Key(severity: finding.severity, code: finding.code, message: shared)
            let place = PreflightFindingGroup.Place(pointer: finding.pointer, url: url)
            if let at = index[key], finding.code != .findingsTruncated {
                if groups[at].places.count == 1 { groups[at].message = shared }
                groups[at].places.append(place)
            } else {
                index[key] = groups.count
                groups.append(
                    PreflightFindingGroup(
                        severity: finding.severity, code: finding.code, message: finding.message, places: [place]))
            }
        }
        return groups
    }

    /// The pointers of `report`'s attachments and platform images, with their URLs, for
    /// ``grouped(_:urls:)``.
    package static func urls(of report: PreflightReport) -> [String: String] {
        var urls: [String: String] = [:]
        for attachment in report.attachments { urls[attachment.pointer] = attachment.url }
        for image in report.platformImages ?? [] { urls[image.pointer] = image.url }
        return urls
    }

    /// The URL the finding at `pointer` is about: the one at that pointer, else the one whose
    /// entry holds it (`/attachments/2/options/x` is about `/attachments/2/url`'s URL).
    static func url(of pointer: String, in urls: [String: String]) -> String? {
        if let url = urls[pointer] { return url }
        var best: (length: Int, url: String)?
        for (root, url) in urls {
            // The entry: the URL's pointer without a last `url` token (PushPrep's attachments,
            // Airship's media_attachment), else the URL's pointer itself.
            var entry = root
            if entry.hasSuffix("/url") { entry.removeLast(4) }
            guard !entry.isEmpty, pointer.hasPrefix(entry + "/") else { continue }
            if best == nil || entry.count > best!.length { best = (entry.count, url) }
        }
        return best?.url
    }
}
