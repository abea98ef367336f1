/// The console's stylesheet and script, served as files (`/console/style.css`,
/// `/console/app.js`) so that the Content-Security-Policy allows no inline style or script.
enum ConsoleAssets {
    /// Readable on a phone (one column below 40em, tables scroll sideways), visible focus,
    /// colours of at least 4.5:1 contrast against their background, respects reduced motion.
    static let css = """
        :root { color-scheme: light dark; --fg: #1b1b1f; --bg: #ffffff; --muted: #4a4a55; --line: #c9c9d1;
          --accent: #0b57d0; --ok: #1b6e2a; --bad: #b3261e; --warn: #7a4f00; --panel: #f3f3f6; }
        @media (prefers-color-scheme: dark) {
          :root { --fg: #ececf1; --bg: #15151a; --muted: #b4b4c0; --line: #45454f; --accent: #8ab4f8;
            --ok: #7dd38f; --bad: #ffb4ab; --warn: #f2c46d; --panel: #22222a; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
          background: var(--bg); }
        a { color: var(--accent); }
        :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .skip { position: absolute; left: -999em; top: 0; background: var(--bg); padding: .5em 1em; }
        .skip:focus { left: 1em; z-index: 10; }
        header.site { display: flex; flex-wrap: wrap; gap: .5em 1.5em; align-items: center; padding: .75em 1em;
          border-bottom: 1px solid var(--line); }
        header.site .brand { font-weight: 700; text-decoration: none; color: var(--fg); }
        header.site nav ul { display: flex; flex-wrap: wrap; gap: .25em 1em; list-style: none; margin: 0; padding: 0; }
        header.site nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
        header.site form { margin-left: auto; }
        main { padding: 1em; max-width: 72em; margin: 0 auto; }
        h1 { font-size: 1.5em; margin: .25em 0 .75em; }
        h2 { font-size: 1.2em; margin: 1.5em 0 .5em; }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(9em, 1fr)); gap: .75em;
          list-style: none; padding: 0; margin: 0; }
        .cards li { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .75em; }
        .cards .number { display: block; font-size: 1.6em; font-weight: 700; }
        .table-wrap { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; }
        caption { text-align: left; font-weight: 600; padding: .25em 0; }
        th, td { text-align: left; padding: .4em .6em; border-bottom: 1px solid var(--line); vertical-align: top; }
        td.source { max-width: 28em; }
        .state { font-weight: 600; }
        [data-state="succeeded"] .state { color: var(--ok); }
        [data-state="failed"] .state, [data-state="dead"] .state { color: var(--bad); }
        [data-state="cancelled"] .state { color: var(--muted); }
        form.filters { display: flex; flex-wrap: wrap; gap: .75em; align-items: flex-end; margin-bottom: 1em; }
        form.filters label, form.stacked label { display: flex; flex-direction: column; font-size: .9em; gap: .2em; }
        input, select, textarea, button { font: inherit; color: inherit; background: var(--bg);
          border: 1px solid var(--muted); border-radius: 6px; padding: .35em .6em; }
        textarea { width: 100%; min-height: 12em; font-family: ui-monospace, monospace; }
        button { cursor: pointer; background: var(--panel); }
        button.primary { background: var(--accent); color: var(--bg); border-color: var(--accent); }
        form.inline { display: inline-block; margin: 0 .4em .2em 0; }
        /* A table cell stays a cell (a flex cell loses the row's borders and height). */
        div.actions { display: flex; gap: .4em; flex-wrap: wrap; }
        .notice { border-left: 4px solid var(--accent); background: var(--panel); padding: .5em 1em; }
        .error { border-left-color: var(--bad); }
        .pager { display: flex; gap: 1em; margin: 1em 0; }
        pre { background: var(--panel); padding: .75em; overflow-x: auto; border-radius: 6px; font-size: .9em; }
        /* URLs, output names (`wrote img-<40 hex>.jpg`) and file names are single long words:
           they, and only they, wrap anywhere rather than run past a phone's screen (at the end
           of a line, never every few characters). Times, ids and codes never break inside:
           `2026-11-28T23:40:12Z` and `unsupported_type` stay whole. */
        .url, #operations li, ul.files a, .error-text { overflow-wrap: anywhere; }
        time, code, .code, td.id, td.attempts, .state, .next-label, .next-in { white-space: nowrap; }
        .next { display: block; font-size: .85em; color: var(--muted); font-weight: 400; }
        dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .25em 1em; }
        dl.facts dt { font-weight: 600; }
        dl.facts dd { margin: 0; min-width: 0; }
        dl.facts dd .next { display: inline; font-size: 1em; color: inherit; }
        ul.files { padding-left: 1.2em; }
        ul.files .file-role { color: var(--muted); }
        fieldset.fetch { border: 1px solid var(--line); border-radius: 6px; margin: 1em 0; display: flex;
          flex-direction: column; gap: .5em; }
        form.stacked label.check { flex-direction: row; align-items: center; gap: .5em; font-size: 1em; }
        .hint { color: var(--muted); font-size: .9em; margin: 0; }
        .finding[data-severity="error"] { border-left: 4px solid var(--bad); }
        .finding[data-severity="warning"] { border-left: 4px solid var(--warn); }
        .finding { padding: .25em .75em; margin: .25em 0; list-style: none; background: var(--panel); }
        ul.findings { padding: 0; }
        figure.activity { margin: 0; max-width: 40em; }
        svg.chart { width: 100%; height: auto; display: block; }
        svg.chart .succeeded, .legend .succeeded { fill: var(--ok); background: var(--ok); }
        svg.chart .failed, .legend .failed { fill: var(--bad); background: var(--bad); }
        svg.chart .axis { stroke: var(--muted); }
        svg.chart .tick { stroke: var(--line); stroke-dasharray: 2 3; }
        svg.chart text { fill: var(--fg); font-size: 12px; }
        svg.chart .axis-title { fill: var(--muted); }
        ul.legend { display: flex; flex-wrap: wrap; gap: .25em 1.5em; list-style: none; padding: 0; margin: .5em 0 0; }
        ul.legend li { display: flex; align-items: center; gap: .4em; }
        .legend .swatch { display: inline-block; width: 1em; height: 1em; border-radius: 2px; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
        footer.site { padding: 1em; color: var(--muted); font-size: .9em; text-align: center; }
        @media (max-width: 40em) {
          header.site form { margin-left: 0; }
          th.optional, td.optional { display: none; }
          dl.facts { grid-template-columns: minmax(0, 1fr); }
          /* On a phone a wide table is a list of cards, a row each, every cell on its own line
             under its column's name: nothing scrolls sideways and a URL has the card's width. */
          table.cards-on-phone, table.cards-on-phone tbody, table.cards-on-phone tr,
          table.cards-on-phone td, table.cards-on-phone th[scope="row"] { display: block; width: 100%; }
          table.cards-on-phone caption { display: block; }
          table.cards-on-phone thead { position: absolute; width: 1px; height: 1px; overflow: hidden;
            clip-path: inset(50%); }
          table.cards-on-phone tr { border: 1px solid var(--line); border-radius: 8px; margin: 0 0 .75em;
            padding: .25em 0; }
          table.cards-on-phone td, table.cards-on-phone th[scope="row"] { border: 0; padding: .15em .75em; }
          table.cards-on-phone td[data-label]::before, table.cards-on-phone th[data-label]::before {
            content: attr(data-label) ": "; font-weight: 600; color: var(--muted); }
          table.cards-on-phone td.source { max-width: none; }
          table.cards-on-phone td:empty { display: none; }
          table.cards-on-phone .next { display: inline; margin-left: .5em; }
        }
        @media (prefers-reduced-motion: reduce) { * { transition: none !important; animation: none !important; } }
        """

    /// The console's icon: the brand's initial on its accent colour.
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">\
        <rect width="32" height="32" rx="7" fill="#0b57d0"/>\
        <text x="16" y="23" font-family="sans-serif" font-size="20" font-weight="700" fill="#fff" \
        text-anchor="middle">P</text></svg>
        """

    /// Live updates for pages that read without it: every 5 s (while the tab is visible) it asks
    /// `/console/live` for the states of the jobs on the page and the overview's counts, and
    /// updates them in place. Text only (`textContent`), never HTML from the server.
    static let javascript = """
        "use strict";
        (function () {
          var status = document.getElementById("live-status");
          function ids() {
            var rows = document.querySelectorAll("[data-job-id]");
            var list = [];
            for (var i = 0; i < rows.length && list.length < 200; i++) { list.push(rows[i].getAttribute("data-job-id")); }
            return list;
          }
          function text(tag, className, words) {
            var element = document.createElement(tag);
            if (className) { element.className = className; }
            element.textContent = words;
            return element;
          }
          // A retrying job's next attempt, rebuilt from text (never HTML) beside its state; gone
          // once the job is no longer waiting to retry.
          function showNext(node, state, job) {
            var next = node.querySelector(".next");
            var place = node.querySelector(".next-attempt");
            if (!job.next_attempt) {
              node.removeAttribute("data-next-attempt");
              if (next) { next.parentNode.removeChild(next); }
              if (place) {
                place.hidden = true;
                if (place.previousElementSibling) { place.previousElementSibling.hidden = true; }
              }
              return;
            }
            node.setAttribute("data-next-attempt", job.next_attempt_at);
            if (!next) {
              if (!state || !state.parentNode || state.parentNode.tagName !== "TD") { return; }
              next = text("span", "next", "");
              state.parentNode.appendChild(next);
            }
            while (next.firstChild) { next.removeChild(next.firstChild); }
            var time = text("time", "next-at", job.next_attempt_at);
            time.setAttribute("datetime", job.next_attempt_at);
            next.appendChild(text("span", "next-label", job.next_attempt));
            next.appendChild(document.createTextNode(" at "));
            next.appendChild(time);
            next.appendChild(document.createTextNode(" ("));
            next.appendChild(text("span", "next-in", job.next_attempt_in || ""));
            next.appendChild(document.createTextNode(")"));
          }
          function apply(data) {
            (data.jobs || []).forEach(function (job) {
              var nodes = document.querySelectorAll("[data-job-id='" + String(job.id).replace(/[^0-9]/g, "") + "']");
              nodes.forEach(function (node) {
                node.setAttribute("data-state", job.state);
                var state = node.querySelector(".state");
                if (state) { state.textContent = job.shown_state || job.state; }
                showNext(node, state, job);
                var attempts = node.querySelector(".attempts");
                if (attempts) { attempts.textContent = job.attempts; }
                var code = node.querySelector(".code");
                if (code) { code.textContent = job.error_code || ""; }
              });
            });
            var counts = data.counts || {};
            Object.keys(counts).forEach(function (state) {
              var node = document.querySelector("[data-count-state='" + state.replace(/[^a-z]/g, "") + "']");
              if (node) { node.textContent = counts[state]; }
            });
            if (status) { status.textContent = "Updated " + new Date().toLocaleTimeString(); }
          }
          function poll() {
            if (document.hidden) { return; }
            var url = "/console/live?ids=" + encodeURIComponent(ids().join(","));
            fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
              .then(function (response) { return response.ok ? response.json() : null; })
              .then(function (data) { if (data) { apply(data); } })
              .catch(function () { if (status) { status.textContent = "Live updates paused"; } });
          }
          if (document.querySelector("[data-live]")) { setInterval(poll, 5000); }
        })();
        """
}
