"""onnxruntime's u8s8 saturation, named where a comparison meets it. On an x86 CPU without VNNI (AVX2, or
AVX512BW without VNNI), onnxruntime's MLAS multiplies uint8 A by int8 B with vpmaddubsw: the two products of each
pair of adjacent reduction indices (k = 2i, 2i + 1) of the raw operands are added into int16 with saturation; zero
points are corrected afterwards, exactly. Its MatMulInteger, QLinearMatMul, QLinearConv (but depthwise), QGemm,
QAttention, MatMulIntegerToFloat, DynamicQuantizeMatMul and DynamicQuantizeLSTM then differ from the spec's exact
integer arithmetic wherever a pair sum leaves [-32768, 32767]; explorer computes the spec's.

Where a compared integer-product node differs, explorer recomputes it both ways from the values it was given:
exactly, and with every raw pair sum saturated to int16 as onnxruntime's kernel does. When the exact
recomputation is explorer's value (on explorer's inputs) and the saturated one onnxruntime's (on onnxruntime's
inputs), the difference is onnxruntime's: the verdict names the node instead of calling explorer's value a
divergence. Values downstream of such a node inherit the difference and are not judged further; a difference
anywhere else is still a divergence."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..budgets import PAIR_SUM_CHUNK_ELEMENTS
from ..proto.graph import attribute_value
from .stats import compare_values

VERDICT = "onnxruntime's u8s8 kernel saturates on this CPU; explorer follows the spec"
INT16_MIN, INT16_MAX = -32768, 32767
SATURATING = frozenset({"MatMulInteger", "QLinearMatMul", "QLinearConv", "QGemm", "QAttention",
                        "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM"})
RECOMPUTED = SATURATING - {"DynamicQuantizeLSTM"}  # its recurrence is not recomputed here


@dataclass(frozen=True)
class SaturatedNode:
    """An integer-product node whose difference onnxruntime's saturation explains: at `iteration`, `pairs` of its
    raw pair sums leave int16 (on onnxruntime's inputs), moving its accumulator by up to `shift`."""

    node: str
    op_type: str
    iteration: tuple[int, ...]
    pairs: int
    shift: int

    def describe(self) -> str:
        where = f" at iteration {self.iteration}" if self.iteration else ""
        return (f"node {self.node!r} ({self.op_type}){where}: {self.pairs} pair sum(s) beyond int16, the "
                f"accumulator moved by up to {self.shift:,}")


@dataclass
class Saturation:
    """What onnxruntime's u8s8 saturation explains in a comparison: the nodes where it happens, and every value
    (node path, value name) that differs because of them (those nodes' and the ones downstream)."""

    nodes: list[SaturatedNode] = field(default_factory=list)
    explained: set[tuple[str, str]] = field(default_factory=set)
    complete: bool = False  # every difference of the comparison is explained

    def explains(self, node: str, name: str) -> bool:
        return (node, name) in self.explained

    def lines(self) -> list[str]:
        if not self.nodes:
            return []
        head = f"{VERDICT}: {len(self.nodes)} node execution(s)"
        tail = "; every other difference is downstream of them" if self.complete else \
            "; other differences are not explained by it"
        return [head + tail] + [f"  {n.describe()}" for n in self.nodes[:10]]


# ---- the integer core, both ways --------------------------------------------------------------------------------

def pair_excess(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """For raw A [M, K] and B [K, N]: per output, the sum over pairs (k = 2i, 2i + 1) of clip16(p) - p, p the
    pair's raw sum of products (zero unless A is uint8 and B int8); and how many pair sums left int16."""
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), np.int64)
    count = 0
    if a.dtype != np.uint8 or b.dtype != np.int8 or not out.size or not k:
        return out, count
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    if k % 2:
        a64, b64 = np.pad(a64, ((0, 0), (0, 1))), np.pad(b64, ((0, 1), (0, 0)))
    rows = max(1, PAIR_SUM_CHUNK_ELEMENTS // max(1, (a64.shape[1] // 2) * n))
    for start in range(0, m, rows):
        part = slice(start, start + rows)
        pairs = a64[part, 0::2, None] * b64[None, 0::2] + a64[part, 1::2, None] * b64[None, 1::2]
        clipped = np.clip(pairs, INT16_MIN, INT16_MAX) - pairs
        out[part] = clipped.sum(axis=1)
        count += int(np.count_nonzero(clipped))
    return out, count


def _matmul_excess(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """pair_excess over numpy.matmul's batch dimensions (A at least 2-D, B 2-D or batched)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    out = np.zeros(batch + (a.shape[-2], b.shape[-1]), np.int64)
    count = 0
    for index in np.ndindex(*batch):
        out[index], found = pair_excess(a[index], b[index])
        count += found
    return out, count


@dataclass
class Core:
    """(A - a_zero) @ (B - b_zero) exactly, and the saturation's change of it."""

    exact: np.ndarray
    excess: np.ndarray
    pairs: int = 0  # pair sums beyond int16


def _core(a: np.ndarray, a_zero: Any, b: np.ndarray, b_zero: Any) -> Core:
    a, b = np.asarray(a), np.asarray(b)
    exact = np.matmul(a.astype(np.int64) - np.asarray(a_zero).astype(np.int64),
                      b.astype(np.int64) - np.asarray(b_zero).astype(np.int64))
    excess, pairs = _matmul_excess(a if a.ndim >= 2 else a[None], b if b.ndim >= 2 else b[:, None])
    return Core(exact, excess.reshape(exact.shape), pairs)


def _f32(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def _zero(x: Any) -> Any:
    return 0 if x is None else np.asarray(x).astype(np.int64)


def _requantize(acc: np.ndarray, scale: Any, y_scale: Any, y_zero: Any) -> np.ndarray:
    multiplier = _f32(scale) / _f32(y_scale).reshape(())
    values = np.rint(acc.astype(np.float32) * multiplier) + _f32(0 if y_zero is None else y_zero).reshape(())
    dtype = np.dtype(np.uint8) if y_zero is None else np.asarray(y_zero).dtype
    info = np.iinfo(dtype)
    return np.clip(values, info.min, info.max).astype(dtype)


def _per_column(x: Any) -> np.ndarray:
    return np.asarray(x).reshape(-1)


# each returns (core, epilogue): the outputs are epilogue(accumulator)

def _matmul_integer(get: Any, attrs: dict[str, Any]) -> tuple[Core, Any]:
    a_zero = get(2)
    za = _zero(a_zero)[..., None] if np.ndim(a_zero) == 1 else _zero(a_zero)
    core = _core(get(0), za, get(1), _zero(get(3)))
    return core, lambda acc: [acc.astype(np.int32)]


def _qlinear_matmul(get: Any, attrs: dict[str, Any]) -> tuple[Core, Any]:
    def row(v: Any) -> Any:
        return np.asarray(v)[..., None] if np.ndim(v) == 1 else np.asarray(v)

    core = _core(get(0), _zero(row(get(2))), get(3), _zero(get(5)))
    scale = _f32(row(get(1))) * _f32(get(4))
    return core, lambda acc: [_requantize(acc, scale, get(6), get(7))]


def _to_float(scale: np.ndarray, bias: Any, dtype: np.dtype) -> Any:
    def epilogue(acc: np.ndarray) -> list[np.ndarray]:
        y = acc.astype(np.float32) * scale
        return [(y if bias is None else y + _f32(bias)).astype(dtype)]
    return epilogue


def _matmul_integer_to_float(get: Any, attrs: dict[str, Any]) -> tuple[Core, Any]:
    zb = _zero(_per_column(get(5))) if get(5) is not None else 0
    core = _core(get(0), _zero(get(4)).reshape(()) if get(4) is not None else 0, get(1), zb)
    scale = _f32(get(2)).reshape(-1) * _f32(get(3)).reshape(-1)
    return core, _to_float(scale, get(6), np.asarray(get(2)).dtype)


def dynamic_quantize(x: np.ndarray) -> tuple[np.ndarray, np.float32, np.uint8]:
    """DynamicQuantizeLinear: uint8 over x's range widened to 0 (a range of 0: scale 1)."""
    x = _f32(x)
    low = np.minimum(np.float32(0), x.min(initial=np.float32(0)))
    high = np.maximum(np.float32(0), x.max(initial=np.float32(0)))
    scale = np.float32((high - low) / np.float32(255)) if high > low else np.float32(1)
    zero = np.uint8(np.rint(np.clip(np.float32(0) - low / scale, 0, 255)))
    return np.clip(np.rint(x / scale) + np.float32(zero), 0, 255).astype(np.uint8), scale, zero


def _dynamic_quantize_matmul(get: Any, attrs: dict[str, Any]) -> tuple[Core, Any]:
    q, scale, zero = dynamic_quantize(get(0))
    zb = _zero(_per_column(get(3))) if get(3) is not None else 0
    core = _core(q, np.int64(zero), get(1), zb)
    return core, _to_float(np.float32(scale) * _f32(get(2)).reshape(-1), get(4), np.dtype(np.float32))


def _qgemm(get: Any, attrs: dict[str, Any]) -> tuple[Core, Any]:
    a, b = get(0), get(3)
    a = a.T if attrs.get("transA", 0) else a
    b = b.T if attrs.get("transB", 0) else b
    zb = _zero(_per_column(get(5))) if get(5) is not None else 0
    core = _core(a, _zero(get(2)).reshape(()), b, zb)
    c = get(6)
    if c is not None:
        core.exact = core.exact + np.asarray(c).astype(np.int64)
    scale = np.float32(attrs.get("alpha", 1.0)) * _f32(get(1)).reshape(()) * _f32(get(4)).reshape(-1)
    if get(7) is None:
        return core, lambda acc: [(acc.astype(np.float32) * scale).astype(np.float32)]
    return core, lambda acc: [_requantize(acc, scale, get(7), get(8))]


def _conv_pads(spatial: list[int], kernel: list[int], attrs: dict[str, Any]) -> tuple[list[int], list[int]]:
    rank = len(spatial)
    strides, dilations = attrs.get("strides") or [1] * rank, attrs.get("dilations") or [1] * rank
    auto_pad = attrs.get("auto_pad", "NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, d in zip(spatial, kernel, strides, dilations):
            total = max(0, (-(-size // s) - 1) * s + d * (k - 1) + 1 - size)
            begin.append(total // 2 if auto_pad == "SAME_UPPER" else total - total // 2)
            end.append(total - begin[-1])
        return begin, end
    pads = [0] * 2 * rank if auto_pad == "VALID" else list(attrs.get("pads") or [0] * 2 * rank)
    return pads[:rank], pads[rank:]


def _qlinear_conv(get: Any, attrs: dict[str, Any]) -> tuple[Core, Any]:
    """Channels-last im2col, as onnxruntime runs it: the reduction axis is (kernel position, channel), channel
    fastest; a padded place holds x's zero point. Depthwise convolutions (one input and output channel per group)
    run onnxruntime's exact kernel: no excess."""
    x, w = np.asarray(get(0)), np.asarray(get(3))
    n, channels, *spatial = x.shape
    m, per_group, *kernel = w.shape
    group = int(attrs.get("group", 1))
    rank = len(spatial)
    strides, dilations = attrs.get("strides") or [1] * rank, attrs.get("dilations") or [1] * rank
    begin, end = _conv_pads(spatial, kernel, attrs)
    zx = int(np.asarray(0 if get(2) is None else get(2)).reshape(()))
    padded = np.pad(x, [(0, 0), (0, 0)] + list(zip(begin, end)), constant_values=zx)
    out = [(s + b + e - d * (k - 1) - 1) // st + 1
           for s, b, e, d, k, st in zip(spatial, begin, end, dilations, kernel, strides)]
    positions = list(itertools.product(*[range(k) for k in kernel]))
    patches = [padded[(slice(None), slice(None)) + tuple(slice(o * d, o * d + (size - 1) * st + 1, st)
                                                         for o, d, size, st in zip(offset, dilations, out, strides))]
               for offset in positions]
    cols = np.moveaxis(np.stack(patches, axis=2).reshape(n, channels, len(positions), -1), 3, 1)
    zw = np.broadcast_to(_zero(get(5) if get(5) is not None else 0).reshape(-1), (m,))
    per_out = m // group
    exact = np.zeros((n, m, int(np.prod(out, dtype=np.int64))), np.int64)
    excess = np.zeros_like(exact)
    pairs = 0
    depthwise = per_group == 1 and per_out == 1
    for g in range(group):
        part = cols[:, :, g * per_group:(g + 1) * per_group]
        a = np.ascontiguousarray(part.transpose(0, 1, 3, 2).reshape(-1, len(positions) * per_group))
        weights = w[g * per_out:(g + 1) * per_out].reshape(per_out, per_group, len(positions))
        b = np.ascontiguousarray(weights.transpose(2, 1, 0).reshape(len(positions) * per_group, per_out))
        core = _core(a, zx, b, zw[g * per_out:(g + 1) * per_out])
        exact[:, g * per_out:(g + 1) * per_out] = core.exact.reshape(n, -1, per_out).transpose(0, 2, 1)
        if not depthwise:
            excess[:, g * per_out:(g + 1) * per_out] = core.excess.reshape(n, -1, per_out).transpose(0, 2, 1)
            pairs += core.pairs
    shape = (n, m, *out)
    bias = get(8)
    biased: np.ndarray = exact.reshape(shape)
    if bias is not None:
        biased = biased + np.asarray(bias).astype(np.int64).reshape((-1,) + (1,) * rank)
    scale = (_f32(get(1)).reshape(()) * _f32(get(4)).reshape(-1)).reshape((-1,) + (1,) * rank)
    return Core(biased, excess.reshape(shape), pairs), lambda acc: [_requantize(acc, scale, get(6), get(7))]


def _qattention(get: Any, attrs: dict[str, Any]) -> tuple[Core, Any]:
    """The projection's integer product, then explorer's own float Attention of it (identity weights)."""
    zw = _zero(_per_column(get(7))) if get(7) is not None else 0
    core = _core(get(0), _zero(get(6)).reshape(()) if get(6) is not None else 0, get(1), zw)
    scale = _f32(get(3)).reshape(()) * _f32(get(4)).reshape(-1)

    def epilogue(acc: np.ndarray) -> list[Any]:
        projection = (acc.astype(np.float32) * scale).astype(np.float32)
        return _float_attention(projection, get(2), get(5), get(8), attrs)

    return core, epilogue


def _float_attention(projection: np.ndarray, bias: Any, mask: Any, past: Any, attrs: dict[str, Any]) -> list[Any]:
    import onnx
    from onnx import helper

    from ..executor import run

    width = projection.shape[-1]
    feeds: dict[str, Any] = {"x": projection, "w": np.eye(width, dtype=np.float32), "b": _f32(bias)}
    names = ["x", "w", "b", "", ""]
    if mask is not None:
        feeds["mask"], names[3] = np.asarray(mask), "mask"
    if past is not None:
        feeds["past"], names[4] = np.asarray(past), "past"
    names = names[:max(i for i, n in enumerate(names) if n) + 1]
    outputs = ["y", "present"] if past is not None else ["y"]
    node = helper.make_node("Attention", names, outputs, domain="com.microsoft", **attrs)
    graph = helper.make_graph(
        [node], "attention",
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
         for k, v in feeds.items()],
        [helper.make_value_info(o, onnx.TypeProto()) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    produced = run(model, feeds).outputs
    return [produced[o] for o in outputs]


RECOMPUTE = {"MatMulInteger": _matmul_integer, "QLinearMatMul": _qlinear_matmul, "QGemm": _qgemm,
             "MatMulIntegerToFloat": _matmul_integer_to_float, "DynamicQuantizeMatMul": _dynamic_quantize_matmul,
             "QLinearConv": _qlinear_conv, "QAttention": _qattention}


def recompute(op_type: str, inputs: list[Any], attrs: dict[str, Any]) -> tuple[list[Any], list[Any], int, int]:
    """A node's outputs recomputed exactly and as onnxruntime's saturating u8s8 kernel computes them, how many
    pair sums leave int16, and the largest change of the accumulator."""
    given = list(inputs) + [None] * 12

    def get(k: int) -> Any:
        return given[k]

    core, epilogue = RECOMPUTE[op_type](get, attrs)
    return epilogue(core.exact), epilogue(core.exact + core.excess), core.pairs, \
        int(np.abs(core.excess).max(initial=0))


# ---- the verdict ------------------------------------------------------------------------------------------------

def _agree(ours: list[Any], theirs: list[Any], rtol: float, atol: float) -> bool:
    return len(ours) == len(theirs) and all(compare_values("", o, t, rtol, atol).ok for o, t in zip(ours, theirs))


def explain(result: Any) -> Saturation | None:
    """What onnxruntime's u8s8 saturation explains in a comparison of explorer (A) with onnxruntime (B); None when
    B is not onnxruntime or no integer-product node differs. `result` is a report.Comparison (report.py imports
    this module)."""
    a, b = result.a, result.b
    if a is None or b is None or b.kind != "onnxruntime" or a.trace is None or a.model is None:
        return None
    candidates = [v for v in result.values if v.op_type in RECOMPUTED and v.max_abs > 0]
    if not candidates:
        return None
    found = Saturation()
    seen: set[tuple[str, tuple[int, ...]]] = set()
    produced_by = {p.name: p for p in a.produced.values()}
    for v in candidates:
        node = a.model.node(v.node)
        attrs = {att.name: attribute_value(att) for att in node.proto.attribute}
        for error in v.errors:
            if error.max_abs == 0 or (v.node, error.iteration) in seen:
                continue
            seen.add((v.node, error.iteration))
            event = a.trace.event(v.node, error.iteration)
            ours = [event.inputs.get(name) if name else None for name in node.proto.input]
            theirs = [_b_value(b, produced_by.get(name), error.iteration, value) if name else None
                      for name, value in zip(node.proto.input, ours)]
            try:
                exact, _, _, _ = recompute(v.op_type, ours, attrs)
                _, saturated, pairs, shift = recompute(v.op_type, theirs, attrs)
            except Exception:  # noqa: BLE001 - a node this module cannot recompute is left as it is
                continue
            outputs_a = list(event.outputs.values())
            outputs_b = [_b_value(b, a.produced.get((v.node, name)), error.iteration, None)
                         for name in event.outputs]
            if pairs and _agree(outputs_a, exact, result.rtol, result.atol) \
                    and _agree(outputs_b, saturated, result.rtol, result.atol):
                found.nodes.append(SaturatedNode(v.node, v.op_type, error.iteration, pairs, shift))
    if not found.nodes:
        return None
    found.explained = _downstream(result, {n.node for n in found.nodes})
    found.complete = all(v.ok or (v.node, v.name) in found.explained for v in result.values) and \
        all(o.ok or o.name in {name for _, name in found.explained} for o in result.outputs)
    return found


def _b_value(b: Any, source: Any, iteration: tuple[int, ...], default: Any) -> Any:
    """onnxruntime's value of what `source` (A's producer of a value) produced, else `default` (a graph input or
    an initializer: the same on both sides)."""
    if source is None:
        return default
    entry = b.produced.get(source.key)
    if entry is None or iteration not in entry.values:
        return default
    return entry.values[iteration]


def _downstream(result: Any, nodes: set[str]) -> set[tuple[str, str]]:
    """The values of `nodes` and every value computed from them (in A's run, bodies included: a control-flow node
    one of whose body's events is downstream is downstream too)."""
    a = result.a
    assert a is not None and a.trace is not None
    events = {event.index: event for event in a.trace.events}
    tainted_names: set[str] = set()
    tainted_events: set[int] = set()
    changed = True
    while changed:
        changed = False
        for event in events.values():
            if event.index in tainted_events:
                continue
            hit = event.node in nodes or any(name in tainted_names for name in event.site.inputs)
            start, stop = event.info.get("children", (event.index, event.index))
            hit = hit or any(i in tainted_events for i in range(start, stop))
            if hit:
                tainted_events.add(event.index)
                tainted_names.update(event.site.outputs)
                changed = True
    return {(events[i].node, name) for i in tainted_events for name in events[i].site.outputs}
