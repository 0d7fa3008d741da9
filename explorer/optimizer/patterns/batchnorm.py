"""BatchNormalization (inference) folded into the Conv, ConvTranspose or Gemm that feeds it: the per-channel
affine map it applies is moved into the producer's weights and bias."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir import Built, Node
from ..pattern import FUSION, MatchResult, Pattern
from ..state import GraphState

PRODUCERS = ("Conv", "ConvTranspose", "Gemm")


def _constant(g: GraphState, name: str) -> np.ndarray:
    """A constant match() checked is there."""
    value = g.constant(name)
    assert value is not None, f"{name!r} is not constant"
    return value


def _scale_shift(g: GraphState, bn: Node) -> tuple[np.ndarray, np.ndarray]:
    """(s, t) with BN(y) = y * s + t per channel: s = scale / sqrt(var + eps), t = bias - mean * s."""
    scale, bias, mean, var = (_constant(g, n).astype(np.float64) for n in bn.input[1:5])
    s = scale / np.sqrt(var + float(g.attribute(bn, "epsilon", 1e-5)))
    return s, bias - mean * s


class BatchNormFoldPattern(Pattern):
    """BatchNormalization(Conv(x, W, B)) -> Conv(x, W * s, B * s + t), with s = scale / sqrt(var + eps) and
    t = bias - mean * s per output channel (likewise ConvTranspose, whose output channels are W's axis 1 per
    group, and Gemm, whose output columns are B's columns). Needs constant weights and BatchNormalization
    parameters, inference mode (one output), float weights, and the producer's result read only by it."""

    op_types = ("BatchNormalization",)
    priority = FUSION

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        producer = g.producer_op(node.input[0], *PRODUCERS)
        if producer is None:
            return None
        if len([o for o in node.output if o]) != 1 or g.attribute(node, "training_mode", 0):
            return self.decline(g, node, "it runs in training mode or returns running statistics")
        if g.is_used_more_than_once(producer.output[0]):
            return self.decline(g, node, f"the {producer.op_type} result is also read elsewhere")
        if any(g.constant(n) is None for n in node.input[1:5]):
            return self.decline(g, node, "its scale, bias, mean or variance is not constant")
        weights = [g.constant(n) for n in producer.input[1:3] if n]
        if len(weights) < 1 or any(w is None or w.dtype.kind != "f" for w in weights):
            return self.decline(g, node, f"the {producer.op_type} weights are not float constants")
        why = self._shape_problem(g, producer, node)
        if why:
            return self.decline(g, node, why)
        self.because(g, node, f"{producer.input[1]} has shape {list(_constant(g, producer.input[1]).shape)}")
        return self.result([producer, node])

    def _shape_problem(self, g: GraphState, producer: Node, bn: Node) -> str | None:
        w = _constant(g, producer.input[1])
        channels = _constant(g, bn.input[1]).size
        if producer.op_type == "Conv":
            out = w.shape[0] if w.ndim >= 1 else -1
        elif producer.op_type == "ConvTranspose":
            out = w.shape[1] * int(g.attribute(producer, "group", 1)) if w.ndim >= 2 else -1
        else:
            if g.rank(producer.output[0]) != 2 or w.ndim != 2:
                return "the Gemm's B is not a 2-D matrix"
            out = w.shape[0] if g.attribute(producer, "transB", 0) else w.shape[1]
            c = g.constant(producer.input[2]) if len(producer.input) > 2 and producer.input[2] else None
            if c is not None and c.ndim > 1 and c.shape[0] != 1:
                return "the Gemm's C differs from row to row"
        if out != channels:
            return f"{out} output channels but {channels} normalization channels"
        return None

    def apply(self, g: GraphState, producer: Node, bn: Node) -> Sequence[Built]:
        s, t = _scale_shift(g, bn)
        w = _constant(g, producer.input[1])
        dtype = w.dtype
        has_bias = len(producer.input) > 2 and bool(producer.input[2])
        bias = _constant(g, producer.input[2]).astype(np.float64) if has_bias else np.zeros(s.size)
        op = producer.op_type
        if op == "Conv":
            new_w = w * s.reshape((-1,) + (1,) * (w.ndim - 1))
            new_b = bias * s + t
        elif op == "ConvTranspose":
            group = int(g.attribute(producer, "group", 1))
            per = w.reshape((group, w.shape[0] // group) + w.shape[1:])
            new_w = (per * s.reshape((group, 1, w.shape[1]) + (1,) * (w.ndim - 2))).reshape(w.shape)
            new_b = bias * s + t
        else:
            transposed = bool(g.attribute(producer, "transB", 0))
            new_w = w * (s.reshape(-1, 1) if transposed else s.reshape(1, -1))
            beta = float(g.attribute(producer, "beta", 1.0))
            new_b = (beta * bias.reshape(-1)) * s + t if has_bias else t
        w_name = g.make_weight(new_w.astype(dtype), "bn_weight")
        b_name = g.make_weight(np.asarray(new_b, dtype=dtype).reshape(-1), "bn_bias")
        fused = producer.copy()
        fused.name = ""
        del fused.input[:]
        fused.input.extend([producer.input[0], w_name, b_name])
        fused.output[0] = bn.output[0]
        if op == "Gemm":
            for att in fused.attribute:
                if att.name == "beta":
                    att.f = 1.0
        return [fused]
