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
from explorer.compare import compare_values
from explorer.proto.graph_index import GraphIndex

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
def _static_shape(index: GraphIndex, graph_path: str, name: str) -> list[int | None]:
    """The shape ONNX shape inference found for `name`, looked up from `graph_path` outwards."""
    path: str | None = graph_path
    while path is not None:
        ref = index.graphs[path]
        for v in [*ref.proto.input, *ref.proto.value_info, *ref.proto.output]:
            if v.name == name and v.type.HasField("tensor_type"):
                return [d.dim_value if d.HasField("dim_value") else None for d in v.type.tensor_type.shape.dim]
        for t in ref.proto.initializer:
            if t.name == name:
                return list(t.dims)
        path = index.nodes[ref.owner].graph.path if ref.owner else None
    raise KeyError(f"no shape known for {name!r} seen from {graph_path!r}")


def _constant_int(index: GraphIndex, graph_path: str, name: str) -> int | None:
    """The value of an int initializer visible from `graph_path`, else None."""
    path: str | None = graph_path
    while path is not None:
        ref = index.graphs[path]
        for t in ref.proto.initializer:
            if t.name == name:
                return int(numpy_helper.to_array(t).reshape(-1)[0])
        path = index.nodes[ref.owner].graph.path if ref.owner else None
    return None


def _loop_length(index: GraphIndex, owner) -> int | None:
    """Iterations of a Loop/Scan when they are known before running: a constant trip count, a static scan axis."""
    if owner.op_type == "Loop":
        return _constant_int(index, owner.graph.path, owner.proto.input[0]) if owner.proto.input[0] else None
    m = next(a.i for a in owner.proto.attribute if a.name == "num_scan_inputs")
    axes = next((list(a.ints) for a in owner.proto.attribute if a.name == "scan_input_axes"), [0])
    shape = _static_shape(index, owner.graph.path, owner.proto.input[len(owner.proto.input) - m])
    return shape[axes[0]]


def _zeros_node(elem: int, shape: list[int | None], output: str) -> onnx.NodeProto:
    """A Constant of zeros: the stand-in for a probed value in the branch of an If that does not compute it."""
    if any(d is None for d in shape):
        raise ValueError(f"probing through an If needs a static shape, got {shape} for {output!r}")
    zeros = np.zeros(shape, onnx.helper.tensor_dtype_to_np_dtype(elem))
    return h.make_node("Constant", [], [output], value=numpy_helper.from_array(zeros, output))


def probe(proto: onnx.ModelProto, graph_path: str, name: str, output: str = "probe") -> onnx.ModelProto:
    """A copy of `proto` where value `name` of the body at `graph_path` (an explorer graph path such as
    `outer/body/branch/then_branch/inner/body`) is carried out to a new main-graph output `output`: one extra scan
    output per enclosing Loop/Scan (a new leading axis per loop level) and one extra output per enclosing If
    (the branch not taken yields zeros). Shapes come from ONNX shape inference, not from explorer."""
    rewritten = onnx.shape_inference.infer_shapes(proto)
    index = GraphIndex(rewritten.graph)
    path, current = graph_path, name
    shape = _static_shape(index, graph_path, name)
    elem = next(v.type.tensor_type.elem_type for v in [*index.graphs[graph_path].proto.input,
                                                        *index.graphs[graph_path].proto.value_info,
                                                        *index.graphs[graph_path].proto.output] if v.name == name)
    level = 0
    while path:
        body = index.graphs[path]
        owner = index.nodes[body.owner]
        # through an Identity: onnxruntime mixes up a body value listed twice among the outputs (state and probe)
        copy = f"{output}_{level}_copy"
        body.proto.node.append(h.make_node("Identity", [current], [copy]))
        body.proto.output.append(h.make_tensor_value_info(copy, elem, shape))
        if owner.op_type == "If":
            other = "else_branch" if body.attribute == "then_branch" else "then_branch"
            other_graph = next(g for g in owner.subgraphs if g.attribute == other).proto
            stand_in = f"{output}_{level}_zeros"
            other_graph.node.append(_zeros_node(elem, shape, stand_in))
            other_graph.output.append(h.make_tensor_value_info(stand_in, elem, shape))
        elif owner.op_type in ("Loop", "Scan"):
            if any(a.name == "scan_output_axes" for a in owner.proto.attribute):
                raise ValueError("probing a Scan with scan_output_axes is not supported")
            shape = [_loop_length(index, owner), *shape]
        else:
            raise ValueError(f"cannot probe through {owner.op_type}")
        current = f"{output}_{level}" if owner.graph.path else output
        owner.proto.output.append(current)
        path = owner.graph.path
        level += 1
    rewritten.graph.output.append(h.make_tensor_value_info(current, elem, shape))
    return rewritten


def probed_values(trace: explorer.Trace, node_path: str, name: str, stacked: np.ndarray, depth: int) -> int:
    """Asserts every recorded execution of `node_path` (inside `depth` loops) produced `name` equal to
    onnxruntime's value at the same iteration tuple of the probe output `stacked`, and that every other index of
    `stacked` is a zero stand-in (a branch not taken). Returns how many executions were compared."""
    events = trace.events_of(node_path)
    ran = set()
    for event in events:
        assert len(event.iteration) == depth, (event.iteration, stacked.shape)
        np.testing.assert_allclose(event.outputs[name], stacked[event.iteration], rtol=1e-5, atol=1e-6,
                                   err_msg=f"{node_path} at iteration {event.iteration}")
        ran.add(event.iteration)
    for idx in np.ndindex(*stacked.shape[:depth]):
        if idx not in ran:
            assert not np.any(stacked[idx]), f"onnxruntime ran {node_path} at {idx}, explorer did not"
    return len(events)


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


# ---- nesting ---------------------------------------------------------------------------------------------------
LEVEL_NAMES = {"Loop": "L", "Scan": "S", "If": "I"}


def _level(kinds: list[str], lengths: list[int], d: int, v: str, nodes: list, main_inputs: list,
           inits: list) -> tuple[str, str]:
    """Appends to `nodes` the computation of level `d` on value `v`; returns (its output, the leaf graph path
    relative to this graph). Loop levels read their trip count K<d> and Scan levels their input X<d> from the main
    graph, every level reads the value of the level above it, the leaf reads `bias` from the main graph."""
    if d == len(kinds):
        nodes += [node("Mul", [v, "gain"], ["scaled"]), node("Add", ["scaled", "bias"], ["pre"]),
                  node("Tanh", ["pre"], ["leaf"])]
        return "leaf", ""
    kind, name = kinds[d], f"{LEVEL_NAMES[kinds[d]]}{d}"
    inner: list = []
    if kind == "If":
        nodes += [node("ReduceSum", [v], [f"sum{d}"], keepdims=0), node("Greater", [f"sum{d}", "zero"], [f"cond{d}"])]
        out, leaf = _level(kinds, lengths, d + 1, v, inner, main_inputs, inits)
        then_branch = graph(inner, f"then{d}", [], [vi(out, F, [3])])
        else_branch = graph([node("Mul", [v, "minus_half"], [f"else{d}"])], f"else{d}", [], [vi(f"else{d}", F, [3])])
        nodes.append(node("If", [f"cond{d}"], [f"{name}_out"], name=name, then_branch=then_branch,
                          else_branch=else_branch))
        return f"{name}_out", f"{name}/then_branch/{leaf}".rstrip("/")
    if kind == "Loop":
        inner += [node("Cast", [f"i{d}"], [f"if{d}"], to=F), node("Mul", [f"if{d}", "quarter"], [f"iq{d}"]),
                  node("Add", [f"c_in{d}", f"iq{d}"], [f"w0_{d}"])]
        inputs = [vi(f"i{d}", I64, []), vi(f"cond{d}", B, []), vi(f"c_in{d}", F, [3])]
        inits.append(const(f"K{d}", lengths[d], np.int64))
    else:
        inner.append(node("Add", [f"c_in{d}", f"x{d}"], [f"w0_{d}"]))
        inputs = [vi(f"c_in{d}", F, [3]), vi(f"x{d}", F, [3])]
        main_inputs.append(vi(f"X{d}", F, [lengths[d], 3]))
    inner += [node("Mul", [v, "eighth"], [f"vq{d}"]), node("Add", [f"w0_{d}", f"vq{d}"], [f"w{d}"])]
    out, leaf = _level(kinds, lengths, d + 1, f"w{d}", inner, main_inputs, inits)
    outputs = [vi(out, F, [3])]
    if kind == "Loop":
        outputs.insert(0, vi(f"cond{d}", B, []))
        nodes.append(node("Loop", [f"K{d}", "", v], [f"{name}_out"], name=name,
                          body=graph(inner, f"body{d}", inputs, outputs)))
    else:
        nodes.append(node("Scan", [v, f"X{d}"], [f"{name}_out"], name=name, num_scan_inputs=1,
                          body=graph(inner, f"body{d}", inputs, outputs)))
    return f"{name}_out", f"{name}/body/{leaf}".rstrip("/")


def nested(kinds: list[str], lengths: list[int], opset: int = 21) -> tuple[onnx.ModelProto, str]:
    """A chain of nested control flow, outermost first (e.g. ["Loop", "If", "Scan", "Loop"]), around a leaf
    `leaf = tanh(v * gain + bias)`. Returns the model and the graph path holding the leaf. `lengths[d]` is level
    d's trip count (a main-graph initializer K<d>) or scan length (input X<d> of shape [lengths[d], 3])."""
    nodes: list = []
    main_inputs = [vi("v0", F, [3]), vi("bias", F, [3])]
    inits = [const("gain", 1.1), const("zero", 0.0), const("minus_half", -0.5), const("quarter", 0.25),
             const("eighth", 0.125)]
    out, leaf = _level(kinds, lengths, 0, "v0", nodes, main_inputs, inits)
    nodes.append(node("Identity", [out], ["result"], name="result"))
    return model(graph(nodes, "nested", main_inputs, [vi("result", F, [3])], inits), opset), leaf
