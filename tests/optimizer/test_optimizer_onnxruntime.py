"""The optimizer and onnxruntime: every optimized model loads in onnxruntime wherever the original does (a rewrite
whose result onnxruntime refuses is not applied, found by bisection at the end of the optimization), and the proof
hands onnxruntime the original as the user's file has it, saying "explorer only" when onnxruntime cannot run it.
Real exports of tests/models show both: a rewrite the spec allows but onnxruntime refuses on a PyTorch LSTM, and a
model computing in bfloat16 that onnxruntime refuses before and after."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer.judge.judge import Judge, using_judge
from explorer.optimizer import Pattern, optimize
from explorer.optimizer.pattern import CLEANUP, STRUCTURE
from explorer.optimizer.patterns import default_patterns
from explorer.optimizer.verify import compare_models, verify
from tests.support.optimizer_models import info, make, proven, tensor

TORCH_EXPORTS = Path(__file__).parents[1] / "models" / "torch_exports"


class BadReshapePattern(Pattern):
    """Tanh(x) -> Tanh(Reshape(x, [-1, 7])) for a graph input x: onnxruntime's shape inference refuses the
    result when x has 6 elements (the bug the load check must catch; explorer only fails when it runs)."""

    op_types = ("Tanh",)
    priority = CLEANUP

    def match(self, g, node):
        return self.result([node]) if g.producer(node.input[0]) is None else None

    def apply(self, g, node):
        shape, target = g.make_constant(np.array([-1, 7], np.int64))
        flat = g.unique_name("flat")
        return [shape, g.make_node("Reshape", [node.input[0], target], [flat]),
                g.make_node("Tanh", [flat], [node.output[0]])]


def tanh_model() -> onnx.ModelProto:
    nodes = [h.make_node("Tanh", ["x"], ["t"], name="tanh"), h.make_node("Identity", ["t"], ["y"], name="copy")]
    return make(nodes, [info("x", shape=[2, 3])], [info("y", shape=[2, 3])])


FEEDS = {"x": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)}


def test_a_rewrite_whose_result_onnxruntime_refuses_is_not_applied_and_says_why():
    result = optimize(tanh_model(), patterns=[BadReshapePattern(), "IdentityRemoval"])
    assert [n.op_type for n in result.optimized.graph.node] == ["Tanh"]  # the Identity went, the Tanh stayed
    check = result.onnxruntime
    assert check is not None and check.status == "loads"
    assert len(check.refused) == 1 and check.refused[0].startswith("BadReshape on tanh: ")
    [decline] = [d for d in result.declined if d.pattern == "BadReshape"]
    assert decline.node == "tanh" and "onnxruntime refuses the model this rewrite gives: " in decline.reason
    assert "Dimension could not be inferred" in decline.reason
    assert "not applied, onnxruntime refuses its result: BadReshape on tanh" in result.stats_table()
    assert result.to_dict()["onnxruntime"]["status"] == "loads"
    proven(result, FEEDS)


def test_without_the_check_the_proof_says_the_optimization_failed_and_names_the_rewrite():
    result = optimize(tanh_model(), patterns=[BadReshapePattern(), "IdentityRemoval"], check=False)
    assert result.onnxruntime is not None and result.onnxruntime.status == "not checked"
    verdict = verify(result, FEEDS)
    assert verdict.status == "different" and verdict.failed_in_onnxruntime
    lines = "\n".join(verdict.lines())
    assert "onnxruntime runs the original, not the optimized model: the optimization failed" in lines
    assert "first rewrite whose result onnxruntime refuses: #0 BadReshape" in lines


class BatchFirstLstmPattern(Pattern):
    """LSTM(Transpose(x, [1, 0, 2])) -> LSTM(x, layout=1) with its outputs transposed back: the spec's batch-first
    layout (LSTM-14) reads x as it is and gives Y [batch, seq, directions, hidden], Y_h and Y_c [batch,
    directions, hidden]. Sound by the spec, and explorer runs it; onnxruntime refuses any RNN of layout 1."""

    op_types = ("LSTM",)
    priority = STRUCTURE

    def match(self, g, node):
        source = g.producer(node.input[0])
        if source is None or source.op_type != "Transpose" or g.attribute(source, "perm") != [1, 0, 2]:
            return None
        if g.attribute(node, "layout", 0) != 0 or any(node.input[4:]):
            return None  # sequence lengths and initial states would change layout too
        return self.result([source, node])

    def apply(self, g, source, node):
        outputs, back = [], []
        for name, perm in zip(node.output, ([1, 2, 0, 3], [1, 0, 2], [1, 0, 2])):
            outputs.append(g.unique_name("batch_first") if name else "")
            if name:
                back.append(g.make_node("Transpose", [outputs[-1]], [name], perm=perm))
        lstm = node.copy()
        lstm.input[0] = source.input[0]
        del lstm.output[:]
        lstm.output.extend(outputs)
        lstm.attribute.append(h.make_attribute("layout", 1))
        return [source, lstm, *back]


def test_a_rewrite_onnxruntime_refuses_on_a_real_export_is_not_applied_and_says_why():
    """torch.onnx's nn.LSTM(batch_first=True): the first layer reads Transpose(x, [1, 0, 2]). Batch-first, the
    model is the same by the spec (explorer's own run says so below), but onnxruntime refuses layout 1 when it
    loads the model: the rewrite is declined with onnxruntime's reason, and the rest of the optimization stays."""
    path = TORCH_EXPORTS / "ts_lstm_2layer.onnx"
    patterns = [BatchFirstLstmPattern(), *default_patterns()]
    result = optimize(str(path), patterns=patterns)
    check = result.onnxruntime
    assert check is not None and check.status == "loads", check
    [refused] = check.refused
    assert refused.startswith("BatchFirstLstm on /lstm/Transpose, /lstm/LSTM: ")
    assert "Batchwise recurrent operations (layout == 1) are not supported" in refused
    [decline] = [d for d in result.declined if d.pattern == "BatchFirstLstm"]
    assert decline.node == "/lstm/LSTM" and decline.reason.startswith("onnxruntime refuses the model this rewrite gives")
    assert "not applied, onnxruntime refuses its result: BatchFirstLstm on /lstm/Transpose, /lstm/LSTM" in result.stats_table()
    assert all(s.pattern != "BatchFirstLstm" for s in result.steps)
    layouts = [n.attribute for n in result.optimized.graph.node if n.op_type == "LSTM"]
    assert len(layouts) == 2 and all(a.name != "layout" or a.i == 0 for atts in layouts for a in atts)
    assert result.node_counts()[1] == optimize(str(path)).node_counts()[1]  # every other rewrite applied
    ort.InferenceSession(result.optimized.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for shape in ((2, 5, 3), (3, 7, 3)):
        proven(result, {"x": rng.standard_normal(shape).astype(np.float32)})

    unchecked = optimize(str(path), patterns=patterns, check=False)
    assert [s.pattern for s in unchecked.steps].count("BatchFirstLstm") == 1
    verdict = verify(unchecked, {"x": rng.standard_normal((2, 5, 3)).astype(np.float32)})
    reports = {r.judge: r for r in verdict.reports}
    assert reports["explorer"].ok  # the rewrite is sound: explorer runs layout 1 to the same values
    assert "Batchwise recurrent operations (layout == 1) are not supported" in reports["onnxruntime"].error
    assert verdict.status == "different" and verdict.failed_in_onnxruntime
    lines = "\n".join(verdict.lines())
    assert "onnxruntime runs the original, not the optimized model: the optimization failed" in lines
    assert verdict.culprit is not None and verdict.culprit.pattern == "BatchFirstLstm"
    assert "first rewrite whose result onnxruntime refuses: " in lines


class RecordingJudge:
    """A judge that keeps every model it is handed (serialized) and asks a real onnxruntime."""

    def __init__(self, refuse_value_info: str | None = None) -> None:
        self.real = Judge()
        self.models: list[bytes] = []
        self.refuse_value_info = refuse_value_info

    def run(self, model: Any, feeds: dict[str, Any], outputs=None, *, timeout=None) -> dict[str, Any]:
        self.models.append(model.SerializeToString())
        return self.real.run(model, feeds, outputs, timeout=timeout)

    def warm(self) -> None:
        self.real.warm()

    def load(self, model: Any, *, timeout=None) -> None:
        from explorer.judge.judge import NoVerdict

        if self.refuse_value_info in {i.name for i in model.graph.value_info}:
            raise NoVerdict("refused", f"onnxruntime refused: a type for {self.refuse_value_info} it disagrees with")
        self.real.load(model, timeout=timeout)


def test_the_proof_hands_onnxruntime_the_original_exactly_as_its_file_has_it(tmp_path):
    path = tmp_path / "model.onnx"
    onnx.save(tanh_model(), path)
    loaded = explorer.load(path)
    assert any(i.name == "t" for i in loaded.graph.value_info)  # loading inferred a type the file does not give
    assert loaded.as_given().SerializeToString() == onnx.load(path).SerializeToString()
    judge = RecordingJudge()
    with using_judge(judge):
        assert compare_models(str(path), tanh_model(), FEEDS).status == "equivalent"
        proven(optimize(str(path)), FEEDS)
    assert judge.models[0] == judge.models[2] == path.read_bytes()
    judge.real.close()


def test_big_weights_are_handed_over_with_the_graph_as_given():
    big = tensor("big", np.ones((3, 8000), np.float32))  # 96 KB: loading infers types without it
    nodes = [h.make_node("MatMul", ["x", "big"], ["m"], name="mm"), h.make_node("Relu", ["m"], ["y"], name="relu")]
    model = make(nodes, [info("x", shape=[2, 3])], [info("y", shape=[2, 8000])], [big])
    loaded = explorer.load(model)
    assert [i.name for i in loaded.graph.value_info] == ["m"]
    assert loaded.as_given().SerializeToString() == model.SerializeToString()


def test_types_onnxruntime_refuses_before_any_rewrite_are_left_out():
    """When even the model before any rewrite is refused, no rewrite is to blame: the value types the optimizer
    inferred (here the one of `t`, as a judge refusing it plays onnxruntime disagreeing with onnx) go."""
    nodes = [h.make_node("Tanh", ["x"], ["t"], name="tanh"), h.make_node("Identity", ["t"], ["u"], name="copy"),
             h.make_node("MatMul", ["u", "w"], ["y"], name="mm")]
    weight = tensor("w", np.linspace(-1, 1, 300).reshape(3, 100))  # a file big enough to hold the types
    judge = RecordingJudge(refuse_value_info="t")
    with using_judge(judge):
        result = optimize(make(nodes, [info("x", shape=[2, 3])], [info("y", shape=[2, 100])], [weight]),
                          patterns=["IdentityRemoval"])
        proven(result, FEEDS)
    judge.real.close()
    check = result.onnxruntime
    assert check is not None and check.status == "loads" and check.value_info_dropped and not check.refused
    assert not result.optimized.graph.value_info
    assert optimize(result.original, patterns=["IdentityRemoval"]).optimized.graph.value_info  # unless refused
    assert result.steps and [n.op_type for n in result.optimized.graph.node] == ["Tanh", "MatMul"]
    assert "the value types the optimizer inferred are left out" in result.stats_table()


def rnn_lowercase() -> onnx.ModelProto:
    """An RNN with a lower-case activation name: explorer runs it, onnxruntime refuses to load it."""
    rng = np.random.default_rng(0)
    nodes = [h.make_node("Identity", ["x"], ["x1"], name="copy"),
             h.make_node("RNN", ["x1", "W", "R"], ["", "yh"], name="rnn", hidden_size=4, activations=["tanh"])]
    return make(nodes, [info("x", shape=[5, 2, 3])], [info("yh", shape=[1, 2, 4])],
                [tensor("W", rng.standard_normal((1, 4, 3))), tensor("R", rng.standard_normal((1, 4, 4)))])


def test_when_onnxruntime_refuses_the_original_the_verdict_is_explorer_only():
    result = optimize(rnn_lowercase())
    assert result.onnxruntime is not None and result.onnxruntime.status == "original refused"
    assert "Invalid activation attribute - tanh" in result.onnxruntime.detail
    verdict = verify(result)
    assert verdict.status == "explorer only" and not verdict.ok
    assert verdict.lines()[-1] == ("equivalence: explorer only (onnxruntime gave no verdict on the original; "
                                   "explorer finds the models equivalent)")


def shared_name_branches() -> onnx.ModelProto:
    """Both branches of an If compute `s = Shape(...)` and `c = ConstantOfShape(s)` under the same names, as
    optimum's merged decoders do: the then branch from x [b, 3, 2], the else branch from x flattened ([6b])."""
    def branch(name: str, source: str) -> onnx.GraphProto:
        nodes = [h.make_node("Shape", [source], ["s"], name="shape"),
                 h.make_node("ConstantOfShape", ["s"], ["c"], name="fill"),
                 h.make_node("Identity", ["c"], ["y"], name="copy")]
        return h.make_graph(nodes, name, [], [info("y", shape=None)])

    nodes = [h.make_node("Reshape", ["x", "flat"], ["xf"], name="flatten"),
             h.make_node("If", ["cond"], ["out"], name="pick", then_branch=branch("then", "x"),
                         else_branch=branch("else", "xf"))]
    return make(nodes, [info("cond", T.BOOL, []), info("x", shape=["b", 3, 2])], [info("out", shape=None)],
                [tensor("flat", [-1], np.int64)])


def test_values_of_the_same_name_in_two_branches_keep_their_own_shapes():
    """onnx's data propagation keeps one value per name across graphs: it gives the else branch's fill the then
    branch's shape [b, 3, 2]. Loading infers without it for such a model, so the else branch's fill is rank 1."""
    loaded = explorer.load(shared_name_branches())
    branches = {a.name: a.g for a in loaded.graph.node[1].attribute}
    ranks = {name: {i.name: len(i.type.tensor_type.shape.dim) for i in g.value_info} for name, g in branches.items()}
    assert ranks["then_branch"]["c"] == 3 and ranks["else_branch"]["c"] == 1
    result = optimize(loaded)
    x = np.ones((2, 3, 2), np.float32)
    for cond in (True, False):
        proven(result, {"cond": np.array(cond), "x": x})


def test_a_real_export_onnxruntime_refuses_before_and_after_is_equivalent_by_explorer_only():
    """A PyTorch attention block computing in bfloat16 (torch.onnx, traced): onnxruntime has no bfloat16 MatMul
    on the CPU and refuses the export and its optimized model alike. The optimizer still rewrites it, says
    onnxruntime refused the original, and the verdict is "explorer only", never "equivalent"; explorer's runs of
    both models give PyTorch's own outputs (reference/, the recipe's) within bfloat16's precision."""
    path = TORCH_EXPORTS / "ts_attention_bfloat16.onnx"
    missing = "Could not find an implementation for MatMul(13) node with name '/qkv/MatMul'"
    result = optimize(str(path))
    before, after = result.node_counts()
    assert after < before and {s.pattern for s in result.steps} >= {"ComputedReshape", "CommonSubexpression"}
    for model in (onnx.load(str(path)), result.optimized):
        with pytest.raises(Exception, match=r"NOT_IMPLEMENTED.*" + missing.replace("(", r"\(").replace(")", r"\)")):
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    check = result.onnxruntime
    assert check is not None and check.status == "original refused" and missing in check.detail
    assert "onnxruntime refuses the original model too" in result.stats_table()
    reference = np.load(TORCH_EXPORTS / "reference" / "ts_attention_bfloat16.npz")
    x, expected = reference["inputs/x"], reference["outputs/y"]
    for feeds in ({"x": x}, {"x": np.random.default_rng(1).standard_normal((3, 7, 16)).astype(np.float32)}):
        verdict = verify(result, feeds)
        assert verdict.status == "explorer only" and not verdict.ok
        reports = {r.judge: r for r in verdict.reports}
        assert reports["explorer"].ok and missing in reports["onnxruntime"].unavailable
        assert verdict.lines()[-1] == ("equivalence: explorer only (onnxruntime gave no verdict on the original; "
                                       "explorer finds the models equivalent)")
    for model in (explorer.load(path), explorer.load(result.optimized)):
        got = explorer.run(model, {"x": x}).outputs["y"]
        # bfloat16 keeps 8 significant bits: within two units of the last (2**-6), absolutely near zero
        np.testing.assert_allclose(got, expected, rtol=2**-6, atol=2**-6)
