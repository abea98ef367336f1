"""What the browser tests stand on: their own inputs, the real `pushprep` (process, preflight,
serve), a local HTTP server for job sources, and a headless chromium that records every console
message and every request it makes, so that a test can fail on either.

Nothing here talks to anything but 127.0.0.1; every wait has a timeout, and every process started
here is stopped in a `finally` (or a fixture's teardown) by its own handle.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Screenshots and logs a failing run leaves to look at.
ARTIFACTS = ROOT / ".build" / "browser"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/lib/chromium/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
WINDOW = (1280, 900)


def pushprep() -> str:
    """The binary under test: $PUSHPREP (the Makefile passes the debug build's), else .build/debug."""
    # Absolute: the batch runs in the test's temporary directory.
    path = os.path.abspath(os.environ.get("PUSHPREP") or ROOT / ".build" / "debug" / "pushprep")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"no pushprep binary at {path} (run `swift build --product pushprep` or set PUSHPREP)")
    return path


def run(args: list[str], timeout: float = 120, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """Runs a program to completion (killed after `timeout`), its output captured as text."""
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise RuntimeError(f"{args[0]} exited {result.returncode}: {result.stderr[-2000:]}")
    return result


# Inputs --------------------------------------------------------------------------------------

def make_inputs(directory: Path) -> dict[str, Path]:
    """One of each kind the report shows, made here with ffmpeg and vips: a landscape JPEG (scaled
    down), a WebP (converted to JPEG), a movie (its poster and play badge), a sound (its audio bar),
    and a corrupt JPEG (a failure with a code)."""
    directory.mkdir(parents=True, exist_ok=True)
    ffmpeg = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi"]
    photo = directory / "photo.jpg"
    run(ffmpeg + ["-i", "testsrc2=size=1600x1000:rate=1", "-frames:v", "1", "-q:v", "3", str(photo)], timeout=60)
    square = directory.parent / "square-source.png"
    run(ffmpeg + ["-i", "testsrc=size=800x800:rate=1", "-frames:v", "1", str(square)], timeout=60)
    webp = directory / "art.webp"
    run(["vips", "copy", str(square), f"{webp}[Q=80]"], timeout=60)
    clip = directory / "clip.mp4"
    run(ffmpeg + ["-i", "testsrc=duration=2:size=640x360:rate=25", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                  str(clip)], timeout=60)
    tone = directory / "tone.m4a"
    run(ffmpeg + ["-i", "sine=frequency=440:duration=3", "-c:a", "aac", str(tone)], timeout=60)
    broken = directory / "broken.jpg"
    # A JPEG's start of image and APP0 marker, then noise: detected as JPEG, unreadable.
    broken.write_bytes(b"\xff\xd8\xff\xe0" + bytes((i * 7919 + 13) % 251 for i in range(3000)))
    return {"photo": photo, "webp": webp, "clip": clip, "tone": tone, "broken": broken}


BAD_PAYLOAD = {
    "aps": {"alert": {"title": "Spring sale", "body": "Half off today"}, "sound": "default"},
    "attachments": [{"id": "hero", "url": "http://cdn.example.com/push/hero.webp", "type": "public.jpeg"}],
}


def preflight_findings(payload_file: Path) -> list[dict]:
    """What `pushprep preflight --json` finds in a payload: the reference the pages are held to."""
    result = run([pushprep(), "preflight", "--json", str(payload_file)], check=False, timeout=60)
    return json.loads(result.stdout)["reports"][0]["findings"]


# PNG -----------------------------------------------------------------------------------------

class Image:
    """A decoded 8-bit PNG (what chromium's screenshots are), as rows of RGB tuples."""

    def __init__(self, width: int, height: int, rows: list[list[tuple[int, int, int]]]):
        self.width, self.height, self.rows = width, height, rows

    @staticmethod
    def decode(data: bytes) -> "Image":
        if data[:8] != b"\x89PNG\r\n\x1a\n":
            raise ValueError("not a PNG")
        offset, idat, header = 8, b"", None
        while offset < len(data):
            (length,) = struct.unpack(">I", data[offset:offset + 4])
            kind = data[offset + 4:offset + 8]
            body = data[offset + 8:offset + 8 + length]
            offset += 12 + length
            if kind == b"IHDR":
                header = struct.unpack(">IIBBBBB", body)
            elif kind == b"IDAT":
                idat += body
            elif kind == b"IEND":
                break
        if header is None:
            raise ValueError("PNG without IHDR")
        width, height, depth, colour, _, _, interlace = header
        channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
        if depth != 8 or channels is None or interlace != 0:
            raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
        raw = zlib.decompress(idat)
        stride = width * channels
        previous = bytearray(stride)
        rows = []
        position = 0
        for _ in range(height):
            kind = raw[position]
            line = bytearray(raw[position + 1:position + 1 + stride])
            position += 1 + stride
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                up = previous[i]
                upper_left = previous[i - channels] if i >= channels else 0
                if kind == 1:
                    line[i] = (line[i] + left) & 0xFF
                elif kind == 2:
                    line[i] = (line[i] + up) & 0xFF
                elif kind == 3:
                    line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
                elif kind == 4:
                    p = left + up - upper_left
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                    predictor = left if pa <= pb and pa <= pc else (up if pb <= pc else upper_left)
                    line[i] = (line[i] + predictor) & 0xFF
                elif kind != 0:
                    raise ValueError(f"bad PNG filter {kind}")
            previous = line
            if channels >= 3:
                rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
            else:
                rows.append([(v, v, v) for v in line[0:stride:channels]])
        return Image(width, height, rows)

    def region(self, left: int, top: int, right: int, bottom: int) -> list[tuple[int, int, int]]:
        left, top = max(0, left), max(0, top)
        right, bottom = min(self.width, right), min(self.height, bottom)
        return [pixel for row in self.rows[top:bottom] for pixel in row[left:right]]


def luminance_spread(pixels: list[tuple[int, int, int]]) -> tuple[int, float]:
    """(distinct colours, standard deviation of luminance) of some pixels: a blank area has one
    colour and no spread."""
    if not pixels:
        return 0, 0.0
    values = [0.299 * r + 0.587 * g + 0.114 * b for r, g, b in pixels]
    mean = sum(values) / len(values)
    variance = sum((v - mean) ** 2 for v in values) / len(values)
    return len(set(pixels)), variance ** 0.5


# Local servers -------------------------------------------------------------------------------

class FixtureServer:
    """A static HTTP server on 127.0.0.1 for the jobs' sources (the queue downloads from it)."""

    def __init__(self, directory: Path):
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    def __enter__(self) -> "FixtureServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{urllib.parse.quote(name)}"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass

    def send_head(self):
        # `/unavailable/...` answers 503, a failure a job retries (a 404 is final).
        if self.path.startswith("/unavailable/"):
            self.send_error(503, "Service Unavailable")
            return None
        return super().send_head()


class APIError(Exception):
    def __init__(self, status: int, body: str):
        super().__init__(f"HTTP {status}: {body[:500]}")
        self.status, self.body = status, body


class Serve:
    """A real `pushprep serve` on a free port of 127.0.0.1, with a SQLite queue, an out directory,
    an uploads directory and an API keys file of its own, one embedded worker, and loopback sources
    allowed (the fixture server)."""

    WRITE_KEY = "browser-write-key-0123456789"
    READ_KEY = "browser-read-key-0123456789"

    def __init__(self, directory: Path):
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "keys").write_text(f"{self.WRITE_KEY} read,write\n{self.READ_KEY} read\n")
        # Webhooks are signed: a job may name a callback_url only on a server with a secret.
        (directory / "webhook.secret").write_text("whsec_" + "YnJvd3Nlci10ZXN0LXdlYmhvb2stc2VjcmV0LTAxMjM0NTY3" + "\n")
        self.log_path = directory / "serve.log"
        self.process: subprocess.Popen | None = None
        self.origin = ""

    def start(self, timeout: float = 30) -> "Serve":
        log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [pushprep(), "serve", "--host", "127.0.0.1", "--port", "0",
             "--queue", f"sqlite:{self.directory / 'queue.db'}", "--out", str(self.directory / "out"),
             "--uploads", str(self.directory / "uploads"), "--api-keys-file", str(self.directory / "keys"),
             "--webhook-secret-file", str(self.directory / "webhook.secret"),
             "--allow-private-networks", "--workers", "1", "--log-level", "warning"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log_path.read_text(errors="replace")
            marker = "listening on "
            if marker in text:
                self.origin = text.split(marker, 1)[1].split()[0].rstrip("/")
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"pushprep serve exited {self.process.returncode}: {text[-2000:]}")
            time.sleep(0.05)
        raise TimeoutError(f"pushprep serve did not listen within {timeout} s: {self.log_path.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def api(self, method: str, path: str, body: object | None = None, key: str | None = WRITE_KEY,
            timeout: float = 30) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.origin + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as error:
            raise APIError(error.code, error.read().decode(errors="replace")) from None
        return json.loads(text) if text else {}

    def enqueue(self, sources: list[str], **fields) -> list[int]:
        answer = self.api("POST", "/v1/jobs", {"sources": sources, **fields})
        return [job["id"] for job in answer["jobs"]]

    def job(self, job_id: int) -> dict:
        return self.api("GET", f"/v1/jobs/{job_id}")

    def wait_for(self, job_id: int, predicate, timeout: float = 60, what: str = "") -> dict:
        """Polls the job until `predicate(job)` holds; a TimeoutError names the last state seen."""
        deadline = time.monotonic() + timeout
        job = self.job(job_id)
        while not predicate(job):
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} not {what or 'as expected'} within {timeout} s: "
                                   f"state {job.get('state')}, error {job.get('error')}")
            time.sleep(0.2)
            job = self.job(job_id)
        return job


FINISHED = {"succeeded", "failed", "dead", "cancelled"}


# The browser ---------------------------------------------------------------------------------

class Browser:
    """Debian's chromium, headless, through its own chromedriver (never one Selenium Manager would
    fetch): a fixed window, a profile in the test's temporary directory, and every console message
    and network request recorded (goog:loggingPrefs) for `check_page`."""

    def __init__(self, profile_parent: Path, name: str = "browser"):
        self.profile = Path(tempfile.mkdtemp(prefix="chromium-profile-", dir=profile_parent))
        # A file name (a parametrized test's id may hold slashes and brackets).
        self.name = re.sub(r"[^\w.-]+", "_", name).strip("_")
        self.driver = None
        self.console: list[dict] = []
        self.requests: list[str] = []
        # Response headers by URL (lower-cased names), for the Content-Security-Policy checks.
        self.responses: dict[str, dict[str, str]] = {}

    def __enter__(self) -> "Browser":
        # Selenium Manager stays off: the driver and the browser are given by path.
        os.environ.setdefault("SE_OFFLINE", "true")
        os.environ.setdefault("SE_AVOID_STATS", "true")
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in [
            "--headless=new", "--no-sandbox", f"--window-size={WINDOW[0]},{WINDOW[1]}",
            f"--user-data-dir={self.profile}", "--disable-dev-shm-usage", "--disable-gpu",
            "--force-device-scale-factor=1", "--hide-scrollbars", "--no-first-run", "--no-default-browser-check",
            # Nothing of Chromium's own may leave the machine either: with these flags alone it still
            # looked up and asked clients2.google.com (network time), update.googleapis.com (components)
            # and accounts.google.com (measured with --log-net-log and strace). So no name resolves
            # but localhost, and anything not on loopback goes to a proxy that is not there (requests
            # a page makes still reach the performance log, and fail the test).
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
            "--proxy-server=http://127.0.0.1:9", "--dns-prefetch-disable",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
            "--disable-client-side-phishing-detection", "--metrics-recording-only", "--no-pings",
            "--lang=en-US",
        ]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        (ARTIFACTS / "logs").mkdir(parents=True, exist_ok=True)
        service = Service(CHROMEDRIVER, log_output=str(ARTIFACTS / "logs" / f"chromedriver-{self.name}.log"))
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_page_load_timeout(30)
        self.driver.set_script_timeout(10)
        # The viewport itself is fixed (--window-size counts the window, not the page), so that
        # screenshots and layouts are the same on every machine.
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False})
        # Off chromium's start page (it keeps loading its own chrome:// resources) before recording.
        self.driver.get("about:blank")
        self.drain()
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.driver is not None:
                self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def phone(self) -> None:
        """A phone's viewport from here on (390 x 844 CSS pixels, as an iPhone 14's, scale 3)."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})

    def overflow(self) -> int:
        """How many CSS pixels the page is wider than the viewport (a sideways scroll if > 0)."""
        return self.driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")

    def overflowing(self, limit: int = 5) -> list[str]:
        """What reaches past the viewport's right edge outside any scrolling box (a wide table in its
        wrapper scrolls, and is fine): elements and runs of text, named for a failure message."""
        return self.driver.execute_script("""
            const width = document.documentElement.clientWidth, found = [];
            const scrolls = el => { for (let up = el; up && up !== document.body; up = up.parentElement) {
              if (getComputedStyle(up).overflowX !== 'visible') return true; } return false; };
            const name = el => { const path = []; for (let n = el; n && n !== document.body && path.length < 3;
              n = n.parentElement) { path.unshift(n.tagName.toLowerCase() + (n.id ? '#' + n.id : '')
              + (n.classList.length ? '.' + [...n.classList].join('.') : '')); } return path.join(' > '); };
            for (const el of document.body.querySelectorAll('*')) {
              const r = el.getBoundingClientRect();
              if (r.right > width + 1 && r.width > 0 && !scrolls(el.parentElement)
                  && ![...el.children].some(c => c.getBoundingClientRect().right > width + 1)) {
                found.push(name(el) + ' (right edge at ' + Math.round(r.right) + ' of ' + width + ')');
              }
            }
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            for (let node; (node = walker.nextNode());) {
              const range = document.createRange(); range.selectNodeContents(node);
              const r = range.getBoundingClientRect();
              if (r.right > width + 1 && !scrolls(node.parentElement)) {
                found.push('text ' + JSON.stringify(node.textContent.trim().slice(0, 60)) + ' in '
                  + name(node.parentElement) + ' (right edge at ' + Math.round(r.right) + ' of ' + width + ')');
              }
            }
            return found.slice(0, arguments[0]);""", limit)

    def drain(self) -> None:
        """Forgets what was logged so far (chromium's start page, a previous page)."""
        self.driver.get_log("browser")
        self.driver.get_log("performance")
        self.console, self.requests, self.responses = [], [], {}

    def collect(self) -> None:
        """Adds the console messages and requested URLs logged since the last call."""
        self.console += self.driver.get_log("browser")
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.requestWillBeSent":
                self.requests.append(message["params"]["request"]["url"])
            elif message["method"] == "Network.webSocketCreated":
                self.requests.append(message["params"]["url"])
            elif message["method"] == "Network.responseReceived":
                response = message["params"]["response"]
                headers = {name.lower(): value for name, value in response.get("headers", {}).items()}
                self.responses[response["url"]] = headers

    def open(self, url: str) -> None:
        """Navigates (recording from a clean slate) and waits for the document to be complete."""
        self.drain()
        self.driver.get(url)
        self.wait_ready()

    def wait_ready(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while self.driver.execute_script("return document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.driver.current_url} not loaded within {timeout} s")
            time.sleep(0.05)
        # Late requests (images decoding, a script's first fetch) get a moment to show in the log.
        time.sleep(0.3)
        self.collect()

    def errors(self) -> list[str]:
        """Console messages at error level (SEVERE), which include CSP violations and failed loads."""
        return [f"{entry.get('source')}: {entry['message']}" for entry in self.console if entry["level"] == "SEVERE"]

    def outside_requests(self, allowed) -> list[str]:
        """Requested URLs for which `allowed(url)` is false (data: URLs are always allowed)."""
        return [url for url in self.requests if not url.startswith("data:") and not allowed(url)]

    def check_page(self, allowed) -> None:
        """Fails on any console error or any request `allowed` refuses, naming the page."""
        self.collect()
        page = self.driver.current_url
        errors = self.errors()
        assert not errors, f"console errors on {page}: {errors}"
        outside = self.outside_requests(allowed)
        assert not outside, f"requests outside the allowed origin from {page}: {outside}"

    def submit(self, form, timeout: float = 20) -> None:
        """Clicks the form's submit button, as a person would, and waits for the next page."""
        from selenium.common.exceptions import WebDriverException

        buttons = self.select("button[type=submit], input[type=submit], button:not([type])", form)
        assert buttons, f"a form without a submit button on {self.driver.current_url}"
        # A mark on this page's window: the next page's window has none. (Waiting for an element to
        # go stale races chromedriver mid-navigation: "Node ... does not belong to the document".)
        self.driver.execute_script("window.__beforeSubmit = true")
        self.drain()
        buttons[0].click()
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.driver.execute_script("return window.__beforeSubmit !== true"):
                    break
            except WebDriverException:
                pass  # between documents
            if time.monotonic() > deadline:
                raise TimeoutError(f"submitting the form on {self.driver.current_url} led nowhere in {timeout} s")
            time.sleep(0.05)
        self.wait_ready()

    def screenshot(self, name: str) -> Image:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        data = self.driver.get_screenshot_as_png()
        path.write_bytes(data)
        return Image.decode(data)

    def rect(self, element) -> dict:
        return self.driver.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height};",
            element)

    def select(self, css: str, within=None) -> list:
        from selenium.webdriver.common.by import By
        return (within or self.driver).find_elements(By.CSS_SELECTOR, css)

    def one(self, css: str, within=None):
        found = self.select(css, within)
        assert found, f"nothing matches {css!r} on {self.driver.current_url}"
        return found[0]


def same_origin(origin: str):
    """An `allowed` for check_page: only URLs of `origin` (scheme, host and port)."""
    def allowed(url: str) -> bool:
        parts = urllib.parse.urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}" == origin
    return allowed


# What the tests check on more than one page ----------------------------------------------------

def check_banner_layout(browser: Browser, notification) -> dict | None:
    """The contract's collapsed banner, where iOS 17/18 draw it: the app's icon at the left, the
    title and body right of it, no upper-case app-name line, and the square thumbnail box inside
    the banner at its right edge, right of the text. Returns the thumbnail's rectangle (None when
    the preview has no thumbnail)."""
    banner = browser.one(".banner", notification)
    for part in (".banner-icon", ".banner-title", ".banner-body"):
        assert browser.select(part, banner), f"the banner has no {part}"
    icon, title = browser.rect(browser.one(".banner-icon", banner)), browser.rect(browser.one(".banner-title", banner))
    outer = browser.rect(banner)
    assert icon["left"] - outer["left"] <= 24 and icon["right"] <= title["left"], \
        f"the app's icon {icon} is not at the banner's left {outer}, before the title {title}"
    upper = browser.driver.execute_script(
        "return [...arguments[0].querySelectorAll('*')].filter(e => getComputedStyle(e).textTransform === 'uppercase'"
        " && e.textContent.trim()).map(e => e.textContent.trim())", banner)
    assert not upper, f"an upper-case line in the banner (iOS 17 has none): {upper}"
    thumbs = browser.select(".banner-thumb", banner)
    if not thumbs:
        return None
    outer, thumb = browser.rect(banner), browser.rect(thumbs[0])
    assert thumb["width"] >= 16, f"thumbnail box too small to see: {thumb}"
    assert abs(thumb["width"] - thumb["height"]) <= 1, f"thumbnail box not square: {thumb}"
    slack = 0.5
    assert (outer["left"] - slack <= thumb["left"] and thumb["right"] <= outer["right"] + slack
            and outer["top"] - slack <= thumb["top"] and thumb["bottom"] <= outer["bottom"] + slack), \
        f"thumbnail box {thumb} not inside the banner {outer}"
    assert outer["right"] - thumb["right"] <= 24, f"thumbnail box {thumb} not at the banner's right edge {outer}"
    assert thumb["left"] > (outer["left"] + outer["right"]) / 2, f"thumbnail box {thumb} in the banner's left half"
    for part in (".banner-title", ".banner-body"):
        text = browser.rect(browser.one(part, banner))
        if text["width"] > 0:
            assert text["left"] < thumb["left"], f"{part} {text} not left of the thumbnail {thumb}"
    return thumb


def check_not_blank(image: Image, what: str, region: dict | None = None) -> None:
    """A screenshot (or one box of it) shows something: several colours and some contrast."""
    if region is None:
        pixels = image.region(0, 0, image.width, image.height)
        minimum_colours, minimum_spread = 16, 2.0
    else:
        pixels = image.region(int(region["left"]) + 1, int(region["top"]) + 1,
                              int(region["right"]) - 1, int(region["bottom"]) - 1)
        minimum_colours, minimum_spread = 4, 5.0
    colours, spread = luminance_spread(pixels)
    assert pixels, f"{what}: the box is outside the screenshot"
    assert colours >= minimum_colours and spread >= minimum_spread, \
        f"{what} looks blank: {colours} colour(s), luminance spread {spread:.1f}"


def check_focus_visible(browser: Browser) -> None:
    """The first Tab from the top of the page lands on something visible that shows it has the
    focus (an outline or a shadow), ideally the skip link to the main content."""
    from selenium.webdriver.common.keys import Keys

    browser.driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
    browser.one("body").send_keys(Keys.TAB)
    state = browser.driver.execute_script("""
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const r = el.getBoundingClientRect(), s = getComputedStyle(el);
        return {tag: el.tagName, href: el.getAttribute('href'), text: el.textContent.trim(),
                left: r.left, top: r.top, width: r.width, height: r.height,
                outline: s.outlineStyle, outlineWidth: parseFloat(s.outlineWidth), shadow: s.boxShadow,
                visibility: s.visibility, opacity: parseFloat(s.opacity),
                focusVisible: el.matches(':focus-visible')};
    """)
    page = browser.driver.current_url
    assert state is not None, f"Tab focuses nothing on {page}"
    assert state["width"] > 0 and state["height"] > 0 and state["visibility"] == "visible" and state["opacity"] > 0, \
        f"the first focused element is not visible on {page}: {state}"
    assert 0 <= state["top"] < WINDOW[1] and 0 <= state["left"] < WINDOW[0], \
        f"the first focused element is off screen on {page}: {state}"
    assert (state["outline"] != "none" and state["outlineWidth"] > 0) or state["shadow"] != "none", \
        f"the first focused element shows no focus (no outline, no shadow) on {page}: {state}"
    assert state["focusVisible"], f"the first focused element is not :focus-visible on {page}: {state}"
