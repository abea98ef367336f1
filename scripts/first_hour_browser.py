"""The last step of scripts/first-hour.sh: the batch report, the pre-flight report and the console,
as a person sees them in headless chromium, at a desktop's width and at a phone's (390 px).

Run by first-hour.sh with the test venv's python (selenium) and Debian's chromium; it reuses the
browser tests' harness (Tests/Browser/harness.py). Prints one `ok:` line per check and exits 1 at
the first failure, with a screenshot of what failed in .build/browser/first-hour-*.png.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests" / "Browser"))
import harness  # noqa: E402 (after the path it is found on)


class Walk:
    def __init__(self, browser: harness.Browser):
        self.browser = browser

    def check(self, condition: bool, what: str, shot: str) -> None:
        if not condition:
            self.browser.screenshot(f"first-hour-{shot}")
            print(f"FAIL: {what} (screenshot: .build/browser/first-hour-{shot}.png)")
            sys.exit(1)
        print(f"ok: {what}")

    def fits_a_phone(self, url: str, shot: str, what: str) -> None:
        browser = self.browser
        browser.phone()
        browser.open(url)
        browser.screenshot(f"first-hour-{shot}-phone")
        wide = browser.overflowing()
        self.check(browser.overflow() <= 0 and not wide, f"{what} fits a phone (390 px)" + (f": {wide}" if wide else ""), shot)


def boxes_overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def pointer_key(pointer: str) -> list:
    """A JSON Pointer's tokens, indices as numbers (how pre-flight orders its findings)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in pointer.split("/")[1:]]


def batch_report(walk: Walk, report: Path) -> None:
    browser = walk.browser
    browser.open(report.as_uri())
    browser.check_page(lambda url: url.startswith("file:") or url.startswith("data:"))
    browser.screenshot("first-hour-report")
    statuses = [a.get_attribute("data-status") for a in browser.select("article.input")]
    failed = [s for s in statuses if s == "failed"]
    walk.check(len(failed) == 2, f"the batch report shows the two failed inputs ({statuses})", "report")
    walk.check(statuses[: len(failed)] == failed, "failed inputs come first", "report")
    page = browser.one("body").text
    walk.check(bool(re.search(r"\b9 inputs: .*\b2 failed\b", page)), "the summary line counts the failed inputs", "report")
    previews = [browser.select(".preview, .notification", within=a) for a in browser.select("article.input[data-status=failed]")]
    walk.check(not any(previews), "a failed input gets no notification preview", "report")
    marks = browser.select("svg [data-key]")
    keyed = all(m.find_elements("css selector", "title") for m in marks)
    walk.check(len(marks) == 7 and keyed, f"each of the 7 marks of the size chart names its input ({len(marks)})", "report")
    walk.check(len(browser.select(".chart-key li, li.chart-key-entry")) == len(marks), "the chart's key lists every mark", "report")
    for article in browser.select("article.input[data-status=ok]"):
        notification = browser.one(".notification", within=article)
        try:
            harness.check_banner_layout(browser, notification)
        except AssertionError as error:
            walk.check(False, f"{article.get_attribute('data-source')}: the banner as iOS 17/18 draws it: {error}", "report")
        expanded = browser.rect(browser.one(".expanded", within=notification))
        media = browser.select(".expanded img, .expanded .expanded-placeholder, .expanded .audio-bar", within=notification)
        text = browser.select(".expanded .expanded-title, .expanded .expanded-body", within=notification)
        if media and text:
            walk.check(browser.rect(media[0])["bottom"] <= browser.rect(text[0])["top"] + 1
                       and expanded["top"] <= browser.rect(media[0])["top"],
                       f"{article.get_attribute('data-source')}: expanded, the media is on top of the card and the text below",
                       "report")
    walk.check(not re.search(r"\bYOUR APP\b", page), "no upper-case app-name line", "report")
    titles = [t.text for t in browser.select("article.input[data-status=ok] .banner-title")]
    names = [Path(a.get_attribute("data-source")).name for a in browser.select("article.input[data-status=ok]")]
    walk.check(bool(titles) and not set(titles) & set(names), "the banners' titles are not the file names", "report")
    walk.fits_a_phone(report.as_uri(), "report", "the batch report")


def preflight_report(walk: Walk, report: Path, movie_report: Path) -> None:
    browser = walk.browser
    browser.open(report.as_uri())
    browser.screenshot("first-hour-preflight")
    rank = {"error": 0, "warning": 1, "info": 2}
    lists = browser.select("ul.findings")
    walk.check(bool(lists), "the pre-flight report lists findings", "preflight")
    for findings in lists:
        keys = [(rank.get(f.get_attribute("data-severity"), 3), pointer_key(f.get_attribute("data-pointer") or ""))
                for f in browser.select("li.finding", within=findings)]
        walk.check(keys == sorted(keys), "findings are ordered by severity, then pointer", "preflight")
    walk.check(not browser.select("li.finding .meaning"), "a finding's explanation does not repeat its message", "preflight")
    for findings in lists:
        said = [(f.get_attribute("data-code"), browser.one(".finding-message", within=f).text)
                for f in browser.select("li.finding", within=findings)]
        walk.check(len(said) == len(set(said)), "a finding said of several attachments is shown once", "preflight")
    walk.fits_a_phone(report.as_uri(), "preflight", "the pre-flight report")
    for phone in (False, True):
        if phone:
            browser.phone()
        browser.open(movie_report.as_uri())
        placeholder = browser.one(".expanded-placeholder.movie")
        badge = browser.rect(browser.one(".play-badge", within=placeholder))
        caption = browser.rect(browser.one(".placeholder-text", within=placeholder))
        walk.check(not boxes_overlap(badge, caption) and "Downloaded (mp4" in browser.one(".placeholder-text", within=placeholder).text,
                   f"the play badge does not cover the caption ({'phone' if phone else 'desktop'})", "preflight-movie")
    walk.fits_a_phone(movie_report.as_uri(), "preflight-movie", "the movie's pre-flight report")


def one_line(browser: harness.Browser, element) -> bool:
    """The element's text is on one line: no taller than its line height, give or take a pixel."""
    return browser.driver.execute_script(
        "const e = arguments[0], s = getComputedStyle(e), r = e.getBoundingClientRect();"
        "const line = parseFloat(s.lineHeight) || parseFloat(s.fontSize) * 1.3;"
        "return r.height <= line * 1.5 + 1", element)


def console(walk: Walk, api: str, job: int, retrying: int) -> None:
    browser = walk.browser
    browser.open(f"{api}/")
    browser.screenshot("first-hour-console-overview")
    walk.check(bool(browser.select("#activity-legend li")), "the activity chart has a legend", "console-overview")
    walk.check(bool(browser.select("svg text.count-label")) and bool(browser.select("svg text.time-label")),
               "and axes: counts and times", "console-overview")
    browser.open(f"{api}/jobs")
    row = [r for r in browser.select("tr") if f"/jobs/{retrying}" in (r.get_attribute("innerHTML") or "")]
    walk.check(bool(row) and "retrying" in row[0].text and re.search(r"attempt \d+ of \d+", row[0].text) is not None,
               "a job waiting to retry shows as retrying, with its next attempt", "console-jobs")
    browser.open(f"{api}/preflight")
    walk.check(bool(browser.select("input[type=checkbox][name=fetch]")), "the pre-flight page offers to download the attachments",
               "console-preflight")
    walk.check("--fetch" not in browser.one("body").text, "and tells a console user about no CLI flag", "console-preflight")
    browser.open(f"{api}/jobs/{job}")
    browser.screenshot("first-hour-console-job")
    text = browser.one("body").text
    walk.check("Team clip.webm" in text, "the job page names the upload by its file's name", "console-job")
    titles = [t.text for t in browser.select(".banner-title")]
    walk.check(bool(titles) and "Team clip.webm" not in titles, "and its notification is titled by the stand-in, not the file's name",
               "console-job")
    links = [a.get_attribute("href") for a in browser.select("a[href*='/v1/attachments/']")]
    walk.check(bool(links), "the job page links to the output file", "console-job")
    for heading in ("Settings", "Metadata", "Callback"):
        walk.check(heading.lower() in text.lower(), f"the job page shows its {heading.lower()}", "console-job")
    walk.fits_a_phone(f"{api}/jobs/{job}", "console-job", "the console's job page")
    walk.fits_a_phone(f"{api}/jobs", "console-jobs", "the console's jobs table")
    cells = browser.select("time, td code, .job-id")
    broken = [c.text for c in cells if c.text.strip() and not one_line(browser, c)]
    walk.check(bool(cells) and not broken, f"times, ids and codes are not broken mid-word on a phone {broken[:3]}", "console-jobs")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", required=True)
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--preflight-report", type=Path, required=True)
    parser.add_argument("--movie-report", type=Path, required=True)
    parser.add_argument("--job", type=int, required=True)
    parser.add_argument("--retrying", type=int, required=True)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="first-hour-browser-") as profiles:
        for name, part in [("report", lambda w: batch_report(w, arguments.report)),
                           ("preflight", lambda w: preflight_report(w, arguments.preflight_report, arguments.movie_report)),
                           ("console", lambda w: console(w, arguments.api, arguments.job, arguments.retrying))]:
            with harness.Browser(Path(profiles), name=f"first-hour-{name}") as browser:
                part(Walk(browser))
    return 0


if __name__ == "__main__":
    sys.exit(main())
