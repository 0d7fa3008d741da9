"""Support for the diagram tests and bench/bench_dot.py: models (nested control flow with captures, hostile
names, PyTorch-style scoped names, large synthetic graphs with nested bodies) and a DOT reader that asks graphviz
itself how it understood our DOT, and which overlay state a drawn box shows."""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from explorer.views.dot_escape import svg_id
from explorer.views.styles import NODE_STATES

OPSET = [h.make_opsetid("", 21)]


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    return h.make_model(graph, opset_imports=OPSET, producer_name="explorer tests")


def nested_model() -> onnx.ModelProto:
    """If 'gate' > then_branch: Scan 'scan' over X > body: Loop 'loop' > body: acc + x_t, times `scale`.
    The Loop body reads x_t from the Scan body (one level up) and `scale`, a main-graph input, three levels up;
    the Loop's trip count `steps` is a main-graph initializer read two levels up; the else branch reads s0 and X.
    """
    loop_body = h.make_graph(
        [h.make_node("Add", ["acc_in", "x_t"], ["acc_sum"], name="add_x"),
         h.make_node("Mul", ["acc_sum", "scale"], ["acc_out"], name="scale_it"),
         h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going")],
        "loop_body",
        [h.make_tensor_value_info("j", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("acc_in", T.FLOAT, [3])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [3])],
    )
    scan_body = h.make_graph(
        [h.make_node("Loop", ["steps", "", "s_in"], ["looped"], name="loop", body=loop_body),
         h.make_node("Tanh", ["looped"], ["s_out"], name="squash"),
         h.make_node("Identity", ["s_out"], ["y_t"], name="emit")],
        "scan_body",
        [h.make_tensor_value_info("s_in", T.FLOAT, [3]), h.make_tensor_value_info("x_t", T.FLOAT, [3])],
        [h.make_tensor_value_info("s_out", T.FLOAT, [3]), h.make_tensor_value_info("y_t", T.FLOAT, [3])],
    )
    then_branch = h.make_graph(
        [h.make_node("Scan", ["s0", "X"], ["s_final", "Y"], name="scan", body=scan_body, num_scan_inputs=1)],
        "then",
        [],
        [h.make_tensor_value_info("s_final", T.FLOAT, [3]), h.make_tensor_value_info("Y", T.FLOAT, ["T", 3])],
    )
    else_branch = h.make_graph(
        [h.make_node("Neg", ["s0"], ["s_neg"], name="negate"),
         h.make_node("Identity", ["X"], ["x_copy"], name="copy")],
        "else",
        [],
        [h.make_tensor_value_info("s_neg", T.FLOAT, [3]), h.make_tensor_value_info("x_copy", T.FLOAT, ["T", 3])],
    )
    graph = h.make_graph(
        [h.make_node("If", ["flag"], ["state", "ys"], name="gate", then_branch=then_branch, else_branch=else_branch),
         h.make_node("Relu", ["ys"], ["out"], name="relu")],
        "nested",
        [h.make_tensor_value_info("flag", T.BOOL, []), h.make_tensor_value_info("X", T.FLOAT, ["T", 3]),
         h.make_tensor_value_info("s0", T.FLOAT, [3]), h.make_tensor_value_info("scale", T.FLOAT, [])],
        [h.make_tensor_value_info("state", T.FLOAT, [3]), h.make_tensor_value_info("out", T.FLOAT, ["T", 3])],
        [numpy_helper.from_array(np.array(2, dtype=np.int64), "steps")],
    )
    return _model(graph)


def nested_feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"flag": np.array(True), "X": rng.standard_normal((4, 3)).astype(np.float32),
            "s0": rng.standard_normal(3).astype(np.float32), "scale": np.array(0.5, dtype=np.float32)}


HOSTILE = [
    'quote"name', "back\\slash", "new\nline", "<script>alert(1)</script>", "a&b;", "&amp;", "{braces}",
    "ünïcødé ✓ 名前 🙂", "", "", "dup", "dup", "\\N\\G\\L", "tab\there", "x--y", "-->", "]]>", "bell\x07",
    "nul\x00byte", "bidi\u202eoverride", "colon:percent%20", "'single'", "\\", "trailing\\",
]


def hostile_model(names: list[str] | None = None) -> onnx.ModelProto:
    """A chain of Add nodes whose node names, value names, input/initializer names and an If body all carry
    hostile strings; the If body captures a hostile-named outer value."""
    names = HOSTILE if names is None else names
    nodes = []
    prev = f"in {names[0]}"
    for i, name in enumerate(names):
        out = f"v{i} {name}"
        nodes.append(h.make_node("Add", [prev, f"w{i} {name}"], [out], name=name))
        prev = out
    branch = h.make_graph([h.make_node("Identity", [prev], ["b " + names[-1]], name=names[0])], names[1], [],
                          [h.make_tensor_value_info("b " + names[-1], T.FLOAT, [2])])
    nodes.append(h.make_node("If", ["cond " + names[2]], ["out " + names[3]], name=names[4],
                             then_branch=branch, else_branch=branch))
    inits = [numpy_helper.from_array(np.ones(2, np.float32), f"w{i} {name}") for i, name in enumerate(names)]
    graph = h.make_graph(
        nodes, "hostile",
        [h.make_tensor_value_info(f"in {names[0]}", T.FLOAT, [2]),
         h.make_tensor_value_info("cond " + names[2], T.BOOL, [])],
        [h.make_tensor_value_info("out " + names[3], T.FLOAT, [2])], inits)
    return _model(graph)


def scoped_model(layers: int = 3) -> onnx.ModelProto:
    """A PyTorch-style export: `/encoder/layer.i/attn/…` and `/encoder/layer.i/mlp/…` names, a loose input
    projection and a `/head/…` scope."""
    nodes = [h.make_node("MatMul", ["x", "w_in"], ["/proj/MatMul_output_0"], name="/proj/MatMul"),
             h.make_node("Relu", ["/proj/MatMul_output_0"], ["h0"], name="/Relu")]
    prev = "h0"
    for i in range(layers):
        p = f"/encoder/layer.{i}"
        nodes += [
            h.make_node("MatMul", [prev, "w_q"], [f"{p}/attn/q"], name=f"{p}/attn/MatMul"),
            h.make_node("Softmax", [f"{p}/attn/q"], [f"{p}/attn/p"], name=f"{p}/attn/Softmax"),
            h.make_node("MatMul", [f"{p}/attn/p", "w_v"], [f"{p}/attn/out"], name=f"{p}/attn/MatMul_1"),
            h.make_node("Add", [prev, f"{p}/attn/out"], [f"{p}/res"], name=f"{p}/Add"),
            h.make_node("MatMul", [f"{p}/res", "w_m"], [f"{p}/mlp/a"], name=f"{p}/mlp/fc1/MatMul"),
            h.make_node("Relu", [f"{p}/mlp/a"], [f"{p}/mlp/b"], name=f"{p}/mlp/act/Relu"),
            h.make_node("Add", [f"{p}/res", f"{p}/mlp/b"], [f"{p}/out"], name=f"{p}/Add_1"),
        ]
        prev = f"{p}/out"
    nodes.append(h.make_node("MatMul", [prev, "w_out"], ["y"], name="/head/fc/MatMul"))
    nodes.append(h.make_node("Softmax", ["y"], ["probs"], name="/head/Softmax"))
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), n)
             for n in ("w_in", "w_q", "w_v", "w_m", "w_out")]
    graph = h.make_graph(nodes, "scoped", [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
                         [h.make_tensor_value_info("probs", T.FLOAT, [2, 4])], inits)
    return _model(graph)


def _branch_factory(scope: str):
    def branch(tag: str) -> onnx.GraphProto:
        """A tiny If branch reading the Loop body's acc_in and the main graph's bias."""
        return h.make_graph(
            [h.make_node("Mul" if tag == "a" else "Sub", ["acc_in", "bias"], [f"r_{tag}"], name=f"{scope}/If/{tag}"),
             h.make_node("Relu", [f"r_{tag}"], [f"o_{tag}"], name=f"{scope}/If/{tag}/Relu")],
            f"branch_{tag}", [], [h.make_tensor_value_info(f"o_{tag}", T.FLOAT, [1, 16])])
    return branch


def synthetic_model(target_nodes: int, *, loop_every: int = 8) -> onnx.ModelProto:
    """About `target_nodes` nodes in PyTorch-style scopes `/model/block.i/...`; every `loop_every`-th block runs
    a Loop whose body holds an If (two small branches) reading a main-graph value: nested bodies everywhere."""
    nodes: list[onnx.NodeProto] = []
    prev = "x"
    count = 0
    block = 0
    while count < target_nodes:
        p = f"/model/block.{block}"
        if block % loop_every == loop_every - 1:
            branch = _branch_factory(p)
            body = h.make_graph(
                [h.make_node("Greater", ["j", "zero"], ["odd"], name=f"{p}/loop/Greater"),
                 h.make_node("If", ["odd"], ["acc_out"], name=f"{p}/loop/If", then_branch=branch("a"),
                             else_branch=branch("b")),
                 h.make_node("Identity", ["cond_in"], ["cond_out"], name=f"{p}/loop/Identity")],
                "body",
                [h.make_tensor_value_info("j", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
                 h.make_tensor_value_info("acc_in", T.FLOAT, [1, 16])],
                [h.make_tensor_value_info("cond_out", T.BOOL, []),
                 h.make_tensor_value_info("acc_out", T.FLOAT, [1, 16])])
            nodes.append(h.make_node("Loop", ["trips", "", prev], [f"{p}/loop_out"], name=f"{p}/Loop", body=body))
            prev = f"{p}/loop_out"
            count += 8
        else:
            nodes += [
                h.make_node("MatMul", [prev, "w"], [f"{p}/mm"], name=f"{p}/fc/MatMul"),
                h.make_node("Add", [f"{p}/mm", "bias"], [f"{p}/add"], name=f"{p}/fc/Add"),
                h.make_node("Relu", [f"{p}/add"], [f"{p}/act"], name=f"{p}/act/Relu"),
                h.make_node("Add", [prev, f"{p}/act"], [f"{p}/out"], name=f"{p}/Add"),
            ]
            prev = f"{p}/out"
            count += 4
        block += 1
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array((rng.standard_normal((16, 16)) * 0.1).astype(np.float32), "w"),
             numpy_helper.from_array(np.full((1, 16), 0.1, np.float32), "bias"),
             numpy_helper.from_array(np.array(2, np.int64), "trips"),
             numpy_helper.from_array(np.array(0, np.int64), "zero")]
    graph = h.make_graph(nodes, "synthetic", [h.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                         [h.make_tensor_value_info(prev, T.FLOAT, [1, 16])], inits)
    return _model(graph)


def box(path: str) -> str:
    """The DOT name (and SVG id) of an op node."""
    return svg_id("node", path)


@dataclass
class ParsedDot:
    """What graphviz read from a DOT text: nodes and clusters (by name) with attributes, edges in order."""

    graph: dict = field(default_factory=dict)
    nodes: dict[str, dict] = field(default_factory=dict)
    clusters: dict[str, dict] = field(default_factory=dict)  # name -> attrs + "nodes" (all inside) + "parent"
    edges: list[tuple[str, str, dict]] = field(default_factory=list)

    def cluster_of(self, node: str) -> str | None:
        """The innermost cluster holding a node."""
        holding = [c for c, attrs in self.clusters.items() if node in attrs["nodes"]]
        return min(holding, key=lambda c: len(self.clusters[c]["nodes"]), default=None)

    def edges_between(self, tail: str, head: str) -> list[dict]:
        return [attrs for t, h, attrs in self.edges if t == tail and h == head]

    def visible_edges(self) -> list[tuple[str, str, dict]]:
        return [e for e in self.edges if e[2].get("style") != "invis"]


def parse_dot(text: str) -> ParsedDot:
    """Runs `dot -Tjson0` (graphviz parses and lays out the text) and reads back nodes, clusters and edges."""
    done = subprocess.run(["dot", "-Tjson0"], input=text.encode(), capture_output=True, check=True, timeout=300)
    data = json.loads(done.stdout)
    objects = data.get("objects", [])
    count = data.get("_subgraph_cnt", 0)
    names = {o["_gvid"]: o["name"] for o in objects}
    parsed = ParsedDot(graph={k: v for k, v in data.items() if k not in ("objects", "edges")})
    for obj in objects[count:]:
        parsed.nodes[obj["name"]] = obj
    parents: dict[int, int] = {}
    for obj in objects[:count]:
        for child in obj.get("subgraphs", []):
            parents[child] = obj["_gvid"]
    for obj in objects[:count]:
        if obj["name"].startswith("cluster"):
            parent = parents.get(obj["_gvid"])
            while parent is not None and not names[parent].startswith("cluster"):
                parent = parents.get(parent)
            parsed.clusters[obj["name"]] = {**obj, "nodes": {names[n] for n in obj.get("nodes", [])},
                                            "parent": names[parent] if parent is not None else None}
    for edge in data.get("edges", []):
        parsed.edges.append((names[edge["tail"]], names[edge["head"]], edge))
    return parsed


def failing_loop_model() -> onnx.ModelProto:
    """A Loop whose body reshapes its 3-vector to [3 - j]: iteration 0 runs, iteration 1 fails in 'reshape'."""
    body = h.make_graph(
        [h.make_node("Sub", ["three", "j"], ["n"], name="count"),
         h.make_node("Unsqueeze", ["n", "axis0"], ["shape"], name="as_shape"),
         h.make_node("Reshape", ["acc_in", "shape"], ["acc_out"], name="reshape"),
         h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going")],
        "body",
        [h.make_tensor_value_info("j", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("acc_in", T.FLOAT, None)],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, None)],
        [numpy_helper.from_array(np.array(3, np.int64), "three"),
         numpy_helper.from_array(np.array([0], np.int64), "axis0")])
    graph = h.make_graph(
        [h.make_node("Relu", ["x"], ["r"], name="first"),
         h.make_node("Loop", ["trips", "", "r"], ["y"], name="loop", body=body)],
        "failing", [h.make_tensor_value_info("x", T.FLOAT, [3])], [h.make_tensor_value_info("y", T.FLOAT, None)],
        [numpy_helper.from_array(np.array(3, np.int64), "trips")])
    return _model(graph)


def state_of(box: dict) -> str | None:
    """Which overlay state a drawn box shows, read back from its attributes."""
    for state, attrs in NODE_STATES.items():
        wanted = {k: v for k, v in attrs.items() if k != "extra_style"}
        if all(box.get(k) == v for k, v in wanted.items()) and attrs.get("extra_style", "") in box.get("style", ""):
            return state
    return None
