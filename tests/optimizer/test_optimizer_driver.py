"""The fixpoint driver and its records: bodies first, priorities, overlap, bounds, what it never touches,
stop_after, selection, statistics, and the small before/after models of each rewrite."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from explorer.optimizer import GraphState, optimize, pattern_names
from explorer.optimizer.context import Context
from explorer.optimizer.verify import check_step, check_steps
from tests.support.optimizer_models import (
    SAMPLES,
    applied,
    body,
    const,
    declines,
    info,
    make,
    ops,
    proven,
    relu_chain,
    tensor,
)


def loop_model(body_nodes, body_outputs, extra_inputs=(), carried_shape=(2,)):
    """y, ys = Loop(3 trips) over carried `h` [2] with the given body (inputs i, cond_in, h_in)."""
    loop_body = body(body_nodes, [info("i", T.INT64, []), info("cond_in", T.BOOL, []), info("h_in", shape=carried_shape)],
                     body_outputs)
    nodes = [h.make_node("Loop", ["trips", "", "h0"], ["y", "ys"], name="loop", body=loop_body)]
    return make(nodes, [info("h0", shape=carried_shape), *extra_inputs],
                [info("y", shape=None), info("ys", shape=None)], [tensor("trips", 3, np.int64)])


def test_bodies_are_optimized_before_the_graph_holding_them():
    loop = loop_model([h.make_node("Identity", ["h_in"], ["h_id"], name="copy"),
                       h.make_node("Neg", ["h_id"], ["h_out"], name="neg"),
                       h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
                       h.make_node("Abs", ["h_out"], ["scan"], name="abs")],
                      [info("cond_out", T.BOOL, []), info("h_out", shape=[2]), info("scan", shape=[2])])
    loop.graph.node.insert(0, h.make_node("Identity", ["h00"], ["h0"], name="outer_copy"))
    loop.graph.input[0].name = "h00"
    result = optimize(loop)
    graphs = [step.graph for step in result.steps]
    assert graphs == ["loop/body", ""]
    assert result.steps[0].removed == ["loop/body/copy"]
    proven(result)


def test_cleanups_run_before_fusions():
    # MatMul + Add(0): the cleanup removes the Add first, so no Gemm carrying a zero bias is made
    model = make([h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Add", ["m", "zero"], ["y"])],
                 [info("x", shape=[2, 4])], [info("y", shape=[2, 3])], [tensor("w", np.ones((4, 3))), tensor("zero", [0])])
    result = optimize(model)
    assert applied(result)["AddZero"] == 1 and applied(result)["MatMulAdd"] == 0
    assert ops(result.optimized) == ["MatMul"]
    proven(result)


def test_overlapping_matches_of_one_round_are_dropped():
    # StaticShape claims the Shape node; ShapeGather's match of (Shape, Gather) in the same round overlaps it
    model = make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i"], ["y"])],
                 [info("x", shape=[2, 3])], [info("y", T.INT64, [])], [tensor("i", 1, np.int64)])
    result = optimize(model, patterns=["StaticShape", "ShapeGather", "ConstantFolding"])
    stats = {s.pattern: s for s in result.stats}
    assert stats["ShapeGather"].dropped == 1 and stats["ShapeGather"].applied == 0
    assert ops(result.optimized) == ["Constant"]
    proven(result)


def test_max_rounds_bounds_the_work():
    chain = [h.make_node("Identity", [f"x{k}"], [f"x{k + 1}"]) for k in range(4)]
    model = make([*chain, h.make_node("Relu", ["x4"], ["y"])], [info("x0", shape=[2])], [info("y", shape=[2])])
    full = optimize(model)
    bounded = optimize(model, max_rounds=1)
    assert bounded.rounds == 1 and len(bounded.steps) < len(full.steps) == 4
    proven(bounded)


def test_values_read_by_a_body_are_kept():
    loop = loop_model([h.make_node("Add", ["h_in", "outer"], ["h_out"], name="add"),
                       h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")],
                      [info("cond_out", T.BOOL, []), info("h_out", shape=[2])], extra_inputs=[info("x", shape=[2])])
    loop.graph.output.pop()
    loop.graph.node[0].output.pop()
    loop.graph.node.insert(0, h.make_node("Identity", ["x"], ["outer"], name="copy_x"))
    result = optimize(loop, patterns=["IdentityRemoval"])
    assert "copy_x" in [n.name for n in result.optimized.graph.node]
    assert any("read by a body" in why for why in declines(result, "IdentityRemoval"))
    proven(result)


def test_graph_and_body_signatures_are_kept():
    model = SAMPLES["opt_loop_body"]()
    result = optimize(model)
    assert applied(result)["IdentityRemoval"] >= 1
    before, after = model.graph, result.optimized.graph
    assert [(i.name, i.type) for i in before.input] == [(i.name, i.type) for i in after.input]
    assert [o.name for o in before.output] == [o.name for o in after.output]
    old_body = before.node[0].attribute[0].g
    new_body = next(n for n in after.node if n.op_type == "Loop").attribute[0].g
    assert [(i.name, i.type) for i in old_body.input] == [(i.name, i.type) for i in new_body.input]
    assert [o.name for o in old_body.output] == [o.name for o in new_body.output]
    # the pass-through cond output is a body input: its Identity must stay
    assert any("not produced in this graph" in d.reason for d in result.declined if d.node.startswith("loop/"))


def test_stop_after_applies_exactly_the_first_rewrites():
    model = SAMPLES["opt_linear_cleanup"]()
    full = optimize(model)
    assert len(full.steps) > 5
    for count in range(len(full.steps) + 1):
        partial = optimize(model, stop_after=count)
        assert [s.describe() for s in partial.steps] == [s.describe() for s in full.steps[:count]]
        assert partial.stopped == (count < len(full.steps))
        proven(partial)


def test_patterns_are_chosen_and_excluded_by_name():
    model = SAMPLES["opt_linear_cleanup"]()
    only = optimize(model, patterns=["MulOne", "IdentityRemoval"])
    assert set(applied(only)) <= {"MulOne", "IdentityRemoval"} and only.patterns == ["MulOne", "IdentityRemoval"]
    without = optimize(model, exclude=["MatMulAdd"])
    assert "MatMulAdd" not in without.patterns and "Gemm" not in ops(without.optimized)
    assert "Gemm" in ops(optimize(model).optimized)
    with pytest.raises(ValueError, match="unknown pattern.*'Nope'.*GatherConcat"):
        optimize(model, patterns=["Nope"])
    with pytest.raises(ValueError, match="unknown pattern"):
        optimize(model, exclude=["Nope"])


def test_statistics_count_what_the_steps_did():
    result = optimize(SAMPLES["opt_shape_chain"]())
    stats = {s.pattern: s for s in result.stats}
    for name in pattern_names():
        steps = [s for s in result.steps if s.pattern == name]
        assert stats[name].applied == len(steps)
        assert stats[name].removed == sum(len(s.removed) for s in steps)
        assert stats[name].added == sum(len(s.added) for s in steps)
        assert stats[name].matches >= stats[name].applied
    table = result.stats_table()
    assert "GatherConcat" in table and "DivOne" not in table and "DivOne" in result.stats_table(all_patterns=True)
    before, after = result.node_counts()
    assert f"nodes {before} -> {after}" in table and after < before


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_rewrite_of_the_samples_holds_alone(name):
    result = optimize(SAMPLES[name]())
    checks = check_steps(result)
    assert checks and all(c.status == "equivalent" for c in checks), [c for c in checks if c.status != "equivalent"]
    proven(result)


def test_step_models_share_typed_inputs_and_outputs():
    result = optimize(SAMPLES["opt_scan_body"]())
    for step in result.steps:
        before, after = step.before_model(), step.after_model()
        assert [(i.name, i.type) for i in before.graph.input] == [(i.name, i.type) for i in after.graph.input]
        assert [o.type for o in before.graph.output] == [o.type for o in after.graph.output]
        assert len(before.graph.output) == len(step.outputs)


def test_a_step_with_random_inputs_of_its_types():
    result = optimize(SAMPLES["opt_linear_cleanup"]())
    gemm = next(s for s in result.steps if s.pattern == "MatMulAdd")
    check = check_step(gemm, seed=3)
    assert check.status == "equivalent" and check.max_abs < 1e-5


def test_hoisting_moves_invariant_nodes_before_the_loop():
    result = optimize(SAMPLES["opt_loop_body"]())
    step = next(s for s in result.steps if s.pattern == "LoopInvariantHoisting")
    assert step.graph == "" and step.removed == ["loop"] and "loop" in step.added
    main = result.optimized.graph
    loop = next(n for n in main.node if n.op_type == "Loop")
    hoisted = next(n for n in main.node if n.op_type == "Mul")
    assert list(main.node).index(hoisted) < list(main.node).index(loop)
    assert not [n for n in loop.attribute[0].g.node if "x" in n.input]
    proven(result)


def test_hoisting_through_nested_loops_reaches_the_main_graph():
    inner_body = body([h.make_node("Mul", ["a", "b"], ["ab"], name="invariant"),
                       h.make_node("Add", ["g_in", "ab"], ["g_out"], name="accumulate"),
                       h.make_node("Identity", ["c_in"], ["c_out"], name="keep")],
                      [info("j", T.INT64, []), info("c_in", T.BOOL, []), info("g_in", shape=[2])],
                      [info("c_out", T.BOOL, []), info("g_out", shape=[2])], name="inner")
    outer_nodes = [h.make_node("Loop", ["trips", "", "h_in"], ["h_out"], name="inner_loop", body=inner_body),
                   h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")]
    model = loop_model(outer_nodes, [info("cond_out", T.BOOL, []), info("h_out", shape=[2])],
                       extra_inputs=[info("a", shape=[2]), info("b", shape=[2])])
    model.graph.output.pop()
    model.graph.node[0].output.pop()
    result = optimize(model)
    assert [s.graph for s in result.steps if s.pattern == "LoopInvariantHoisting"] == ["loop/body", ""]
    assert ops(result.optimized) == ["Mul", "Loop"]
    proven(result, {"h0": np.array([1, 2], np.float32), "a": np.array([3, 4], np.float32),
                    "b": np.array([5, 6], np.float32)})


def test_shapes_inside_loop_bodies_are_not_trusted():
    # the carried value doubles every iteration although the body declares [1]: slicing its first element is a
    # no-op only in the first iteration
    loop = loop_model([const("zero", [0]), const("one", [1]),
                       h.make_node("Slice", ["h_in", "zero", "one"], ["first"], name="first"),
                       h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
                       h.make_node("Concat", ["h_in", "h_in"], ["h_out"], axis=0, name="grow")],
                      [info("cond_out", T.BOOL, []), info("h_out", shape=None), info("first", shape=None)],
                      carried_shape=[1])
    result = optimize(loop)
    assert applied(result)["NoOpSlice"] == 0
    proven(result, {"h0": np.array([1.5], np.float32)})


def test_graph_state_answers_the_queries_patterns_ask():
    model = loop_model([h.make_node("Mul", ["h_in", "w"], ["h_out"], name="scale"),
                        h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")],
                       [info("cond_out", T.BOOL, []), info("h_out", shape=[2])])
    model.graph.initializer.append(tensor("w", [2, 3]))
    model.graph.output.pop()
    model.graph.node[0].output.pop()
    graph = onnx.shape_inference.infer_shapes(model).graph
    ctx = Context(opsets={"": 18}, ir_version=10, names={"loop", "w", "h0"})
    main = GraphState(graph, ctx)
    loop = main.producer("y")
    assert loop.op_type == "Loop" and main.consumers("w") == [loop] and main.is_captured("w")
    assert main.is_output("y") and not main.is_used_more_than_once("y") and main.is_used("h0")
    np.testing.assert_array_equal(main.constant("w"), [2, 3])
    assert main.constant("h0") is None and main.shape("h0") == (2,) and main.rank("h0") == 1
    inner = GraphState(loop.attribute[0].g, ctx, path="loop/body", parent=main, trust_shapes=False)
    assert inner.is_constant("w") and not inner.defines("w") and inner.visible("trips")
    assert inner.elem_type("h_in") == T.FLOAT and inner.shape("h_in") is None  # Loop bodies: no trusted shapes
    assert inner.node_path(inner.producer("h_out")) == "loop/body/scale"
    assert main.attribute(loop, "missing", 7) == 7
    fresh = {main.unique_name("w") for _ in range(3)}
    assert len(fresh) == 3 and not fresh & {"loop", "w", "h0"}


def test_the_input_model_is_left_as_it_was():
    model = SAMPLES["opt_linear_cleanup"]()
    before = model.SerializeToString(deterministic=True)
    optimize(model)
    assert model.SerializeToString(deterministic=True) == before


def test_records_name_removed_and_added_nodes_in_bodies_too():
    result = optimize(SAMPLES["opt_scan_body"]())
    removed, added = result.removed_paths(), result.added_paths()
    assert "scan/body/copy_state" in removed and "scan/body/plus_zero" in removed
    assert "scan" in removed and "scan" in added  # replaced by hoisting
    original = {n.name for n in result.original.graph.node[0].attribute[0].g.node}
    assert {p.split("/")[-1] for p in removed if p.startswith("scan/body/")} <= original
    report = json.loads(json.dumps(result.to_dict()))
    assert report["steps"][0]["removed"] == result.steps[0].removed and report["nodes_after"] < report["nodes_before"]


def test_neighbourhood_models_hold_the_rewrite_and_its_context():
    result = optimize(SAMPLES["opt_linear_cleanup"]())
    step = next(s for s in result.steps if s.pattern == "MatMulAdd")
    before = {n.name: n.op_type for n in step.neighbourhood().graph.node}
    after = {n.name: n.op_type for n in step.neighbourhood(after=True).graph.node}
    assert {"matmul", "bias"} <= set(before) and "Gemm" in after.values() and "matmul" not in after
    assert set(before) - {"matmul", "bias"}  # one level of context around the rewritten nodes


def test_a_tiny_model_does_not_grow_past_ten_percent():
    # Nothing to remove: what the optimizer would add are inferred value_info and names for unnamed nodes.
    model = relu_chain(6, declared=False)
    optimized = optimize(model).optimized
    assert ops(optimized) == ["Relu"] * 6
    assert optimized.ByteSize() <= model.ByteSize() * 1.10
    assert len(optimized.graph.value_info) == 0 and all(not n.name for n in optimized.graph.node)


def test_declared_value_info_is_kept():
    model = relu_chain(6, declared=True)
    optimized = optimize(model).optimized
    assert sorted(v.name for v in optimized.graph.value_info) == [f"v{k}" for k in range(1, 6)]
    assert optimized.ByteSize() <= model.ByteSize() * 1.10


def _signature(result):
    return [(s.pattern, s.round, s.graph, s.removed, s.added) for s in result.steps], \
        result.optimized.SerializeToString()


def _work_list_models():
    models = [(name, build()) for name, build in SAMPLES.items()]
    shared = Path(__file__).resolve().parents[3] / "shared" / "models"
    for path in ("Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx",
                 "snakers4__silero-vad/src/silero_vad/data/silero_vad_16k_op15.onnx"):
        if (shared / path).exists():
            models.append((path, onnx.load(str(shared / path))))
    return models


def test_work_list_rounds_rewrite_exactly_as_rounds_over_every_node(monkeypatch):
    """After its first round, the driver matches only nodes near the last edits; the judge is the same driver
    matching every node every round: the same rewrites in the same rounds and the same optimized model, and the
    closing round over every node finds nothing the work list missed."""
    from explorer.optimizer import driver

    drivers = []
    init = driver.Driver.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        drivers.append(self)

    monkeypatch.setattr(driver.Driver, "__init__", spy)
    models = _work_list_models()
    listed = [_signature(optimize(model)) for _, model in models]
    assert all(d.found_by_check == 0 for d in drivers)

    def every_node(state):
        state.edited.clear()
        state.changed_facts.clear()
        return set(state.live)

    monkeypatch.setattr(driver, "near_edits", every_node)
    for (name, model), expected in zip(models, listed):
        assert _signature(optimize(model)) == expected, name


def test_an_unnamed_model_is_kept_as_given_and_its_paths_are_its_node_ids():
    # The optimizer names unnamed nodes on a copy of the graph (without its weights); the original stays the
    # given proto, unnamed, and every removed path is a node id GraphIndex gives it.
    from explorer import load
    from explorer.proto.graph_index import GraphIndex

    model = make([h.make_node("Identity", ["x"], ["a"]), h.make_node("MatMul", ["a", "w"], ["m"]),
                  h.make_node("Add", ["m", "zero"], ["y"])],
                 [info("x", shape=[2, 4])], [info("y", shape=[2, 3])],
                 [tensor("w", np.arange(12).reshape(4, 3)), tensor("zero", [0])])
    loaded = load(model)
    given = loaded.proto.SerializeToString()
    result = optimize(loaded)
    assert result.original is loaded.proto and loaded.proto.SerializeToString() == given
    removed = {p for s in result.steps for p in s.removed}
    added = {p for s in result.steps for p in s.added}
    ids = set(GraphIndex(result.original.graph).nodes)
    assert ids == {"Identity_0", "MatMul_1", "Add_2"} and {"Identity_0", "Add_2"} <= removed <= ids | added
    assert ops(result.optimized) == ["MatMul"]
    proven(result)


def test_the_optimizer_and_graph_index_resolve_names_across_bodies_by_one_rule():
    # main defines h0 and w; the Loop body's input h_in and its If's branch read them: h0 is shadowed nowhere,
    # "w" is redefined by a node of the body, so the branch reads the body's w
    from explorer.proto.graph_index import GraphIndex

    branch = body([h.make_node("Add", ["w", "h0"], ["t"], name="add")], [], [info("t", shape=[2])], name="then")
    cond = h.make_node("If", ["c"], ["s"], name="if", then_branch=branch, else_branch=branch)
    loop = loop_model([h.make_node("Identity", ["h_in"], ["w"], name="w_copy"),
                       h.make_node("Greater", ["i", "zero"], ["c"], name="gt"), cond,
                       h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
                       h.make_node("Identity", ["s"], ["h_out"], name="out")],
                      [info("cond_out", T.BOOL, []), info("h_out", shape=[2]), info("scan", shape=[2])])
    loop.graph.initializer.extend([tensor("zero", 0, np.int64), tensor("w", [1.0, 2.0])])
    loop.graph.node[0].attribute[0].g.node.append(h.make_node("Identity", ["h_in"], ["scan"], name="scan_copy"))
    index = GraphIndex(loop.graph)
    ctx = Context(opsets={"": 18}, ir_version=8)
    main = GraphState(loop.graph, ctx)
    states = {"": main}
    loop_body = GraphState(loop.graph.node[0].attribute[0].g, ctx, path="loop/body", parent=main)
    states["loop/body"] = loop_body
    states["loop/body/if/then_branch"] = GraphState(branch, ctx, path="loop/body/if/then_branch", parent=loop_body)
    for graph_path, state in states.items():
        for name in ("w", "h0", "zero", "c", "t", "nowhere"):
            found = index.resolve(name, graph_path)
            outer = state.outer(name)
            if found is None:
                assert outer is None and not state.visible(name), (graph_path, name)
            elif found.graph.path == graph_path:
                assert outer is None and state.defines(name), (graph_path, name)
            else:
                assert outer is not None and outer.path == found.graph.path, (graph_path, name)
    branch_state = states["loop/body/if/then_branch"]
    assert branch_state.outer("w") is loop_body and branch_state.outer("h0") is main
    assert branch_state.constant("w") is None and branch_state.constant("zero") == 0
