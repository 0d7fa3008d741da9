"""explorer reduce: the smallest part of a model that still parts the same way, written as a folder onnxruntime
alone can check (the cut model(s), ONNX test data with the other side's value as the expected output, a README).
Cases: a change planted at one iteration of a Loop body (cut to the body's departing node, from 13 nodes), the
same model against reference values of its outputs, and a Keras LSTM against its float16 conversion."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

import explorer
from explorer.cli import main
from tests.support.share_models import DEPARTING_ITERATION, FEEDS, loop_model

KERAS = Path(__file__).parents[1] / "models" / "keras_exports"
RTOL, ATOL = 1e-4, 1e-5


def _test_data(folder: Path) -> tuple[list[np.ndarray], np.ndarray]:
    inputs = [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in sorted(folder.glob("input_*.pb"))]
    return inputs, numpy_helper.to_array(onnx.load_tensor(str(folder / "output_0.pb")))


def _onnxruntime(model: Path, inputs: list[np.ndarray]) -> np.ndarray:
    onnx.checker.check_model(onnx.load(str(model)), full_check=True)
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip([i.name for i in session.get_inputs()], inputs)))[0]


def _parts(got: np.ndarray, expected: np.ndarray) -> bool:
    return not np.allclose(got.astype(np.float64), expected.astype(np.float64), rtol=RTOL, atol=ATOL)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reduce")
    for scale, name in ((1.0, "a.onnx"), (1.5, "b.onnx")):
        (folder / name).write_bytes(loop_model(scale).SerializeToString())
    np.savez(folder / "x.npz", **FEEDS)
    changed = explorer.run(explorer.load(loop_model(1.5)), FEEDS)
    np.savez(folder / "reference.npz", ys=changed.outputs["ys"], out=changed.outputs["out"])
    return folder


def test_a_change_at_one_loop_iteration_reduces_to_the_body(files, capsys):
    out = files / "loop"
    code = main(["reduce", str(files / "a.onnx"), "--against", str(files / "b.onnx"), "--inputs",
                 str(files / "x.npz"), "-o", str(out)])
    assert code == 0
    assert "reduced from 13 nodes to 1 of 'loop/body/branch/then_branch'" in capsys.readouterr().out
    a = onnx.load(str(out / "model_a.onnx"))
    assert len(a.graph.node) <= 10 and [n.op_type for n in a.graph.node] == ["Mul"]
    assert [i.name for i in a.graph.input] == ["act"]  # what the body's If read at iteration 3
    inputs, expected = _test_data(out / "test_data_set_0")
    full = explorer.run(explorer.load(loop_model(1.0)), FEEDS)
    np.testing.assert_array_equal(inputs[0], full.event("loop/body/act", (DEPARTING_ITERATION,)).outputs["act"])
    assert _parts(_onnxruntime(out / "model_a.onnx", inputs), expected)  # onnxruntime alone shows the divergence
    assert not _parts(_onnxruntime(out / "model_b.onnx", inputs), expected)  # B's own cut gives the expected
    readme = (out / "README.md").read_text()
    assert "loop/body/branch/then_branch/scale" in readme and "at iteration (3,)" in readme
    assert "onnxruntime 1." in readme and f"explorer reduce {files / 'a.onnx'} --against {files / 'b.onnx'}" in readme
    assert main(["compare", str(out / "model_a.onnx"), str(out / "model_b.onnx"), "--inputs",
                 str(out / "test_data_set_0")]) == 1


def test_against_reference_values(files):
    out = files / "reference"
    assert main(["reduce", str(files / "a.onnx"), "--reference", str(files / "reference.npz"), "--inputs",
                 str(files / "x.npz"), "-o", str(out)]) == 0
    model = onnx.load(str(out / "model.onnx"))
    assert [n.op_type for n in model.graph.node] == ["Loop"]  # the Identity before it is cut at its value
    inputs, expected = _test_data(out / "test_data_set_0")
    np.testing.assert_array_equal(expected, np.load(files / "reference.npz")["ys"])
    assert _parts(_onnxruntime(out / "model.onnx", inputs), expected)


def test_a_float16_conversion_against_its_original(tmp_path):
    """The float16 form reads its input through a Cast: its cut takes its own float16 input, in a test data set
    of its own; both cuts part as the full models do."""
    out = tmp_path / "fp16"
    assert main(["reduce", str(KERAS / "keras_lstm.onnx"), "--against", str(KERAS / "keras_lstm_fp16.onnx"),
                 "--rtol", str(RTOL), "--atol", str(ATOL), "-o", str(out)]) == 0
    full = explorer.load(KERAS / "keras_lstm.onnx")
    reduced = onnx.load(str(out / "model_a.onnx"))
    assert len(reduced.graph.node) < len(full.index.nodes)
    inputs, expected = _test_data(out / "test_data_set_0")
    assert expected.dtype == np.float16 and _parts(_onnxruntime(out / "model_a.onnx", inputs), expected)
    own_inputs, _ = _test_data(out / "model_b_test_data_set_0")
    assert own_inputs[0].dtype == np.float16
    got = _onnxruntime(out / "model_b.onnx", own_inputs)
    np.testing.assert_array_equal(got, expected)


def test_sides_that_agree_have_nothing_to_reduce(files, capsys):
    assert main(["reduce", str(files / "a.onnx"), "--against", str(files / "a.onnx"), "--inputs",
                 str(files / "x.npz"), "-o", str(files / "none")]) == 2
    assert "nothing to reduce" in capsys.readouterr().err


def test_the_python_call():
    reduction = explorer.reduce(explorer.load(loop_model(1.0)), explorer.load(loop_model(1.5)), FEEDS)
    assert reduction.nodes == ["loop/body/branch/then_branch/scale"] and reduction.cone_size == 1
    assert reduction.reduced_first.name == reduction.first.name == "scaled"


def test_a_captured_outer_constant_becomes_each_sides_initializer():
    """B's W (a main-graph constant the Loop body reads) differs: the cut is the body's MatMul at the first
    iteration, its carried input recorded there, each side's own W as an initializer."""
    a, b = explorer.load(loop_model()), explorer.load(loop_model(w_scale=1.1))
    reduction = explorer.reduce(a, b, FEEDS)
    assert reduction.nodes == ["loop/body/mix"] and reduction.first.iteration == (0,)
    assert list(reduction.inputs["model_a"]) == ["h"]
    np.testing.assert_array_equal(reduction.inputs["model_a"]["h"], FEEDS["x"])  # carried in at iteration 0
    w = {stem: numpy_helper.to_array(next(t for t in proto.graph.initializer if t.name == "W"))
         for stem, proto in reduction.models.items()}
    np.testing.assert_allclose(w["model_b"], w["model_a"] * np.float32(1.1), rtol=1e-6)


def test_bisection_finds_the_smallest_tail_that_parts():
    from explorer.reduce.reduce import _smallest

    asked = []

    def attempt(k):
        asked.append(k)
        return f"cut of {k}" if k >= 6 else None

    assert _smallest(20, attempt) == (6, "cut of 6") and len(asked) <= 7
    assert _smallest(5, lambda k: None) is None


def test_against_onnxruntime_bisects_past_a_value_it_cannot_take(tmp_path):
    """Cast to 4-bit integers of floats out of the type's range: explorer follows the spec (0), onnxruntime keeps
    the low bits. The first divergence is the Cast back to float (onnxruntime exposes no int4 value); one node
    alone would need an int4 input, so bisection keeps both Casts, cut at the recorded product."""
    from onnx import TensorProto as T
    from onnx import helper as h

    graph = h.make_graph([h.make_node("Mul", ["x", "s"], ["big"], name="scale_up"),
                          h.make_node("Cast", ["big"], ["q"], name="to_int4", to=T.INT4),
                          h.make_node("Cast", ["q"], ["y"], name="back", to=T.FLOAT)], "int4",
                         [h.make_tensor_value_info("x", T.FLOAT, [6])], [h.make_tensor_value_info("y", T.FLOAT, [6])],
                         [numpy_helper.from_array(np.array(10, np.float32), "s")])
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])
    proto.ir_version = 10
    x = np.array([0.1, 0.5, 1.2, -1.5, 3.0, -0.3], np.float32)
    (tmp_path / "m.onnx").write_bytes(proto.SerializeToString())
    np.savez(tmp_path / "x.npz", x=x)
    out = tmp_path / "out"
    assert main(["reduce", str(tmp_path / "m.onnx"), "--against", "onnxruntime", "--inputs", str(tmp_path / "x.npz"),
                 "-o", str(out)]) == 0
    reduced = onnx.load(str(out / "model.onnx"))
    assert [n.name for n in reduced.graph.node] == ["to_int4", "back"]
    inputs, expected = _test_data(out / "test_data_set_0")
    np.testing.assert_array_equal(inputs[0], x * np.float32(10))
    np.testing.assert_array_equal(_onnxruntime(out / "model.onnx", inputs), expected)  # onnxruntime's value
    ours = explorer.run(explorer.load(out / "model.onnx"), {"big": inputs[0]}).outputs["y"]
    assert _parts(ours, expected)  # explorer's (the spec's) is not
    assert explorer.compare(explorer.load(out / "model.onnx"), "onnxruntime", {"big": inputs[0]}).first.node == "back"


def test_an_optimized_model_with_a_planted_wrong_rewrite(tmp_path):
    """The optimizer fuses opt_linear_cleanup's 19 nodes into Gemm, Relu, Tanh, Add; a Gemm planted wrong (alpha
    1.05) parts at the original's bias Add. The smaller tails of its cone read values the optimized model no
    longer computes, so the cut is the original's chain from x to the Add against the one Gemm."""
    from onnx import helper as h

    from explorer.inputs.samples import sample_inputs, sample_path
    from explorer.optimizer import optimize

    original = explorer.load(sample_path("opt_linear_cleanup"))
    optimized = optimize(original).optimized
    (gemm,) = [n for n in optimized.graph.node if n.op_type == "Gemm"]
    gemm.attribute.append(h.make_attribute("alpha", 1.05))
    feeds = sample_inputs("opt_linear_cleanup") or original.example_inputs()
    reduction = explorer.reduce(original, explorer.load(optimized), feeds)
    assert reduction.first.node == "bias" and reduction.nodes_before == 19
    assert [n.op_type for n in reduction.models["model_b"].graph.node] == ["Gemm"]
    kept = [n.op_type for n in reduction.models["model_a"].graph.node]
    assert kept[-2:] == ["MatMul", "Add"] and len(kept) < 19
    assert list(reduction.inputs["model_a"]) == list(reduction.inputs["model_b"]) == ["x"]
    assert reduction.notes and "fused" in reduction.notes[0]


def test_a_quantized_model_against_its_float_one(tmp_path):
    """onnxruntime's dynamic quantization of a two-layer MLP: the float MatMul against the five nodes that
    quantize x, multiply in integers and scale back, from the same input."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnxruntime.quantization import QuantType, quantize_dynamic

    rng = np.random.default_rng(0)
    graph = h.make_graph([h.make_node("MatMul", ["x", "W1"], ["h1"], name="fc1"),
                          h.make_node("Relu", ["h1"], ["a1"], name="relu"),
                          h.make_node("MatMul", ["a1", "W2"], ["y"], name="fc2")], "mlp",
                         [h.make_tensor_value_info("x", T.FLOAT, [2, 8])], [h.make_tensor_value_info("y", T.FLOAT, [2, 4])],
                         [numpy_helper.from_array(rng.normal(size=(8, 16)).astype(np.float32), "W1"),
                          numpy_helper.from_array(rng.normal(size=(16, 4)).astype(np.float32), "W2")])
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    proto.ir_version = 8
    onnx.save(proto, str(tmp_path / "mlp.onnx"))
    quantize_dynamic(str(tmp_path / "mlp.onnx"), str(tmp_path / "mlp_q.onnx"), weight_type=QuantType.QInt8)
    np.savez(tmp_path / "x.npz", x=rng.normal(size=(2, 8)).astype(np.float32))
    out = tmp_path / "out"
    assert main(["reduce", str(tmp_path / "mlp.onnx"), "--against", str(tmp_path / "mlp_q.onnx"), "--inputs",
                 str(tmp_path / "x.npz"), "-o", str(out)]) == 0
    assert [n.op_type for n in onnx.load(str(out / "model_a.onnx")).graph.node] == ["MatMul"]
    quantized = [n.op_type for n in onnx.load(str(out / "model_b.onnx")).graph.node]
    assert "MatMulInteger" in quantized and "DynamicQuantizeLinear" in quantized
    inputs, expected = _test_data(out / "test_data_set_0")
    assert _parts(_onnxruntime(out / "model_a.onnx", inputs), expected)
    _onnxruntime(out / "model_b.onnx", inputs)  # valid, and onnxruntime runs it


def test_the_iteration_number_becomes_an_input():
    """B takes the If's branch at iteration 4 instead of 3: the first departure is the body's Equal on the
    iteration number at iteration 3, cut to that node with the number as its input and each side's constant."""
    reduction = explorer.reduce(explorer.load(loop_model()), explorer.load(loop_model(at=4)), FEEDS)
    assert reduction.nodes == ["loop/body/is3"] and reduction.first.iteration == (DEPARTING_ITERATION,)
    assert {name: int(v) for name, v in reduction.inputs["model_a"].items()} == {"i": DEPARTING_ITERATION}
    constants = {stem: int(numpy_helper.to_array(proto.graph.initializer[0])) for stem, proto in reduction.models.items()}
    assert constants == {"model_a": DEPARTING_ITERATION, "model_b": 4}
