"""Starting `streamlit run app.py` on a free loopback port and Debian's Chromium, for the browser tests and
bench/bench_app.py."""
from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import urllib.request
from collections import deque
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


def start_server(port: int, address: str = "127.0.0.1", env: dict[str, str] | None = None,
                 argv: list[str] | None = None, cwd: Path = ROOT) -> subprocess.Popen:
    """`streamlit run app.py` on address:port (`env`: its environment, by default this one's; `argv`: another
    command that serves it there, run in `cwd`); returns once it says it serves and /_stcore/health answers ok.
    A thread reads its output to the end (so it never blocks on a full pipe) and keeps the last lines."""
    argv = argv or [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true",
                    f"--server.address={address}", f"--server.port={port}", "--browser.gatherUsageStats=false",
                    "--server.fileWatcherType=none"]
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    answered, lines = threading.Event(), deque(maxlen=40)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "You can now view your Streamlit app" in line:
                answered.set()
        answered.set()  # its output ended: it exited

    threading.Thread(target=read, name="streamlit output", daemon=True).start()
    if not answered.wait(120) or proc.poll() is not None:
        proc.kill()
        raise RuntimeError(f"streamlit did not start: {''.join(lines)[-2000:]}")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=30) as answer:
        if answer.read() != b"ok":
            proc.kill()
            raise RuntimeError("streamlit's /_stcore/health does not answer ok")
    return proc


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
    with contextlib.suppress(PlaywrightTimeout):  # over before we looked, or no rerun at all
        page.wait_for_selector("[data-test-script-state=running]", timeout=400)
    page.wait_for_selector("[data-test-script-state=notRunning]", timeout=RUN_TIMEOUT)


DIAGRAM_FRAME = 'iframe[title="explorer.ui.diagram.explorer_diagram"]'


def diagram(page, nth: int = 0):
    """The diagram canvas (an iframe) number `nth` on the page, as a frame locator."""
    return page.frame_locator(DIAGRAM_FRAME).nth(nth)


def canvas_frame(page, nth: int = 0):
    """The diagram canvas number `nth` as a frame, to wait on conditions inside it (`wait_for_function`)."""
    return page.locator(DIAGRAM_FRAME).nth(nth).element_handle().content_frame()


# Whether what the page draws after its script run is on screen: no element still waiting for its code (Streamlit
# shows a skeleton while it loads an element's script), each visible chart's SVG, each visible table's canvas, each
# diagram canvas's drawing. Visible as Chromium paints it (checkVisibility): the content of a closed expander keeps
# its layout box, yet is never painted, so a table in it never gets its canvas.
PAGE_PAINTED = """() => {
    const all = (selector) => [...document.querySelectorAll(selector)].filter((el) => el.checkVisibility());
    return all('[data-testid="stSkeleton"]').length === 0
        && all('[data-testid="stPlotlyChart"]').every((c) => c.querySelector(".main-svg"))
        && all('img.chart').every((i) => i.complete)
        && all('[data-testid="stDataFrame"]').every((t) => t.querySelector("canvas"))
        && all('iframe[title="explorer.ui.diagram.explorer_diagram"]').every(
            (f) => f.contentDocument?.body?.dataset?.drawn);
}"""


def painted(page) -> None:
    """Waits until what the page draws after its script run is on screen (PAGE_PAINTED); then two animation frames, so
    a screenshot shows it."""
    page.wait_for_function(PAGE_PAINTED)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
