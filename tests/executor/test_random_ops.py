"""Random operators as a user sees them across runs (explorer/executor/ops/streams.py): a seed gives every run
the same values, as a new onnxruntime session's first run does; loop iterations draw new values, the same
ones in every run; no seed, other values each run. What a run records of them, and the output types
onnxruntime gives. Their values' distributions are judged by the differential cases
(tests/differential/cases_draws.py)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from tests.support import control_flow_models as cf
from tests.support.control_flow_models import I64, B, F, graph, node, vi

COUNT = 6


def _loop_model(op: str, **attrs: object) -> explorer.Model:
    """A Loop of three iterations whose body draws `op` (of shape [COUNT]) and stacks the draws."""
    inputs = [] if not op.endswith("Like") else ["like"]
    body = graph([node(op, inputs, ["r"], **attrs), node("Identity", ["c"], ["co"])], "body",
                 [vi("i", I64, []), vi("c", B, [])], [vi("co", B, []), vi("r", F, [COUNT])])
    outer = [node("Loop", ["M", ""], ["stacked"], name="loop", body=body)]
    feeds = [vi("M", I64, [])] + ([vi("like", F, [COUNT])] if inputs else [])
    return explorer.load(cf.model(graph(outer, "g", feeds, [vi("stacked", F, None)])))


def _feeds(op: str) -> dict[str, np.ndarray]:
    feeds = {"M": np.array(3, np.int64)}
    if op.endswith("Like"):
        feeds["like"] = np.zeros(COUNT, np.float32)
    return feeds


@pytest.mark.parametrize("op", ["RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike"])
def test_a_seed_gives_every_run_the_same_values_and_each_iteration_new_ones(op):
    attrs = {"seed": 4.0} if op.endswith("Like") else {"seed": 4.0, "shape": [COUNT]}
    model = _loop_model(op, **attrs)
    first, second = (explorer.run(model, _feeds(op)) for _ in range(2))
    stacked = first.outputs["stacked"]
    assert stacked.shape == (3, COUNT)
    assert np.array_equal(stacked, second.outputs["stacked"])
    assert len({row.tobytes() for row in stacked}) == 3  # every iteration draws new values
    # each iteration's event records what the body drew there
    draws = first.events_of("loop/body/r")
    assert [e.iteration for e in draws] == [(0,), (1,), (2,)]
    for event, row in zip(draws, stacked):
        assert np.array_equal(event.outputs["r"], row)


@pytest.mark.parametrize("op", ["RandomNormal", "RandomUniformLike"])
def test_without_a_seed_every_run_draws_other_values(op):
    model = _loop_model(op, **({} if op.endswith("Like") else {"shape": [COUNT]}))
    runs = [explorer.run(model, _feeds(op)).outputs["stacked"] for _ in range(2)]
    assert not np.array_equal(*runs)


def _one_node(op: str, inputs: list, outputs: list, opset: int = 21, **attrs: object) -> explorer.Model:
    nodes = [node(op, [i.name for i in inputs], [o.name for o in outputs], name="n", **attrs)]
    return explorer.load(cf.model(graph(nodes, "g", inputs, outputs), opset))


def test_a_whole_seed_draws_what_numpys_seeded_generator_draws():
    model = _one_node("RandomUniform", [], [vi("y", T.DOUBLE, None)], shape=[2, 3], seed=7.0, dtype=T.DOUBLE,
                      low=-1.0, high=3.0)
    want = np.random.RandomState(7).uniform(-1.0, 3.0, (2, 3))
    assert np.array_equal(explorer.run(model).outputs["y"], want)


def test_two_nodes_with_one_seed_draw_the_same_values_and_other_seeds_others():
    nodes = [node("RandomNormal", [], [name], name=name, shape=[5], seed=seed)
             for name, seed in (("a", 1.5), ("b", 1.5), ("c", -1.5), ("d", 1.0))]
    model = explorer.load(cf.model(graph(nodes, "g", [], [vi(n, F, None) for n in "abcd"])))
    a, b, c, d = (explorer.run(model).outputs[n] for n in "abcd")
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(a, d) and not np.array_equal(c, d)


def test_a_scalar_shape_draws_one_value_as_onnxruntime_does():
    shape = h.make_attribute("shape", [], attr_type=h.AttributeProto.INTS)  # make_node cannot type an empty list
    proto = node("RandomNormal", [], ["y"], name="n")
    proto.attribute.append(shape)
    proto_model = cf.model(graph([proto], "g", [], [vi("y", F, None)]))
    got = explorer.run(explorer.load(proto_model)).outputs["y"]
    want = cf.ort_run(proto_model, {})["y"]
    assert (got.dtype, got.shape) == (want.dtype, want.shape) == (np.float32, ())


def test_a_training_dropout_draws_its_mask_from_its_stream():
    inputs = [vi("x", F, [400]), vi("ratio", F, []), vi("training", B, [])]
    feeds = {"x": np.ones(400, np.float32), "ratio": np.array(0.5, np.float32), "training": np.array(True)}
    seeded = _one_node("Dropout", inputs, [vi("y", F, None), vi("mask", B, None)], seed=3)
    masks = [explorer.run(seeded, feeds).outputs["mask"] for _ in range(2)]
    assert np.array_equal(*masks) and 100 < masks[0].sum() < 300
    unseeded = _one_node("Dropout", inputs, [vi("y", F, None), vi("mask", B, None)])
    masks = [explorer.run(unseeded, feeds).outputs["mask"] for _ in range(2)]
    assert not np.array_equal(*masks)


@pytest.mark.parametrize("op, attrs, message", [
    ("NegativeLogLikelihoodLoss", {}, "the target holds 7, outside the 3 classes [0, 3)"),
    ("SoftmaxCrossEntropyLoss", {"ignore_index": -1}, "the target holds 7, outside the 3 classes [0, 3) and is "
                                                      "not ignore_index (-1)"),
])
def test_a_target_outside_the_classes_is_an_error_naming_the_node_and_the_value(op, attrs, message):
    model = _one_node(op, [vi("x", F, [2, 3]), vi("t", I64, [2])], [vi("loss", F, None)], **attrs)
    with pytest.raises(explorer.ExecutionError) as info:
        explorer.run(model, {"x": np.zeros((2, 3), np.float32), "t": np.array([0, 7], np.int64)})
    assert info.value.node == "n" and "node 'n'" in str(info.value) and message in str(info.value)
    assert "IndexError" not in str(info.value)
    assert info.value.trace.events[-1].info["error"] == str(info.value)


def test_a_comparison_says_a_random_node_differs_by_design():
    """Against onnxruntime (another generator), the first divergence is the random node, and the comparison says
    that it and what it feeds differ by design; a model without one gets no such note."""
    graph = h.make_graph(
        [h.make_node("RandomNormalLike", ["x"], ["r"], name="noise", seed=1.0),
         h.make_node("Add", ["x", "r"], ["y"], name="add")], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [4])],
        [h.make_tensor_value_info("y", T.FLOAT, [4])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    feeds = {"x": np.zeros(4, np.float32)}
    found = explorer.compare(model, "onnxruntime", feeds)
    assert found.first.node == "noise" and "differ here by design" in found.first.describe()
    assert any("draw random values (noise)" in note for note in found.notes)
    model.graph.node[0].CopyFrom(h.make_node("Neg", ["x"], ["r"], name="noise"))
    plain = explorer.compare(model, "onnxruntime", feeds)
    assert plain.first is None and not any("random" in note for note in plain.notes)


def test_every_operator_with_a_drawing_kernel_is_listed_as_nondeterministic():
    """One list says which operators draw random values (spec/random_ops.py): the executor's memo, the optimizer's
    folds and compare's excuses all read it, so a drawing kernel missing from it would be folded or remembered."""
    from explorer.executor.ops.draws import KERNELS
    from explorer.spec.random_ops import NONDETERMINISTIC

    assert set(KERNELS) <= NONDETERMINISTIC
