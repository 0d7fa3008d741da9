"""Rounding is not divergence: a value's difference its inputs' differences explain (the node re-run on B's values
of its inputs), an accumulation's rounding (epsilon · Σ|a|·|b|), a normalized tensor's rounding near zero, and
indices that differ only among equal values (a tie order) are reported as such, not as the first divergence; a
difference none of them explains still is, where it was planted."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import explorer
from explorer.compare import compare
from explorer.compare.own_error import ACCUMULATED, CARRIED
from explorer.compare.precision import FLOAT32
from explorer.compare.rounding import assess
from explorer.compare.stats import compare_values
from explorer.optimizer.verify import compare_models
from explorer.spec.random_ops import draws

RNG = np.random.default_rng(0)


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = h.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]))


def _info(name, shape, elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, shape)


def _pow_model():
    eight = nh.from_array(np.array(8.0, np.float32), "eight")
    return _model([h.make_node("Abs", ["x"], ["a"], name="abs"), h.make_node("Pow", ["a", "eight"], ["y"], name="pow")],
                  [_info("x", [16])], [_info("y", [16])], [eight])


def test_a_power_of_an_input_that_agrees_carries_its_rounding_not_a_divergence():
    """B's |x| is 5e-5 away (within float32's 1e-4): x^8 is 4e-4 away, which Pow's input explains."""
    x = RNG.uniform(0.5, 2, 16).astype(np.float32)
    near = (np.abs(x) * np.float32(1 + 5e-5)).astype(np.float32)
    reference = {"a": near, "y": (near ** 8).astype(np.float32)}
    result = compare(_pow_model(), reference, {"x": x})
    assert result.first is None and not result.differs
    pow_y = result.value("pow", "y")
    assert pow_y.max_rel > 1e-4 and pow_y.errors[0].within == CARRIED
    assert pow_y.errors[0].own_error is not None and pow_y.errors[0].own_error < 1e-4
    assert CARRIED in result.within


def test_a_planted_fault_after_agreeing_inputs_is_still_the_first_divergence():
    x = RNG.uniform(0.5, 2, 16).astype(np.float32)
    near = (np.abs(x) * np.float32(1 + 5e-5)).astype(np.float32)
    wrong = (near ** 8).astype(np.float32)
    wrong[3] *= np.float32(1.01)
    result = compare(_pow_model(), {"a": near, "y": wrong}, {"x": x})
    assert (result.first.node, result.first.name) == ("pow", "y") and result.differs


def test_a_matmul_that_cancels_is_judged_by_the_magnitudes_it_sums():
    """Float32 products of large terms summing to nearly zero, against their exact (float64) sums: the error is
    float32's rounding of the terms, far above 1e-4 of the tiny result, within epsilon · Σ|a|·|b|."""
    x = (RNG.standard_normal((4, 256)) * 100).astype(np.float32)
    w = RNG.standard_normal((256, 3)).astype(np.float32)
    w[-1] = -(x[0, :-1] @ w[:-1].astype(np.float64)) / x[0, -1]  # column sums of row 0 near zero
    model = _model([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [_info("x", [4, 256])],
                   [_info("y", [4, 3])], [nh.from_array(w, "w")])
    exact = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)
    assert not compare_values("y", explorer.run(model, {"x": x}).outputs["y"], exact).ok  # float32's tolerance
    result = compare(model, {"y": exact}, {"x": x})
    assert result.first is None and result.value("mm").errors[0].within == ACCUMULATED
    wrong = exact.copy()
    wrong[1, 1] += 1.0
    assert compare(model, {"y": wrong}, {"x": x}).first.node == "mm"


def test_a_normalized_value_near_zero_carries_the_tensor_s_rounding():
    x = RNG.standard_normal((1, 2, 50)).astype(np.float32)
    model = _model([h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="norm")],
                   [_info("x", [1, 2, 50])], [_info("y", [1, 2, 50])],
                   [nh.from_array(np.ones(2, np.float32), "s"), nh.from_array(np.zeros(2, np.float32), "b")])
    ours = explorer.run(model, {"x": x}).outputs["y"]
    theirs = ours.copy()
    k = int(np.argmin(np.abs(ours)))
    theirs.flat[k] += np.float32(2e-5)  # a value near zero, 2e-5 away: "rel" huge, the tensor's scale is 1
    assert not compare_values("y", ours, theirs).ok
    assert assess("y", ours, theirs, FLOAT32, "InstanceNormalization").ok
    result = compare(model, {"y": theirs}, {"x": x})
    assert result.first is None
    theirs.flat[k] += np.float32(1e-2)
    assert compare(model, {"y": theirs}, {"x": x}).first.node == "norm"


def test_topk_indices_that_differ_among_equal_values_are_a_tie_order():
    x = np.array([[3.0, 1.0, 3.0, 0.5, 2.0]], np.float32)
    table = np.arange(5, dtype=np.float32) * 10
    model = _model([h.make_node("TopK", ["x", "k"], ["values", "indices"], name="topk", axis=1),
                    h.make_node("Gather", ["table", "indices"], ["picked"], name="pick")],
                   [_info("x", [1, 5])], [_info("picked", [1, 2])],
                   [nh.from_array(np.array([2], np.int64), "k"), nh.from_array(table, "table")])
    ours = explorer.run(model, {"x": x})
    indices = ours.event("topk").outputs["indices"]
    swapped = indices[:, ::-1].copy()  # the two 3.0 in the other order
    reference = {"values": ours.event("topk").outputs["values"], "indices": swapped, "picked": table[swapped]}
    result = compare(model, reference, {"x": x})
    assert result.first is None and not result.differs
    topk = result.value("topk", "indices").errors[0]
    assert topk.within.startswith("tie order") and topk.within.endswith("downstream it changes pick")
    assert result.value("pick", "picked").errors[0].within == CARRIED  # what the tie order changes downstream
    other = reference | {"indices": np.array([[0, 4]], np.int64), "picked": table[[[0, 4]]]}
    assert compare(model, other, {"x": x}).first.node == "topk"  # 3.0 against 2.0: no tie


def test_dropout_in_inference_draws_nothing():
    proto = h.make_node("Dropout", ["x", "r", "t"], ["y"])
    assert not draws("Dropout", {"x": 0, "r": np.float32(0.5)}, h.make_node("Dropout", ["x", "r"], ["y"]))
    assert not draws("Dropout", {"r": np.float32(0.5), "t": np.bool_(False)}, proto)
    assert not draws("Dropout", {"r": np.float32(0.0), "t": np.bool_(True)}, proto)
    assert draws("Dropout", {"r": np.float32(0.5), "t": np.bool_(True)}, proto)
    assert draws("RandomNormal", {})
    model = _model([h.make_node("Dropout", ["x"], ["y"], name="drop")], [_info("x", [4])], [_info("y", [4])])
    x = np.ones(4, np.float32)
    result = compare(model, {"y": x + 1}, {"x": x})
    assert result.first.node == "drop" and "random" not in result.first.note and not result.drawn


def test_the_optimizer_s_proof_judges_a_normalization_s_output_by_its_scale():
    """A BatchNormalization folded by hand into the Conv before it, over large activations, with a bias that
    puts an output of each channel near zero: the folded weights round differently, so those values differ by
    far more than 1e-4 of themselves; the proof judges them by the tensor's scale."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((1, 3, 8, 8)) * 100).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    scale = rng.uniform(0.5, 2, 4).astype(np.float32)
    mean, var = rng.standard_normal(4).astype(np.float32), rng.uniform(0.5, 2, 4).astype(np.float32)
    k = scale / np.sqrt(var + 1e-5)
    shape = ([_info("x", [1, 3, 8, 8])], [_info("y", [1, 4, 6, 6])])
    conv = explorer.run(_model([h.make_node("Conv", ["x", "w"], ["y"])], *shape, [nh.from_array(w, "w")]),
                        {"x": x}).outputs["y"]
    bias = (-(conv[0, :, 2, 3] - mean) * k).astype(np.float32)  # each channel's output at (2, 3) near zero
    conv_bn = _model([h.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                      h.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"], name="bn")], *shape,
                     [nh.from_array(a, n) for a, n in ((w, "w"), (scale, "s"), (bias, "b"), (mean, "m"), (var, "v"))])
    folded = _model([h.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")], *shape,
                    [nh.from_array((w * k[:, None, None, None]).astype(np.float32), "w"),
                     nh.from_array((bias - mean * k).astype(np.float32), "b")])
    before = explorer.run(conv_bn, {"x": x}).outputs["y"]
    after = explorer.run(folded, {"x": x}).outputs["y"]
    assert not compare_values("y", after, before).ok  # near-zero values, far apart relative to themselves
    verdict = compare_models(conv_bn, folded, {"x": x}, judges=("explorer",))
    assert verdict.status == "equivalent", verdict.lines()
    wrong = _model([h.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")], *shape,
                   [nh.from_array((w * k[:, None, None, None]).astype(np.float32), "w"),
                    nh.from_array((bias - mean * k + 1.0).astype(np.float32), "b")])  # 2e-3 of the scale
    assert compare_models(conv_bn, wrong, {"x": x}, judges=("explorer",)).status == "different"


def test_float16_head_against_onnxruntime_agrees_within_float16_rounding():
    """A float16 MatMul and Add: onnxruntime accumulates and rounds otherwise than explorer, by float16's
    rounding: the comparison agrees, within float16 rounding; at float32's tolerance it would not."""
    rng = np.random.default_rng(0)
    w = nh.from_array((rng.standard_normal((64, 8)) * 0.3).astype(np.float16), "W")
    b = nh.from_array(rng.standard_normal(8).astype(np.float16), "B")
    model = _model([h.make_node("MatMul", ["x", "W"], ["mm"], name="/head/MatMul"),
                    h.make_node("Add", ["mm", "B"], ["y"], name="/head/Add")],
                   [_info("x", [4, 64], T.FLOAT16)], [_info("y", [4, 8], T.FLOAT16)], [w, b])
    feeds = {"x": (rng.standard_normal((4, 64)) * 3).astype(np.float16)}
    result = compare(model, "onnxruntime", feeds)
    assert result.first is None and not result.differs and all(d.ok for d in result.outputs)
    assert result.value("/head/Add").tolerance.precision == "float16"
    assert compare(model, "onnxruntime", feeds, rtol=1e-4, atol=1e-5).differs


def test_non_max_suppression_picks_that_differ_among_equal_scores_are_a_tie_order():
    boxes = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5], [6, 6, 7, 7]]], np.float32)
    scores = np.array([[[0.9, 0.5, 0.9, 0.2]]], np.float32)
    model = _model([h.make_node("NonMaxSuppression", ["boxes", "scores", "most"], ["picked"], name="nms")],
                   [_info("boxes", [1, 4, 4]), _info("scores", [1, 1, 4])],
                   [h.make_tensor_value_info("picked", T.INT64, None)],
                   [nh.from_array(np.array([2], np.int64), "most")])
    feeds = {"boxes": boxes, "scores": scores}
    ours = explorer.run(model, feeds).outputs["picked"]
    assert sorted(ours[:, 2]) == [0, 2]
    result = compare(model, {"picked": ours[::-1].copy()}, feeds)  # the two 0.9 boxes in the other order
    assert result.first is None and result.value("nms").errors[0].within.startswith("tie order")
    other = ours.copy()
    other[1, 2] = 1  # a 0.5 box for a 0.9 one: no tie
    assert compare(model, {"picked": other}, feeds).first.node == "nms"


def test_a_bfloat16_export_agrees_with_pytorch_within_bfloat16_rounding():
    """A real TorchScript export computing in bfloat16 (its output cast back to float32) against PyTorch's own
    output: the output carries bfloat16's rounding, and is judged at bfloat16's precision."""
    from pathlib import Path

    exports = Path(__file__).resolve().parents[1] / "models" / "torch_exports"
    reference = dict(np.load(exports / "reference" / "ts_attention_bfloat16.npz"))
    model = explorer.load(exports / "ts_attention_bfloat16.onnx")
    result = compare(model, {"y": reference["outputs/y"]}, {"x": reference["inputs/x"]})
    assert result.first is None and result.within == ["bfloat16 rounding"]
    assert result.value("/Cast_3", "y").tolerance.precision == "bfloat16"
    assert compare(model, {"y": reference["outputs/y"]}, {"x": reference["inputs/x"]}, rtol=1e-4,
                   atol=1e-5).differs


def test_a_quantized_value_one_step_away_agrees_within_one_quantization_step():
    model = _model([h.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], name="quantize")],
                   [_info("x", [6])], [h.make_tensor_value_info("q", T.UINT8, [6])],
                   [nh.from_array(np.array(0.1, np.float32), "scale"), nh.from_array(np.array(0, np.uint8), "zero")])
    x = np.array([0.05, 0.15, 0.26, 1.0, 2.5, 0.0], np.float32)
    ours = explorer.run(model, {"x": x}).outputs["q"]
    rounded_up = ours.copy()
    rounded_up[0] += 1  # 0.05 / 0.1 = 0.5 rounded the other way
    result = compare(model, {"q": rounded_up}, {"x": x})
    assert result.first is None and result.within == ["one quantization step"]
    rounded_up[3] += 2
    assert compare(model, {"q": rounded_up}, {"x": x}).first.node == "quantize"
