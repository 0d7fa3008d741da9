"""Names and small node makers shared by the generation loop model's parts (wrap.py, and the token choices of
sampling.py and beams.py)."""
from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

LOOP = "generate"
TOKENS, STEP_LOGITS = "tokens", "step_logits"
TOKEN = "gen.token"  # the body output of the token each row chose
LAST_LOGITS = "gen.last_logits"  # [rows, vocab]: the last position's logits
STEP, COND, FINISHED = "gen.step", "gen.cond", "gen.finished"
START = "start."
ENCODER_IDS = "encoder_input_ids"


def const(name: str, value: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], name=name, value=numpy_helper.from_array(value, name))


def node(op_type: str, inputs: list[str], output: str, **attributes: Any) -> onnx.NodeProto:
    """A node of one output, named after it (`gen.x` -> `gen/x`)."""
    return helper.make_node(op_type, inputs, [output], name=output.replace(".", "/", 1), **attributes)
