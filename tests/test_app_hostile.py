"""Hostile models through the app's sidebar: each ends in the app's own message (never an exception on the
page); a model that does not load leaves the previous one active, one whose run fails keeps its partial trace."""
from __future__ import annotations

import onnx
import pytest
from app_support import PAGES, start, upload
from markdown_text import shown

from tests.adversarial import models as m


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

