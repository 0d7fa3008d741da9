"""Diagram generation: DOT text for synthetic models of 1,000 and 5,000 nodes with nested bodies (a Loop
holding an If every 8th block; goal <= 1 s at 5,000 nodes in Python), in the default view (scopes and bodies
collapsed to a box budget) and fully expanded, then the time graphviz's `dot` takes to lay each out as SVG;
the same for the largest real models in ../shared/models. `python bench/bench_dot.py [--full-dot]`
(--full-dot also lays out the fully expanded drawings, which takes minutes)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT))  # tests.support
from timing import best_of

import explorer
from explorer.views.dot import model_to_dot
from explorer.views.render import GraphvizError, dot_available, render
from tests.support.diagrams import synthetic_model

GOAL_SECONDS = 1.0
REAL_MODELS = [
    "Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx",
    "snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx",
    "snakers4__silero-vad/src/silero_vad/data/silero_vad_16k_op15.onnx",
]
VIEWS = {"default": {}, "expanded": {"expand": "all", "scopes": "all"}}


def dot_seconds(dot_text: str, timeout: float) -> str:
    if not dot_available():
        return "dot not installed"
    start = time.perf_counter()
    try:
        render(dot_text, "svg", timeout=timeout)
    except GraphvizError:
        return f"> {timeout:.0f} s"
    return f"{time.perf_counter() - start:.2f} s"


def measure(title: str, model: explorer.Model, full_dot: bool) -> None:
    boxes = len(model.index.nodes)
    for view, options in VIEWS.items():
        seconds = best_of(lambda options=options: model_to_dot(model, **options).dot, repeat=3)
        text = model_to_dot(model, **options).dot
        laid_out = dot_seconds(text, 600) if view == "default" or full_dot else "skipped (--full-dot)"
        goal = f" (goal <= {GOAL_SECONDS:g} s)" if boxes >= 5000 else ""
        print(f"{title} [{view}]: {boxes} nodes, DOT {len(text) / 1e3:.0f} kB in {seconds:.3f} s{goal}; "
              f"{text.count(' -> ')} edges; dot -Tsvg {laid_out}")


def main() -> None:
    full_dot = "--full-dot" in sys.argv
    for size in (1000, 5000):
        measure(f"synthetic {size}", explorer.load(synthetic_model(size)), full_dot)
    shared = ROOT.parent / "shared" / "models"
    for relative in REAL_MODELS:
        path = shared / relative
        if path.exists():
            measure(path.name, explorer.load(path), full_dot)


if __name__ == "__main__":
    main()
