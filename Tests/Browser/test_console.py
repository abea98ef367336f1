"""The console of a real `pushprep serve` (at `/`), with jobs the test enqueued through the API and
waited for: login, the pages, the jobs table against the queue, retry and cancel from the page,
the pre-flight page, the keyboard."""

from __future__ import annotations

import json
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
