"""The server's memory when sessions come and go: the app served as docs/app.md says a shared app should be,
`explorer serve --shared` on 127.0.0.1 (PYTHONMALLOC=malloc; --pymalloc keeps Python's own allocator), one warm-up session like the others (its model loaded, drawn and run once: the modules it imports stay), then N
sessions in Debian's Chromium one after another, each uploading
a different model of 100,000 nodes (a 2.8 MB file), waiting for its run and leaving (its browser context closed).
Reports the server's resident memory (VmRSS) before, after the warm-up (the start the others are measured
against), after each session and once the released memory has settled; the run folders left in the temp folder.

    python bench/bench_sessions.py [--sessions 10] [--nodes 100000] [--pymalloc] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from onnx import TensorProto, helper, numpy_helper
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support
from tests.support.app_server import free_port, launch, settle, start_server, stop_server  # noqa: E402

OPS = ("Relu", "Neg", "Abs", "Sigmoid")


def chain_model(nodes: int, seed: int) -> bytes:
    """x[4] + c (c differs per seed) through `nodes - 1` unary operators named as exporters name them."""
    import numpy as np

    made = [helper.make_node("Add", ["x", "c"], ["t0"], name="/input/Add")]
    made += [helper.make_node(OPS[i % len(OPS)], [f"t{i - 1}"], [f"t{i}"], name=f"/layer{i}/{OPS[i % len(OPS)]}")
             for i in range(1, nodes)]
    c = numpy_helper.from_array(np.full(4, seed, np.float32), "c")
    graph = helper.make_graph(made, f"chain{seed}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info(f"t{nodes - 1}", TensorProto.FLOAT, [4])], [c])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def rss(pid: int) -> int:
    """The process's resident memory in bytes."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


def run_folders(pid: int) -> int:
    """The server's run folders still in the temp folder."""
    return len(list(Path(tempfile.gettempdir()).glob(f"explorer-run-{pid}-*")))


def settled(pid: int, seconds: float) -> int:
    """The server's memory once it stops falling (looked at every 2 s, for at most `seconds`)."""
    last, deadline = rss(pid), time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(2)
        now = rss(pid)
        if abs(now - last) < (1 << 20) and time.monotonic() > deadline - seconds + 12:
            return now
        last = now
    return last


def session(browser, url: str, name: str | None, data: bytes | None) -> None:
    """One visitor: opens the app, uploads the model (when given), waits for its run, leaves."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(url)
    settle(page)
    if data is not None:
        page.get_by_test_id("stSidebar").get_by_text("Upload", exact=True).click()
        settle(page)
        page.locator("input[type=file]").first.set_input_files(
            files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}])
        page.get_by_test_id("stSidebar").get_by_text(name).first.wait_for(timeout=300_000)
        settle(page)
    page.get_by_test_id("stSidebar").get_by_text("trace values").first.wait_for(timeout=300_000)
    settle(page)
    context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--pymalloc", action="store_true", help="the server on Python's own allocator")
    parser.add_argument("--json")
    args = parser.parse_args()
    env = {**os.environ}
    env.pop("PYTHONMALLOC", None)
    if args.pymalloc:
        env["PYTHONMALLOC"] = "pymalloc"  # serve keeps an allocator the environment chose
    port = free_port()
    server = start_server(port, env=env, argv=[sys.executable, "-m", "explorer", "serve", "--shared", "--port",
                                               str(port), "--", "--server.fileWatcherType=none"])
    url = f"http://127.0.0.1:{port}/"
    figures: dict = {"sessions": args.sessions, "nodes": args.nodes, "pymalloc": args.pymalloc,
                     "before_any": rss(server.pid)}
    try:
        with sync_playwright() as playwright:
            browser = launch(playwright)
            session(browser, url, "warm-up.onnx", chain_model(args.nodes, -1))  # what one session leaves: imports
            figures["start"] = settled(server.pid, 60)
            figures["after_each"] = []
            models = [chain_model(args.nodes, seed) for seed in range(args.sessions)]
            figures["model_mb"] = round(len(models[0]) / 2**20, 2)
            for seed, data in enumerate(models):
                began = time.monotonic()
                session(browser, url, f"chain{seed}.onnx", data)
                figures["after_each"].append({"rss": rss(server.pid), "seconds": round(time.monotonic() - began, 1)})
                print(f"session {seed + 1}: {figures['after_each'][-1]}", flush=True)
            figures["peak"] = max(x["rss"] for x in figures["after_each"])
            browser.close()
        figures["end"] = settled(server.pid, 90)
        figures["run_folders_left"] = run_folders(server.pid)
    finally:
        stop_server(server)
    figures["end_over_start"] = round(figures["end"] / figures["start"], 3)
    mb = {k: round(v / 2**20) for k, v in figures.items() if k in ("before_any", "start", "peak", "end")}
    print(json.dumps({**figures, "MB": mb}, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
