"""Starting `streamlit run app.py` on a free loopback port and Debian's Chromium, for the browser tests and
bench/bench_app.py."""
from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                "--disable-component-update", "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 1700}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    """`streamlit run app.py` on 127.0.0.1:port; returns once /_stcore/health answers ok. Its log goes to a
    temporary file (a pipe nobody reads would fill up and block the server mid-test)."""
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true", "--server.address=127.0.0.1",
         f"--server.port={port}", "--browser.gatherUsageStats=false", "--server.fileWatcherType=none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"streamlit exited: {log.read().decode(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                if answer.read() == b"ok":
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("streamlit did not answer /_stcore/health within 60 s")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def launch(playwright):
    """Headless Chromium from /usr/bin (never a downloaded browser)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=BROWSER_ARGS)


RUN_TIMEOUT = 240_000  # ms a script run may take on a machine busy with other work


def settle(page) -> None:
    """Waits until the rerun an action caused has started and finished: for the script to start (or to have
    been quick enough to be over already) then for it to stop, however long a loaded machine takes."""
    try:
        page.wait_for_selector("[data-test-script-state=running]", timeout=400)
    except PlaywrightTimeout:
        pass  # over before we looked, or no rerun at all
    page.wait_for_selector("[data-test-script-state=notRunning]", timeout=RUN_TIMEOUT)


DIAGRAM_FRAME = 'iframe[title="explorer.ui.diagram.explorer_diagram"]'


def diagram(page, nth: int = 0):
    """The diagram canvas (an iframe) number `nth` on the page, as a frame locator."""
    return page.frame_locator(DIAGRAM_FRAME).nth(nth)
