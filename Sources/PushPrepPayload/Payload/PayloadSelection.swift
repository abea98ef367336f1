public import PushPrepCore

/// The attachments a payload carries, chosen from manifest entries the way `pushprep payload`
/// and `POST /v1/payload` both choose them: the ones named, in that order; every ready one when
/// asked for all; else the first ready one alone. iOS shows only a push's first attachment
/// without a content extension, so one is the default, and ``note`` says which was taken and
/// how to take others. Messages name the caller's own spelling of the choice (``Spelling``): the
/// CLI's `--id` and `--all`, the HTTP API's `ids` and `all`.
public struct PayloadSelection: Sendable, Equatable {
    /// How a caller spells the two ways of choosing, for messages.
    public struct Spelling: Sendable, Equatable {
        /// How to name attachments: `--id ID` (repeatable) or `ids`.
        public var ids: String
        /// How to take every ready one: `--all` or `all: true`.
        public var all: String

        /// `pushprep payload`'s options.
        public static let cli = Spelling(ids: "--id", all: "--all")
        /// `POST /v1/payload`'s fields.
        public static let http = Spelling(ids: "ids", all: "all")
    }

    /// What goes into the payload, in order.
    public var attachments: [Attachment]
    /// Failed entries left out because no id was named (each is reported, not sent).
    public var skippedFailures: Int
    /// The ready attachments the default left out (every one after the first), in entry order;
    /// empty when ids or all chose.
    public var leftOut: [Attachment]
    /// How the caller spells the choice.
    public var spelling: Spelling
    /// The provider the payload is for, when the caller named it.
    public var dialect: PushDialect?

    /// The attachments of `entries` whose ids are `ids` (in that order); every ready one with
    /// `all`; else the first ready one. With `baseURL`, each attachment's URL (and its poster's)
    /// is that prefix joined with its file, for manifests written without one. With a `dialect`
    /// that carries one attachment per push, more than one chosen is `invalid_payload`, listing
    /// them. An id with no ready attachment is `invalid_payload`, naming `source` (the manifest
    /// or the jobs); ids together with all is `invalid_payload` too.
    public init(
        from entries: [ManifestEntry], ids: [String] = [], all: Bool = false, dialect: PushDialect? = nil,
        baseURL: String? = nil, source: String = "the manifest", spelling: Spelling = .cli
    ) throws(PushPrepError) {
        self.spelling = spelling
        self.dialect = dialect
        let ready = entries.compactMap(\.attachment)
        var chosen: [Attachment]
        if !ids.isEmpty {
            guard !all else {
                throw PushPrepError(
                    .invalidPayload,
                    "give \(spelling.ids) (the attachments to send) or \(spelling.all) (every ready one), not both")
            }
            chosen = []
            for id in ids {
                guard let attachment = ready.first(where: { $0.id == id }) else {
                    throw PushPrepError(
                        .invalidPayload,
                        "no ready attachment \(Self.shown(id)) in \(source)"
                            + Self.readyList(ready, prefix: "; ready: "))
                }
                chosen.append(attachment)
            }
            skippedFailures = 0
            leftOut = []
        } else if all {
            chosen = ready
            skippedFailures = entries.count - ready.count
            leftOut = []
        } else {
            chosen = Array(ready.prefix(1))
            skippedFailures = entries.count - ready.count
            leftOut = Array(ready.dropFirst())
        }
        if let dialect { try dialect.checkAttachmentCount(chosen.map(\.id), choose: spelling.ids) }
        if let baseURL {
            for index in chosen.indices { chosen[index].setURLs(baseURL: baseURL) }
        }
        attachments = chosen
    }

    /// Which attachment the default took and how to take others, when it left some out: `took
    /// img-…, the first of 3 ready attachments; the others: img-…, aud-…; choose with --id, or
    /// send every one with --all` (without the last clause for a provider that carries one).
    /// Nil when ids or all chose, or when there was only one.
    public var note: String? {
        guard let taken = attachments.first, !leftOut.isEmpty else { return nil }
        return "took \(taken.id), the first of \(leftOut.count + 1) ready attachments; the others:"
            + Self.readyList(leftOut, prefix: " ") + "; choose with \(spelling.ids)"
            + (dialect?.carriesOneAttachment == true ? "" : ", or send every one with \(spelling.all)")
    }

    /// The longest part of a client's id a message repeats.
    static let shownIDCharacters = 80

    /// `id` as a message may repeat it: a client's text (an HTTP request's `ids` may be as long
    /// as the body), at most ``shownIDCharacters`` characters, control characters escaped.
    static func shown(_ id: String) -> String {
        let head = id.count > shownIDCharacters ? String(id.prefix(shownIDCharacters)) + "…" : id
        return UntrustedText.escaped(head)
    }

    /// At most ``listedIDs`` of the attachments' ids, after `prefix`, with a count of the rest;
    /// "" for none.
    static func readyList(_ attachments: [Attachment], prefix: String) -> String {
        guard !attachments.isEmpty else { return "" }
        return prefix + PushDialect.list(attachments.map(\.id))
    }
}

extension PushDialect {
    /// Ids a message lists at most; the rest are counted.
    static let listedIDs = 10

    /// `ids` joined with commas, at most ``listedIDs`` of them and a count of the rest.
    static func list(_ ids: [String]) -> String {
        let shown = ids.prefix(listedIDs).joined(separator: ", ")
        return ids.count > listedIDs ? "\(shown) and \(ids.count - listedIDs) more" : shown
    }

    /// `invalid_payload` when the provider carries one attachment per push and `ids` names more,
    /// listing them; `choose` is how the caller names the choice (`--id`, `ids`), or nil for a
    /// message that names none. The one check ``PayloadSelection`` and ``PayloadBuilder`` share.
    func checkAttachmentCount(_ ids: [String], choose: String?) throws(PushPrepError) {
        guard carriesOneAttachment && ids.count > 1 else { return }
        throw PushPrepError(
            .invalidPayload,
            "\(displayName) carries one attachment per push, got \(ids.count) (\(Self.list(ids))): choose one"
                + (choose.map { " with \($0)" } ?? ""))
    }
}
