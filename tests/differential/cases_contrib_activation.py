"""onnxruntime's activations and bias fusions (explorer/executor/ops/contrib_activation.py)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from .contrib_support import DOMAIN, NO_CPU_KERNEL, float_sweep, ort_graph
from .gen import rng, shape, values
from .harness import Case

HALF = {"float16": (4e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}  # one rounding of the type apart at most
# onnxruntime runs double FastGelu through a function body whose tanh is good to about 2e-7
FAST = {**HALF, "float64": (1e-6, 1e-6)}


def _case(op: str, inputs: list, **kw) -> Case:
    return Case(op, 1, inputs, domain=DOMAIN, **kw)


def cases() -> list[Case]:
    found: list[Case] = []
    for op in ("Gelu", "QuickGelu"):
        found += float_sweep(op, lambda r, t, op=op: _case(op, [values(r, shape(r), t, -6, 6, special=True)]),
                             tolerance=HALF)
        found.append(_case(op, [np.zeros((0, 3), np.float32)]))
    for alpha in (1.0, -0.5, 2.5):
        r = rng("QuickGelu", alpha)
        found.append(_case("QuickGelu", [values(r, (3, 5), np.float32, -8, 8, special=True)], attrs={"alpha": alpha}))
    found += float_sweep("FastGelu", lambda r, t: _case("FastGelu", [values(r, (2, 3, 6), t, -6, 6, special=True)]),
                         tolerance=FAST)
    found += float_sweep("FastGelu", lambda r, t: _case("FastGelu", [values(r, (4, 5), t, -6, 6),
                                                                     values(r, (5,), t)]), tolerance=FAST)
    found += float_sweep("BiasGelu", lambda r, t: _case("BiasGelu", [values(r, (2, 3, 4), t, -6, 6, special=True),
                                                                     values(r, (4,), t)]), tolerance=HALF)
    r = rng("contrib activations", "bad")
    found.append(_case("BiasGelu", [values(r, (2, 4), np.float32), values(r, (3,), np.float32)],
                       error="must be 1-D with the size of the input's last axis"))
    found.append(_case("FastGelu", [values(r, (2, 4), np.float32), values(r, (1, 4), np.float32)],
                       error="must be 1-D"))
    found += _bias_add() + _bias_split_gelu()
    return found


def _bias_add() -> list[Case]:
    found = []
    for dtype, dims in ((np.float32, (2, 3, 8)), (np.float16, (1, 4, 6)), (np.float32, (0, 2, 4))):
        r = rng("BiasAdd", str(np.dtype(dtype)), dims)
        x, bias, skip = values(r, dims, dtype), values(r, dims[-1:], dtype), values(r, dims, dtype)
        nodes = [helper.make_node("Add", ["x", "bias"], ["t"]), helper.make_node("Add", ["t", "skip"], ["y"])]
        expected = ort_graph(nodes, {"x": x, "bias": bias, "skip": skip}, ["y"])
        found.append(_case("BiasAdd", [x, bias, skip], expected=expected, reason=NO_CPU_KERNEL.format(op="BiasAdd"),
                           tol=HALF.get(np.dtype(dtype).name)))
    r = rng("BiasAdd", "bad")
    found.append(_case("BiasAdd", [values(r, (2, 8), np.float32), values(r, (8,), np.float32),
                                   values(r, (2, 8), np.float32)], error="must be 3-D"))
    return found


def _bias_split_gelu() -> list[Case]:
    found = []
    for dtype, dims in ((np.float32, (2, 3, 8)), (np.float16, (1, 4, 6))):
        r = rng("BiasSplitGelu", str(np.dtype(dtype)))
        x, bias = values(r, dims, dtype, -4, 4), values(r, dims[-1:], dtype)
        half = dims[-1] // 2
        split = helper.make_tensor("split", 7, [2], [half, half])
        nodes = [helper.make_node("Add", ["x", "bias"], ["t"]),
                 helper.make_node("Constant", [], ["sizes"], value=split),
                 helper.make_node("Split", ["t", "sizes"], ["left", "right"], axis=-1),
                 helper.make_node("Gelu", ["right"], ["g"]), helper.make_node("Mul", ["left", "g"], ["y"])]
        expected = ort_graph(nodes, {"x": x, "bias": bias}, ["y"])
        found.append(_case("BiasSplitGelu", [x, bias], expected=expected,
                           reason=NO_CPU_KERNEL.format(op="BiasSplitGelu"), tol=HALF.get(np.dtype(dtype).name)))
    r = rng("BiasSplitGelu", "bad")
    found.append(_case("BiasSplitGelu", [values(r, (1, 2, 5), np.float32), values(r, (5,), np.float32)],
                       error="must be even"))
    return found
