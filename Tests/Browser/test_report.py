"""The batch report (`pushprep process … --report`) and the pre-flight report
(`pushprep preflight --report`), opened from file:// in chromium."""

from __future__ import annotations

import json
import os
import re

import harness


def only_the_file(report):
    """The report is one self-contained file: it may load itself and data: URLs, nothing else."""
    own = report.resolve().as_uri()
    return lambda url: url.split("#", 1)[0] == own


def test_report_loads_with_no_console_error_and_no_request(browser, report_run):
    browser.open(report_run.report.resolve().as_uri())
    browser.check_page(only_the_file(report_run.report))
    browser.one("main#report")
    policy = browser.select("meta[http-equiv='Content-Security-Policy' i]")
    assert policy, "the report has no Content-Security-Policy meta tag"
    content = policy[0].get_attribute("content")
    assert "default-src 'none'" in content or "default-src 'self'" in content, f"a loose policy: {content}"


def test_report_has_one_article_per_input_as_the_manifest_says(browser, report_run):
    browser.open(report_run.report.resolve().as_uri())
    articles = browser.select("main#report article.input")
    entries = report_run.entries()
    seen = {}
    for article in articles:
        source = article.get_attribute("data-source")
        assert source in entries, f"an article for {source!r}, which the manifest does not list ({list(entries)})"
        assert source not in seen, f"two articles for {source}"
        seen[source] = article
    assert sorted(seen) == sorted(entries), f"articles {sorted(seen)} but manifest entries {sorted(entries)}"
    assert len(entries) == len(report_run.inputs)

    for source, entry in entries.items():
        article = seen[source]
        attribute = article.get_attribute
        assert attribute("data-status") == entry["status"], f"{source}: status"
        if entry["status"] == "ok":
            assert attribute("data-kind") == entry["kind"], f"{source}: kind"
            assert attribute("data-code") in (None, ""), f"{source}: a code on a success"
            assert int(attribute("data-bytes-before")) == entry["input"]["bytes"], f"{source}: bytes before"
            assert int(attribute("data-bytes-after")) == entry["bytes"], f"{source}: bytes after"
        else:
            assert attribute("data-kind") is None, f"{source}: a kind on a failure"
            code = entry["error"]["code"]
            assert attribute("data-code") == code, f"{source}: failure code"
            assert code in article.text, f"{source}: the code {code} is not shown"
            before = attribute("data-bytes-before")
            if before not in (None, "", "0"):
                on_disk = os.path.getsize(report_run.out.parent / source)
                assert int(before) == on_disk, f"{source}: bytes before {before}, the file has {on_disk}"

    # What this batch holds, so that the comparison above compares something.
    statuses = {source: entry["status"] for source, entry in entries.items()}
    assert statuses["inputs/broken.jpg"] == "failed"
    assert entries["inputs/broken.jpg"]["error"]["code"] == "corrupt_input"
    kinds = {entry["kind"] for entry in entries.values() if entry["status"] == "ok"}
    assert kinds == {"image", "video", "audio"}
    assert entries["inputs/art.webp"]["input"]["type"] == "webp"


def test_report_summary_adds_up(browser, report_run):
    browser.open(report_run.report.resolve().as_uri())
    summary = browser.one("section#summary")

    def number(name):
        found = browser.select(f"[data-{name}]", summary)
        if summary.get_attribute(f"data-{name}") is not None:
            found.insert(0, summary)
        assert found, f"#summary has no data-{name}"
        return int(found[0].get_attribute(f"data-{name}"))

    entries = list(report_run.entries().values())
    ok = [entry for entry in entries if entry["status"] == "ok"]
    assert number("count-ok") == len(ok)
    assert number("count-failed") == len(entries) - len(ok)
    assert number("bytes-after") == sum(entry["bytes"] for entry in ok)
    articles = browser.select("article.input")
    assert number("bytes-before") == sum(int(a.get_attribute("data-bytes-before") or 0) for a in articles)
    assert number("bytes-before") >= sum(entry["input"]["bytes"] for entry in ok)

    chart = browser.one("svg#size-chart")
    box = browser.rect(chart)
    assert box["width"] > 0 and box["height"] > 0, f"the size chart is not drawn: {box}"


def test_report_previews_put_the_thumbnail_where_ios_does(browser, report_run):
    browser.open(report_run.report.resolve().as_uri())
    checked = []
    for article in browser.select("article.input[data-status='ok']"):
        kind = article.get_attribute("data-kind")
        notification = browser.one(".notification", article)
        expanded = browser.one(".expanded", notification)
        if kind == "image":
            assert browser.select("img", expanded), f"{article.get_attribute('data-source')}: no image when expanded"
        elif kind == "video":
            assert browser.select(".play-badge", expanded), "a movie's expanded view has no play badge"
        elif kind == "audio":
            bar = browser.one(".audio-bar", expanded)
            assert re.search(r"0:0[23]|\b[23](\.\d+)?\s?s\b", bar.text), f"the audio bar shows no duration: {bar.text!r}"
        thumb = harness.check_banner_layout(browser, notification)
        if kind in ("image", "video"):
            assert thumb is not None, f"{article.get_attribute('data-source')}: no thumbnail in the banner"
            checked.append((article, thumb))
    assert len(checked) == 3, "expected thumbnails for two images and a movie"

    # The photo's banner on screen: the page is drawn, and the thumbnail box holds a picture.
    photo = browser.one("article.input[data-source='inputs/photo.jpg'] .banner")
    browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", photo)
    thumb = browser.rect(browser.one(".banner-thumb", photo))
    image = browser.screenshot("report")
    harness.check_not_blank(image, "the report's screenshot")
    harness.check_not_blank(image, "the photo's thumbnail box", thumb)


def test_preflight_report_shows_the_findings_and_the_preview(browser, workdir):
    payload = workdir / "bad-payload.json"
    payload.write_text(json.dumps(harness.BAD_PAYLOAD))
    page = workdir / "preflight.html"
    result = harness.run([harness.pushprep(), "preflight", str(payload), "--report", str(page)], check=False,
                         timeout=60)
    assert result.returncode == 1, f"preflight exited {result.returncode} (1: errors found): {result.stderr[-2000:]}"
    assert page.exists(), f"no pre-flight report written: {result.stderr[-2000:]}"
    expected = {(finding["code"], finding["severity"]) for finding in harness.preflight_findings(payload)}
    assert {"missing_mutable_content", "insecure_url", "unsupported_extension"} <= {code for code, _ in expected}

    browser.open(page.resolve().as_uri())
    browser.check_page(only_the_file(page))
    shown = {(li.get_attribute("data-code"), li.get_attribute("data-severity"))
             for li in browser.select("li.finding")}
    assert shown == expected
    notification = browser.one(".notification")
    banner = browser.one(".banner", notification)
    assert browser.one(".banner-title", banner).text == "Spring sale"
    assert browser.one(".banner-body", banner).text == "Half off today"
    harness.check_banner_layout(browser, notification)


def test_report_fits_a_phone(browser, report_run):
    browser.phone()
    browser.open(report_run.report.resolve().as_uri())
    assert browser.overflow() <= 1, \
        f"the report is {browser.overflow()} px wider than a phone's screen: {browser.overflowing()}"
    browser.check_page(only_the_file(report_run.report))


def test_report_first_tab_shows_where_the_focus_is(browser, report_run):
    browser.open(report_run.report.resolve().as_uri())
    harness.check_focus_visible(browser)


# Issue 28: the batch report and the pre-flight report as a person and a phone see them ---------

def chart_label_sizes(browser) -> list[tuple[str, float]]:
    """Each of the size chart's labels with the size it is drawn at, in CSS pixels: its font size
    times the chart's scale (its box's width over its viewBox's)."""
    return browser.driver.execute_script("""
        const svg = document.getElementById('size-chart');
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        return [...svg.querySelectorAll('text')].map(t => [t.textContent,
            parseFloat(getComputedStyle(t).fontSize) * scale]);""")


def test_report_failed_inputs_come_first_and_are_counted(browser, report_run):
    browser.open(report_run.report.resolve().as_uri())
    statuses = [article.get_attribute("data-status") for article in browser.select("article.input")]
    failed = statuses.count("failed")
    assert failed >= 1, "the batch has a corrupt input"
    assert statuses == ["failed"] * failed + ["ok"] * (len(statuses) - failed), f"not failures first: {statuses}"
    entries = list(report_run.entries().values())
    kinds = {}
    for entry in entries:
        if entry["status"] == "ok":
            kinds[entry["kind"]] = kinds.get(entry["kind"], 0) + 1
    nouns = {"image": "image", "video": "movie", "audio": "sound"}
    parts = [f"{kinds[kind]} {nouns[kind]}{'' if kinds[kind] == 1 else 's'}" for kind in ("image", "video", "audio")
             if kind in kinds]
    line = f"{len(entries)} inputs: " + ", ".join(parts + [f"{failed} failed"])
    counts = [item.text for item in browser.select("section#summary .counts li")]
    assert line in counts, f"the summary says {counts}, not {line!r}"


def test_report_failed_input_has_no_preview(browser, report_run):
    browser.open(report_run.report.resolve().as_uri())
    for article in browser.select("article.input"):
        source, status = article.get_attribute("data-source"), article.get_attribute("data-status")
        previews = browser.select(".notification", article)
        if status == "failed":
            assert not previews and not browser.select(".preview", article), f"{source}: a notification for a failure"
        else:
            assert len(previews) == 1, f"{source}: {len(previews)} notifications"
            # The stand-in title, not the file's name.
            title = browser.one(".banner-title", previews[0]).text
            assert title and os.path.basename(source) not in title, f"{source}: the banner's title is {title!r}"


def test_report_chart_marks_are_keyed_and_readable_on_a_phone(browser, report_run):
    browser.phone()
    browser.open(report_run.report.resolve().as_uri())
    marks = browser.select("svg#size-chart rect.chart-tick")
    ok = [entry for entry in report_run.entries().values() if entry["status"] == "ok"]
    assert len(marks) == len(ok), f"{len(marks)} marks for {len(ok)} outputs"
    key = {item.get_attribute("data-key"): item for item in browser.select("ol.chart-key li.chart-key-entry")}
    for mark in marks:
        number = mark.get_attribute("data-key")
        title = browser.driver.execute_script(
            "const t = arguments[0].querySelector('title'); return t ? t.textContent : null", mark)
        assert number in key, f"mark {number} is not in the key below the chart"
        source = key[number].get_attribute("data-source")
        assert title and title.startswith(f"{number}. {source}: "), f"mark {number}'s hover title is {title!r}"
        article = browser.one(f"article.input#input-{number}")
        assert article.get_attribute("data-source") == source, f"mark {number} and article {number} differ"
    small = [(text, round(size, 2)) for text, size in chart_label_sizes(browser) if size < 11]
    assert not small, f"chart labels under 11 px on a 390 px phone: {small}"
    browser.driver.execute_script("document.getElementById('size-chart').scrollIntoView()")
    browser.screenshot("report-chart-phone")


ORDER_PAYLOAD_URL = "http://cdn.example.com/push/campaigns/2026/spring/{}-very-long-file-name-{}.webp"


def order_payload() -> str:
    """A payload whose findings come out of order without the one sort: a repeated key found
    before the rest (at `/zz`, after `/aps/custom`), and twelve `http://` attachments with long
    URLs (`/attachments/2` before `/attachments/10`), each finding twelve times."""
    entries = ",".join(json.dumps({"id": f"a{i}", "url": ORDER_PAYLOAD_URL.format("x" * 60, i)}) for i in range(12))
    return ('{"zz":1,"aps":{"alert":{"title":"Spring sale","body":"Half off today"},"custom":1},'
            f'"attachments":[{entries}],"zz":2}}')


def pointer_key(pointer: str) -> list:
    return [(0, int(token), "") if token.isdigit() else (1, 0, token) for token in pointer.split("/")]


def test_preflight_report_orders_groups_and_fits_a_phone(browser, workdir):
    payload = workdir / "order-payload.json"
    payload.write_text(order_payload())
    page = workdir / "order-preflight.html"
    result = harness.run([harness.pushprep(), "preflight", str(payload), "--report", str(page)], check=False,
                         timeout=60)
    assert result.returncode == 1 and page.exists(), f"preflight exited {result.returncode}: {result.stderr[-2000:]}"
    # The text output in the same order: severity, then pointer with indices as numbers.
    rank = {"error": 0, "warning": 1, "info": 2}
    lines = [line.split() for line in result.stdout.splitlines() if re.match(r"  (error|warning|info) ", line)]
    listed = [(rank[line[0]], pointer_key(line[3].rstrip(":").replace("(payload)", ""))) for line in lines]
    assert listed == sorted(listed), f"the text output is out of order: {[' '.join(l[:4]) for l in lines]}"

    browser.phone()
    browser.open(page.resolve().as_uri())
    browser.check_page(only_the_file(page))
    for findings in browser.select("ul.findings"):
        rows = [(li.get_attribute("data-severity"), li.get_attribute("data-pointer"))
                for li in browser.select(":scope > li.finding", findings)]
        keys = [(rank[severity], pointer_key(pointer.replace("(payload)", ""))) for severity, pointer in rows]
        assert keys == sorted(keys), f"findings out of order: {rows}"
    # /aps/custom before /zz: the repeated key was found first.
    payload_rows = [li.get_attribute("data-pointer") for li in browser.select("[data-part='payload'] li.finding")]
    assert payload_rows.index("/aps/custom") < payload_rows.index("/zz"), payload_rows

    # Each finding of the twelve attachments once, with the twelve listed.
    for code in ("insecure_url", "unsupported_extension"):
        rows = browser.select(f"li.finding[data-code='{code}']")
        assert len(rows) == 1, f"{code} shown {len(rows)} times"
        places = [li.get_attribute("data-pointer") for li in browser.select("li.finding-place", rows[0])]
        assert places == [f"/attachments/{i}/url" for i in range(12)], f"{code}: {places}"
    # No explanation repeats its message: the code's meaning is its hover title only.
    for row in browser.select("li.finding"):
        assert not browser.select(".meaning", row), f"{row.get_attribute('data-code')}: the meaning is repeated"

    width = browser.driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], f"the page is {width[0]} px wide on a {width[1]} px phone: {browser.overflowing()}"
    for url in browser.select(".image-url"):
        box, card = browser.rect(url), browser.rect(browser.one("section.preflight"))
        assert box["right"] <= card["right"] + 0.5, f"a URL runs off the card: {box} of {card}"
    browser.screenshot("preflight-phone")


def test_preflight_report_play_badge_clears_the_caption(browser, workdir, inputs, fixture_server):
    payload = workdir / "movie-payload.json"
    url = fixture_server.url(inputs["clip"].name)
    payload.write_text(json.dumps({"aps": {"alert": {"title": "Trailer", "body": "Two seconds"},
                                           "mutable-content": 1},
                                   "attachments": [{"id": "clip", "url": url}]}))
    page = workdir / "movie-preflight.html"
    result = harness.run([harness.pushprep(), "preflight", str(payload), "--fetch", "--allow-http", "--allow-host",
                          "127.0.0.1", "--report", str(page)], check=False, timeout=120)
    assert page.exists(), f"preflight exited {result.returncode}: {result.stderr[-2000:]}"
    size = inputs["clip"].stat().st_size
    for phone in (False, True):
        if phone:
            browser.phone()
        browser.open(page.resolve().as_uri())
        browser.check_page(only_the_file(page))
        placeholder = browser.one(".expanded-placeholder.movie")
        caption = browser.one(".placeholder-text", placeholder)
        assert f"Downloaded (mp4, {size} bytes)" in caption.text, caption.text
        badge, text = browser.rect(browser.one(".play-badge", placeholder)), browser.rect(caption)
        apart = (badge["right"] <= text["left"] or text["right"] <= badge["left"]
                 or badge["bottom"] <= text["top"] or text["bottom"] <= badge["top"])
        assert apart, f"the play badge {badge} overlaps the caption {text} ({'phone' if phone else 'desktop'})"
        browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", placeholder)
        browser.screenshot("preflight-movie-phone" if phone else "preflight-movie")
