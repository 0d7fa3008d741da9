"""Compact builders of control-flow models for the control-flow tests, and the onnxruntime judge they share.

`run_both` runs a model in explorer and in onnxruntime on the same feeds; `probe` is the per-iteration
cross-check: it rewrites a body so one of its intermediates becomes an extra scan output at every enclosing
Loop/Scan level (and an extra output of every enclosing If), so onnxruntime returns it stacked per iteration.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import explorer
from explorer.check import compare_values
from explorer.graph import GraphIndex

F, I64, B = T.FLOAT, T.INT64, T.BOOL


def vi(name: str, elem: int = F, shape: list | None = None) -> onnx.ValueInfoProto:
    """A tensor value info; `shape=None` leaves the shape unknown."""
    return h.make_tensor_value_info(name, elem, shape)


def seq_vi(name: str, elem: int = F, shape: list | None = None) -> onnx.ValueInfoProto:
    return h.make_tensor_sequence_value_info(name, elem, shape)


def opt_vi(name: str, elem: int = F, shape: list | None = None) -> onnx.ValueInfoProto:
    tensor = h.make_tensor_type_proto(elem, shape)
    return h.make_value_info(name, h.make_optional_type_proto(tensor))


def const(name: str, value: Any, dtype: Any = np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def node(op: str, inputs: list[str], outputs: list[str], name: str | None = None, **attrs: Any) -> onnx.NodeProto:
    return h.make_node(op, inputs, outputs, name=name or outputs[0], **attrs)


def graph(nodes: list, name: str, inputs: list, outputs: list, inits: list | None = None) -> onnx.GraphProto:
    return h.make_graph(nodes, name, inputs, outputs, inits or [])


def model(g: onnx.GraphProto, opset: int = 21, ir: int | None = None) -> onnx.ModelProto:
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="cf tests")
    m.ir_version = ir if ir is not None else min(m.ir_version, 10)
    return m


# ---- the judge -------------------------------------------------------------------------------------------------
def ort_run(proto: onnx.ModelProto, feeds: dict[str, Any]) -> dict[str, Any]:
    """onnxruntime's outputs for a model (no graph optimizations: the graph runs as written)."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


def assert_same(ours: dict[str, Any], theirs: dict[str, Any], rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Every output equal (ints, bools, shapes) or close (floats), sequences element-wise, None for empty."""
    assert set(ours) == set(theirs), (sorted(ours), sorted(theirs))
    for name, expected in theirs.items():
        got = ours[name]
        diff = compare_values(name, got, expected, rtol, atol)
        assert diff.ok, f"{name}: {diff}\nexplorer: {got!r}\nonnxruntime: {expected!r}"
        if isinstance(expected, np.ndarray):
            assert np.asarray(got).dtype == expected.dtype, (name, np.asarray(got).dtype, expected.dtype)


def run_both(proto: onnx.ModelProto, feeds: dict[str, Any], **tolerances: float) -> explorer.Trace:
    """Runs explorer and onnxruntime on the same feeds, asserts the outputs agree, returns explorer's trace."""
    trace = explorer.run(explorer.load(proto), feeds)
    assert_same(trace.outputs, ort_run(proto, feeds), **tolerances)
    return trace


# ---- the per-iteration cross-check ---------------------------------------------------------------------------
def _value_type(g: onnx.GraphProto, name: str) -> onnx.TypeProto:
    for v in [*g.input, *g.value_info, *g.output]:
        if v.name == name:
            return v.type
    raise KeyError(f"no type known for {name!r} in graph {g.name!r}: declare it or let shape inference find it")


def _zeros_node(tp: onnx.TypeProto, output: str) -> onnx.NodeProto:
    """A Constant of zeros with a (fully static) tensor type: the other branch's stand-in for a probed value."""
    dims = [d.dim_value for d in tp.tensor_type.shape.dim]
    if any(not d.HasField("dim_value") for d in tp.tensor_type.shape.dim):
        raise ValueError(f"probing through an If needs a static shape for {output!r}, got {tp}")
    dtype = onnx.helper.tensor_dtype_to_np_dtype(tp.tensor_type.elem_type)
    return h.make_node("Constant", [], [output], value=numpy_helper.from_array(np.zeros(dims, dtype), output))


def _stacked(tp: onnx.TypeProto) -> onnx.TypeProto:
    shape = [None] + [d.dim_value if d.HasField("dim_value") else None for d in tp.tensor_type.shape.dim]
    return h.make_tensor_type_proto(tp.tensor_type.elem_type, shape)


def probe(proto: onnx.ModelProto, graph_path: str, name: str, output: str = "probe") -> onnx.ModelProto:
    """A copy of `proto` where value `name` of the body at `graph_path` (an explorer graph path such as
    `outer/body/branch/then_branch/inner/body`) is carried out to a new main-graph output `output`: one extra scan
    output per enclosing Loop/Scan (a new leading axis per loop level) and one extra output per enclosing If
    (the branch not taken yields zeros). Types come from ONNX shape inference, not from explorer."""
    rewritten = onnx.shape_inference.infer_shapes(proto)
    index = GraphIndex(rewritten.graph)
    path, current, tp = graph_path, name, None
    level = 0
    while path:
        body = index.graphs[path]
        owner = index.nodes[body.owner]
        tp = _value_type(body.proto, current) if tp is None else tp
        carried = f"{output}_{level}"
        body.proto.output.append(h.make_value_info(current, tp))
        if owner.op_type == "If":
            other = "else_branch" if body.attribute == "then_branch" else "then_branch"
            other_graph = next(g for g in owner.subgraphs if g.attribute == other).proto
            stand_in = f"{output}_{level}_zeros"
            other_graph.node.append(_zeros_node(tp, stand_in))
            other_graph.output.append(h.make_value_info(stand_in, tp))
        elif owner.op_type in ("Loop", "Scan"):
            tp = _stacked(tp)
            if owner.op_type == "Scan" and any(a.name == "scan_output_axes" for a in owner.proto.attribute):
                raise ValueError("probing a Scan with scan_output_axes is not supported")
        else:
            raise ValueError(f"cannot probe through {owner.op_type}")
        owner.proto.output.append(carried)
        path, current = owner.graph.path, carried
        level += 1
    rewritten.graph.output.append(h.make_value_info(current, tp))
    rewritten.graph.value_info.clear()
    return rewritten


# ---- Scan ------------------------------------------------------------------------------------------------------
def scan_body(n_states: int, n_scans: int, n_outputs: int, width: list[int], *, capture: str | None = None,
              name: str = "scan_body") -> onnx.GraphProto:
    """A body with order-dependent results: mix = sum_j c_j * x_j (c_j body initializers),
    s_i' = tanh(s_i * (i + 1.5) [* capture] + mix); scan output k is s_k' (k < n_states) else mix * (k + 1)."""
    nodes, inits = [], []
    terms = []
    for j in range(n_scans):
        inits.append(const(f"c{j}", j + 1.0))
        nodes.append(node("Mul", [f"x{j}", f"c{j}"], [f"xc{j}"]))
        terms.append(f"xc{j}")
    mix = terms[0] if terms else "zero"
    if not terms:
        inits.append(const("zero", np.zeros(width)))
    for j, term in enumerate(terms[1:], 1):
        nodes.append(node("Add", [mix, term], [f"mix{j}"]))
        mix = f"mix{j}"
    for i in range(n_states):
        inits.append(const(f"w{i}", i + 1.5))
        nodes.append(node("Mul", [f"s{i}", f"w{i}"], [f"sw{i}"]))
        scaled = f"sw{i}"
        if capture:
            nodes.append(node("Mul", [scaled, capture], [f"swc{i}"]))
            scaled = f"swc{i}"
        nodes.append(node("Add", [scaled, mix], [f"pre{i}"]))
        nodes.append(node("Tanh", [f"pre{i}"], [f"s{i}_out"]))
    outputs = [vi(f"s{i}_out", F, width) for i in range(n_states)]
    for k in range(n_outputs):
        if k < n_states:
            nodes.append(node("Identity", [f"s{k}_out"], [f"y{k}"]))
        else:
            inits.append(const(f"k{k}", k + 1.0))
            nodes.append(node("Mul", [mix, f"k{k}"], [f"y{k}"]))
        outputs.append(vi(f"y{k}", F, width))
    inputs = [vi(f"s{i}", F, width) for i in range(n_states)] + [vi(f"x{j}", F, width) for j in range(n_scans)]
    return graph(nodes, name, inputs, outputs, inits)


def scan9(n_states: int, n_scans: int, n_outputs: int, *, in_axes=None, in_dirs=None, out_axes=None,
          out_dirs=None, width=(2, 3), capture: bool = False, opset: int = 21) -> onnx.ModelProto:
    """Scan (opset 9+) over inputs X0.. whose slices all have shape `width`, states S0.., outputs Y0.."""
    width = list(width)
    body = scan_body(n_states, n_scans, n_outputs, width, capture="gain" if capture else None)
    attrs: dict[str, Any] = {"num_scan_inputs": n_scans}
    for key, value in (("scan_input_axes", in_axes), ("scan_input_directions", in_dirs),
                       ("scan_output_axes", out_axes), ("scan_output_directions", out_dirs)):
        if value:
            attrs[key] = list(value)
    states, scans = [f"S{i}" for i in range(n_states)], [f"X{j}" for j in range(n_scans)]
    finals, outs = [f"S{i}_final" for i in range(n_states)], [f"Y{k}" for k in range(n_outputs)]
    inputs = [vi(s, F, width) for s in states] + [vi(x, F, None) for x in scans]
    if capture:
        inputs.append(vi("gain", F, []))
    scan = node("Scan", states + scans, finals + outs, name="scan", body=body, **attrs)
    g = graph([scan], "scan9", inputs, [vi(s, F, width) for s in finals] + [vi(y, F, None) for y in outs])
    return model(g, opset)


def scan8(n_states: int, n_scans: int, n_outputs: int, *, directions=None, with_lens: bool = False,
          width: int = 3) -> onnx.ModelProto:
    """Scan opset 8: states S_i [batch, width], scan inputs X_j [batch, seq, width], optional sequence_lens."""
    body = scan_body(n_states, n_scans, n_outputs, [width])
    attrs: dict[str, Any] = {"num_scan_inputs": n_scans}
    if directions is not None:
        attrs["directions"] = list(directions)
    states, scans = [f"S{i}" for i in range(n_states)], [f"X{j}" for j in range(n_scans)]
    finals, outs = [f"S{i}_final" for i in range(n_states)], [f"Y{k}" for k in range(n_outputs)]
    inputs = [vi(s, F, ["batch", width]) for s in states] + [vi(x, F, ["batch", "seq", width]) for x in scans]
    if with_lens:
        inputs.append(vi("lens", I64, ["batch"]))
    scan = node("Scan", ["lens" if with_lens else ""] + states + scans, finals + outs, name="scan", body=body,
                **attrs)
    outputs = [vi(s, F, ["batch", width]) for s in finals] + [vi(y, F, ["batch", "seq", width]) for y in outs]
    return model(graph([scan], "scan8", inputs, outputs), 8, ir=4)


# ---- Loop ------------------------------------------------------------------------------------------------------
def loop_body(*, limit: float | None = None, scalar_out: bool = True, shadow: str | None = None,
              passthrough: bool = False, outer: str | None = None, width: int = 3) -> onnx.GraphProto:
    """(i, cond_in, x_in) -> (cond_out, x_out, [x_in], [outer], xs, [total]):
    x_out = x_in * 1.5 + i; cond_out = sum(x_out) < limit (else cond_in passed on); xs = x_out; total = sum(x_out).
    `shadow` names the carried input (to collide with an outer value); `passthrough` adds x_in as a second
    carried output straight from the input; `outer` adds that outer value as a carried output read directly."""
    x_in = shadow or "x_in"
    nodes = [
        node("Cast", ["i"], ["i_f"], to=F),
        node("Mul", [x_in, "k"], ["scaled"]),
        node("Add", ["scaled", "i_f"], ["x_out"]),
        node("ReduceSum", ["x_out"], ["total"], keepdims=0),
        node("Identity", ["x_out"], ["xs"]),
    ]
    inits = [const("k", 1.5)]
    if limit is not None:
        inits.append(const("limit", limit))
        nodes.append(node("Less", ["total", "limit"], ["cond_out"]))
        cond_out = "cond_out"
    else:
        cond_out = "cond_in"
    inputs = [vi("i", I64, []), vi("cond_in", B, []), vi(x_in, F, [width])]
    outputs = [vi(cond_out, B, []), vi("x_out", F, [width])]
    if passthrough:
        inputs.append(vi("p_in", F, [width]))
        outputs.append(vi("p_in", F, [width]))
    if outer:
        inputs.append(vi("o_in", F, [width]))
        outputs.append(vi(outer, F, [width]))
    outputs.append(vi("xs", F, [width]))
    if scalar_out:
        outputs.append(vi("total", F, []))
    return graph(nodes, "loop_body", inputs, outputs, inits)


def loop_model(mode: str, *, limit: float | None = None, opset: int = 21, **body_options: Any) -> onnx.ModelProto:
    """A Loop in one of the spec's modes: 'none' (neither M nor cond), 'cond', 'do_while' (cond = true constant),
    'trip' (M only), 'both'. Inputs M (int64 scalar), cond (bool scalar), x0 [3]."""
    body = loop_body(limit=limit, **body_options)
    width = body_options.get("width", 3)
    trip = "M" if mode in ("trip", "both") else ""
    cond = {"cond": "cond", "both": "cond", "do_while": "true"}.get(mode, "")
    carried = ["x0"]
    outputs = ["x_final"]
    if body_options.get("passthrough"):
        carried.append("p0")
        outputs.append("p_final")
    if body_options.get("outer"):
        carried.append("o0")
        outputs.append("o_final")
    outputs += ["xs_stacked"] + (["totals"] if body_options.get("scalar_out", True) else [])
    nodes = [node("Loop", [trip, cond] + carried, outputs, name="loop", body=body)]
    inits = [const("true", True, np.bool_)] if mode == "do_while" else []
    inputs = [vi(c, F, [width]) for c in carried]
    if trip:
        inputs.insert(0, vi("M", I64, []))
    if cond == "cond":
        inputs.insert(1 if trip else 0, vi("cond", B, []))
    if body_options.get("outer"):
        inputs.append(vi(body_options["outer"], F, [width]))
    if body_options.get("shadow"):  # an outer value with the body input's name, which the body must not see
        nodes.insert(0, node("Neg", ["x0"], [body_options["shadow"]], name="shadowing"))
    outs = [vi(o, F, None) for o in outputs]
    return model(graph(nodes, "loop_model", inputs, outs, inits), opset)


def endless_loop(opset: int = 21) -> onnx.ModelProto:
    """A Loop whose body passes cond_in = true on forever (no trip count): only a limit stops it."""
    body = graph([node("Add", ["x_in", "one"], ["x_out"])], "forever",
                 [vi("i", I64, []), vi("cond_in", B, []), vi("x_in", F, [])],
                 [vi("cond_in", B, []), vi("x_out", F, [])], [const("one", 1.0)])
    loop = node("Loop", ["", "go", "x"], ["x_final"], name="forever", body=body)
    return model(graph([loop], "endless", [vi("go", B, []), vi("x", F, [])], [vi("x_final", F, [])]), opset)
