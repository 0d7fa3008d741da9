"""The optimizer's records drawn by the diagram views: whole models before/after with removed and added nodes
marked (inside bodies too), and each rewrite's neighbourhood with one level of context."""
from __future__ import annotations

import onnx
import pytest

import explorer
from explorer.optimizer import optimize
from explorer.views.dot import model_to_dot
from explorer.views.overlays import RewriteOverlay
from explorer.views.render import dot_available
from explorer.views.rewrites import result_overlays, step_overlays
from tests.support.diagrams import box, parse_dot, state_of
from tests.support.optimizer_models import SAMPLES, relu_chain

pytestmark = pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed")


def states(model, overlay) -> dict[str, str | None]:
    drawn = parse_dot(model_to_dot(explorer.load(model), overlay=overlay, expand="all").dot)
    return {name: state_of(attrs) for name, attrs in drawn.nodes.items()}


def test_whole_model_before_and_after_mark_body_nodes():
    result = optimize(SAMPLES["opt_scan_body"]())
    # hoisting replaced the Scan under its own name: removed from the original, added to the optimized model
    assert "scan" in result.removed_paths() and "scan" in result.added_paths()
    before = states(result.original, RewriteOverlay(removed=result.removed_paths()))
    assert before[box("scan/body/copy_state")] == "removed" and before[box("scan/body/plus_zero")] == "removed"
    assert before[box("scan/body/tanh")] is None  # untouched
    removed, added = result_overlays(result)
    assert "scan" in removed.removed and "scan" in added.added  # hoisting rebuilt the Scan under its own name
    after = states(result.optimized, added)
    hoisted = next(p for p in result.added_paths() if "scale_bias" in p)
    assert "/" not in hoisted and after[box(hoisted)] == "added"
    assert after[box("scan")] == "added" and after[box("scan/body/tanh")] is None


def test_each_rewrite_is_drawn_with_its_context():
    result = optimize(SAMPLES["opt_linear_cleanup"]())
    step = next(s for s in result.steps if s.pattern == "MatMulAdd")
    removed, added = step_overlays(step)
    before = states(step.neighbourhood(), removed)
    assert before[box("matmul")] == before[box("bias")] == "removed"
    context = [name for name, state in before.items() if name.startswith("node") and state is None]
    assert context, "one level of neighbours is drawn unmarked"
    after = states(step.neighbourhood(after=True), added)
    gemm = step.added[0]
    assert after[box(gemm)] == "added" and box("matmul") not in after


def test_marks_follow_nodes_when_the_optimizer_drops_the_names_it_gave():
    # Unnamed nodes: the optimizer names them by their ids, then drops those names to keep the file within 10 %
    # of the original. Drawn, the optimized model's nodes get ids from their new positions (Relu_0 is the node
    # the original calls Relu_1): only the removed Identity is marked, on the original, and nothing as added.
    from onnx import helper as h


    model = relu_chain(6, declared=False)
    model.graph.node.insert(0, h.make_node("Identity", ["x"], ["v0"]))
    model.graph.input[0].name = "x"
    result = optimize(model)
    assert all(not n.name for n in result.optimized.graph.node)  # the names were dropped
    assert [s.removed for s in result.steps] == [["Identity_0"]]
    before, after = result_overlays(result)
    assert before.removed == {"Identity_0"} and after.added == frozenset()
    drawn_before = states(result.original, before)
    assert [k for k, v in drawn_before.items() if v == "removed"] == [box("Identity_0")]
    drawn_after = states(result.optimized, after)
    assert all(v != "added" for v in drawn_after.values())


def _loop_with_identities(identities: int = 30, kept: int = 12) -> onnx.ModelProto:
    """A Loop whose body runs x through `identities` Identity nodes (the optimizer removes them) and `kept` Relus."""
    h = onnx.helper
    nodes = [h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going")]
    value = "x_in"
    for i in range(identities):
        nodes.append(h.make_node("Identity", [value], [f"id{i}"], name=f"id{i}"))
        value = f"id{i}"
    for i in range(kept):
        nodes.append(h.make_node("Relu", [value], [f"relu{i}"], name=f"relu{i}"))
        value = f"relu{i}"
    nodes.append(h.make_node("Neg", [value], ["x_out"], name="neg"))
    f = onnx.TensorProto.FLOAT
    body = h.make_graph(nodes, "body", [h.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
                                        h.make_tensor_value_info("cond_in", onnx.TensorProto.BOOL, []),
                                        h.make_tensor_value_info("x_in", f, [3])],
                        [h.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, []),
                         h.make_tensor_value_info("x_out", f, [3])])
    graph = h.make_graph([h.make_node("Loop", ["n", "", "x"], ["y"], name="loop", body=body)], "g",
                         [h.make_tensor_value_info("n", onnx.TensorProto.INT64, []),
                          h.make_tensor_value_info("x", f, [3])], [h.make_tensor_value_info("y", f, [3])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])


def test_before_and_after_are_drawn_at_the_same_expansion():
    from explorer.views.draw_plan import Options
    from explorer.views.rewrites import result_overlays, side_by_side

    model = explorer.load(_loop_with_identities())
    result = explorer.optimize(model)
    before, after = explorer.load(result.original), explorer.load(result.optimized)
    assert len(before.index.graphs["loop/body"].proto.node) > Options.max_expanded_nodes
    assert len(after.index.graphs["loop/body"].proto.node) <= Options.max_expanded_nodes
    removed, added = result_overlays(result)
    alone = explorer.model_to_dot(before, overlay=removed), explorer.model_to_dot(after, overlay=added)
    assert [sorted(d.bodies) for d in alone] == [[], ["loop/body"]]  # each by its own size: one shut, one open
    drawn = side_by_side(before, after, removed, added)
    assert [sorted(d.bodies) for d in drawn] == [["loop/body"], ["loop/body"]]
    assert drawn[0].shows("loop/body/relu0") and drawn[1].shows("loop/body/relu0")


def test_a_big_model_is_drawn_whole_before_and_after_as_the_overview_of_its_layers():
    """A decoder of 630 nodes (optimum's Qwen2 with past) opens on the Graph page as an overview of its layers; the
    Optimizer draws it whole at the same box budget before and after (the optimized model, smaller, would
    otherwise be drawn node by node beside an overview: 413 boxes, 0.7 MB of SVG)."""
    from pathlib import Path

    from explorer.views.draw_plan import OVERVIEW_BOXES
    from explorer.views.rewrites import whole_models

    path = Path(__file__).resolve().parents[1] / "models" / "optimum_exports" / "qwen2_decoder_with_past.onnx"
    model = explorer.load(path)
    result = optimize(model)
    assert len(result.steps) > 0 and len(model.index.nodes) > 300
    before, after = whole_models(result, model)
    assert before.scopes == after.scopes and before.bodies == after.bodies
    assert len(before.boxes) <= OVERVIEW_BOXES and len(after.boxes) <= OVERVIEW_BOXES
    layers = {"scope:/model/layers.0", "scope:/model/layers.1"}  # each decoder layer one box, on both sides
    assert layers <= before.boxes and layers <= after.boxes
