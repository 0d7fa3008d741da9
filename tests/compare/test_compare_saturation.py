"""onnxruntime's u8s8 saturation named by compare (explorer/compare/saturation.py): on an x86 CPU without VNNI,
onnxruntime's uint8 × int8 kernels saturate the int16 sum of each pair of adjacent products; explorer's values are
exact. Where a difference comes from it, compare says so and does not call explorer's value a divergence (exit 0:
explorer follows the spec); a difference it does not explain stays a divergence. The saturated recomputation is
checked against onnxruntime itself on this CPU, and against the spec-written reference of tests/."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import explorer
from explorer.cli import main
from explorer.compare.saturation import RECOMPUTED, VERDICT, recompute
from tests.differential.collect import cases_of
from tests.differential.harness import Case, assert_same, run_onnxruntime
from tests.differential.quantized_judge import can_saturate, cpu_has_vnni, exact_outputs

NO_VNNI = pytest.mark.skipif(cpu_has_vnni(), reason="this CPU has VNNI: onnxruntime's u8s8 kernel is exact here")
CASES = [c for op in sorted(RECOMPUTED) for c in cases_of("" if op in ("MatMulInteger", "QLinearMatMul", "QLinearConv")
                                                          else "com.microsoft", op)
         if c.error is None and c.expected is None and c.judge_version is None]
SATURATING = [c for c in CASES if can_saturate(c)]


def _id(case: Case) -> str:
    return f"{case.op}-{[str(np.asarray(v).dtype) for v in case.inputs[:4] if v is not None]}"


def near_range_model(path) -> dict[str, np.ndarray]:
    """MatMulInteger of uint8 A in [200, 255] by int8 B in [100, 127] (K = 64: every pair sum is beyond int16),
    cast to float: the saturation changes every output."""
    r = np.random.default_rng(3)
    b = r.integers(100, 128, (64, 16)).astype(np.int8)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "b"], ["y"], name="product"),
         helper.make_node("Cast", ["y"], ["out"], to=TensorProto.FLOAT, name="cast")], "near_range",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [4, 64])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [4, 16])], initializer=[numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return {"a": r.integers(200, 256, (4, 64)).astype(np.uint8)}


def test_compare_names_the_saturation_and_does_not_call_explorer_divergent(tmp_path, capsys):
    feeds = near_range_model(tmp_path / "near.onnx")
    result = explorer.compare(str(tmp_path / "near.onnx"), "onnxruntime", feeds)
    a = feeds["a"].astype(np.int64)
    exact = a @ numpy_helper.to_array(onnx.load(str(tmp_path / "near.onnx")).graph.initializer[0]).astype(np.int64)
    np.testing.assert_array_equal(result.a.outputs["out"], exact.astype(np.float32))  # explorer is exact
    assert not result.differs
    np.savez(tmp_path / "feeds.npz", **feeds)
    assert main(["compare", str(tmp_path / "near.onnx"), "onnxruntime", "--inputs", str(tmp_path / "feeds.npz")]) == 0
    text = capsys.readouterr().out
    if cpu_has_vnni():  # onnxruntime is exact: nothing to explain
        assert result.saturation is None and result.first is None and "every aligned value agrees" in text
        return
    assert result.saturation is not None and result.saturation.complete
    [node] = result.saturation.nodes
    assert (node.node, node.op_type, node.pairs) == ("product", "MatMulInteger", 4 * 16 * 32)
    first = result.first
    assert first is not None and first.saturated and first.node == "product" and VERDICT in first.note
    assert "first divergence: none of explorer's" in text and VERDICT in text
    assert "node 'product' (MatMulInteger): 2048 pair sum(s) beyond int16" in text


@NO_VNNI
def test_a_difference_the_saturation_does_not_explain_stays_a_divergence(tmp_path):
    feeds = near_range_model(tmp_path / "near.onnx")
    model = explorer.load(str(tmp_path / "near.onnx"))
    trace = explorer.run(model, feeds)
    event = trace.event("product")
    event.output_values = (event.output_values[0] + np.int32(1),)  # neither the exact nor the saturated value
    result = explorer.compare(trace, "onnxruntime", model=model)
    assert result.saturation is None and result.differs
    assert result.first is not None and not result.first.saturated and VERDICT not in result.first.describe()


@NO_VNNI
@pytest.mark.parametrize("case", SATURATING, ids=_id)
def test_the_saturated_recomputation_is_onnxruntimes_output(case):
    [theirs] = run_onnxruntime([case])
    assert not isinstance(theirs, str), theirs
    _, saturated, pairs, _ = recompute(case.op, case.inputs, case.attrs)
    exact, _, _, _ = recompute(case.op, case.inputs, case.attrs)
    for ours, want in zip(saturated, theirs):
        assert_same(np.asarray(ours), want, case.tol, f"{case.op}: saturated recomputation")
    shows = any(not np.allclose(np.asarray(e, np.float64), np.asarray(w, np.float64), rtol=1e-3, atol=1e-3)
                for e, w in zip(exact, theirs))
    assert shows == (pairs > 0) or case.op == "QLinearConv", "the pairs counted are not the difference seen"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_recomputation_agrees_with_the_spec_written_reference(case):
    """explorer's recomputation (both ways) against tests/support/quantized_reference.py, written apart from it."""
    exact, saturated, _, _ = recompute(case.op, case.inputs, case.attrs)
    for ours, want in zip(exact, exact_outputs(case)):
        assert_same(np.asarray(ours), np.asarray(want), case.tol or (1e-5, 1e-6), f"{case.op}: exact")
    for ours, want in zip(saturated, exact_outputs(case, saturate=True)):
        assert_same(np.asarray(ours), np.asarray(want), case.tol or (1e-5, 1e-6), f"{case.op}: saturated")
