import Mustache

/// The pre-flight fragment and page, kept in the source and parsed once. `{{{…}}}` only for the
/// stylesheet (a constant) and the preview (escaped as it is built).
enum PreflightTemplates {
    static let section = """
        <section class="preflight" data-file="{{file}}" aria-label="Pre-flight of {{file}}">
        <div class="preview">{{{preview}}}</div>
        <div class="details">
        <h2><code>{{file}}</code></h2>
        <p class="muted">{{dialect}}{{#size}}, {{size}}{{/size}}: {{totals}}</p>
        {{#fixedPayload}}<p class="muted fixed-note">The preview shows the corrected payload, \
        <code>{{fixedPayload}}</code>; the findings are what is left after the fix.</p>{{/fixedPayload}}
        {{#clean}}<p class="status status-ok">Nothing to fix.</p>{{/clean}}
        {{#platforms}}<div class="platform-part" data-platform="{{platform}}"><h3>{{label}}</h3>
        {{#images}}<p class="platform-image" data-role="{{role}}">{{role}}: <code class="image-url">{{url}}</code> at \
        <code>{{pointer}}</code></p>{{/images}}{{#noImage}}<p class="platform-image muted">{{noImage}}</p>{{/noImage}}
        {{#clean}}<p class="muted">No findings for {{label}}.</p>{{/clean}}
        {{#groups}}<div class="findings-part" data-part="{{part}}"><h4>{{heading}}</h4><ul class="findings">\
        {{#findings}}<li class="finding" data-code="{{code}}" data-severity="{{severity}}" data-pointer="{{pointer}}" \
        data-count="{{count}}">\
        <span class="severity-{{severity}}">{{severity}}</span> <code class="problem-code" title="{{meaning}}">{{code}}\
        </code>{{^hasPlaces}} at <code>{{pointer}}</code>{{/hasPlaces}}{{#hasPlaces}} at {{count}} places{{/hasPlaces}}: \
        <span class="finding-message">{{message}}</span>\
        {{#hasPlaces}}<ul class="finding-places">{{/hasPlaces}}{{#places}}<li class="finding-place" \
        data-pointer="{{pointer}}"><code>{{pointer}}</code>{{#url}}: <code class="image-url">{{url}}</code>{{/url}}</li>\
        {{/places}}{{#hasPlaces}}</ul>{{/hasPlaces}}\
        <span class="advice">What to do: {{action}}</span></li>{{/findings}}</ul></div>
        {{/groups}}</div>
        {{/platforms}}</div>
        </section>
        """

    static let page = ReportTemplates.head(title: "PushPrep pre-flight report") + body

    /// The page after its head.
    private static let body = """
        <body>
        <main id="preflight">
        <h1>Pre-flight report</h1>
        {{#sections}}{{{.}}}
        {{/sections}}</main>
        </body>
        </html>

        """

    private struct Page {
        var csp: String
        var style: String
        var sections: [String]
    }

    private static let library = MustacheLibrary.constant(
        ["section": section, "page": page], what: "a pre-flight template")

    static func render(_ view: PreflightSectionView) -> String {
        library.render(view, withTemplate: "section") ?? ""
    }

    static func render(page sections: [String], style: String) -> String {
        let page = Page(csp: BatchReport.contentSecurityPolicy(style: style), style: style, sections: sections)
        return library.render(page, withTemplate: "page") ?? ""
    }
}

/// The page of `preflight --report`: one ``PreflightView`` per payload, self-contained as the
/// batch report is (inline stylesheet under its hash, no script, nothing fetched).
package struct PreflightReportPage: Sendable {
    package var views: [PreflightView]

    package init(views: [PreflightView]) { self.views = views }

    package func html() -> String {
        PreflightTemplates.render(page: views.map(\.html), style: ReportStyle.css)
    }
}
