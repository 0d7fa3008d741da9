"""Real-browser tests: `streamlit run app.py` on a free loopback port, driven by Playwright through Debian's
Chromium. Skipped (with the reason) only when /usr/bin/chromium is not installed."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                "--disable-component-update", "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 1700}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    """`streamlit run app.py` on 127.0.0.1:port; returns once /_stcore/health answers ok."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true", "--server.address=127.0.0.1",
         f"--server.port={port}", "--browser.gatherUsageStats=false", "--server.fileWatcherType=none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited: {proc.stderr.read().decode(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                if answer.read() == b"ok":
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("streamlit did not answer /_stcore/health within 60 s")


def launch(playwright):
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=BROWSER_ARGS)


@pytest.fixture(scope="module")
def server():
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    port = free_port()
    proc = start_server(port)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(server)
    settle(page)
    try:
        yield page
    finally:
        context.close()


def settle(page) -> None:
    """Waits until the script has started and finished running."""
    page.wait_for_timeout(400)
    page.wait_for_selector("[data-test-script-state=notRunning]")


def shot(page, name: str) -> None:
    """Saves a screenshot once tables and charts (drawn after the script finishes) are on screen."""
    for frame in page.get_by_test_id("stDataFrame").all():
        frame.locator("canvas").first.wait_for()
    page.wait_for_timeout(1500)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"e2e_{name}.png"))
