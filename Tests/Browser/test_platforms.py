"""The Android notification beside the iOS one: in the batch report (`pushprep process --report`), on
the console's job page, and in the pre-flight report (`pushprep preflight --fetch --report`), each
platform's picture drawn from the real file, loaded, and shown at 2:1 as Android shows it."""

from __future__ import annotations

import json
import time
import urllib.parse

import harness
from test_console import login
from test_report import only_the_file


def loaded_size(browser, image, timeout: float = 10) -> tuple[int, int]:
    """The picture's natural size once the browser has decoded it (0 × 0 when it never loads)."""
    deadline = time.monotonic() + timeout
    while True:
        size = browser.driver.execute_script(
            "const i = arguments[0]; return i.complete ? [i.naturalWidth, i.naturalHeight] : null;", image)
        if size is not None or time.monotonic() > deadline:
            return tuple(size or (0, 0))
        time.sleep(0.05)


def check_big_picture(browser, card, what: str) -> None:
    """The Android card's big picture and large icon: present, loaded, the big picture shown at 2:1
    within a pixel and cut (object-fit: cover), not squeezed, the icon a square at the right of the
    collapsed view's text."""
    assert card.get_attribute("data-has-picture") == "true", f"{what}: the Android card has no picture"
    big = browser.one("img.android-big-picture", card)
    browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", big)
    natural = loaded_size(browser, big)
    assert natural[0] > 0 and natural[1] > 0, f"{what}: the big picture did not load ({big.get_attribute('src')[:80]})"
    box = browser.rect(big)
    assert box["width"] > 100, f"{what}: the big picture is drawn {box['width']} px wide"
    assert abs(box["height"] - box["width"] / 2) <= 1, f"{what}: the big picture is {box['width']}×{box['height']}"
    fit = browser.driver.execute_script("return getComputedStyle(arguments[0]).objectFit", big)
    assert fit == "cover", f"{what}: object-fit {fit}"
    icon = browser.one(".android-collapsed img.android-large-icon", card)
    assert loaded_size(browser, icon)[0] > 0, f"{what}: the large icon did not load"
    icon_box = browser.rect(icon)
    text_box = browser.rect(browser.one(".android-collapsed .android-text", card))
    assert abs(icon_box["width"] - icon_box["height"]) <= 1, f"{what}: the large icon is not square: {icon_box}"
    assert icon_box["left"] >= text_box["right"] - 1, f"{what}: the large icon is not right of the text"


def check_no_picture(browser, card, what: str, reason: str) -> None:
    """The Android card drawn without a picture, and one line that says why."""
    assert card.get_attribute("data-has-picture") == "false", f"{what}: the Android card has a picture"
    assert not browser.select("img", card), f"{what}: an <img> in a card without a picture"
    note = browser.one(".platform-no-picture", card)
    assert reason in note.text, f"{what}: the card says {note.text!r}, not why ({reason!r})"
    browser.one(".android-collapsed .android-title", card)


# The batch report ---------------------------------------------------------------------------------

def test_report_shows_an_android_card_beside_each_ready_input(browser, report_run):
    browser.open(report_run.report.resolve().as_uri())
    browser.check_page(only_the_file(report_run.report))
    entries = report_run.entries()
    pictured = 0
    for article in browser.select("article.input[data-status='ok']"):
        source = article.get_attribute("data-source")
        entry = entries[source]
        cards = browser.select(".android-notification", article)
        assert len(cards) == 1, f"{source}: {len(cards)} Android cards"
        card = cards[0]
        # Beside the iOS preview, in the same column.
        ios = browser.one(".preview .notification", article)
        # The same stand-in title as the iPhone's (a batch has no payload), not the file's name.
        title = browser.one(".android-title", card).get_attribute("textContent")
        assert title == browser.one(".banner-title", ios).get_attribute("textContent") != source.rsplit("/", 1)[-1]
        if entry["kind"] == "audio":
            check_no_picture(browser, card, source, "a sound has no Android rendition")
        else:
            # The default platforms are ios,android: every picture has its Android rendition.
            assert "android" in entry.get("renditions", {}), f"{source}: no Android rendition in the manifest"
            check_big_picture(browser, card, source)
            pictured += 1
    assert pictured == 3, "expected the big pictures of the photo, the WebP and the movie's poster"
    # Beside the iOS notification, on a window as wide as a laptop's.
    photo = browser.one("article.input[data-source='inputs/photo.jpg']")
    ios = browser.rect(browser.one(".notification", photo))
    android = browser.rect(browser.one(".android-notification", photo))
    assert android["left"] >= ios["right"] - 1 and android["top"] < ios["bottom"], \
        f"the Android card {android} is not beside the iOS notification {ios}"


def test_report_with_platforms_ios_says_why_android_has_no_picture(browser, workdir, inputs):
    out = workdir / "report-ios-out"
    report = workdir / "report-ios.html"
    result = harness.run([harness.pushprep(), "process", "inputs/photo.jpg", "inputs/tone.m4a", "--platforms", "ios",
                          "--out", str(out), "--report", str(report)], cwd=workdir, check=False, timeout=120)
    assert result.returncode == 0, f"process exited {result.returncode}: {result.stderr[-2000:]}"
    browser.open(report.resolve().as_uri())
    browser.check_page(only_the_file(report))
    photo = browser.one("article.input[data-source='inputs/photo.jpg'] .android-notification")
    check_no_picture(browser, photo, "photo.jpg", "this run was not made for android (--platforms ios)")
    tone = browser.one("article.input[data-source='inputs/tone.m4a'] .android-notification")
    check_no_picture(browser, tone, "tone.m4a", "a sound has no Android rendition")
    assert not browser.select(".web-notification"), "a web card for a run not made for the web"


# The console's job page ---------------------------------------------------------------------------

def android_rendition(serve, job_id: int) -> dict:
    """The job's Android rendition, as the worker published it (the default platforms are ios,android)."""
    renditions = serve.job(job_id)["attachment"].get("renditions", {})
    assert "android" in renditions, f"job {job_id} has no Android rendition: {renditions}"
    return renditions["android"]


def test_job_page_shows_the_android_rendition(browser, serve, queue):
    photo = queue.by_name["photo.jpg"]
    rendition = android_rendition(serve, photo)
    login(browser, serve)
    browser.open(f"{serve.origin}/jobs/{photo}")
    browser.check_page(harness.same_origin(serve.origin))
    main = browser.one("main#job")
    card = browser.one(".android-notification", main)
    check_big_picture(browser, card, "the photo's job page")
    # Beside the iOS notification, on a window as wide as a laptop's.
    ios = browser.rect(browser.one(".notification", main))
    android = browser.rect(card)
    assert android["left"] >= ios["right"] - 1 and android["top"] < ios["bottom"], \
        f"the Android card {android} is not beside the iOS notification {ios}"
    # Drawn from the rendition's own file on this server, not the iOS attachment.
    big = browser.one("img.android-big-picture", card)
    assert urllib.parse.urlsplit(big.get_attribute("src")).path == f"/v1/attachments/{rendition['file']}"
    assert any(f"/v1/attachments/{rendition['file']}" in url for url in browser.requests), browser.requests
    image = browser.screenshot("job-android")
    harness.check_not_blank(image, "the Android big picture", browser.rect(big))


def test_job_page_of_a_sound_says_android_has_no_picture(browser, serve, queue):
    login(browser, serve)
    browser.open(f"{serve.origin}/jobs/{queue.by_name['tone.m4a']}")
    browser.check_page(harness.same_origin(serve.origin))
    card = browser.one("main#job .android-notification")
    check_no_picture(browser, card, "the sound's job page", "a sound has no Android rendition")


# The pre-flight report ----------------------------------------------------------------------------

def test_preflight_report_shows_each_platforms_part(browser, workdir, inputs, fixture_server):
    payload = workdir / "fcm-payload.json"
    android_url = fixture_server.url("photo.jpg")
    payload.write_text(json.dumps({"message": {
        "token": "device-token",
        "notification": {"title": "Spring sale", "body": "Half off today"},
        "android": {"notification": {"image": android_url}},
        "apns": {"payload": {"aps": {"mutable-content": 1}}, "fcm_options": {"image": fixture_server.url("art.webp")}},
    }}))
    page = workdir / "preflight-fcm.html"
    result = harness.run([harness.pushprep(), "preflight", str(payload), "--fetch", "--allow-http",
                          "--allow-private-networks", "--report", str(page)], check=False, timeout=120)
    assert result.returncode in (0, 1), f"preflight exited {result.returncode}: {result.stderr[-2000:]}"
    assert page.exists(), f"no pre-flight report written: {result.stderr[-2000:]}"
    browser.open(page.resolve().as_uri())
    browser.check_page(only_the_file(page))

    parts = {part.get_attribute("data-platform"): part for part in browser.select(".platform-part")}
    assert list(parts) == ["ios", "android"], f"platform parts {list(parts)}"
    assert browser.one("code.image-url", parts["android"]).text == android_url
    assert "/message/android/notification/image" in parts["android"].text
    # Each finding once, under the platform its code names.
    for finding in browser.select("li.finding"):
        code = finding.get_attribute("data-code")
        platform = "android" if code.startswith("android_") else "web" if code.startswith("web_") else "ios"
        assert browser.select(f"li.finding[data-code='{code}']", parts[platform]), f"{code} not under {platform}"

    card = browser.one(".android-notification")
    assert browser.one(".android-collapsed .android-title", card).text == "Spring sale"
    check_big_picture(browser, card, "the FCM payload's Android image")

    # OneSignal without big_picture: Android's card says the payload gives it none.
    bare = workdir / "onesignal-payload.json"
    bare.write_text(json.dumps({"app_id": "5eb5a37e-b458-11e3-ac11-000c2940e62c", "headings": {"en": "Spring sale"},
                                "contents": {"en": "Half off today"}, "ios_attachments": {"id": android_url},
                                "mutable_content": True}))
    bare_page = workdir / "preflight-onesignal.html"
    harness.run([harness.pushprep(), "preflight", str(bare), "--dialect", "onesignal", "--report", str(bare_page)],
                check=False, timeout=60)
    browser.open(bare_page.resolve().as_uri())
    browser.check_page(only_the_file(bare_page))
    check_no_picture(browser, browser.one(".android-notification"), "OneSignal without big_picture",
                     "this payload gives android no image (big_picture)")


def test_report_for_the_web_shows_chromes_notification(browser, workdir, inputs):
    out = workdir / "report-web-out"
    report = workdir / "report-web.html"
    result = harness.run([harness.pushprep(), "process", "inputs/photo.jpg", "--platforms", "ios,android,web",
                          "--out", str(out), "--report", str(report)], cwd=workdir, check=False, timeout=120)
    assert result.returncode == 0, f"process exited {result.returncode}: {result.stderr[-2000:]}"
    renditions = json.loads((out / "manifest.json").read_text())["attachments"][0]["renditions"]
    assert {"android", "web", "webIcon"} <= set(renditions), f"renditions {sorted(renditions)}"
    browser.open(report.resolve().as_uri())
    browser.check_page(only_the_file(report))
    check_big_picture(browser, browser.one(".android-notification"), "the photo for the web run")
    card = browser.one(".web-notification")
    assert card.get_attribute("data-has-picture") == "true"
    image = browser.one("img.web-image", card)
    browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", image)
    assert loaded_size(browser, image)[0] > 0, "the web image did not load"
    box = browser.rect(image)
    assert abs(box["height"] - box["width"] / 2) <= 1, f"the web image is {box['width']}×{box['height']}"
    icon = browser.one("img.web-icon", card)
    assert loaded_size(browser, icon)[0] > 0, "the web icon did not load"
    icon_box = browser.rect(icon)
    assert abs(icon_box["width"] - icon_box["height"]) <= 1 and icon_box["right"] <= box["left"] + box["width"]
