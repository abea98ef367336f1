import Mustache

/// The report page's Mustache template, kept in the source and parsed once. `{{…}}` escapes;
/// `{{{…}}}` is used only for the stylesheet (a constant), and for the previews, the chart and the
/// limit bars, which are built in Swift with every outside text escaped.
enum ReportTemplates {
    static let page = head(title: "PushPrep batch report") + body

    /// The page after its ``head(title:)``.
    private static let body = """
        <body>
        <main id="report">
        <h1>Batch report</h1>
        {{#view}}{{#summary}}<section id="summary" aria-labelledby="summary-title" data-count-ok="{{countOK}}" \
        data-count-failed="{{countFailed}}" data-bytes-before="{{bytesBefore}}" data-bytes-after="{{bytesAfter}}">
        <h2 id="summary-title">Summary</h2>
        <ul class="counts">
        <li data-count-ok="{{countOK}}"><b>{{countOK}}</b> ready</li>
        <li data-count-failed="{{countFailed}}"><b>{{countFailed}}</b> failed</li>
        <li><b>{{total}}</b> inputs: {{kinds}}</li>
        <li data-bytes-before="{{bytesBefore}}">before <b>{{bytesBeforeText}}</b></li>
        <li data-bytes-after="{{bytesAfter}}">after <b>{{bytesAfterText}}</b>{{#change}} ({{change}} for the \
        inputs that are ready){{/change}}</li>
        <li>in <b>{{time}}</b></li>
        </ul>
        {{{chart}}}
        {{#hasKey}}<ol class="chart-key" aria-label="Which mark is which input">{{#key}}\
        <li class="chart-key-entry" data-key="{{number}}" data-source="{{source}}"><span class="chart-key-number">\
        {{number}}</span> <a href="#{{anchor}}"><code>{{source}}</code></a>: {{text}}</li>{{/key}}</ol>{{/hasKey}}
        </section>
        <p class="muted">Written {{generated}} by pushprep. Previews are drawn with HTML and CSS, after iOS, \
        Android and Chrome; thumbnails are small copies of the outputs and their renditions. A batch has no \
        payload, so each preview's title (“{{sampleTitle}}”) and body (“{{sampleBody}}”) stand in for yours: \
        <code>pushprep payload --title … --body …</code> sets them. A failed input sends nothing, so it has no \
        preview.</p>{{/summary}}
        <section class="inputs" aria-label="Inputs">
        {{#articles}}<article class="input" id="{{anchor}}" data-source="{{source}}" data-status="{{status}}"\
        {{#kind}} data-kind="{{kind}}"{{/kind}}{{#code}} data-code="{{code}}"{{/code}} \
        data-bytes-before="{{bytesBefore}}" data-bytes-after="{{bytesAfter}}">
        <h2><code>{{source}}</code></h2>
        {{#preview}}<div class="preview">{{{.}}}</div>{{/preview}}
        <div class="details">
        <p class="status status-{{status}}">{{statusText}}{{#code}}: <code class="problem-code">{{code}}</code>{{/code}}</p>
        {{#sizes}}<table class="sizes">
        <caption class="muted">Before → after{{#extra}} ({{extra}}){{/extra}}</caption>
        <tr><th scope="col"></th><th scope="col">Before</th><th scope="col">After</th></tr>
        <tr><th scope="row">Type</th><td>{{before.type}}</td><td>{{after.type}}</td></tr>
        <tr><th scope="row">Size</th><td>{{before.dimensions}}</td><td>{{after.dimensions}}</td></tr>
        <tr><th scope="row">Bytes</th><td>{{before.bytes}}</td><td>{{after.bytes}} ({{change}})</td></tr>
        </table>
        {{{limitBar}}}
        <p class="limit-text">{{limitText}}</p>{{/sizes}}
        {{#failure}}<ul class="problems"><li class="problem problem-failure"><span class="problem-code">{{code}}</span>: \
        {{message}}<span class="meaning">{{meaning}}</span><span class="advice">What to do: {{action}}</span></li></ul>\
        {{/failure}}
        {{#hasWarnings}}<h3>Warnings</h3><ul class="problems">{{#warnings}}<li class="problem problem-warning"\
        {{#code}} data-code="{{code}}"{{/code}}>{{#code}}<span class="problem-code">{{code}}</span>: {{/code}}\
        {{message}}{{#meaning}}<span class="meaning">{{meaning}}</span>{{/meaning}}\
        {{#action}}<span class="advice">What to do: {{action}}</span>{{/action}}</li>{{/warnings}}</ul>{{/hasWarnings}}
        {{#hasOperations}}<details><summary>What was done</summary><ol class="operations">{{#operations}}\
        <li>{{.}}</li>{{/operations}}</ol></details>{{/hasOperations}}
        </div>
        </article>
        {{/articles}}</section>{{/view}}
        </main>
        </body>
        </html>

        """

    /// The head of both report pages (this one and ``PreflightTemplates/page``), up to `<body>`:
    /// one place for the Content-Security-Policy (`csp`) and the inline stylesheet (`style`)
    /// their templates fill, so the two pages cannot drift apart.
    static func head(title: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="{{csp}}">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>\(title)</title>
        <style>{{{style}}}</style>
        </head>

        """
    }

    /// What the page template reads: the policy, the stylesheet and the view.
    private struct Page {
        var csp: String
        var style: String
        var view: ReportPageView
    }

    private static let library = MustacheLibrary.constant(["report": page], what: "the report template")

    /// The report's HTML for `view`, with `style` inline under its hash.
    static func render(page view: ReportPageView, style: String) -> String {
        let page = Page(csp: BatchReport.contentSecurityPolicy(style: style), style: style, view: view)
        return library.render(page, withTemplate: "report") ?? ""
    }
}
