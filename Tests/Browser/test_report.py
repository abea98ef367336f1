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
