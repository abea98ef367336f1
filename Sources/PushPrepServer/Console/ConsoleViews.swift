import Foundation
import HTTPTypes
import PushPrep
import PushPrepCore
import PushPrepPayload
import PushPrepQueue
import PushPrepReport

/// The jobs table's filter (state, kind, a source substring, error code), read from the GET
/// form or a POST form's hidden fields and handed to the queue as a ``JobFilter``.
struct ConsoleJobFilter {
    var state: JobState?
    var kind: MediaKind?
    var source: String?
    var code: String?

    /// Jobs a page shows.
    static let pageSize = 50

    init(state: JobState? = nil, kind: MediaKind? = nil, source: String? = nil, code: String? = nil) {
        self.state = state
        self.kind = kind
        self.source = source
        self.code = code
    }

    /// From `/jobs`' query, decoded as the browser's GET form encoded it (`+` is a space, which
    /// the router's query parameters leave as a `+`).
    init(query: String?) throws {
        try self.init(form: FormBody.parse(Array((query ?? "").utf8)))
    }

    /// From a form's fields (empty fields are no filter); an unknown state or kind, or a text
    /// past the queue's lengths, is 400.
    init(form: [String: String]) throws {
        func field(_ name: String) -> String? {
            guard let value = form[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        if let text = field("state") {
            guard let state = JobState(rawValue: text) else {
                throw Problem(
                    .badRequest, .invalidRequest,
                    "state must be one of \(JobState.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.state = state
        }
        if let text = field("kind") {
            guard let kind = MediaKind(rawValue: text) else {
                throw Problem(.badRequest, .invalidRequest, "kind must be image, video or audio")
            }
            self.kind = kind
        }
        source = field("source")
        code = field("code")
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
    var values: [String: String] {
        var values: [String: String] = [:]
        if let state { values["state"] = state.rawValue }
        if let kind { values["kind"] = kind.rawValue }
        if let source { values["source"] = source }
        if let code { values["code"] = code }
        return values
    }

    /// The filter as a query string, with `before` for a later page: every character but the
    /// unreserved ones percent-encoded (a `+` left as it is would read back as a space).
    func query(before: JobID?) -> String {
        var items = values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let before { items.append(("before", String(before))) }
        return items.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? "")" }
            .joined(separator: "&")
    }

    /// RFC 3986's unreserved characters (ASCII only: `CharacterSet.alphanumerics` has every
    /// script's letters).
    static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    struct Page {
        var jobs: [JobRecord]
        /// The `before` of the next page, nil on the last.
        var nextBefore: JobID?
    }

    /// Up to `limit` matching jobs older than `before`, newest first (one more is asked for, to
    /// know whether a next page exists).
    func page(_ queue: any JobQueue, limit: Int = pageSize, before: JobID?) async throws -> Page {
        let records = try await queue.list(filter: queueFilter, limit: limit + 1, before: before)
        let page = Array(records.prefix(limit))
        return Page(jobs: page, nextBefore: records.count > limit ? page.last?.id : nil)
    }
}

/// One job as the console's pages show it. What clients queued and what their sources
/// answered (source, messages, worker names) is shown through ``UntrustedText/escaped(_:)``, as
/// `jobs` prints it: a control character appears as its escape, not as nothing.
struct ConsoleJobView {
    let record: JobRecord
    let resource: JobResource

    init(_ record: JobRecord, renderer: JobRenderer) {
        self.record = record
        self.resource = renderer.resource(record)
    }

    /// The manifest entry of a job's result, when this build can read it.
    static func entry(of record: JobRecord) -> ManifestEntry? { JobResource(record).attachment }

    /// The job's error code: the job's own, else its entry's failure.
    static func errorCode(of record: JobRecord) -> String? {
        record.errorCode ?? entry(of: record)?.failure?.error.code.rawValue
    }

    var retryable: Bool { [.failed, .dead, .cancelled].contains(record.state) }
    var cancellable: Bool { !record.state.isFinished && !record.cancelRequested }

    /// The values of a table row (and the job page's header). `state` is the queue's state (the
    /// rows' `data-state`, as the API says it); `shownState` is what the page writes, `retrying`
    /// for a queued job waiting out a retry's backoff (``ConsoleRetry``), with its next attempt.
    var values: [String: Any] { values(now: Date()) }

    /// ``values`` as of `now`.
    func values(now: Date) -> [String: Any] {
        var values: [String: Any] = [
            // An upload shows its own file name, not the stored path.
            "id": record.id, "state": record.state.rawValue,
            "source": UntrustedText.escaped(resource.sourceName ?? record.source),
            "attempts": "\(record.attempt) of \(record.maxAttempts)", "createdISO": ConsoleFormat.iso(record.createdAt),
            "age": ConsoleFormat.age(seconds: Date().timeIntervalSince(record.createdAt)) + " ago",
            "retryable": retryable, "cancellable": cancellable, "priority": record.priority,
            "maxAttempts": record.maxAttempts, "attemptCount": record.attempt,
        ]
        if let kind = resource.attachment?.attachment?.kind { values["kind"] = kind.rawValue }
        if let code = Self.errorCode(of: record) { values["errorCode"] = code }
        let retry = ConsoleRetry(record, now: now)
        values["shownState"] = retry == nil ? record.state.rawValue : ConsoleRetry.shownState
        if let retry {
            values["retrying"] = true
            values["nextAttempt"] = retry.label
            values["nextAttemptISO"] = ConsoleFormat.iso(retry.at)
            values["nextAttemptIn"] = retry.wait(now: now)
        }
        return values
    }

    /// The job page's sections besides the header; `files` links the outputs when this server
    /// serves them (nil when it publishes elsewhere only).
    func detailValues(
        deliveries: [WebhookDelivery], attempts: [JobAttempt], publicURL: String?, pictureOrigin: String? = nil,
        files: ConsoleFiles? = nil
    ) -> [String: Any] {
        var values: [String: Any] = [:]
        if let metadata = resource.metadata { values["metadataJSON"] = ConsoleFormat.prettyJSON(metadata) }
        if let settings = resource.settings { values["settingsJSON"] = ConsoleFormat.prettyJSON(settings) }
        if let attachment = resource.attachment?.attachment {
            let links = files?.links(of: attachment) ?? []
            values["fileLinks"] = links
            values["hasFileLinks"] = !links.isEmpty
            if files == nil { values["filesElsewhere"] = true }
        }
        if let finished = record.finishedAt { values["finishedISO"] = ConsoleFormat.iso(finished) }
        if let owner = record.leaseOwner { values["leaseOwner"] = UntrustedText.escaped(owner) }
        if let message = record.errorMessage ?? resource.attachment?.failure?.error.message {
            values["errorMessage"] = UntrustedText.escaped(message)
        }
        if let code = Self.errorCode(of: record), let known = PushPrepError.Code(rawValue: code) {
            values["errorAdvice"] = ConsoleAdvice.text(for: known)
        }
        if let callbackURL = record.callbackURL { values["callbackURL"] = UntrustedText.escaped(callbackURL) }
        if let entry = resource.attachment { values["manifest"] = ConsoleFormat.prettyJSON(entry) }
        let operations = resource.attachment?.attachment?.operations ?? []
        let warnings = resource.attachment?.attachment?.warnings ?? []
        values["operations"] = operations
        values["hasOperations"] = !operations.isEmpty
        values["warnings"] = warnings.map(Self.warningRow)
        values["hasWarnings"] = !warnings.isEmpty
        if let preview = ConsolePreview.html(for: resource, publicURL: publicURL, pictureOrigin: pictureOrigin) {
            values["previewHTML"] = preview
        }
        values["attemptRows"] = Self.attemptRows(attempts)
        values["deliveries"] = deliveries.map { delivery -> [String: Any] in
            var row: [String: Any] = [
                "id": delivery.id, "event": delivery.event, "state": delivery.state.rawValue,
                "attempts": delivery.attempts,
            ]
            if let status = delivery.lastStatus { row["lastStatus"] = status }
            if let error = delivery.lastError { row["lastError"] = UntrustedText.escaped(error) }
            return row
        }
        return values
    }

    /// A manifest's warning as the job page lists it: with its code and advice when it is a kind
    /// this version writes, as it is otherwise (an older PushPrep's text).
    static func warningRow(_ warning: AttachmentWarning) -> [String: Any] {
        var row: [String: Any] = ["message": warning.message]
        if let code = warning.code {
            row["warningCode"] = code.rawValue
            row["warningAdvice"] = ConsoleAdvice.text(for: code)
        }
        return row
    }

    /// The attempts the queue recorded, oldest first.
    static func attemptRows(_ attempts: [JobAttempt]) -> [[String: Any]] {
        attempts.map { attempt in
            var row: [String: Any] = [
                "number": attempt.attempt, "worker": UntrustedText.escaped(attempt.worker),
                "started": ConsoleFormat.iso(attempt.startedAt),
                "outcome": attempt.outcome.map(Self.words) ?? "running",
            ]
            if let ended = attempt.endedAt {
                row["took"] = ConsoleFormat.duration(seconds: ended.timeIntervalSince(attempt.startedAt))
            }
            if let code = attempt.errorCode { row["code"] = code }
            if let message = attempt.errorMessage { row["message"] = UntrustedText.escaped(message) }
            return row
        }
    }

    /// An attempt's outcome in words.
    static func words(_ outcome: JobAttempt.Outcome) -> String {
        switch outcome {
        case .succeeded: "succeeded"
        case .failed: "failed"
        case .cancelled: "cancelled"
        case .expired: "lease expired (the worker was lost)"
        case .released: "given back (not counted)"
        }
    }
}

/// A queued job waiting out a retry's backoff: it ran and failed (at least one attempt, an
/// error recorded) and its `runAt` is still ahead. The queue keeps it `queued` (the API says so
/// too); the console writes `retrying`, the attempt that comes next and when.
struct ConsoleRetry: Equatable {
    /// The attempt that comes next (1-based) and the most the job gets.
    let attempt: Int
    let maxAttempts: Int
    /// When it may run (a worker claims it at or after this time).
    let at: Date

    /// The word the pages write for the state.
    static let shownState = "retrying"

    /// The wait of `record` as of `now`, or nil when it is not waiting to retry.
    init?(_ record: JobRecord, now: Date) {
        guard record.state == .queued, record.attempt > 0, record.errorCode != nil, record.runAt > now else {
            return nil
        }
        attempt = record.attempt + 1
        maxAttempts = record.maxAttempts
        at = record.runAt
    }

    /// `attempt 2 of 5`.
    var label: String { "attempt \(attempt) of \(maxAttempts)" }

    /// `in 14 s`, as of `now`.
    func wait(now: Date) -> String { "in " + ConsoleFormat.age(seconds: at.timeIntervalSince(now)) }
}

/// The links of a job's output files through this server's attachment route
/// (`/v1/attachments/<file>`), signed as the API signs them under `--sign-attachments`: the
/// browser sends no key to that route, and a phone's URL may be the CDN's (`--base-url`).
struct ConsoleFiles {
    /// `--sign-attachments`' signer, when set.
    let signer: AttachmentURLSigner?

    /// Links when `configuration` serves an out directory, else nil.
    init?(_ configuration: ServerConfiguration) {
        guard configuration.attachmentsDirectory != nil else { return nil }
        signer = configuration.attachmentSigner
    }

    /// The output, the poster and the renditions, each as the row the job page lists: what it
    /// is, its file's name and type, and its link.
    func links(of attachment: Attachment, now: Date = Date()) -> [[String: Any]] {
        var files: [(role: String, file: String, mime: String)] = [("Output", attachment.file, attachment.mime)]
        if let poster = attachment.poster { files.append(("Poster", poster.file, MediaType.jpeg.mime)) }
        for (key, rendition) in attachment.renditions.all {
            files.append((Self.role(of: key), rendition.file, rendition.mime))
        }
        return files.map { file in
            let name = file.file.addingPercentEncoding(withAllowedCharacters: ConsoleJobFilter.unreserved) ?? ""
            let path = "/v1/attachments/" + name
            return [
                "role": file.role, "file": UntrustedText.escaped(file.file), "mime": file.mime,
                "href": signer?.sign(path, now: now) ?? path,
            ]
        }
    }

    /// A rendition in words.
    static func role(of key: Renditions.Key) -> String {
        switch key {
        case .android: "Android big picture"
        case .web: "Web image"
        case .webIcon: "Web icon"
        }
    }
}

/// The pre-flight page's findings.
struct ConsolePreflightView {
    let report: PreflightReport

    var values: [String: Any] {
        let errors = report.count(.error)
        let warnings = report.count(.warning)
        var summary = "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
        if let bytes = report.bytes, let limit = report.limit { summary += "; \(bytes) of \(limit) bytes" }
        if let dialect = report.dialect { summary += "; read as \(dialect.displayName)" }
        return [
            "checked": true, "errors": errors, "warnings": warnings, "summary": summary,
            "findings": report.outcome.map { finding -> [String: Any] in
                [
                    "code": finding.code.rawValue, "severity": finding.severity.rawValue,
                    "pointer": finding.pointer.isEmpty ? "(the payload)" : finding.pointer,
                    "message": finding.message, "advice": ConsoleAdvice.text(for: finding.code),
                ]
            },
        ]
    }
}

/// Counts by minute over the last hour, and their chart.
struct ConsoleActivity {
    /// Finished jobs per minute, oldest minute first (60 entries).
    var succeededByMinute = [Int](repeating: 0, count: 60)
    var failedByMinute = [Int](repeating: 0, count: 60)
    /// The end of the newest minute drawn: the time axis' `now`.
    var end: Date

    /// From the queue's per-minute buckets (oldest first); the newest 60 are drawn, the newest
    /// ending at `end` (the time axis counts back from it).
    init(buckets: [ActivityBucket], end: Date = Date()) {
        self.end = end
        let recent = buckets.suffix(60)
        let offset = 60 - recent.count
        for (index, bucket) in recent.enumerated() {
            succeededByMinute[offset + index] = bucket.succeeded
            failedByMinute[offset + index] = bucket.failed
        }
    }

    var succeeded: Int { succeededByMinute.reduce(0, +) }
    var failed: Int { failedByMinute.reduce(0, +) }

    /// The count axis' top: the busiest minute rounded up to an even number (so that its middle
    /// tick is a whole count), at least 2.
    var scaleTop: Int {
        let peak = zip(succeededByMinute, failedByMinute).map { $0 + $1 }.max() ?? 0
        return max(2, peak + peak % 2)
    }

    /// A stacked bar per minute (succeeded below, failed above) as inline SVG, built from
    /// numbers and fixed words only, with a count axis (0, half, top; "jobs per minute") and a
    /// time axis (UTC times of every quarter hour, then "now"); `role="img"` with a title and a
    /// description for screen readers. Its legend is HTML beside it (``legend``), readable at a
    /// phone's width where the SVG's text scales down. The view box is narrow (360 units) so
    /// that 12-unit labels stay near 12 px on a 390 px screen.
    func svg() -> String {
        let width = 360.0
        let height = 170.0
        let left = 34.0
        let right = 350.0
        let top = 24.0
        let bottom = 140.0
        let scale = Double(scaleTop)
        let barWidth = (right - left) / 60
        var bars = ""
        for minute in 0..<60 {
            let x = left + Double(minute) * barWidth
            let okHeight = Double(succeededByMinute[minute]) / scale * (bottom - top)
            let badHeight = Double(failedByMinute[minute]) / scale * (bottom - top)
            let label =
                "minute \(minute - 60): \(succeededByMinute[minute]) succeeded, \(failedByMinute[minute]) failed"
            if okHeight > 0 {
                bars +=
                    "<rect class=\"succeeded\" x=\"\(f(x + 0.5))\" y=\"\(f(bottom - okHeight))\" width=\"\(f(barWidth - 1))\" height=\"\(f(okHeight))\"><title>\(label)</title></rect>"
            }
            if badHeight > 0 {
                bars +=
                    "<rect class=\"failed\" x=\"\(f(x + 0.5))\" y=\"\(f(bottom - okHeight - badHeight))\" width=\"\(f(barWidth - 1))\" height=\"\(f(badHeight))\"><title>\(label)</title></rect>"
            }
        }
        var axes =
            "<line class=\"axis\" x1=\"\(f(left))\" y1=\"\(f(bottom))\" x2=\"\(f(right))\" y2=\"\(f(bottom))\"/>"
            + "<line class=\"axis\" x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(bottom))\"/>"
        for count in [0, scaleTop / 2, scaleTop] {
            let y = bottom - Double(count) / scale * (bottom - top)
            axes +=
                "<line class=\"tick\" x1=\"\(f(left - 4))\" y1=\"\(f(y))\" x2=\"\(f(right))\" y2=\"\(f(y))\"/>"
                + "<text class=\"count-label\" x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(count)</text>"
        }
        for quarter in 0...4 {
            let minutesAgo = 60 - quarter * 15
            let x = left + Double(quarter * 15) * barWidth
            let anchor = quarter == 0 ? "start" : quarter == 4 ? "end" : "middle"
            let words = quarter == 4 ? "now" : Self.clock(end - Double(minutesAgo * 60))
            axes +=
                "<line class=\"axis\" x1=\"\(f(x))\" y1=\"\(f(bottom))\" x2=\"\(f(x))\" y2=\"\(f(bottom + 4))\"/>"
                + "<text class=\"time-label\" x=\"\(f(x))\" y=\"\(f(bottom + 16))\" text-anchor=\"\(anchor)\">\(words)</text>"
        }
        axes +=
            "<text class=\"axis-title\" x=\"0\" y=\"12\">jobs finished per minute</text>"
            + "<text class=\"axis-title\" x=\"\(f(right))\" y=\"\(f(height - 2))\" text-anchor=\"end\">time (UTC), one bar a minute</text>"
        return """
            <svg id="activity-chart" class="chart" viewBox="0 0 \(f(width)) \(f(height))" role="img" aria-labelledby="activity-title activity-desc" xmlns="http://www.w3.org/2000/svg">\
            <title id="activity-title">Jobs finished per minute over the last hour</title>\
            <desc id="activity-desc">\(succeeded) succeeded and \(failed) failed; the count axis goes to \(scaleTop) a minute.</desc>\
            \(axes)\(bars)</svg>
            """
    }

    /// The chart's key: a swatch of each bar's colour (the same classes as the bars) and what it
    /// counts, with the hour's totals.
    var legend: String {
        """
        <ul class="legend" id="activity-legend" aria-label="Key to the chart">\
        <li data-series="succeeded"><span class="swatch succeeded" aria-hidden="true"></span>succeeded (\(succeeded))</li>\
        <li data-series="failed"><span class="swatch failed" aria-hidden="true"></span>failed or dead (\(failed))</li>\
        </ul>
        """
    }

    /// `23:45`, in UTC.
    static func clock(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }

    private func f(_ value: Double) -> String { String(format: "%.1f", value) }
}

/// Times and ages as the pages write them.
enum ConsoleFormat {
    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// The longest age written (about 31,700 years): a date from a damaged queue row lies
    /// further off, and `Int(_:)` traps past `Int.max`.
    static let maxAgeSeconds = 1e12

    /// `42 s`, `5 min`, `3 h`, `2 d`.
    static func age(seconds: Double) -> String {
        let seconds = min(max(0, seconds.isFinite ? seconds : 0), maxAgeSeconds)
        if seconds < 60 { return "\(Int(seconds)) s" }
        if seconds < 3600 { return "\(Int(seconds / 60)) min" }
        if seconds < 86_400 { return "\(Int(seconds / 3600)) h" }
        return "\(Int(seconds / 86_400)) d"
    }

    /// `850 ms`, `12.3 s`, `4 min`.
    static func duration(seconds: Double) -> String {
        let seconds = max(0, seconds.isFinite ? seconds : 0)
        if seconds < 1 { return "\(Int(seconds * 1000)) ms" }
        if seconds < 60 { return String(format: "%.1f s", seconds) }
        return age(seconds: seconds)
    }

    /// `value` as indented JSON with sorted keys, for people.
    static func prettyJSON(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// What to do about a failure code, in plain words: PushPrepReport's texts, shared with the
/// batch report.
enum ConsoleAdvice {
    /// A processing warning's words: what it means and what to do.
    static func text(for code: ProcessingWarning.Code) -> String {
        let explanation = Explanation(code)
        return "\(explanation.meaning) \(explanation.action)"
    }

    static func text(for code: PushPrepError.Code) -> String {
        let explanation = Explanation(code)
        return "\(explanation.meaning) \(explanation.action)"
    }

    static func text(for code: PreflightCode) -> String {
        let explanation = Explanation(code)
        return "\(explanation.meaning) \(explanation.action)"
    }
}

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

/// `/console/style.css`: the report's shared stylesheet (the preview's look), then the
/// console's own, joined once rather than on every request.
enum ConsoleStyle {
    static let stylesheet = ReportStyle.css + ConsoleAssets.css
}

extension HTTPField.Name {
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
