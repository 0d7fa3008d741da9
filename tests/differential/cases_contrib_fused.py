"""onnxruntime's FusedMatMul, FusedConv and FusedGemm (explorer/executor/ops/contrib_fused.py)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from .contrib_support import DOMAIN, float_sweep, ort_graph
from .gen import rng, values
from .harness import Case, Cast

F32 = np.dtype(np.float32)
HALF = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}
CONV_ACTIVATIONS = [("Relu", []), ("Tanh", []), ("Sigmoid", []), ("LeakyRelu", [0.2]),
                    ("Clip", [-1.0, 2.0]), ("HardSigmoid", [0.3, 0.4])]
GEMM_ACTIVATIONS = [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("Softsign", {}), ("Softplus", {}),
                    ("LeakyRelu", {"alpha": 0.1}), ("ThresholdedRelu", {"alpha": 0.5}), ("Elu", {"alpha": 0.7}),
                    ("Celu", {"alpha": 1.5}), ("Selu", {"alpha": 1.6, "gamma": 1.05}),
                    ("HardSigmoid", {"alpha": 0.2, "beta": 0.5}), ("ParametricSoftplus", {"alpha": 2.0, "beta": 0.5}),
                    ("ScaledTanh", {"alpha": 1.5, "beta": 0.8})]


def _case(op: str, inputs: list, attrs: dict | None = None, **kw) -> Case:
    return Case(op, 1, inputs, attrs or {}, domain=DOMAIN, tol=kw.pop("tol", (1e-4, 1e-5)), **kw)


def cases() -> list[Case]:
    return _matmul() + _conv() + _gemm()


def _matmul() -> list[Case]:
    found = float_sweep("FusedMatMul", lambda r, t: _case("FusedMatMul", [values(r, (2, 3, 4), t), values(r, (4, 5), t)],
                                                           {"alpha": 0.5}, tol=HALF.get(t.name, (1e-4, 1e-5))))
    r = rng("FusedMatMul", "forms")
    forms = [((3, 4), (4, 5), {}), ((5, 3), (4, 5), {"transA": 1, "transB": 1, "alpha": -2.0}),
             ((2, 3, 4), (2, 5, 4), {"transB": 1}), ((2, 4, 3), (4, 5), {"transA": 1}),
             ((4, 2, 3, 5), (2, 3, 5, 6), {"transBatchA": 1}), ((3, 4, 5), (5, 3, 6), {"transBatchB": 1}),
             ((4, 3, 5), (5, 3, 6), {"transBatchA": 1, "transBatchB": 1, "alpha": 3.0}),
             ((4, 3, 5), (3, 6, 5), {"transBatchA": 1, "transB": 1}), ((5, 2, 4), (2, 5, 6), {"transBatchA": 1,
                                                                                                "transA": 1}),
             ((2, 3, 4, 5), (6, 2, 3, 5), {"transBatchB": 1, "transB": 1}),
             ((4,), (4, 5), {}), ((2, 3, 4), (4,), {"alpha": 0.25}), ((0, 3), (3, 2), {})]
    for a, b, attrs in forms:
        found.append(_case("FusedMatMul", [values(r, a, F32), values(r, b, F32)], attrs))
    found.append(_case("FusedMatMul", [values(r, (3, 4), np.float64), values(r, (4, 2), np.float64)],
                       {"transBatchA": 0, "transBatchB": 0}, tol=(1e-10, 1e-12)))
    return found


def _conv_inputs(r: np.random.Generator, dtype: np.dtype, z: bool = False) -> list:
    x, w, b = values(r, (1, 4, 5, 5), dtype), values(r, (6, 2, 3, 3), dtype), values(r, (6,), dtype)
    return [x, w, b] + ([values(r, (1, 6, 3, 3), dtype)] if z else [])


def _conv() -> list[Case]:
    found = float_sweep("FusedConv", lambda r, t: _case("FusedConv", _conv_inputs(r, t, z=True),
                                                         {"group": 2, "activation": "Relu"},
                                                         tol=HALF.get(t.name, (1e-4, 1e-5))))
    r = rng("FusedConv", "activations")
    for name, params in CONV_ACTIVATIONS:
        attrs: dict = {"activation": name, "group": 2}
        if params:
            attrs["activation_params"] = params
        found.append(_case("FusedConv", _conv_inputs(r, F32, z=name in ("Relu", "Clip")), attrs))
    x, w = values(r, (2, 3, 7, 6), F32), values(r, (4, 3, 2, 3), F32)
    for attrs in ({"strides": [2, 1], "pads": [1, 0, 1, 2], "dilations": [1, 2]}, {"auto_pad": "SAME_UPPER"},
                  {"kernel_shape": [2, 3], "activation": "Tanh"}, {"auto_pad": "VALID", "strides": [1, 2]}):
        found.append(_case("FusedConv", [x, w], attrs))
    found.append(_case("FusedConv", [values(r, (1, 2, 9), F32), values(r, (3, 2, 4), F32), values(r, (3,), F32)],
                       {"activation": "LeakyRelu", "activation_params": [0.01]}))
    inputs = _conv_inputs(r, F32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2), helper.make_node("Sigmoid", ["y"], ["s"]),
             helper.make_node("Mul", ["y", "s"], ["silu"])]
    expected = ort_graph(nodes, dict(zip("xwb", inputs)), ["silu"])
    found.append(_case("FusedConv", inputs, {"activation": "Silu", "group": 2}, expected=expected,
                       reason="onnxruntime 1.32's FusedConv predates Silu (later versions take it): judged by "
                              "onnxruntime on Conv, Sigmoid, Mul"))
    found.append(_case("FusedConv", [x, w], {"activation": "Gelu"}, error="activation 'Gelu' is not one FusedConv"))
    found.append(_case("FusedConv", [x, w], {"activation": "Clip", "activation_params": [1.0]},
                       error="takes 2 parameter(s)"))
    return found


def _gemm() -> list[Case]:
    found = float_sweep("FusedGemm", lambda r, t: _case("FusedGemm", [values(r, (3, 4), t), values(r, (4, 5), t),
                                                                      values(r, (5,), t)], {"activation": "Relu"},
                                                         tol=HALF.get(t.name, (1e-4, 1e-5))))
    r = rng("FusedGemm", "activations")
    for name, params in GEMM_ACTIVATIONS:
        attrs = {"activation": name, **{f"activation_{k}": v for k, v in params.items()}}
        found.append(_case("FusedGemm", [values(r, (3, 4), F32), values(r, (4, 5), F32), values(r, (3, 5), F32)],
                           attrs))
    for a, b, c, attrs in (((4, 3), (5, 4), (1, 5), {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}),
                           ((2, 3), (3, 4), None, {"alpha": -1.0}), ((2, 3), (3, 4), (1,), {"beta": 0.0}),
                           ((0, 3), (3, 4), (4,), {})):
        inputs = [values(r, a, F32), values(r, b, F32)] + ([values(r, c, F32)] if c else [])
        found.append(_case("FusedGemm", inputs, {"activation": "LeakyRelu", "activation_alpha": 0.3, **attrs}))
    ints = [values(r, (2, 3), np.int32), values(r, (3, 4), np.int32)]
    found.append(_case("FusedGemm", ints, {"activation": "Relu"}, cast=Cast(
        np.float32, "sums of products of integers of at most 4 in size are exact in float32; Relu keeps them")))
    found.append(_case("FusedGemm", [values(r, (2, 3), F32), values(r, (3, 4), F32)], {"activation": "LeakyRelu"},
                       error="needs activation_alpha"))
    found.append(_case("FusedGemm", [values(r, (2, 3), F32), values(r, (3, 4), F32)], error="needs its activation"))
    return found
