"""Fixtures of the browser tests: one temporary directory, inputs made once, one batch report run,
one `pushprep serve` with jobs that have finished, and a fresh chromium for each test."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

import harness


@pytest.fixture(scope="session")
def workdir():
    # This run's screenshots and logs only: an old run's must not pass for this one's.
    shutil.rmtree(harness.ARTIFACTS, ignore_errors=True)
    (harness.ARTIFACTS / "logs").mkdir(parents=True)
    directory = Path(tempfile.mkdtemp(prefix="pushprep-browser-"))
    try:
        yield directory
    finally:
        if not os.environ.get("KEEP_BROWSER_TMP"):
            shutil.rmtree(directory, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.failed_call = report.failed
    return report


@pytest.fixture(scope="session")
def inputs(workdir):
    return harness.make_inputs(workdir / "inputs")


class ReportRun:
    """`pushprep process inputs --out out --report report.html`: its files and the manifest it wrote."""

    def __init__(self, workdir: Path, inputs: dict[str, Path]):
        self.inputs = inputs
        self.out = workdir / "report-out"
        self.report = workdir / "report.html"
        # Relative sources, as a person types them: the manifest and the report name inputs so.
        self.result = harness.run(
            [harness.pushprep(), "process", "inputs", "--out", str(self.out), "--report", str(self.report)],
            cwd=workdir, check=False, timeout=180)
        self.manifest = None
        if (self.out / "manifest.json").exists():
            self.manifest = json.loads((self.out / "manifest.json").read_text())

    def entries(self) -> dict[str, dict]:
        return {entry["source"]: entry for entry in self.manifest["attachments"]}


@pytest.fixture(scope="session")
def report_run(workdir, inputs):
    run = ReportRun(workdir, inputs)
    # One corrupt input: exit status 1 (some inputs failed), not a usage error or a crash.
    assert run.result.returncode in (0, 1), f"process exited {run.result.returncode}: {run.result.stderr[-2000:]}"
    assert run.manifest is not None, f"no manifest: {run.result.stderr[-2000:]}"
    assert run.report.exists(), f"no report written: {run.result.stderr[-2000:]}"
    return run


@pytest.fixture(scope="session")
def fixture_server(inputs):
    with harness.FixtureServer(next(iter(inputs.values())).parent) as server:
        yield server


class Queue:
    """The jobs the console tests look at, all finished (but one held back an hour, to cancel)."""

    def __init__(self, serve: harness.Serve, server: harness.FixtureServer):
        self.serve = serve
        names = ["photo.jpg", "art.webp", "clip.mp4", "tone.m4a", "broken.jpg"]
        ids = serve.enqueue([server.url(name) for name in names], max_attempts=1)
        self.by_name = dict(zip(names, ids))
        self.jobs = {
            job_id: serve.wait_for(job_id, lambda job: job["state"] in harness.FINISHED, timeout=90, what="finished")
            for job_id in ids
        }
        (self.held,) = serve.enqueue([server.url("photo.jpg")], delay_seconds=3600)
        self.jobs[self.held] = serve.job(self.held)

    @property
    def failed(self) -> int:
        return self.by_name["broken.jpg"]

    @property
    def video(self) -> int:
        return self.by_name["clip.mp4"]


@pytest.fixture(scope="session")
def serve(workdir):
    server = harness.Serve(workdir / "serve")
    try:
        yield server.start()
    finally:
        server.stop()
        if server.log_path.exists():
            shutil.copy(server.log_path, harness.ARTIFACTS / "logs" / "serve.log")


@pytest.fixture(scope="session")
def queue(serve, fixture_server):
    return Queue(serve, fixture_server)


@pytest.fixture
def browser(workdir, request):
    with harness.Browser(workdir, name=request.node.name) as browser:
        yield browser
        if getattr(request.node, "failed_call", False):
            # What the page looked like when the test failed.
            name = f"failed-{browser.name}"
            browser.driver.save_screenshot(str(harness.ARTIFACTS / f"{name}.png"))
            (harness.ARTIFACTS / f"{name}.html").write_text(browser.driver.page_source)
