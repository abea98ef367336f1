public import PushPrepCore

/// The attachments a payload carries, chosen from manifest entries the way `pushprep payload`
/// and `POST /v1/payload` both choose them: the ones named, in that order, or every ready one.
public struct PayloadSelection: Sendable, Equatable {
    /// What goes into the payload, in order.
    public var attachments: [Attachment]
    /// Failed entries left out because no id was named (each is reported, not sent).
    public var skippedFailures: Int

    /// The attachments of `entries` whose ids are `ids` (in that order), or every ready one
    /// when `ids` is empty. With `baseURL`, each attachment's URL (and its poster's) is that
    /// prefix joined with its file, for manifests written without one. An id with no ready
    /// attachment is `invalid_payload`, naming `source` (the manifest or the jobs).
    public init(
        from entries: [ManifestEntry], ids: [String] = [], baseURL: String? = nil, source: String = "the manifest"
    ) throws(PushPrepError) {
        var chosen: [Attachment]
        if ids.isEmpty {
            chosen = entries.compactMap(\.attachment)
            skippedFailures = entries.count - chosen.count
        } else {
            chosen = []
            for id in ids {
                guard let attachment = entries.lazy.compactMap(\.attachment).first(where: { $0.id == id }) else {
                    throw PushPrepError(.invalidPayload, "no ready attachment \(id) in \(source)")
                }
                chosen.append(attachment)
            }
            skippedFailures = 0
        }
        if let baseURL {
            for index in chosen.indices { chosen[index].setURLs(baseURL: baseURL) }
        }
        attachments = chosen
    }
}
