"""Takes the screenshots of the README and the guide (docs/images/*.png) in a real browser, with the browser
tests' set-up (tests/support/app_server.py: `streamlit run app.py` on a free loopback port, Debian's Chromium), on the
bundled samples and real exports kept in tests/models/. Run it again when a page changes:

    python tools/screenshots.py              # every screenshot
    python tools/screenshots.py gates step   # only these

Needs what the browser tests need (playwright, /usr/bin/chromium)."""
from __future__ import annotations

import argparse
import re
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.app_server import (  # noqa: E402
    RUN_TIMEOUT,
    diagram,
    free_port,
    launch,
    settle,
    start_server,
    stop_server,
)

IMAGES = ROOT / "docs" / "images"
KERAS = "tests/models/keras_exports/"  # paths as a user types them, from the folder the app runs in
BIGRU = KERAS + "keras_embedding_bigru.onnx"  # Embedding(mask_zero) + Bidirectional(GRU): two Keras loops
ADD_X = "enc/body/inner/body/branch/then_branch/add_x"  # nested_loops: an Add inside If inside Loop inside Scan
WIDTH = 1400


def address(server: str, page: str = "", **query: str) -> str:
    return server + page + ("?" + urllib.parse.urlencode(query) if query else "")


def drawn(page) -> None:
    """Waits until the diagram canvas, tables and charts on screen are drawn, then for their transitions."""
    if page.locator('iframe[title="explorer.ui.diagram.explorer_diagram"]').count():
        diagram(page).locator("#content svg").wait_for()
    for chart in page.locator(".js-plotly-plot").all():
        if chart.is_visible():
            chart.locator(".main-svg").first.wait_for()
    page.wait_for_function("() => [...document.querySelectorAll('img.chart')].every((i) => i.complete)")
    for frame in page.get_by_test_id("stDataFrame").all():
        if frame.is_visible():
            frame.locator("canvas").first.wait_for()
    page.wait_for_timeout(1200)  # the canvas's zoom and the charts' transitions end
    if page.get_by_test_id("stException").count():
        raise RuntimeError(f"the page shows an exception: {page.get_by_test_id('stException').first.inner_text()}")


def graph(page, server: str) -> None:
    """Graph: nested_loops with every body drawn, the Add inside the If's then branch selected."""
    page.goto(address(server, "", sample="nested_loops", node=ADD_X))
    settle(page)
    page.get_by_role("radio", name="expand").click()
    settle(page)
    page.get_by_text("Ran 8 times").wait_for()


def step(page, server: str) -> None:
    """Step through: nested_loops at the If inside the inner Loop's third iteration, the step's values."""
    page.goto(address(server, "step", sample="nested_loops", event="13"))
    settle(page)
    page.get_by_role("button", name="Close the tour").click()
    settle(page)


def loops(page, server: str) -> None:
    """Loops: a Keras GRU written as a Loop, said to be a GRU cell, its equations filled in."""
    page.goto(address(server, "loops", model=BIGRU))
    settle(page)
    page.get_by_text("The GRU cell's equations at iteration 0").first.wait_for()


def gates(page, server: str) -> None:
    """Gates: the same Keras Bidirectional GRU, its gates gathered from the two loops tf2onnx wrote."""
    page.goto(address(server, "gates", model=BIGRU))
    settle(page)
    page.locator('img.chart[alt^="z [forward, batch 0]"]').first.wait_for()  # a chart is an image: its title the alt


def compare(page, server: str) -> None:
    """Compare: a Keras LSTM against its float16 conversion, the first divergence and the gates."""
    page.goto(address(server, "compare", model=KERAS + "keras_lstm.onnx"))
    settle(page)
    page.get_by_test_id("stRadio").get_by_text("A local path").click()
    settle(page)
    box = page.get_by_label("Path of model B")
    box.fill(KERAS + "keras_lstm_fp16.onnx")
    box.press("Enter")
    settle(page)
    page.get_by_text("float16 rounding").first.wait_for()  # the verdict banner: agreement within B's precision


def framework(page, server: str) -> None:
    """Compare against the framework: the dynamo export of a PyTorch tagger with its GRU's gate blocks swapped, and
    the module values PyTorch computed (its stored capture): the module tree beside the export, the cause picked."""
    bridge = ROOT / "tests" / "models" / "bridge"
    page.goto(address(server, "compare", model="tests/models/bridge/faults/dynamo_tagger_gru_gates.onnx"))
    settle(page)
    page.get_by_test_id("stRadio").get_by_text("The PyTorch or Keras model it came from").click()
    settle(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").last.set_input_files(
        files=[{"name": "tagger.npz", "mimeType": "application/octet-stream",
                "buffer": (bridge / "tagger.npz").read_bytes()}])
    settle(page)
    page.get_by_text("gru layer 0 is ONNX node").wait_for()


def optimizer(page, server: str) -> None:
    """Optimizer: rewrites inside a Loop body, with the equivalence proof."""
    page.goto(address(server, "optimizer", sample="opt_loop_body"))
    settle(page)
    page.get_by_text(re.compile(r"Fully optimized model: equivalent")).first.wait_for()


def sweep(page, server: str) -> None:
    """Sweep: the Scan RNN sample against onnxruntime over sequence lengths and seeds, on a local Dask cluster."""
    page.goto(address(server, "sweep", sample="scan_rnn_encoding"))
    settle(page)
    caption = page.get_by_text("inputs; each runs under the sidebar's limits").first.inner_text()
    total = caption.split()[0]
    page.get_by_role("button", name="Start the sweep").click()
    settle(page)
    page.get_by_text(f"{total} of {total} inputs:").first.wait_for()
    page.get_by_role("button", name="Open in Compare").wait_for()


def learning(page, server: str) -> None:
    """Learning mode on nested_loops: before the trace enters the If's branch, the learner predicts which one."""
    import explorer
    from explorer.inputs.samples import sample_inputs, sample_path
    from explorer.views.learning import branch_question

    model = explorer.load(sample_path("nested_loops"))
    trace = explorer.run(model, sample_inputs("nested_loops"))
    before = next(i for i in range(len(trace.events)) if branch_question(model, trace, i) is not None)
    page.goto(address(server, "step", sample="nested_loops", event=str(before)))
    settle(page)
    page.get_by_role("button", name="Close the tour").click()
    settle(page)
    page.get_by_test_id("stSidebar").get_by_text("Learning mode").click()
    settle(page)
    page.get_by_text("Predict: which branch will").first.wait_for()


SHOTS: dict[str, tuple[Callable, int]] = {  # name -> (what to show, viewport height)
    "graph": (graph, 1050), "step": (step, 1150), "loops": (loops, 1300), "gates": (gates, 1300),
    "compare": (compare, 1150), "framework": (framework, 1250), "optimizer": (optimizer, 1200), "sweep": (sweep, 1700), "learning": (learning, 1000),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"screenshots to take (default all: {', '.join(SHOTS)})")
    names = parser.parse_args(argv).names or list(SHOTS)
    unknown = sorted(set(names) - set(SHOTS))
    if unknown:
        parser.error(f"no screenshot {', '.join(unknown)} (known: {', '.join(SHOTS)})")
    from playwright.sync_api import sync_playwright

    IMAGES.mkdir(parents=True, exist_ok=True)
    port = free_port()
    server = start_server(port)
    try:
        with sync_playwright() as playwright:
            browser = launch(playwright)
            for name in names:
                show, height = SHOTS[name]
                context = browser.new_context(viewport={"width": WIDTH, "height": height})
                page = context.new_page()
                page.set_default_timeout(RUN_TIMEOUT)
                show(page, f"http://127.0.0.1:{port}/")
                drawn(page)
                page.screenshot(path=str(IMAGES / f"{name}.png"))
                context.close()
                print(f"wrote docs/images/{name}.png")
            browser.close()
    finally:
        stop_server(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
