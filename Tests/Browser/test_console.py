"""The console of a real `pushprep serve` (at `/`), with jobs the test enqueued through the API and
waited for: login, the pages, the jobs table against the queue, retry and cancel from the page,
the pre-flight page, the keyboard."""

from __future__ import annotations

import json
import re
import urllib.parse

import pytest

import harness


def login(browser, serve, key=harness.Serve.WRITE_KEY):
    """Signs in through the login form with an API key; returns the page it lands on."""
    browser.open(serve.origin + "/login")
    form = login_form(browser)
    field = browser.one("input[type=password], input[name=key], input[name=api_key]", form)
    field.send_keys(key)
    browser.submit(form)
    return urllib.parse.urlsplit(browser.driver.current_url).path


def login_form(browser):
    forms = [form for form in browser.select("form")
             if browser.select("input[type=password], input[name=key], input[name=api_key]", form)]
    assert forms, f"no login form on {browser.driver.current_url}"
    return forms[0]


def page_errors(browser, serve, *paths):
    """Console errors other than the failed load of a refused page itself (the 401 answering these
    paths is the refusal the test expects)."""
    refused = tuple(f"network: {serve.origin}{path}" for path in paths)
    return [error for error in browser.errors() if not (error.startswith(refused) and "status of 401" in error)]


def test_without_a_key_the_console_asks_for_one(browser, serve, queue):
    browser.open(serve.origin + "/jobs")
    assert not browser.select("table#jobs"), "the jobs table is shown without a key"
    login_form(browser)
    errors = page_errors(browser, serve, "/jobs", "/login")
    assert not errors, errors
    assert not browser.outside_requests(harness.same_origin(serve.origin)), browser.requests


def test_a_wrong_key_is_refused(browser, serve, queue):
    landed = login(browser, serve, key="not-a-key-of-this-server-000")
    assert landed == "/login", f"a wrong key led to {landed}"
    errors = page_errors(browser, serve, "/login")
    assert not errors, errors
    login_form(browser)  # still asked for a key
    cookies = browser.driver.get_cookies()
    browser.open(serve.origin + "/jobs")
    assert not browser.select("table#jobs"), f"a wrong key opened the jobs page (cookies: {cookies})"


def test_a_key_signs_in_with_an_httponly_cookie(browser, serve, queue):
    landed = login(browser, serve, key=harness.Serve.READ_KEY)
    assert landed != "/login", "a good key left the browser on the login page"
    browser.check_page(harness.same_origin(serve.origin))
    cookies = browser.driver.get_cookies()
    assert cookies, "signed in without a cookie"
    for cookie in cookies:
        assert cookie.get("httpOnly"), f"a cookie scripts can read: {cookie['name']}"
        assert cookie.get("sameSite") in ("Strict", "Lax"), f"a cookie without SameSite: {cookie}"
        assert harness.Serve.READ_KEY not in cookie["value"], "the cookie holds the API key itself"
    browser.open(serve.origin + "/jobs")
    browser.one("table#jobs")


def test_every_console_page_loads_clean(browser, serve, queue):
    login(browser, serve)
    pages = ["/", "/jobs", "/preflight"] + [f"/jobs/{job_id}" for job_id in queue.jobs]
    for path in pages:
        browser.open(serve.origin + path)
        browser.check_page(harness.same_origin(serve.origin))
        document = browser.responses.get(serve.origin + path, {})
        policy = document.get("content-security-policy", "")
        assert policy, f"{path}: no Content-Security-Policy header"
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, f"{path}: a loose policy: {policy}"
        assert not browser.select("script:not([src])"), f"{path}: an inline script"
        assert not browser.select("style"), f"{path}: an inline stylesheet"
        if path.startswith("/jobs/"):
            main = browser.one("main#job")
            assert main.get_attribute("data-job-id") == path.rsplit("/", 1)[1]
            for part in ("#manifest", "#operations", "#attempts", "#deliveries"):
                browser.one(part, main)


def test_jobs_table_matches_the_queue(browser, serve, queue):
    login(browser, serve)
    browser.open(serve.origin + "/jobs")
    rows = {int(row.get_attribute("data-job-id")): row for row in browser.select("table#jobs tr[data-job-id]")}
    assert sorted(rows) == sorted(queue.jobs), f"rows {sorted(rows)}, jobs enqueued {sorted(queue.jobs)}"
    for job_id, row in rows.items():
        state = serve.job(job_id)["state"]
        assert row.get_attribute("data-state") == state, f"job {job_id}: row says {row.get_attribute('data-state')}"
    # What the queue holds, so that the comparison compares something.
    assert queue.jobs[queue.failed]["state"] == "failed"
    assert queue.jobs[queue.failed]["error"]["code"] == "corrupt_input"
    assert queue.jobs[queue.held]["state"] == "queued"
    assert "corrupt_input" in rows[queue.failed].text, f"the failed job's row does not show its code: {rows[queue.failed].text!r}"


def test_the_failed_job_page_shows_its_code(browser, serve, queue):
    login(browser, serve)
    browser.open(f"{serve.origin}/jobs/{queue.failed}")
    browser.check_page(harness.same_origin(serve.origin))
    main = browser.one("main#job")
    assert main.get_attribute("data-state") == serve.job(queue.failed)["state"]
    assert "corrupt_input" in browser.one("#attempts", main).text or "corrupt_input" in main.text


def test_job_page_preview_and_screenshot(browser, serve, queue):
    login(browser, serve)
    photo = queue.by_name["photo.jpg"]
    browser.open(f"{serve.origin}/jobs/{photo}")
    browser.check_page(harness.same_origin(serve.origin))
    main = browser.one("main#job")
    assert main.get_attribute("data-state") == "succeeded"
    notification = browser.one(".notification", main)
    assert browser.select(".expanded img", notification), "the expanded view shows no image"
    banner = browser.one(".banner", notification)
    browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", banner)
    thumb = harness.check_banner_layout(browser, notification)
    assert thumb is not None, "the banner has no thumbnail"
    image = browser.screenshot("job")
    harness.check_not_blank(image, "the job page's screenshot")
    harness.check_not_blank(image, "the job's thumbnail box", thumb)
    # The manifest entry shown is the job's.
    attachment = serve.job(photo)["attachment"]
    assert attachment["file"] in browser.one("#manifest", main).text


def test_job_pages_preview_each_kind(browser, serve, queue):
    login(browser, serve)
    for name, expanded in [("art.webp", ".expanded img"), ("clip.mp4", ".expanded .play-badge"),
                           ("tone.m4a", ".expanded .audio-bar")]:
        job_id = queue.by_name[name]
        browser.open(f"{serve.origin}/jobs/{job_id}")
        browser.check_page(harness.same_origin(serve.origin))
        notification = browser.one("main#job .notification")
        assert browser.select(expanded, notification), f"job {job_id} ({name}): no {expanded}"
        if name != "tone.m4a":
            assert harness.check_banner_layout(browser, notification) is not None, f"{name}: no thumbnail"
        # The pictures come from this server (its attachment URLs), which the page loaded.
        pictures = [url for url in browser.requests if "/v1/attachments/" in url]
        assert name == "tone.m4a" or pictures, f"{name}: the preview loaded no picture from the server"


def job_form(browser, serve, job_id, kind):
    """The job's retry or cancel form: in its row of the jobs table, else on its own page."""
    browser.open(serve.origin + "/jobs")
    rows = browser.select(f"table#jobs tr[data-job-id='{job_id}']")
    forms = browser.select(f"form.{kind}", rows[0]) if rows else []
    if not forms:
        browser.open(f"{serve.origin}/jobs/{job_id}")
        forms = browser.select(f"form.{kind}")
    assert forms, f"no form.{kind} for job {job_id}"
    form = forms[0]
    assert (form.get_attribute("method") or "").lower() == "post", f"form.{kind} is not a POST"
    csrf = browser.select("input[type=hidden][name=csrf]", form)
    assert csrf and csrf[0].get_attribute("value"), f"form.{kind} carries no csrf token"
    return form


def test_retry_from_the_page_runs_the_failed_job_again(browser, serve, queue):
    before = serve.job(queue.failed)
    assert before["state"] == "failed"
    login(browser, serve)
    browser.submit(job_form(browser, serve, queue.failed, "retry"))
    browser.check_page(harness.same_origin(serve.origin))
    after = serve.wait_for(
        queue.failed, lambda job: job["state"] in harness.FINISHED and job["finished_at"] != before["finished_at"],
        timeout=60, what="run again")
    assert after["state"] == "failed" and after["error"]["code"] == "corrupt_input"


def test_cancel_from_the_page_cancels_the_held_job(browser, serve, queue):
    assert serve.job(queue.held)["state"] == "queued"
    login(browser, serve)
    browser.submit(job_form(browser, serve, queue.held, "cancel"))
    browser.check_page(harness.same_origin(serve.origin))
    serve.wait_for(queue.held, lambda job: job["state"] == "cancelled", timeout=20, what="cancelled")


def test_a_read_key_cannot_retry(browser, serve, queue):
    login(browser, serve, key=harness.Serve.READ_KEY)
    browser.open(serve.origin + "/jobs")
    before = {job_id: serve.job(job_id)["updated_at"] for job_id in queue.jobs}
    forms = browser.select("form.retry, form.cancel, form.bulk-retry")
    if forms:
        # Shown to a reader (better not), the buttons must not work.
        browser.submit(forms[0])
    after = {job_id: serve.job(job_id)["updated_at"] for job_id in queue.jobs}
    assert after == before, "a read-only key changed jobs"


def test_preflight_page_shows_findings_for_a_bad_payload(browser, serve, queue, workdir):
    payload = workdir / "console-payload.json"
    payload.write_text(json.dumps(harness.BAD_PAYLOAD))
    expected = {(finding["code"], finding["severity"]) for finding in harness.preflight_findings(payload)}
    login(browser, serve)
    browser.open(serve.origin + "/preflight")
    area = browser.one("form textarea")
    area.send_keys(json.dumps(harness.BAD_PAYLOAD))
    form = browser.driver.execute_script("return arguments[0].form", area)
    browser.submit(form)
    browser.check_page(harness.same_origin(serve.origin))
    shown = {(li.get_attribute("data-code"), li.get_attribute("data-severity")) for li in browser.select("li.finding")}
    assert shown == expected
    banner = browser.one(".notification .banner")
    assert browser.one(".banner-title", banner).text == "Spring sale"


def test_first_tab_shows_where_the_focus_is(browser, serve, queue):
    login(browser, serve)
    for path in ["/", "/jobs", f"/jobs/{queue.failed}", "/preflight"]:
        browser.open(serve.origin + path)
        harness.check_focus_visible(browser)
    browser.driver.delete_all_cookies()
    browser.open(serve.origin + "/login")
    harness.check_focus_visible(browser)


def test_bulk_retry_of_a_filter_retries_only_what_matches(browser, serve, queue):
    login(browser, serve)
    before = {job_id: serve.job(job_id) for job_id in queue.jobs}
    assert before[queue.failed]["state"] == "failed"
    browser.open(serve.origin + "/jobs?state=failed")
    rows = browser.select("table#jobs tr[data-job-id]")
    assert [int(row.get_attribute("data-job-id")) for row in rows] == [queue.failed], "the state filter"
    form = browser.one("form.bulk-retry")
    assert browser.one("input[type=hidden][name=csrf]", form).get_attribute("value")
    browser.submit(form)
    browser.check_page(harness.same_origin(serve.origin))
    serve.wait_for(
        queue.failed,
        lambda job: job["state"] in harness.FINISHED and job["finished_at"] != before[queue.failed]["finished_at"],
        timeout=60, what="run again")
    for job_id, job in before.items():
        if job_id != queue.failed:
            assert serve.job(job_id)["updated_at"] == job["updated_at"], f"job {job_id} ({job['state']}) was touched"


def test_pages_read_without_javascript(browser, serve, queue):
    login(browser, serve)
    browser.driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    browser.open(serve.origin + "/jobs")
    rows = browser.select("table#jobs tr[data-job-id]")
    assert sorted(int(row.get_attribute("data-job-id")) for row in rows) == sorted(queue.jobs)
    browser.open(f"{serve.origin}/jobs/{queue.failed}")
    assert "corrupt_input" in browser.one("main#job").text
    browser.check_page(harness.same_origin(serve.origin))


def test_the_jobs_table_follows_the_queue_without_a_reload(browser, serve, queue, fixture_server):
    (job_id,) = serve.enqueue([fixture_server.url("art.webp")], delay_seconds=3600)
    queue.jobs[job_id] = serve.job(job_id)
    login(browser, serve)
    browser.open(serve.origin + "/jobs")
    row = browser.one(f"table#jobs tr[data-job-id='{job_id}']")
    assert row.get_attribute("data-state") == "queued"
    page = browser.one("html")
    serve.api("DELETE", f"/v1/jobs/{job_id}")
    queue.jobs[job_id] = serve.job(job_id)
    deadline = harness.time.monotonic() + 15
    while row.get_attribute("data-state") != "cancelled":
        assert harness.time.monotonic() < deadline, "the row still says queued 15 s after the job was cancelled"
        harness.time.sleep(0.25)
    assert browser.one("html") == page, "the page was reloaded"
    assert "cancelled" in row.text
    browser.check_page(harness.same_origin(serve.origin))


PHONE_PAGES = ["/login", "/", "/jobs", "/preflight", "failed job", "processed job"]


@pytest.mark.parametrize("page", PHONE_PAGES)
def test_console_page_fits_a_phone(browser, serve, queue, page):
    browser.phone()
    if page != "/login":
        login(browser, serve)
    path = {"failed job": f"/jobs/{queue.failed}", "processed job": f"/jobs/{queue.by_name['photo.jpg']}"}.get(page, page)
    browser.open(serve.origin + path)
    assert browser.overflow() <= 1, \
        f"{path} is {browser.overflow()} px wider than a phone's screen: {browser.overflowing()}"


def test_pages_declare_their_icon(browser, serve, queue):
    """Without one the browser asks for /favicon.ico, which is behind the login: a 401 in the console
    of every page (as it was before the console declared /console/icon.svg)."""
    login(browser, serve)
    for path in ["/login", "/", "/jobs", "/preflight"]:
        browser.open(serve.origin + path)
        icons = browser.select("link[rel~='icon']")
        assert icons, f"{path} declares no icon"
        assert urllib.parse.urlsplit(icons[0].get_attribute("href")).netloc in ("", serve.origin.split("//", 1)[1])
        browser.check_page(harness.same_origin(serve.origin))
        assert not [url for url in browser.requests if url.endswith("/favicon.ico")], f"{path} asked for /favicon.ico"


# Issue 28: the console as a phone and a person see it --------------------------------------------

def parse_time(text: str) -> float:
    """Seconds since the epoch of an ISO 8601 time (`2026-11-28T23:40:12Z`, or with milliseconds)."""
    import datetime
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def lines_of(browser, element) -> int:
    """How many lines an element's text takes as laid out (distinct line boxes of its text)."""
    return browser.driver.execute_script("""
        const range = document.createRange(); range.selectNodeContents(arguments[0]);
        const tops = new Set();
        for (const r of range.getClientRects()) { if (r.width > 0) tops.add(Math.round(r.top)); }
        return tops.size;""", element)


def lines_needed(browser, element) -> int:
    """The fewest lines the element's text can take in its box: its width set on one line (a copy
    with white-space: nowrap) over the box's content width."""
    return browser.driver.execute_script("""
        const el = arguments[0], copy = el.cloneNode(true), style = getComputedStyle(el);
        copy.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap;width:auto;display:inline';
        el.parentNode.appendChild(copy);
        const one = copy.getBoundingClientRect().width; copy.remove();
        const box = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return Math.max(1, Math.ceil(one / box));""", element)


def enqueue_and_note(serve, queue, sources, **fields) -> list[int]:
    """Enqueues jobs the other console tests will see in the table (so they compare them too)."""
    ids = serve.enqueue(sources, **fields)
    for job_id in ids:
        queue.jobs[job_id] = serve.job(job_id)
    return ids


def test_a_job_waiting_to_retry_shows_as_retrying_with_its_next_attempt(browser, serve, queue, fixture_server):
    """A source answering 503 fails the first attempt and the job waits out its backoff (7.5-15 s):
    the queue says `queued`; the table and the job page say `retrying`, which attempt comes next and
    when (the API's `run_at`). A look that started after `run_at` proves nothing and is taken again."""
    (job_id,) = enqueue_and_note(serve, queue, [fixture_server.url("unavailable/photo.jpg")], max_attempts=4)
    try:
        login(browser, serve)
        for _ in range(3):
            job = serve.wait_for(job_id, lambda job: job["state"] == "queued" and job["attempt"] >= 1
                                 and job["error"] is not None and parse_time(job["run_at"]) > time_now() + 3,
                                 timeout=90, what="waiting to retry")
            expected = f"attempt {job['attempt'] + 1} of 4"
            browser.open(serve.origin + "/jobs")
            row = browser.one(f"table#jobs tr[data-job-id='{job_id}']")
            seen_row = (row.get_attribute("data-state"), browser.one(".state", row).text,
                        row.get_attribute("data-next-attempt"), browser.one(".next", row).text if
                        browser.select(".next", row) else "")
            browser.screenshot("console-jobs-retrying")
            browser.open(f"{serve.origin}/jobs/{job_id}")
            main = browser.one("main#job")
            nexts = browser.select("dd.next-attempt", main)
            seen_page = (main.get_attribute("data-state"), browser.one("h1 .state", main).text,
                         nexts[0].text if nexts else "",
                         browser.one("dd.next-attempt time", main).get_attribute("datetime") if nexts else "")
            browser.screenshot("console-job-retrying")
            looked_until = time_now()
            after = serve.job(job_id)
            if after["attempt"] == job["attempt"] and looked_until < parse_time(job["run_at"]):
                break
        else:
            pytest.fail("the job never stayed waiting long enough to look at it")
        state, shown, next_at, words = seen_row
        assert state == "queued", "the row's data-state is the queue's state, as the API says"
        assert shown == "retrying", f"the table says {shown!r} for a job waiting to retry"
        assert next_at and abs(parse_time(next_at) - parse_time(job["run_at"])) < 1, (next_at, job["run_at"])
        assert expected in words and "(in " in words, f"the row's next attempt: {words!r}"
        state, shown, words, datetime = seen_page
        assert state == "queued" and shown == "retrying", (state, shown)
        assert expected in words, f"the job page's next attempt: {words!r}"
        assert abs(parse_time(datetime) - parse_time(job["run_at"])) < 1, (datetime, job["run_at"])
        browser.check_page(harness.same_origin(serve.origin))
    finally:
        serve.api("DELETE", f"/v1/jobs/{job_id}")
        queue.jobs[job_id] = serve.wait_for(job_id, lambda job: job["state"] in harness.FINISHED, timeout=60,
                                            what="cancelled")


def time_now() -> float:
    return harness.time.time()


def test_job_page_shows_metadata_callback_settings_and_working_file_links(browser, serve, queue, fixture_server):
    metadata = {"campaign": "spring-sale", "user": 42, "tags": ["a", "b"]}
    callback = fixture_server.url("hooks/pushprep") + "?token=0123456789abcdef0123456789abcdef"
    (job_id,) = enqueue_and_note(serve, queue, [fixture_server.url("art.webp")], metadata=metadata,
                                 callback_url=callback, max_attempts=1)
    job = serve.wait_for(job_id, lambda job: job["state"] in harness.FINISHED, timeout=90, what="finished")
    queue.jobs[job_id] = job
    assert job["state"] == "succeeded", job
    login(browser, serve)
    browser.open(f"{serve.origin}/jobs/{job_id}")
    browser.check_page(harness.same_origin(serve.origin))
    main = browser.one("main#job")
    assert json.loads(browser.one("#metadata pre", main).get_attribute("textContent")) == metadata
    assert json.loads(browser.one("#settings pre", main).get_attribute("textContent")) == job["settings"]
    assert browser.one("dd.callback", main).text == callback
    attachment = job["attachment"]
    expected = {attachment["file"]: attachment["mime"]}
    if attachment.get("poster"):
        expected[attachment["poster"]["file"]] = "image/jpeg"
    for rendition in (attachment.get("renditions") or {}).values():
        expected[rendition["file"]] = rendition["mime"]
    links = browser.select("#files ul.files a.file", main)
    assert {link.text: link.get_attribute("data-mime") for link in links} == expected
    for link in links:
        href = link.get_attribute("href")
        assert urllib.parse.urlsplit(href).path.startswith("/v1/attachments/"), href
        assert harness.same_origin(serve.origin)(href), f"a file link off this server: {href}"
        # Fetched by the page itself, with what the console's session sends.
        status, kind, size = browser.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0], {credentials: 'same-origin'}).then(async r =>
              done([r.status, r.headers.get('content-type'), (await r.arrayBuffer()).byteLength]))
              .catch(e => done([0, String(e), 0]));""", href)
        assert status == 200, f"{link.text}: HTTP {status}"
        assert kind.split(";")[0] == expected[link.text], f"{link.text}: {kind}"
        assert size > 0
        if link.text == attachment["file"]:
            assert size == attachment["bytes"]
    harness.check_not_blank(browser.screenshot("console-job-fields"), "the job page with its fields")


def test_jobs_table_fits_a_phone_without_breaking_urls_or_codes(browser, serve, queue, inputs, workdir):
    """At 390 px the jobs table is cards: nothing scrolls sideways (the page nor the table), a source
    URL takes no more lines than its length needs at the card's width (it broke every 7 characters
    in a squeezed column), and error codes, ids and times keep to one line."""
    # Their own directory and server: the batch report's tests process the inputs' directory.
    directory = workdir / "console-phone-sources"
    directory.mkdir(exist_ok=True)
    (directory / "notes.txt").write_text("plain text, not media\n" * 20)
    long_name = "a-rather-long-file-name-for-a-phone-screen-" + "x" * 40 + ".jpg"
    shutil_copy(inputs["photo"], directory / long_name)
    with harness.FixtureServer(directory) as sources:
        ids = enqueue_and_note(serve, queue, [sources.url("notes.txt"), sources.url(long_name)], max_attempts=1)
        for job_id in ids:
            queue.jobs[job_id] = serve.wait_for(job_id, lambda job: job["state"] in harness.FINISHED, timeout=90,
                                                what="finished")
    unsupported = ids[0]
    assert queue.jobs[unsupported]["error"]["code"] == "unsupported_type", queue.jobs[unsupported]
    browser.phone()
    login(browser, serve)
    browser.open(serve.origin + "/jobs")
    browser.screenshot("console-jobs-phone")
    assert browser.overflow() <= 0, f"/jobs is {browser.overflow()} px wider than the phone: {browser.overflowing()}"
    table = browser.one("table#jobs")
    width = browser.driver.execute_script("return document.documentElement.clientWidth")
    assert browser.rect(table)["right"] <= width + 0.5, f"the table reaches {browser.rect(table)['right']} of {width}"
    wrap_scroll = browser.driver.execute_script(
        "const w = arguments[0].parentElement; return w.scrollWidth - w.clientWidth", table)
    assert wrap_scroll <= 0, f"the jobs table scrolls sideways by {wrap_scroll} px on a phone"
    for row in browser.select("tr[data-job-id]", table):
        job_id = row.get_attribute("data-job-id")
        source = browser.one("td.source", row)
        assert browser.rect(source)["width"] >= width * 0.6, f"job {job_id}: the source has {browser.rect(source)}"
        used, needed = lines_of(browser, source), lines_needed(browser, source)
        assert used <= needed + 1, f"job {job_id}: the source takes {used} lines where {needed} would do"
        for cell in browser.select("td.code, td.id a, td.attempts", row):
            if cell.text.strip():
                assert lines_of(browser, cell) == 1, f"job {job_id}: {cell.text!r} breaks across lines"
    code = browser.one(f"tr[data-job-id='{unsupported}'] td.code", table)
    assert code.text.endswith("unsupported_type")
    # The job page: its times and codes on one line each, at the phone's width.
    browser.open(f"{serve.origin}/jobs/{unsupported}")
    browser.screenshot("console-job-phone")
    assert browser.overflow() <= 0, browser.overflowing()
    times = browser.select("main time")
    assert times, "the job page shows no time"
    for element in times + browser.select("main code"):
        height = browser.rect(element)["height"]
        line = browser.driver.execute_script(
            "const s = getComputedStyle(arguments[0]); return parseFloat(s.lineHeight) || 1.5 * parseFloat(s.fontSize)",
            element)
        assert lines_of(browser, element) == 1 and height <= line + 1, \
            f"{element.text!r} breaks mid-word: {lines_of(browser, element)} lines, {height} px high (a line is {line})"


def shutil_copy(source, target):
    import shutil
    shutil.copyfile(source, target)


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_activity_chart_has_a_legend_and_axes(browser, serve, queue, width):
    if width == "phone":
        browser.phone()
    login(browser, serve)
    browser.open(serve.origin + "/")
    browser.check_page(harness.same_origin(serve.origin))
    chart = browser.one("svg#activity-chart")
    browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", chart)
    legend = browser.one("#activity-legend")
    colour = "return getComputedStyle(arguments[0]).getPropertyValue(arguments[1])"
    for series in ("succeeded", "failed"):
        item = browser.one(f"li[data-series='{series}']", legend)
        assert series in item.text
        swatch = browser.one(".swatch", item)
        assert browser.rect(swatch)["width"] >= 8, "a swatch too small to see"
        bars = browser.select(f"rect.{series}", chart)
        if bars:
            assert browser.driver.execute_script(colour, swatch, "background-color") == \
                browser.driver.execute_script(colour, bars[0], "fill"), f"the {series} swatch is not the bars' colour"
    assert browser.select("rect.succeeded", chart), "the jobs that succeeded this hour draw no bar"
    counts = [label.text for label in browser.select("text.count-label", chart)]
    assert counts and counts[0] == "0" and all(text.isdigit() for text in counts), counts
    assert int(counts[-1]) >= 2 and int(counts[-1]) == 2 * int(counts[1]), counts
    times = [label.text for label in browser.select("text.time-label", chart)]
    assert len(times) == 5 and times[-1] == "now", times
    assert all(re.fullmatch(r"\d\d:\d\d", text) for text in times[:-1]), times
    titles = " ".join(title.text for title in browser.select("text.axis-title", chart))
    assert "per minute" in titles and "UTC" in titles, titles
    for label in browser.select("text", chart):
        assert browser.rect(label)["height"] >= 9, f"{label.text!r} is {browser.rect(label)['height']} px high"
    assert browser.overflow() <= 0, browser.overflowing()
    harness.check_not_blank(browser.screenshot(f"console-activity-{width}"), "the overview with its chart")


def test_preflight_fetch_is_offered_to_a_write_key_and_downloads(browser, serve, queue, fixture_server, workdir):
    payload = {"aps": {"alert": {"title": "Spring sale", "body": "Half off today"}, "mutable-content": 1},
               "attachments": [{"id": "hero", "url": fixture_server.url("photo.jpg")}]}
    expected = {finding["code"] for finding in serve.api(
        "POST", "/v1/preflight", {"payload": payload, "fetch": True})["reports"][0]["findings"]}
    login(browser, serve)
    browser.open(serve.origin + "/preflight")
    form = browser.one("form#preflight-form")
    box = browser.one("input[type=checkbox][name=fetch]", form)
    urls = browser.one("input[name=fetch_max_urls]", form)
    assert urls.get_attribute("max") and int(urls.get_attribute("max")) >= 1, "no cap on the URLs"
    assert browser.one("input[name=fetch_max_bytes]", form).get_attribute("max"), "no cap on the bytes"
    assert "--fetch" not in browser.one("main").text
    browser.one("textarea", form).send_keys(json.dumps(payload))
    box.click()
    browser.submit(form)
    browser.check_page(harness.same_origin(serve.origin))
    result = browser.one("#preflight-result")
    assert "downloaded" in result.text
    shown = {li.get_attribute("data-code") for li in browser.select("li.finding")}
    assert shown == expected, f"the page found {shown}, the API with fetch {expected}"
    assert "--fetch" not in browser.one("main").text, "the page tells a console user about a CLI flag"
    pictures = [img.get_attribute("src") for img in browser.select(".notification img")]
    assert any(src.startswith("data:image/") for src in pictures), f"no picture of the download: {pictures}"
    harness.check_not_blank(browser.screenshot("console-preflight-fetched"), "the pre-flight page")


def test_preflight_fetch_is_neither_offered_nor_allowed_to_a_read_key(browser, serve, queue, fixture_server):
    payload = {"aps": {"alert": {"title": "Hi"}, "mutable-content": 1},
               "attachments": [{"id": "hero", "url": fixture_server.url("art.webp")}]}
    login(browser, serve, key=harness.Serve.READ_KEY)
    browser.open(serve.origin + "/preflight")
    form = browser.one("form#preflight-form")
    assert not browser.select("input[name=fetch]", form), "a read key is offered the download"
    assert "--fetch" not in browser.one("main").text
    browser.one("textarea", form).send_keys(json.dumps(payload))
    # Asked for anyway (a field added by hand): refused.
    browser.driver.execute_script("""
        const field = document.createElement('input'); field.type = 'hidden'; field.name = 'fetch';
        field.value = '1'; arguments[0].appendChild(field);""", form)
    browser.submit(form)
    assert "write scope" in browser.one("main").text
    assert not browser.select("#preflight-result")
