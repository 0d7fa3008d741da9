"""The app end to end in Debian's chromium: the time from a click on the canvas's "next event" on the Step through
page until the new step's diagram is on screen (the canvas reports what it drew), on every sample (goal <= 300 ms)
and on gtcrn (1,786 nodes, goal <= 1 s), and until the whole step is (the server's rerun for that click over and
its last frame painted); and
the time from opening a 20,000-node synthetic model's address until its
overview is drawn (goal <= 3 s), cold (a model the server has not seen) and warm (cached), median of three; and
each page's first render (`pages`): from opening its address on a sample or a real model (silero-vad and gtcrn
from ../shared/models) in a new session until the page is whole (its script run over, no element left stale or
loading, every diagram drawn, every chart and table painted), goal <= 2 s; and the first visitor's page on a new server, started by `streamlit run app.py` and by `explorer serve` (`first`).
`python bench/bench_browser.py` (or `... gtcrn tiny_mlp 20k pages first`: only the samples and parts named; `pages
path/to/model.onnx`: the pages on that model instead of the real ones; `pages optimizer compare`: only those pages)."""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.support
from explorer.inputs.samples import list_samples
from tests.support.app_server import (
    CHROMIUM,
    DIAGRAM_FRAME,
    PAGE_PAINTED,
    VIEWPORT,
    free_port,
    launch,
    settle,
    start_server,
    stop_server,
)

STEPS = 10
FIRST_VISITOR_S = 8.0
REPEATS = 3
GTCRN = ROOT.parent / "shared/models/Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx"
SILERO = ROOT.parent / "shared/models/snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx"  # 689 nodes, If, LSTM
DRAWN = ("() => [...document.querySelectorAll('iframe')].map(f => f.contentDocument?.body?.dataset?.drawn)"
         ".filter(Boolean).join(';')")


ANSWERED = ("() => [...document.querySelectorAll('iframe')].map(f => f.contentDocument?.body?.dataset?.answered)"
            ".filter(v => v !== undefined).join(';')")
PAINTED = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def drawn(page) -> str:
    return page.evaluate(DRAWN)


def step_times(page, address: str) -> list[tuple[float, float]]:
    """Seconds from each click on the canvas's "next event" until the canvas shows the new step and until the
    whole step is on screen: the server's rerun answering that click over and painted (wrapping to the first)."""
    page.goto(address)
    settle(page)
    canvas = page.frame_locator(DIAGRAM_FRAME).first
    canvas.locator("#content svg").wait_for(timeout=180_000)
    page.wait_for_timeout(500)
    times = []
    for _ in range(STEPS):
        before, answered = drawn(page), page.evaluate(ANSWERED)
        target = canvas.locator('#stepbar button[data-name="next"]')
        if target.is_disabled():
            first = canvas.locator('#stepbar button[data-name="first"]')
            if first.is_disabled():
                return times  # one event: nothing to step to
            first.click()
            page.wait_for_function(f"() => ({ANSWERED})() !== {answered!r}", timeout=60_000)
            settle(page)
            continue
        # a mouse click where the button is, as a user's: a locator's click would first wait for the button to
        # hold still over two animation frames, 50-100 ms that are not the app's
        box = target.bounding_box()
        start = time.perf_counter()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_function(f"() => ({DRAWN})() !== {before!r}", timeout=60_000)
        on_screen = time.perf_counter() - start
        page.wait_for_function(f"() => ({ANSWERED})() !== {answered!r}", timeout=60_000)
        page.wait_for_selector("[data-test-script-state=notRunning]", timeout=60_000)
        page.evaluate(PAINTED)
        times.append((on_screen, time.perf_counter() - start))
    return times


# the canvas holds its drawing; polled at every animation frame (a locator's wait_for looks only every 500 ms
# once the canvas's frame has been missing for a while, which would round every opening up by up to 0.5 s)
OVERVIEW_DRAWN = (f"() => [...document.querySelectorAll({DIAGRAM_FRAME!r})]"
                  ".some(f => f.contentDocument?.querySelector('#content svg'))")
RUN_SHOWN = ("() => [...document.querySelectorAll('[data-testid=stButtonGroup] button')]"
             ".some(b => b.textContent.includes('time spent') && !b.disabled)")  # "Colour by" needs the run


def overview_seconds(browser, address: str) -> tuple[float, float]:
    """Seconds from opening `address` until the overview is drawn, and until the page shows the model's run."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    start = time.perf_counter()
    page.goto(address)
    page.wait_for_function(OVERVIEW_DRAWN, timeout=600_000)  # looked for at every frame the page paints
    seconds = time.perf_counter() - start
    page.wait_for_function(RUN_SHOWN, timeout=600_000)  # the run after the drawing
    page.wait_for_selector("[data-test-script-state=notRunning]", timeout=600_000)
    run_shown = time.perf_counter() - start
    context.close()
    return seconds, run_shown


def overview_times(browser, base: str) -> None:
    """Median of REPEATS openings of a 20,000-node model's address, each cold (a model the server has not seen:
    load, layout, and the run after the drawing) then warm (the same address again)."""
    import onnx

    from tests.support.diagrams import synthetic_model

    cold, warm, runs = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(REPEATS):
            model = synthetic_model(20_000)
            model.doc_string = f"copy {attempt}"  # new content: nothing of it is cached
            path = Path(folder) / f"synthetic_20k_{attempt}.onnx"
            onnx.save(model, path)
            address = base + "?" + urllib.parse.urlencode({"model": str(path)})
            drawn, run_shown = overview_seconds(browser, address)
            cold.append(drawn)
            runs.append(run_shown)
            warm.append(overview_seconds(browser, address)[0])
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"20,000-node model, address -> overview drawn (median of {REPEATS}): cold {statistics.median(cold):.2f} s "
          f"(load, layout; {', '.join(f'{t:.2f}' for t in cold)}), warm {statistics.median(warm):.2f} s "
          f"({', '.join(f'{t:.2f}' for t in warm)}); goal <= 3 s; the run shown after a cold opening at "
          f"{statistics.median(runs):.2f} s; load average {load}")


PAGES = ("", "step", "loops", "gates", "optimizer", "compare", "sweep")  # the Graph page is the app's default
PAGE_GOAL_S = 2.0
WHOLE = f"""() => {{
    const script = document.querySelector("[data-test-script-state]")?.dataset?.testScriptState;
    if (script !== "notRunning" || !document.querySelector("h1")) return false;
    if (document.querySelector("[data-stale='true']")) return false;  // greyed out: the run has not redrawn it
    return ({PAGE_PAINTED})();
}}"""
STEADY_MS = 600  # the page must stay whole this long (a page that reruns itself is whole after its last run)


PAGE_TIMEOUT_S = 120.0
PAGE_VIEWPORT = {"width": 1400, "height": 900}


def first_render_seconds(browser, address: str, context=None) -> float:
    """Seconds from opening `address` in a new session until the page is whole and stays so for STEADY_MS;
    infinity when it is not whole within PAGE_TIMEOUT_S. In a new browser context (a browser that never loaded
    the app: Streamlit's scripts are loaded and compiled), or in a new tab of
    `context` (one that has: a new session, the browser's cache warm)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = (context or browser.new_context(viewport=PAGE_VIEWPORT)).new_page()
    start = time.perf_counter()
    page.goto(address)
    try:
        while True:
            left = PAGE_TIMEOUT_S - (time.perf_counter() - start)
            page.wait_for_function(WHOLE, timeout=max(left, 1.0) * 1e3)  # polled at every animation frame
            whole = time.perf_counter() - start
            page.wait_for_timeout(STEADY_MS)
            if page.evaluate(WHOLE):
                return whole
    except PlaywrightTimeout:
        return float("inf")
    finally:
        page.close() if context is not None else page.context.close()


def _line(label: str, times: dict[str, float]) -> str:
    worst = max(times, key=times.__getitem__)
    verdict = "within" if times[worst] <= PAGE_GOAL_S else "over"
    return (f"  {label:16s} median {statistics.median(times.values()):5.2f} s  worst {times[worst]:5.2f} s ({worst}; "
            f"{verdict} {PAGE_GOAL_S:g} s)  " + " ".join(f"{s}={t:.2f}" for s, t in times.items()))


def page_times(browser, base: str, samples: list[str], models: list[Path], pages: tuple[str, ...] = PAGES) -> None:
    """Each page's first render on each sample and model (one new session each), in a new browser (cold) and in
    a new tab of a browser that has shown the page before (warm)."""
    print(f"first render of each page on the samples and models ({PAGE_VIEWPORT['width']}x{PAGE_VIEWPORT['height']}, "
          f"new session; goal <= {PAGE_GOAL_S:g} s):")
    queries = {**{sample: {"sample": sample} for sample in samples}, **{m.name: {"model": str(m)} for m in models}}
    first = first_render_seconds(browser, base)  # the server's first session imports what every page needs
    print(f"  (a first opening of the Graph page, not counted below: {first:.2f} s; on a new server it imports what "
          "every page needs)")
    warm = browser.new_context(viewport=PAGE_VIEWPORT)
    for path in pages:
        addresses = {name: f"{base}{path}?{urllib.parse.urlencode(query)}" for name, query in queries.items()}
        print(_line(f"{path or 'graph'} cold", {name: first_render_seconds(browser, a) for name, a in addresses.items()}))
        first_render_seconds(browser, next(iter(addresses.values())), warm)  # the browser loads this page's scripts
        print(_line(f"{path or 'graph'} warm", {name: first_render_seconds(browser, a, warm)
                                                for name, a in addresses.items()}))
    warm.close()
    print("load average (1, 5, 15 min): " + " ".join(f"{load:.2f}" for load in os.getloadavg()))


def first_visitor_times(browser) -> None:
    """The first visitor's Graph page on a new server started by `streamlit run app.py` and by `explorer serve`
    (which imports the pages' modules while it waits), the visitor arriving FIRST_VISITOR_S after the start."""
    print(f"first visitor's Graph page on a new server ({FIRST_VISITOR_S:g} s after its start; goal <= "
          f"{PAGE_GOAL_S:g} s):")
    for label, command in (("streamlit run app.py", None), ("explorer serve", "serve")):
        port = free_port()
        argv = None if command is None else [sys.executable, "-m", "explorer", "serve", "--port", str(port), "--",
                                             "--server.headless=true", "--server.fileWatcherType=none"]
        proc = start_server(port, argv=argv)
        try:
            time.sleep(FIRST_VISITOR_S)
            seconds = first_render_seconds(browser, f"http://127.0.0.1:{port}/?sample=nested_loops")
            print(f"  {label:22s} {seconds:5.2f} s")
        finally:
            stop_server(proc)


def report(label: str, times: list[tuple[float, float]], goal_ms: float) -> None:
    if not times:
        print(f"  {label:26s} one event, nothing to step")
        return
    diagram, whole = ([t * 1e3 for t in column] for column in zip(*times))
    verdict = "within" if max(diagram) <= goal_ms else "over"
    print(f"  {label:26s} diagram median {statistics.median(diagram):5.0f} ms  max {max(diagram):5.0f} ms  "
          f"({verdict} {goal_ms:.0f} ms) · whole step median {statistics.median(whole):5.0f} ms  "
          f"max {max(whole):5.0f} ms")


def main(only: list[str]) -> None:
    def wanted(name: str) -> bool:
        return not only or name in only

    if not CHROMIUM.exists():
        print("skipped: /usr/bin/chromium is not installed")
        return
    from playwright.sync_api import sync_playwright

    port = free_port()
    proc = start_server(port)
    base = f"http://127.0.0.1:{port}/"
    try:
        with sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.set_default_timeout(180_000)
            print("load average (1, 5, 15 min): " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
            print(f"click on next event -> new diagram on screen, and whole step on screen ({STEPS} clicks each):")
            for sample in filter(wanted, list_samples()):
                if "pages" in only:  # `pages NAME ...`: the samples the pages are timed on
                    continue
                report(sample, step_times(page, f"{base}step?sample={sample}"), 300)
            if GTCRN.is_file() and wanted("gtcrn"):
                report("gtcrn (1,786 nodes)", step_times(page, f"{base}step?" + urllib.parse.urlencode(
                    {"model": str(GTCRN)})), 1000)
            if wanted("20k"):
                overview_times(browser, base)
            if not only or "first" in only:
                first_visitor_times(browser)
            if not only or "pages" in only:
                models = [Path(a) for a in only if a.endswith(".onnx")] or [m for m in (SILERO, GTCRN) if m.is_file()]
                pages = tuple(p for p in PAGES if p and p in only) or PAGES
                page_times(browser, base, [s for s in list_samples() if not only or s in only] or list_samples(),
                           models, pages)
            browser.close()
    finally:
        stop_server(proc)


if __name__ == "__main__":
    main(sys.argv[1:])
