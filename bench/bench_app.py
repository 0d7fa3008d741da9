"""The app's responsiveness. Server side: one step of the step-through cursor on every sample, driven by AppTest
(an AppTest click reruns the whole script, so this bounds the fragment's own rerun from above; goal <= 300 ms).
Browser: first load of the default sample in Debian's chromium until its diagram is drawn, on a fresh server
(cold: load, run and layout) and again in a new browser context (warm: cached)."""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.support
from streamlit.testing.v1 import AppTest

from explorer.inputs.samples import DEFAULT_SAMPLE, list_samples
from tests.support.app_server import (
    CHROMIUM,
    DIAGRAM_FRAME,
    VIEWPORT,
    free_port,
    launch,
    settle,
    start_server,
    stop_server,
)
from tests.support.apptest import move_target, step_to

STEPS = 12
GOAL_MS = 300


def cursor_steps(sample: str) -> list[float]:
    """Seconds of STEPS cursor moves (next event, wrapping to the first) on the Step through page."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.selectbox(key="w_sample").set_value(sample).run()
    at.switch_page("explorer/ui/pages/step.py").run()
    times: list[float] = []
    if move_target(at, "next") is None:
        return times  # a single event: nothing to step to
    for _ in range(STEPS):
        target = move_target(at, "next")
        start = time.perf_counter()
        step_to(at, 0 if target is None else target)  # as the canvas's move tells the server
        times.append(time.perf_counter() - start)
        assert not at.exception, [e.value for e in at.exception]
    return times


def first_load() -> tuple[float, float]:
    """(cold, warm) seconds from opening the app's address to the default sample's diagram on screen."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    proc = start_server(port)
    try:
        with sync_playwright() as playwright:
            browser = launch(playwright)
            seconds = []
            for _ in range(2):
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                start = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/")
                page.frame_locator(DIAGRAM_FRAME).first.locator("#content svg").wait_for(timeout=120_000)
                settle(page)
                seconds.append(time.perf_counter() - start)
                context.close()
            browser.close()
    finally:
        stop_server(proc)
    return seconds[0], seconds[1]


def main() -> None:
    print(f"cursor step on the Step through page (AppTest, full rerun; {STEPS} steps, goal <= {GOAL_MS} ms):")
    worst = 0.0
    for sample in list_samples():
        times = cursor_steps(sample)
        if not times:
            print(f"  {sample:24s} one event, nothing to step")
            continue
        median, slowest = statistics.median(times) * 1e3, max(times) * 1e3
        worst = max(worst, median)
        print(f"  {sample:24s} median {median:7.1f} ms  max {slowest:7.1f} ms")
    print(f"  slowest median: {worst:.1f} ms ({'within' if worst <= GOAL_MS else 'over'} the goal)")
    if not CHROMIUM.exists():
        print("browser first load: skipped, /usr/bin/chromium is not installed")
        return
    cold, warm = first_load()
    print(f"browser first load of {DEFAULT_SAMPLE!r} to its diagram: cold {cold:.2f} s, warm {warm:.2f} s")


if __name__ == "__main__":
    main()
