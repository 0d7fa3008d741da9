"""Hostile models through the app's sidebar: each ends in the app's own message (never an exception on the
page); a model that does not load leaves the previous one active, one whose run fails keeps its partial trace."""
from __future__ import annotations

import itertools
import re

import onnx
import pytest

from explorer.docs_links import docs_base
from explorer.inputs.samples import sample_path
from explorer.ui import state
from tests.adversarial import models as m
from tests.support.apptest import PAGES, start, upload
from tests.support.hostile_names import FILE_NAME, LIVE, hostile
from tests.support.markdown_text import live_markup, shown
from tests.support.page_text import markdown_sources, plot_texts, svg_markup


def negative_dims() -> onnx.ModelProto:
    return m.reading_initializer(onnx.TensorProto(name="w", data_type=onnx.TensorProto.FLOAT, dims=[-4],
                                                  raw_data=b"\0" * 16))


def test_a_model_with_negative_dims_is_refused_and_the_previous_model_stays():
    at = upload(start("tiny_mlp"), "negative.onnx", negative_dims().SerializeToString())
    assert not at.exception
    assert any("Could not load the model" in e.value and "negative dims [-4]" in shown(e.value) for e in at.error)
    assert at.session_state["active_model"].label == "tiny_mlp"


@pytest.mark.parametrize("page", ["graph", "step", "loops", "optimizer"])
def test_recursive_functions_load_draw_and_fail_to_run_with_a_message(page):
    at = upload(start("tiny_mlp"), "recursive.onnx", m.recursive_functions("f", "g").SerializeToString())
    at.switch_page(PAGES[page]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["active_model"].label == "recursive.onnx"
    assert any("UnsupportedOperatorError" in shown(e.value) and "recursively" in shown(e.value) for e in at.error)



EVERY_PAGE = ("graph", "step", "loops", "gates", "optimizer", "compare", "sweep")


def live_text(at, page: str) -> list[str]:
    """What of the page's model text would render as more than text: Markdown links, images or HTML (but the
    guide's own links), plot texts with HTML tags, diagram SVG that fetches or runs something."""
    allowed = tuple(filter(None, [docs_base()]))
    found = [f"{page} {where}: {problem} in {source!r}" for where, source in markdown_sources(at)
             for problem in live_markup(source, LIVE, allowed)]
    found += [f"{page} plot: {text!r}" for text in plot_texts(at) if re.search(r"<(?!br>)[a-zA-Z/!]", text)]
    return found + [f"{page} diagram: {problem}" for problem in svg_markup(at)]


def visit(at, page: str):
    """The page, and on it what shows more of the model's names: a node in the inspector, a rewrite's facts."""
    at.switch_page(f"explorer/ui/pages/{page}.py").run()
    nodes = [s for s in at.selectbox if s.key == state.W_NODE_PICK]
    if nodes and nodes[0].options:
        at.selectbox(key=state.W_NODE_PICK).set_value(nodes[0].options[-1]).run()
    yield at
    picks = [s for s in at.selectbox if s.key == state.W_REWRITE_PICK]
    for index in range(1, len(picks[0].options) if picks else 0):  # every rewrite's "Why it fired"
        at.selectbox(key=state.W_REWRITE_PICK).set_value(index).run()
        yield at


def test_every_page_shows_model_text_as_text():
    """Every name of the model (graph, nodes, inputs, outputs, initializers, value infos, dims), its doc strings,
    metadata and file name are Markdown and HTML payloads, each payload in turn the first (the dims' names, the
    rewrites' facts): no page, learning mode on, renders a live link, image or markup. The models: loops inside
    loops (Loops), a GRU (Gates), a chain of shape computations (Optimizer, the Sweep page's sizes)."""
    found = []
    for sample, first in itertools.product(["nested_loops", "gru_pytorch_batch_first", "opt_shape_chain"], [0, 3]):
        at = upload(start(timeout=180), FILE_NAME, hostile(onnx.load(sample_path(sample)), first).SerializeToString())
        assert at.session_state[state.ACTIVE].label == FILE_NAME
        at.toggle(key=state.W_LEARNING).set_value(True).run()  # its questions quote names too
        for page in EVERY_PAGE:
            for shown_page in visit(at, page):
                assert not shown_page.exception, (page, [e.value for e in shown_page.exception])
                found += [f"{sample} ({first}) {problem}" for problem in live_text(shown_page, page)]
    assert not found, "\n".join(found)
