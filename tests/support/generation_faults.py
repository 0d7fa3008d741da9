"""Faults planted in optimum's export of tiny GPT-2 (tests/models/generation/gpt2), for the tests of a generation
against another export's."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

GPT2 = Path(__file__).resolve().parents[1] / "models" / "generation" / "gpt2"


def faulty_folder(tmp_path: Path, edit: Callable[[onnx.ModelProto], None]) -> Path:
    """A folder holding GPT-2's decoder with past as `edit` changed it, and its config."""
    model = onnx.load(str(GPT2 / "decoder_with_past_model.onnx"))
    edit(model)
    folder = tmp_path / "faulty"
    folder.mkdir()
    onnx.save(model, str(folder / "model.onnx"))
    (folder / "config.json").write_text((GPT2 / "config.json").read_text())
    return folder


def scale_query_of_head(model: onnx.ModelProto) -> None:
    """Layer 0's query scale, head 1 only, times 1.5."""
    graph = model.graph
    (matmul,) = [n for n in graph.node if n.name == "/transformer/h.0/attn/MatMul"]
    factor = np.ones((1, 4, 1, 1), np.float32)
    factor[0, 1] = 1.5
    graph.initializer.append(numpy_helper.from_array(factor, "fault.factor"))
    graph.node.insert(list(graph.node).index(matmul), helper.make_node(
        "Mul", [matmul.input[0], "fault.factor"], ["fault.scaled"], name="fault"))
    matmul.input[0] = "fault.scaled"
