"""Gemm rewrites that remove nodes: an Add after a Gemm moved into its bias, and the Reshape pair a MatMul or Gemm
on N-D input is wrapped in (flatten to 2-D, multiply, restore) dropped where MatMul's own broadcasting does it."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx

from ..ir import Built, Node
from ..pattern import FUSION, MatchResult, Pattern
from ..state import GraphState
from .common import dims_text, same_dim, shape_fact
from .fusion import GEMM_TYPES


def _gemm(g: GraphState, gemm: Node, inputs: list[str], output: str) -> onnx.NodeProto:
    """A copy of `gemm` reading `inputs` into `output`, with beta = 1 (the new C is already scaled)."""
    new = gemm.copy()
    new.name = ""
    del new.input[:]
    new.input.extend(inputs)
    new.output[0] = output
    for att in new.attribute:
        if att.name == "beta":
            att.f = 1.0
    return new


def _bias(g: GraphState, gemm: Node) -> np.ndarray | None:
    """beta * C of a Gemm as a float64 array (0 when it has no C), None when C is not constant."""
    if len(gemm.input) < 3 or not gemm.input[2]:
        return np.zeros(())
    c = g.constant(gemm.input[2])
    return None if c is None else float(g.attribute(gemm, "beta", 1.0)) * c.astype(np.float64)


def _fits(shape: tuple | None, target: tuple) -> bool:
    """True when a tensor of `shape` broadcasts to `target` (the Gemm's (M, N)) without growing it."""
    if shape is None or len(shape) > len(target):
        return False
    return all(d == 1 or same_dim(d, t) for d, t in zip(shape, target[len(target) - len(shape):]))


class GemmBiasPattern(Pattern):
    """Add(Gemm(A, B, C), Y) -> Gemm(A, B, Y) when the Gemm has no C; -> Gemm(A, B, beta*C + Y) when Y is constant;
    -> Gemm(A, B, Gemm(A2, B2, beta*C + beta2*C2)) when Y = Gemm(A2, B2, C2) with constant biases. Needs float or
    double, each Gemm read only by the Add, and Y (or the new C) broadcasting to the (M, N) result."""

    op_types = ("Add",)
    priority = FUSION

    def _plan(self, g: GraphState, node: Node) -> tuple[Node, str, Node | None] | str | None:
        """(gemm, other operand, inner Gemm or None), or a reason to decline, or None when no Gemm feeds it."""
        why = None
        for k in (0, 1):
            gemm = g.producer_op(node.input[k], "Gemm")
            if gemm is None:
                continue
            other = node.input[1 - k]
            target = g.shape(gemm.output[0])
            if g.is_used_more_than_once(gemm.output[0]):
                why = "the Gemm result is also read elsewhere"
            elif g.elem_type(gemm.output[0]) not in GEMM_TYPES:
                why = "element type is not float or double"
            elif target is None or len(target) != 2 or not _fits(g.shape(other), target):
                why = f"the added tensor may not broadcast to the Gemm's {dims_text(target or ())}"
            elif len(gemm.input) < 3 or not gemm.input[2]:
                return gemm, other, None
            elif _bias(g, gemm) is None:
                why = "the Gemm's C is not constant"
            elif g.constant(other) is not None:
                return gemm, other, None
            else:
                inner = g.producer_op(other, "Gemm")
                outer_bias, inner_bias = _bias(g, gemm), _bias(g, inner) if inner is not None else None
                if inner is None or g.is_used_more_than_once(other) or outer_bias is None or inner_bias is None:
                    why = "the added tensor is neither constant nor a Gemm with a constant C read only here"
                elif not _fits(np.broadcast_shapes(outer_bias.shape, inner_bias.shape), target):
                    why = "the summed biases do not broadcast to the result"
                else:
                    return gemm, other, inner
        return why

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        plan = self._plan(g, node)
        if plan is None or isinstance(plan, str):
            return self.decline(g, node, plan) if plan else None
        gemm, other, inner = plan
        self.because(g, node, shape_fact(g, gemm.output[0]))
        self.because(g, node, shape_fact(g, other))
        return self.result([gemm, inner, node])

    def apply(self, g: GraphState, gemm: Node, inner: Node | None, node: Node) -> Sequence[Built]:
        plan = self._plan(g, node)
        assert isinstance(plan, tuple)  # match() declined otherwise
        _, other, _ = plan
        a, b = gemm.input[0], gemm.input[1]
        if len(gemm.input) < 3 or not gemm.input[2]:
            return [_gemm(g, gemm, [a, b, other], node.output[0])]
        dtype = g.constant(gemm.input[2]).dtype  # type: ignore[union-attr]
        bias = _bias(g, gemm)
        assert bias is not None
        if inner is None:
            summed = g.make_weight((bias + g.constant(other).astype(np.float64)).astype(dtype), "gemm_bias")  # type: ignore[union-attr]
            return [_gemm(g, gemm, [a, b, summed], node.output[0])]
        inner_bias = _bias(g, inner)
        assert inner_bias is not None
        summed = g.make_weight((bias + inner_bias).astype(dtype), "gemm_bias")
        return [_gemm(g, inner, [inner.input[0], inner.input[1], summed], other),
                _gemm(g, gemm, [a, b, other], node.output[0])]


VIEWS = ("Reshape", "Squeeze", "Unsqueeze", "Flatten")  # change the shape, never the row-major order


def _views(g: GraphState, name: str) -> list[Node]:
    """The Reshape/Squeeze/Unsqueeze/Flatten nodes `name` comes out of, nearest first, each result read only by
    the next."""
    chain: list[Node] = []
    node = g.producer_op(name, *VIEWS)
    while node is not None and not g.is_used_more_than_once(node.output[0]):
        chain.append(node)
        node = g.producer_op(node.input[0], *VIEWS)
    return chain


class FlatMatMulPattern(Pattern):
    """Reshape(Gemm(flatten(x), B, C), x.shape[:-1] + [N]) -> Add(MatMul(x, B), C), and without C or for a
    MatMul -> MatMul(x, B): MatMul broadcasts over x's leading dims itself. flatten is one or more
    Reshape/Squeeze/Unsqueeze/Flatten (as tf2onnx's Tensordot and PyTorch's view(-1, K) export them) ending in
    [?, K], K = x's last dim, known and > 0: they keep the row-major order, so its rows are x's rows. Needs B a
    2-D [K, N] (a constant when the Gemm transposes it), the Gemm's transA = 0 and alpha = 1, C the same for every
    row ([N] or [1, N]), each inner result read only by the next node, and the result's shape known to be x's
    leading dims then N. When x's last dim is not K (GPT-2's merge_heads view folded into the flatten) but the
    result's leading dims are known ints or x's own dims at the same positions and the restore target is
    computed, x is first reshaped to those dims then K (0 copying x's dims), and the computation of the old
    target goes."""

    op_types = ("Reshape",)
    priority = FUSION

    @staticmethod
    def _regroup(g: GraphState, x: str, flat: str, node: Node) -> list[int] | None:
        """The target that reshapes x to the result's leading dims then K (0 for a dim copied from x), or None."""
        x_shape, flat_shape, out = g.shape(x), g.shape(flat), g.shape(node.output[0])
        if x_shape is None or flat_shape is None or out is None or len(flat_shape) != 2 or len(out) < 2 \
                or not isinstance(flat_shape[1], int) or flat_shape[1] <= 0 or g.is_constant(node.input[1]):
            return None
        target = []
        for k, d in enumerate(out[:-1]):
            if isinstance(d, int) and d > 0:
                target.append(d)
            elif k < len(x_shape) and same_dim(d, x_shape[k]):
                target.append(0)
            else:
                return None
        return [*target, flat_shape[1]]

    def _check(self, g: GraphState, x: str, flat: str, mm: Node, node: Node, regroup: bool = False) -> str | None:
        """Why MatMul(x, B) cannot replace the chain from x to the result (None when it can); with `regroup`,
        MatMul(Reshape(x, _regroup(...)), B)."""
        x_shape, flat_shape = g.shape(x), g.shape(flat)
        if regroup:
            target, out = self._regroup(g, x, flat, node), g.shape(node.output[0])
            if target is None or out is None or flat_shape is None:
                return "the result's leading dims are neither known nor x's own"
            x_shape = (*out[:-1], flat_shape[1])
        if x_shape is None or flat_shape is None or len(flat_shape) != 2 or not x_shape \
                or not same_dim(flat_shape[1], x_shape[-1]):
            return "the inner Reshape does not flatten x to [?, last dim of x]"
        if not isinstance(x_shape[-1], int) or x_shape[-1] <= 0:
            return "the last dim of x is not a known positive size"
        transposed = bool(g.attribute(mm, "transB", 0))
        if mm.op_type == "Gemm" and (g.attribute(mm, "transA", 0) or g.attribute(mm, "alpha", 1.0) != 1.0):
            return "the Gemm transposes A or scales A*B"
        b = g.shape(mm.input[1])
        if b is None or len(b) != 2 or (transposed and g.constant(mm.input[1]) is None):
            return "B is not a 2-D matrix (a constant when transposed)"
        k, n = (b[1], b[0]) if transposed else (b[0], b[1])
        if not same_dim(k, x_shape[-1]):
            return f"B's rows {k} differ from x's last dim {x_shape[-1]}"
        has_c = len(mm.input) > 2 and bool(mm.input[2])
        c = g.shape(mm.input[2]) if has_c else ()
        if c is None or len(c) > 2 or (len(c) == 2 and c[0] != 1):
            return "C may differ from row to row"
        if has_c and g.attribute(mm, "beta", 1.0) != 1.0 and g.constant(mm.input[2]) is None:
            return "the Gemm scales a C that is not constant"
        out = g.shape(node.output[0])
        if out is None or len(out) != len(x_shape) or not all(same_dim(o, d) for o, d in zip(out, (*x_shape[:-1], n))):
            return f"the result {dims_text(out or ())} is not x's leading dims then {n}"
        return None

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        mm = g.producer_op(node.input[0], "Gemm", "MatMul")
        if mm is None or g.producer_op(mm.input[0], *VIEWS) is None:
            return None
        chain = _views(g, mm.input[0])
        if not chain or g.is_used_more_than_once(mm.output[0]):
            return self.decline(g, node, f"the flattened input or the {mm.op_type} result is also read elsewhere")
        why = ""
        for end in range(len(chain), 0, -1):  # the longest chain that can go first
            x = chain[end - 1].input[0]
            found = self._check(g, x, mm.input[0], mm, node)
            if found is None:
                self.because(g, node, shape_fact(g, x))
                self.because(g, node, shape_fact(g, node.output[0]))
                return self.result([*chain[:end], mm, node])
            why = found  # the nearest flatten's reason is the one to tell
        x = chain[-1].input[0]
        if self._check(g, x, mm.input[0], mm, node, regroup=True) is None:
            self.because(g, node, shape_fact(g, x))
            self.because(g, node, shape_fact(g, node.output[0]))
            return self.result([*chain, mm, node])
        return self.decline(g, node, why)

    def apply(self, g: GraphState, *nodes: Node) -> Sequence[Built]:
        *chain, mm, node = nodes
        x, b, out = chain[-1].input[0], mm.input[1], node.output[0]
        built: list[Built] = []
        if self._check(g, x, mm.input[0], mm, node) is not None:  # matched by regrouping x
            target = self._regroup(g, x, mm.input[0], node)
            assert target is not None
            constant, shape = g.make_constant(np.array(target, np.int64), "shape")
            regrouped = g.unique_name("regrouped")
            built = [constant, g.make_node("Reshape", [x, shape], [regrouped])]
            x = regrouped
        if g.attribute(mm, "transB", 0):
            b = g.make_weight(np.ascontiguousarray(g.constant(b).T), "gemm_weight")  # type: ignore[union-attr]
        if mm.op_type == "MatMul" or len(mm.input) < 3 or not mm.input[2]:
            return [*built, g.make_node("MatMul", [x, b], [out])]
        c = mm.input[2]
        beta = float(g.attribute(mm, "beta", 1.0))
        if beta != 1.0:
            value = g.constant(c)
            assert value is not None  # _check declined otherwise
            c = g.make_weight((beta * value.astype(np.float64)).astype(value.dtype), "gemm_bias")
        product = g.unique_name("matmul")
        return [*built, g.make_node("MatMul", [x, b], [product]), g.make_node("Add", [product, c], [out])]
