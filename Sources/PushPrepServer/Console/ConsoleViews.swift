import Foundation
import PushPrepCore
import PushPrepPayload
import PushPrepQueue
import PushPrepReport

/// What every page's template reads (swift-mustache reads stored properties through `Mirror`):
/// the header's values (``ConsoleTemplates/head``) around the page's own `view`, which each
/// page's template opens as a section (`{{#view}}`). Texts go in raw and the templates escape
/// them; HTML fragments (charts, previews) are built and escaped in Swift.
struct ConsolePage<View> {
    var title: String
    /// The `id` of the page's `<main>` when it is not `content` (the skip link's target).
    var mainID: String?
    /// Nil on pages without a session (login, and errors before one).
    var session: ConsoleHeaderSession?
    /// The session's CSRF token, and one of ``ConsoleRoutes/notices``.
    var csrf, notice: String?
    var canWrite: Bool?
    var view: View
}

/// What the header shows of the session: the key logged in (nil for an anonymous session) and
/// which navigation link is the current page.
struct ConsoleHeaderSession {
    var loggedIn: Bool?
    var keyID: String?
    var navOverview, navJobs, navPreflight: Bool

    /// What the header shows of `visit`.
    init(_ visit: ConsoleVisit) {
        if visit.session.keyID != ConsoleSession.anonymous {
            loggedIn = true
            keyID = visit.session.keyID
        }
        navOverview = visit.path == "/"
        navJobs = visit.path.hasPrefix("/jobs")
        navPreflight = visit.path == "/preflight"
    }
}

/// An `<option>` of a form's `<select>`: its value, its words when they are not the value, and
/// whether it is chosen.
struct ConsoleOption {
    var value: String
    var label: String?
    var selected: Bool

    /// An option written as its value unless `label` is given.
    init(value: String, label: String? = nil, selected: Bool) {
        self.value = value
        self.label = label
        self.selected = selected
    }
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

/// `/console/style.css`: the report's shared stylesheet (the preview's look), then the
/// console's own, joined once rather than on every request.
enum ConsoleStyle {
    static let stylesheet = ReportStyle.css + ConsoleAssets.css
}
