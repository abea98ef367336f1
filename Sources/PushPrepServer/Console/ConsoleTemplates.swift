import Mustache

/// The console's pages as Mustache templates compiled into the binary. Every value goes in
/// through `{{name}}` (HTML-escaped, quotes included, so it is safe in attribute values too);
/// `{{{name}}}` is used only for fragments built here from numbers and fixed words (the charts)
/// or by PushPrepReport's escaping renderer (the notification preview).
enum ConsoleTemplates {
    static let head = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · PushPrep console</title>
        <link rel="icon" href="/console/icon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/console/style.css">
        <script src="/console/app.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#{{#mainID}}{{mainID}}{{/mainID}}{{^mainID}}content{{/mainID}}">Skip to content</a>
        <header class="site">
        <a class="brand" href="/">PushPrep</a>
        {{#session}}
        <nav aria-label="Console">
        <ul>
        <li><a href="/"{{#navOverview}} aria-current="page"{{/navOverview}}>Overview</a></li>
        <li><a href="/jobs"{{#navJobs}} aria-current="page"{{/navJobs}}>Jobs</a></li>
        <li><a href="/preflight"{{#navPreflight}} aria-current="page"{{/navPreflight}}>Pre-flight</a></li>
        </ul>
        </nav>
        {{#loggedIn}}
        <form method="post" action="/logout">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Log out <span class="visually-hidden">key </span>{{keyID}}</button>
        </form>
        {{/loggedIn}}
        {{/session}}
        </header>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        """

    static let foot = """
        <footer class="site"><p id="live-status" role="status" aria-live="polite"></p></footer>
        </body>
        </html>
        """

    static let overview = """
        <main id="content" data-live>
        <h1>Overview</h1>
        <section aria-labelledby="by-state">
        <h2 id="by-state">Jobs by state</h2>
        <ul class="cards" id="counts">
        {{#counts}}<li><span class="number" data-count-state="{{state}}">{{count}}</span> <a href="/jobs?state={{state}}">{{state}}</a></li>{{/counts}}
        </ul>
        </section>
        <section aria-labelledby="depth">
        <h2 id="depth">Queue depth</h2>
        <dl class="facts" id="queue-depth">
        <dt>Ready to run</dt><dd data-depth="ready">{{ready}}</dd>
        <dt>Scheduled (delayed or backing off)</dt><dd data-depth="scheduled">{{scheduled}}</dd>
        <dt>Expired leases</dt><dd data-depth="expired">{{expiredLeases}}</dd>
        <dt>Oldest ready job waits</dt><dd data-depth="oldest">{{oldestReady}}</dd>
        {{#pendingDeliveries}}<dt>Webhooks pending</dt><dd>{{pendingDeliveries}}</dd>{{/pendingDeliveries}}
        </dl>
        </section>
        <section aria-labelledby="activity">
        <h2 id="activity">The last hour</h2>
        <p>{{finishedLastHour}} jobs finished in the last hour: {{succeededLastHour}} succeeded, {{failedLastHour}} failed.</p>
        <figure class="activity">
        {{{activityChart}}}
        <figcaption>{{{activityLegend}}}</figcaption>
        </figure>
        </section>
        <section aria-labelledby="workers">
        <h2 id="workers">Workers</h2>
        <div class="table-wrap">
        <table id="workers-table">
        <caption>Workers alive{{#workersNote}} ({{workersNote}}){{/workersNote}}</caption>
        <thead><tr><th scope="col">Worker</th><th scope="col" class="optional">Host</th><th scope="col">Busy</th><th scope="col">Current jobs</th><th scope="col" class="optional">Last seen</th></tr></thead>
        <tbody>
        {{#workers}}<tr data-worker="{{name}}" data-concurrency="{{concurrency}}"><th scope="row">{{name}}</th><td class="optional">{{host}}</td><td>{{busy}}</td><td>{{#jobs}}<a href="/jobs/{{.}}">{{.}}</a> {{/jobs}}</td><td class="optional">{{seen}}</td></tr>{{/workers}}
        {{^workers}}<tr><td colspan="5">No worker has been seen.</td></tr>{{/workers}}
        </tbody>
        </table>
        </div>
        </section>
        </main>
        """

    static let jobs = """
        <main id="content" data-live>
        <h1>Jobs</h1>
        <form class="filters" method="get" action="/jobs" role="search" aria-label="Filter jobs">
        <label>State
        <select name="state">
        <option value="">any</option>
        {{#states}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/states}}
        </select></label>
        <label>Kind
        <select name="kind">
        <option value="">any</option>
        {{#kinds}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/kinds}}
        </select></label>
        <label>Source contains <input type="search" name="source" value="{{filter.source}}" maxlength="500"></label>
        <label>Error code <input type="text" name="code" value="{{filter.code}}" maxlength="64" pattern="[a-z_]*"></label>
        <button type="submit">Filter</button>
        <a href="/jobs">Clear</a>
        </form>
        {{#canBulkRetry}}
        <form class="bulk-retry" method="post" action="/jobs/bulk-retry">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="state" value="{{filter.state}}">
        <input type="hidden" name="kind" value="{{filter.kind}}">
        <input type="hidden" name="source" value="{{filter.source}}">
        <input type="hidden" name="code" value="{{filter.code}}">
        <button type="submit">Retry every failed, dead or cancelled job matching this filter</button>
        </form>
        {{/canBulkRetry}}
        <div class="table-wrap">
        <table id="jobs" class="cards-on-phone">
        <caption>{{caption}}</caption>
        <thead><tr>
        <th scope="col">Id</th><th scope="col">State</th><th scope="col">Kind</th><th scope="col">Source</th>
        <th scope="col" class="optional">Age</th><th scope="col">Attempts</th><th scope="col">Error code</th>
        {{#canWrite}}<th scope="col">Actions</th>{{/canWrite}}
        </tr></thead>
        <tbody>
        {{#rows}}
        <tr data-job-id="{{id}}" data-state="{{state}}"{{#retrying}} data-next-attempt="{{nextAttemptISO}}"{{/retrying}}{{#kind}} data-kind="{{kind}}"{{/kind}}>
        <td class="id" data-label="Id"><a href="/jobs/{{id}}">{{id}}</a></td>
        <td class="state-cell" data-label="State"><span class="state">{{shownState}}</span>{{> next}}</td>
        <td class="kind" data-label="Kind">{{kind}}</td>
        <td class="source url" data-label="Source">{{source}}</td>
        <td class="optional" data-label="Age"><time datetime="{{createdISO}}">{{age}}</time></td>
        <td class="attempts" data-label="Attempts">{{attempts}}</td>
        <td class="code" data-label="Error code">{{errorCode}}</td>
        {{#canWrite}}<td class="actions" data-label="Actions">
        {{#retryable}}<form class="retry inline" method="post" action="/jobs/{{id}}/retry"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="return" value="{{returnTo}}"><button type="submit" aria-label="Retry job {{id}}">Retry</button></form>{{/retryable}}
        {{#cancellable}}<form class="cancel inline" method="post" action="/jobs/{{id}}/cancel"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="return" value="{{returnTo}}"><button type="submit" aria-label="Cancel job {{id}}">Cancel</button></form>{{/cancellable}}
        </td>{{/canWrite}}
        </tr>
        {{/rows}}
        {{^rows}}<tr><td colspan="8">No job matches.</td></tr>{{/rows}}
        </tbody>
        </table>
        </div>
        <nav class="pager" aria-label="Pages">
        {{#newestLink}}<a href="{{newestLink}}">Newest</a>{{/newestLink}}
        {{#olderLink}}<a href="{{olderLink}}" rel="next">Older jobs</a>{{/olderLink}}
        </nav>
        </main>
        """

    static let job = """
        {{#job}}
        <main id="job" data-job-id="{{id}}" data-state="{{state}}" data-live>
        <h1>Job {{id}}: <span class="state">{{shownState}}</span></h1>
        {{#canWrite}}<div class="actions">
        {{#retryable}}<form class="retry" method="post" action="/jobs/{{id}}/retry"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="return" value="/jobs/{{id}}"><button type="submit">Retry</button></form>{{/retryable}}
        {{#cancellable}}<form class="cancel" method="post" action="/jobs/{{id}}/cancel"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="return" value="/jobs/{{id}}"><button type="submit">Cancel</button></form>{{/cancellable}}
        </div>{{/canWrite}}
        <dl class="facts" id="facts">
        <dt>Source</dt><dd class="source url">{{source}}</dd>
        <dt>Attempts</dt><dd class="attempts">{{attempts}}</dd>
        {{#retrying}}<dt>Next attempt</dt><dd class="next-attempt">{{> next}}</dd>{{/retrying}}
        <dt>Priority</dt><dd>{{priority}}</dd>
        <dt>Created</dt><dd><time datetime="{{createdISO}}">{{createdISO}}</time></dd>
        {{#finishedISO}}<dt>Finished</dt><dd><time datetime="{{finishedISO}}">{{finishedISO}}</time></dd>{{/finishedISO}}
        {{#leaseOwner}}<dt>Worker</dt><dd>{{leaseOwner}}</dd>{{/leaseOwner}}
        {{#errorCode}}<dt>{{#retrying}}Last error{{/retrying}}{{^retrying}}Error{{/retrying}}</dt><dd class="error-text"><code class="code">{{errorCode}}</code> {{errorMessage}}{{#errorAdvice}}<br>{{errorAdvice}}{{/errorAdvice}}</dd>{{/errorCode}}
        <dt>Callback URL</dt><dd class="callback url">{{#callbackURL}}{{callbackURL}}{{/callbackURL}}{{^callbackURL}}none{{/callbackURL}}</dd>
        </dl>
        <section id="files" aria-labelledby="files-title">
        <h2 id="files-title">Files</h2>
        {{#hasFileLinks}}<ul class="files">{{#fileLinks}}<li data-role="{{role}}"><a class="file" href="{{href}}" type="{{mime}}" data-mime="{{mime}}">{{file}}</a> <span class="file-role">{{role}}, {{mime}}</span></li>{{/fileLinks}}</ul>{{/hasFileLinks}}
        {{^hasFileLinks}}{{#filesElsewhere}}<p>This server does not serve the outputs (they are published elsewhere); the manifest entry below has their URLs.</p>{{/filesElsewhere}}{{^filesElsewhere}}<p>None yet: a job has files once it has succeeded.</p>{{/filesElsewhere}}{{/hasFileLinks}}
        </section>
        <section id="preview" aria-labelledby="preview-title">
        <h2 id="preview-title">On the phone</h2>
        {{#previewHTML}}{{{previewHTML}}}{{/previewHTML}}
        {{^previewHTML}}<p>No preview: the job has no processed attachment yet.</p>{{/previewHTML}}
        </section>
        <section id="manifest" aria-labelledby="manifest-title">
        <h2 id="manifest-title">Manifest entry</h2>
        {{#manifest}}<pre tabindex="0">{{manifest}}</pre>{{/manifest}}
        {{^manifest}}<p>None yet: a job has its entry once it has run.</p>{{/manifest}}
        </section>
        <section id="settings" aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        {{#settingsJSON}}<pre tabindex="0">{{settingsJSON}}</pre>{{/settingsJSON}}
        {{^settingsJSON}}<p>None this version can read.</p>{{/settingsJSON}}
        </section>
        <section id="metadata" aria-labelledby="metadata-title">
        <h2 id="metadata-title">Metadata</h2>
        {{#metadataJSON}}<pre tabindex="0">{{metadataJSON}}</pre>{{/metadataJSON}}
        {{^metadataJSON}}<p>None: the job was queued without metadata.</p>{{/metadataJSON}}
        </section>
        <section id="operations" aria-labelledby="operations-title">
        <h2 id="operations-title">Operations</h2>
        {{#hasOperations}}<ol>{{#operations}}<li>{{.}}</li>{{/operations}}</ol>{{/hasOperations}}
        {{^hasOperations}}<p>None recorded.</p>{{/hasOperations}}
        {{#hasWarnings}}<h3>Warnings</h3><ul>{{#warnings}}<li class="warning"{{#warningCode}} data-code="{{warningCode}}"{{/warningCode}}>{{#warningCode}}<code class="code">{{warningCode}}</code> {{/warningCode}}{{message}}{{#warningAdvice}}<br><span class="advice">{{warningAdvice}}</span>{{/warningAdvice}}</li>{{/warnings}}</ul>{{/hasWarnings}}
        </section>
        <section id="attempts" aria-labelledby="attempts-title">
        <h2 id="attempts-title">Attempts</h2>
        <div class="table-wrap">
        <table class="cards-on-phone">
        <caption>Every attempt, oldest first ({{attemptCount}} so far, at most {{maxAttempts}})</caption>
        <thead><tr><th scope="col">Attempt</th><th scope="col">Worker</th><th scope="col">Started</th><th scope="col">Took</th><th scope="col">Outcome</th><th scope="col">Error</th></tr></thead>
        <tbody>
        {{#attemptRows}}<tr data-attempt="{{number}}"><th scope="row" data-label="Attempt">{{number}}</th><td data-label="Worker">{{worker}}</td><td data-label="Started"><time datetime="{{started}}">{{started}}</time></td><td data-label="Took">{{took}}</td><td data-label="Outcome">{{outcome}}</td><td data-label="Error">{{#code}}<code>{{code}}</code> {{/code}}{{message}}</td></tr>{{/attemptRows}}
        {{^attemptRows}}<tr><td colspan="6">Not run yet.</td></tr>{{/attemptRows}}
        </tbody>
        </table>
        </div>
        </section>
        <section id="deliveries" aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Webhook deliveries</h2>
        <div class="table-wrap">
        <table>
        <caption>{{#callbackURL}}To <span class="url">{{callbackURL}}</span>{{/callbackURL}}{{^callbackURL}}This job has no webhook{{/callbackURL}}</caption>
        <thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col">Tries</th><th scope="col">Last status</th><th scope="col">Last error</th></tr></thead>
        <tbody>
        {{#deliveries}}<tr data-delivery-id="{{id}}" data-state="{{state}}"><td>{{event}}</td><td>{{state}}</td><td>{{attempts}}</td><td>{{lastStatus}}</td><td>{{lastError}}</td></tr>{{/deliveries}}
        {{^deliveries}}<tr><td colspan="5">None.</td></tr>{{/deliveries}}
        </tbody>
        </table>
        </div>
        </section>
        </main>
        {{/job}}
        """

    static let preflight = """
        <main id="content">
        <h1>Pre-flight</h1>
        <p>Paste a push payload to see what the phone will do with it. Nothing is sent{{#fetchForm}}; the attachments are downloaded only when you ask{{/fetchForm}}{{^fetchForm}} and no attachment is downloaded (that needs a key with the write scope){{/fetchForm}}.</p>
        <form class="stacked" id="preflight-form" method="post" action="/preflight">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label>Payload (JSON)
        <textarea name="payload" required spellcheck="false" autocomplete="off">{{payload}}</textarea></label>
        <label>Dialect
        <select name="dialect">
        {{#dialects}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/dialects}}
        </select></label>
        {{#fetchForm}}
        <fieldset class="fetch">
        <legend>Attachments</legend>
        <label class="check"><input type="checkbox" name="fetch" value="1"{{#checked}} checked{{/checked}}> Download the attachments and check their bytes</label>
        <label>At most this many URLs <input type="number" name="fetch_max_urls" min="1" max="{{maxURLs}}" step="1" value="{{urls}}" placeholder="{{maxURLs}}"></label>
        <label>At most this many bytes in all <input type="number" name="fetch_max_bytes" min="{{minBytes}}" max="{{maxBytes}}" step="1" value="{{bytes}}" placeholder="{{maxBytes}}"></label>
        <p class="hint">This server allows at most {{maxURLs}} URLs and {{maxBytes}} bytes per check; empty fields take those.</p>
        </fieldset>
        {{/fetchForm}}
        <p><button type="submit" class="primary">Check</button></p>
        </form>
        {{#report}}
        <section id="preflight-result" aria-labelledby="result-title" data-errors="{{errors}}" data-warnings="{{warnings}}">
        <h2 id="result-title">Findings</h2>
        <p>{{summary}}{{#fetched}}; the attachments were downloaded{{/fetched}}</p>
        <ul class="findings">
        {{#findings}}<li class="finding" data-code="{{code}}" data-severity="{{severity}}"><strong>{{severity}}</strong> <code>{{code}}</code> at <code>{{pointer}}</code>: {{message}}<br><span class="advice">{{advice}}</span></li>{{/findings}}
        </ul>
        {{#previewHTML}}<h2>On the phone</h2>{{{previewHTML}}}{{/previewHTML}}
        </section>
        {{/report}}
        </main>
        """

    /// A retrying job's next attempt: which, when (a `<time>` that does not wrap), how soon.
    /// The script's live update rebuilds it from `/console/live`'s fields.
    static let next = """
        {{#retrying}}<span class="next"><span class="next-label">{{nextAttempt}}</span> at <time class="next-at" datetime="{{nextAttemptISO}}">{{nextAttemptISO}}</time> (<span class="next-in">{{nextAttemptIn}}</span>)</span>{{/retrying}}
        """

    static let login = """
        <main id="content">
        <h1>Log in</h1>
        {{#failed}}<p class="notice error" role="alert">That API key is not known to this server.</p>{{/failed}}
        <form class="stacked" id="login" method="post" action="/login">
        <input type="hidden" name="next" value="{{next}}">
        <label>API key <input type="password" name="key" required autocomplete="current-password" minlength="16" maxlength="512"></label>
        <p><button type="submit" class="primary">Log in</button></p>
        </form>
        <p>The key is checked and forgotten: the browser keeps a signed session that expires, never the key.</p>
        </main>
        """

    static let error = """
        <main id="content">
        <h1>{{heading}}</h1>
        <p class="notice error" role="alert">{{message}}</p>
        <p><a href="/">Back to the overview</a></p>
        </main>
        """

    /// A page's template from its `<main>`: the header before it and the footer after, and the
    /// page's ``ConsolePage/view`` opened as a section around it (its own values, under the
    /// header's).
    static func page(_ main: String) -> String {
        "{{> head}}\n{{#view}}\n" + main + "\n{{/view}}\n{{> foot}}"
    }

    /// The templates, parsed once.
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        let pages = [
            "overview": overview, "jobs": jobs, "job": job, "preflight": preflight, "login": login, "error": error,
        ]
        let all = ["head": head, "foot": foot, "next": next].merging(pages.mapValues(page)) { $1 }
        for (name, text) in all {
            // The templates are constants of this file; a parse error is a bug the tests show.
            if let template = try? MustacheTemplate(string: text) { library.register(template, named: name) }
        }
        return library
    }()

    /// Renders page `name` with `page` (a ``ConsolePage``); a template that failed to parse
    /// renders as a plain message rather than crashing the server.
    static func render(_ name: String, _ page: Any) -> String {
        library.render(page, withTemplate: name) ?? "<!doctype html><title>PushPrep</title><p>Page unavailable."
    }
}
