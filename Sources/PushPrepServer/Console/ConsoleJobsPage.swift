import Foundation
import Hummingbird
import PushPrep
import PushPrepCore
import PushPrepQueue

/// `GET /jobs`: the jobs table, filtered and paged; `POST /jobs/bulk-retry`: its bulk retry.
extension ConsoleRoutes {
    /// The jobs page: a page of the jobs the query's filter matches, older than its `before`.
    func jobs(_ request: Request, _ visit: ConsoleVisit) async throws -> Response {
        let filter = try ConsoleJobFilter(query: request.uri.query)
        let before = request.uri.queryParameters["before"].flatMap { JobID(String($0)) }.flatMap { $0 > 0 ? $0 : nil }
        let page = try await filter.page(queue, before: before)
        let returnTo = request.uri.string
        let now = Date()
        let total = try await queue.count(filter: filter.queueFilter)
        let view = ConsoleJobsView(
            filter: filter.fields,
            // A filter on a state that cannot be retried offers no bulk retry.
            canBulkRetry: visit.canWrite && (filter.state.map(\.isRetryable) ?? true),
            states: JobState.allCases.map { .init(value: $0.rawValue, selected: $0 == filter.state) },
            kinds: MediaKind.allCases.map { .init(value: $0.rawValue, selected: $0 == filter.kind) },
            rows: page.jobs.map { record in
                var row = ConsoleJobView(record, renderer: renderer).row(now: now)
                row.returnTo = returnTo
                return row
            },
            caption: page.jobs.isEmpty
                ? "No job matches"
                : "Jobs \(page.jobs.first?.id ?? 0) to \(page.jobs.last?.id ?? 0), newest first; \(total) match",
            olderLink: page.nextBefore.map { "/jobs?" + filter.query(before: $0) },
            newestLink: before == nil ? nil : "/jobs?" + filter.query(before: nil))
        return html("jobs", self.page(visit, title: "Jobs", view))
    }

    /// `POST /jobs/bulk-retry`: every failed, dead or cancelled job the filter matches, queued
    /// again by the queue in batches of at most ``JobFilter/retryLimit``.
    ///
    /// A batch retries fewer than the limit whenever it leaves some of its jobs alone (a dedup
    /// key that a queued job or a newer retried one holds), so only a batch that retries nothing
    /// ends the work. It is bounded by how many jobs matched when the form came: jobs a worker
    /// fails again meanwhile are not chased round and round.
    func bulkRetry(_ form: ConsoleJobFilter.Fields) async throws -> Response {
        let filter = try ConsoleJobFilter(fields: form)
        var total = 0
        if let matching = filter.queueFilter.retryable { total = try await queue.count(filter: matching) }
        var retried = 0
        while retried < total {
            let batch = try await queue.retry(matching: filter.queueFilter)
            guard batch > 0 else { break }
            retried += batch
        }
        let query = filter.query(before: nil)
        return Self.redirect(
            "/jobs" + (query.isEmpty ? "" : "?" + query), notice: retried > 0 ? "bulk" : "bulk-none")
    }
}

/// What the jobs page's template reads.
struct ConsoleJobsView {
    /// The filter as the form shows it back.
    var filter: ConsoleJobFilter.Fields
    var canBulkRetry: Bool
    var states, kinds: [ConsoleOption]
    var rows: [ConsoleJobRow]
    var caption: String
    /// The next page's link, and the first page's when this is not it.
    var olderLink, newestLink: String?
}

/// The jobs table's filter (state, kind, a source substring, error code), read from the GET
/// form or a POST form's hidden fields and handed to the queue as a ``JobFilter``.
struct ConsoleJobFilter {
    var state: JobState?
    var kind: MediaKind?
    var source: String?
    var code: String?

    /// Jobs a page shows.
    static let pageSize = 50

    /// The filter's form fields as sent (an empty one is no filter), and as shown back.
    struct Fields: Decodable {
        var state, kind, source, code: String?
    }

    /// A filter of the given fields (none: every job).
    init(state: JobState? = nil, kind: MediaKind? = nil, source: String? = nil, code: String? = nil) {
        self.state = state
        self.kind = kind
        self.source = source
        self.code = code
    }

    /// From `/jobs`' query, decoded as the browser's GET form encoded it (`+` is a space, which
    /// the router's query parameters leave as a `+`).
    init(query: String?) throws {
        try self.init(fields: ConsoleRequestContext.decode(Fields.self, from: query ?? ""))
    }

    /// From a form's fields (empty fields are no filter); an unknown state or kind, or a text
    /// past the queue's lengths, is 400.
    init(fields: Fields) throws {
        func field(_ value: String?) -> String? {
            guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        if let text = field(fields.state) {
            guard let state = JobState(rawValue: text) else {
                throw Problem(
                    .badRequest, .invalidRequest,
                    "state must be one of \(JobState.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.state = state
        }
        if let text = field(fields.kind) {
            guard let kind = MediaKind(rawValue: text) else {
                throw Problem(.badRequest, .invalidRequest, "kind must be image, video or audio")
            }
            self.kind = kind
        }
        source = field(fields.source)
        code = field(fields.code)
        do throws(PushPrepError) {
            try queueFilter.validate()
        } catch {
            throw Problem(error)
        }
    }

    /// The queue's filter.
    var queueFilter: JobFilter {
        JobFilter(
            states: state.map { [$0] } ?? [], kind: kind.map(JobKind.init), source: source,
            errorCode: code)
    }

    /// What the form shows back.
    var fields: Fields { Fields(state: state?.rawValue, kind: kind?.rawValue, source: source, code: code) }

    /// The filter as a query string (its fields in the order of their names), with `before`
    /// for a later page: every character but the unreserved ones percent-encoded (a `+` left
    /// as it is would read back as a space).
    func query(before: JobID?) -> String {
        var items = [("code", code), ("kind", kind?.rawValue), ("source", source), ("state", state?.rawValue)]
            .compactMap { name, value in value.map { (name, $0) } }
        if let before { items.append(("before", String(before))) }
        return items.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? "")" }
            .joined(separator: "&")
    }

    /// RFC 3986's unreserved characters (ASCII only: `CharacterSet.alphanumerics` has every
    /// script's letters).
    static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A page of the table.
    struct Page {
        var jobs: [JobRecord]
        /// The `before` of the next page, nil on the last.
        var nextBefore: JobID?
    }

    /// Up to `limit` matching jobs older than `before`, newest first (one more is asked for, to
    /// know whether a next page exists).
    func page(_ queue: any ConsoleQueries, limit: Int = pageSize, before: JobID?) async throws -> Page {
        let records = try await queue.list(filter: queueFilter, limit: limit + 1, before: before)
        let page = Array(records.prefix(limit))
        return Page(jobs: page, nextBefore: records.count > limit ? page.last?.id : nil)
    }
}
