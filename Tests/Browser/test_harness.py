"""The harness's own checks catch what they are for, on pages made here: a console error, a request
leaving the page, a blank screenshot, a thumbnail out of place, a focus nobody can see. (Without
these, a check that never fires would pass every page.)"""

from __future__ import annotations

import pytest

import harness

BANNER = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; font: 16px sans-serif; background: #eee; }}
.banner {{ display: flex; gap: 8px; width: 360px; margin: 40px; padding: 10px; background: #fff; }}
.text {{ flex: 1; }} .banner-thumb {{ width: 40px; height: 40px; flex: none;
  background: linear-gradient(90deg, #c00, #00c); order: {order}; }}
.banner-icon {{ width: 38px; height: 38px; flex: none; background: #36c; order: -2; }}
.banner-app {{ text-transform: {app_case}; }}
a:focus {{ outline: {outline}; }}
</style></head><body><a href="#main">Skip to content</a><main id="main"><div class="notification">
<div class="banner"><div class="banner-icon"></div><div class="text">{app}<div class="banner-title">Title</div>
<div class="banner-body">Body</div></div><div class="banner-thumb"></div></div></div></main>{extra}</body></html>"""


def page(workdir, name, order=1, outline="2px solid #00f", extra="", app=""):
    path = workdir / f"harness-{name}.html"
    path.write_text(BANNER.format(order=order, outline=outline, extra=extra, app=app,
                                  app_case="uppercase" if app else "none"))
    return path


def test_a_clean_page_passes_every_check(browser, workdir):
    path = page(workdir, "clean")
    browser.open(path.as_uri())
    browser.check_page(lambda url: url == path.as_uri())
    thumb = harness.check_banner_layout(browser, browser.one(".notification"))
    image = browser.screenshot("harness-clean")
    harness.check_not_blank(image, "the page")
    harness.check_not_blank(image, "the thumbnail", thumb)
    harness.check_focus_visible(browser)


def test_an_upper_case_app_name_line_is_caught(browser, workdir):
    # iOS 12's "YOUR APP" line, which iOS 17/18 do not draw.
    path = page(workdir, "app-line", app='<div class="banner-app">Your app</div>')
    browser.open(path.as_uri())
    with pytest.raises(AssertionError, match="upper-case line"):
        harness.check_banner_layout(browser, browser.one(".notification"))


def test_a_console_error_fails_the_page(browser, workdir):
    path = page(workdir, "error", extra="<script>console.error('broken')</script>")
    browser.open(path.as_uri())
    with pytest.raises(AssertionError, match="console errors"):
        browser.check_page(lambda url: url == path.as_uri())


def test_a_request_elsewhere_fails_the_page(browser, workdir, fixture_server):
    # The fixture server answers, so the only thing wrong is where the request goes.
    path = page(workdir, "outside", extra=f"<img src='{fixture_server.url('photo.jpg')}' alt=''>")
    browser.open(path.as_uri())
    assert fixture_server.url("photo.jpg") in browser.requests
    with pytest.raises(AssertionError, match="outside the allowed origin"):
        browser.check_page(lambda url: url == path.as_uri())


def test_a_blank_screenshot_is_caught(browser, workdir):
    path = workdir / "harness-blank.html"
    path.write_text("<!doctype html><html><body style='background:#fff'></body></html>")
    browser.open(path.as_uri())
    image = browser.screenshot("harness-blank")
    assert (image.width, image.height) == harness.WINDOW
    with pytest.raises(AssertionError, match="looks blank"):
        harness.check_not_blank(image, "a white page")


def test_a_thumbnail_on_the_left_is_caught(browser, workdir):
    browser.open(page(workdir, "left", order=-1).as_uri())
    with pytest.raises(AssertionError, match="not at the banner's right edge|left half|not left of"):
        harness.check_banner_layout(browser, browser.one(".notification"))


def test_an_invisible_focus_is_caught(browser, workdir):
    browser.open(page(workdir, "nofocus", outline="none").as_uri())
    with pytest.raises(AssertionError, match="shows no focus"):
        harness.check_focus_visible(browser)
