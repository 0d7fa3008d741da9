"""The spec's typing rules: a model breaking one is refused by default (as onnxruntime refuses it), or runs in
lenient mode with a warning naming the broken rule."""
from __future__ import annotations

import contextlib

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer.cli import main

OPSET = [h.make_opsetid("", 17)]


def vi(name: str, elem: int = T.FLOAT, shape=None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def loop_with_float_trip_count() -> onnx.ModelProto:
    body = h.make_graph([h.make_node("Identity", ["c"], ["co"]), h.make_node("Identity", ["x"], ["xo"])], "body",
                        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("x", shape=[1])],
                        [vi("co", T.BOOL, []), vi("xo", shape=[1])])
    graph = h.make_graph([h.make_node("Loop", ["n", "", "x"], ["y"], body=body, name="loop")], "g",
                         [vi("n", T.FLOAT, []), vi("x", shape=[1])], [vi("y", shape=[1])])
    return h.make_model(graph, opset_imports=OPSET)


def if_with_float_cond() -> onnx.ModelProto:
    branch = h.make_graph([h.make_node("Identity", ["x"], ["y1"])], "b", [], [vi("y1", shape=[1])])
    graph = h.make_graph([h.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch, name="if")], "g",
                         [vi("c", T.FLOAT, []), vi("x", shape=[1])], [vi("y", shape=[1])])
    return h.make_model(graph, opset_imports=OPSET)


def if_with_different_branch_types() -> onnx.ModelProto:
    then = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "t", [], [vi("t", shape=[1])])
    other = h.make_graph([h.make_node("Cast", ["x"], ["e"], to=T.INT64)], "e", [], [vi("e", T.INT64, [1])])
    graph = h.make_graph([h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="if")], "g",
                         [vi("c", T.BOOL, []), vi("x", shape=[1])], [vi("y", shape=[1])])
    return h.make_model(graph, opset_imports=OPSET)


def two_writers() -> onnx.ModelProto:
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="a"), h.make_node("Neg", ["x"], ["y"], name="b")],
                         "g", [vi("x", shape=[2])], [vi("y", shape=[2])])
    return h.make_model(graph, opset_imports=OPSET)


def function_called_with_too_many_inputs() -> onnx.ModelProto:
    function = h.make_function("local", "twice", ["a"], ["b"], [h.make_node("Add", ["a", "a"], ["b"])], OPSET)
    graph = h.make_graph([h.make_node("twice", ["x", "x"], ["y"], domain="local", name="call")], "g",
                         [vi("x", shape=[2])], [vi("y", shape=[2])])
    return h.make_model(graph, opset_imports=[*OPSET, h.make_opsetid("local", 1)], functions=[function])


def scan_output_axis_out_of_range() -> onnx.ModelProto:
    body = h.make_graph([h.make_node("Identity", ["s"], ["so"]), h.make_node("Identity", ["xi"], ["yo"])], "body",
                        [vi("s", shape=[2]), vi("xi", shape=[2])], [vi("so", shape=[2]), vi("yo", shape=[2])])
    node = h.make_node("Scan", ["s0", "x"], ["sf", "y"], body=body, num_scan_inputs=1, scan_output_axes=[5],
                       name="scan")
    graph = h.make_graph([node], "g", [vi("s0", shape=[2]), vi("x", shape=[3, 2])],
                         [vi("sf", shape=[2]), vi("y", shape=None)])
    return h.make_model(graph, opset_imports=OPSET)


def branch_writing_an_outer_name() -> onnx.ModelProto:
    then = h.make_graph([h.make_node("Neg", ["x"], ["co"], name="inner")], "t", [], [vi("co", shape=[2])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "e", [], [vi("e", shape=[2])])
    graph = h.make_graph([h.make_node("Identity", ["x"], ["co"], name="outer"),
                          h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="if")], "g",
                         [vi("x", shape=[2]), vi("c", T.BOOL, [])], [vi("y", shape=[2]), vi("co", shape=[2])])
    return h.make_model(graph, opset_imports=OPSET)


def add_of_strings() -> onnx.ModelProto:
    graph = h.make_graph([h.make_node("Add", ["a", "b"], ["y"], name="add")], "g",
                         [vi("a", T.STRING, [1]), vi("b", T.STRING, [1])], [vi("y", T.STRING, [1])])
    return h.make_model(graph, opset_imports=OPSET)


def add_of_float_and_double_in_a_body() -> onnx.ModelProto:
    """The body's Add reads a captured float and its own double: one type parameter bound to two types."""
    body = h.make_graph([h.make_node("Cast", ["x"], ["d"], to=T.DOUBLE), h.make_node("Add", ["x", "d"], ["t"],
                                                                                       name="mixed")],
                        "t", [], [vi("t", shape=[1])])
    graph = h.make_graph([h.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body, name="if")], "g",
                         [vi("c", T.BOOL, []), vi("x", shape=[1])], [vi("y", shape=[1])])
    return h.make_model(graph, opset_imports=OPSET)


INVALID = {
    "add of strings": (add_of_strings, "input 'A' ('a') is tensor(string), which Add-14 does not take",
                       {"a": np.array(["x"], object), "b": np.array(["y"], object)}),
    "one type parameter, two types": (add_of_float_and_double_in_a_body,
                                      "'x' is tensor(float) but 'd' is tensor(double); Add-14 wants one type for "
                                      "both (T)", {"c": np.array(True), "x": np.ones(1, np.float32)}),
    "loop trip count float": (loop_with_float_trip_count, "trip count 'n' is float, the spec requires int64",
                              {"n": np.array(2.0, np.float32), "x": np.ones(1, np.float32)}),
    "if cond float": (if_with_float_cond, "cond 'c' is float, the spec requires bool",
                      {"c": np.array(1.0, np.float32), "x": np.ones(1, np.float32)}),
    "if branch types": (if_with_different_branch_types, "output 0 is float in then_branch but int64 in else_branch",
                        {"c": np.array(True), "x": np.ones(1, np.float32)}),
    "two writers": (two_writers, "writes 'y', which node 'a' already defines", {"x": np.ones(2, np.float32)}),
    "outer name rewritten in a body": (branch_writing_an_outer_name,
                                       "writes 'co', which an enclosing graph defines before this body",
                                       {"x": np.ones(2, np.float32), "c": np.array(True)}),
    "function inputs": (function_called_with_too_many_inputs, "with 2 inputs; it declares 1",
                        {"x": np.ones(2, np.float32)}),
    "scan axis": (scan_output_axis_out_of_range, "scan_output_axes[0]=5 lies outside the 2 axes",
                  {"s0": np.zeros(2, np.float32), "x": np.ones((3, 2), np.float32)}),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_refused_by_default_naming_the_rule_and_by_onnxruntime_too(case):
    build, rule, _ = INVALID[case]
    with pytest.raises(explorer.ModelError, match="breaks the spec's typing rules") as info:
        explorer.load(build())
    assert rule in str(info.value) and "lenient" in str(info.value)
    with pytest.raises(Exception):  # noqa: B017 - the judge refuses the same model, whatever its message
        onnxruntime.InferenceSession(build().SerializeToString(), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("case", [c for c in INVALID if c != "scan axis"])
def test_lenient_mode_runs_it_with_a_warning(case):
    build, rule, feeds = INVALID[case]
    model = explorer.load(build(), lenient=True)
    assert any(w.startswith("lenient mode:") and rule in w for w in model.warnings)
    # running is allowed to fail with explorer's own error; what matters is that it was attempted
    with contextlib.suppress(explorer.ExplorerError):
        explorer.run(model, feeds)


def test_the_cli_refuses_then_runs_with_lenient(tmp_path, capsys):
    path = tmp_path / "bad.onnx"
    onnx.save(loop_with_float_trip_count(), path)
    assert main(["run", str(path), "--dim", "x[0]=1"]) == 2
    assert "typing rules" in capsys.readouterr().err
    assert main(["run", str(path), "--lenient"]) == 0
    assert "warning: lenient mode: Loop node 'loop'" in capsys.readouterr().out


def test_a_body_input_may_shadow_an_outer_name_as_onnxruntime_allows():
    body = h.make_graph([h.make_node("Identity", ["c"], ["co"]), h.make_node("Add", ["x", "x"], ["xo"])], "body",
                        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("x", shape=[2])],
                        [vi("co", T.BOOL, []), vi("xo", shape=[2])])
    graph = h.make_graph([h.make_node("Loop", ["n", "", "x"], ["y"], body=body, name="loop")], "g",
                         [vi("n", T.INT64, []), vi("x", shape=[2])], [vi("y", shape=[2])])
    proto = h.make_model(graph, opset_imports=OPSET)
    feeds = {"n": np.array(2, np.int64), "x": np.ones(2, np.float32)}
    expected = onnxruntime.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, feeds)[0]
    np.testing.assert_array_equal(explorer.run(explorer.load(proto), feeds).outputs["y"], expected)


def test_valid_samples_break_no_rule():
    from explorer.inputs.samples import list_samples, sample_path
    from explorer.model.typing_rules import violations

    for name in list_samples():
        assert violations(onnx.load(sample_path(name))) == [], name


def test_optimize_and_its_proof_keep_lenient_mode(tmp_path, capsys):
    from explorer.optimizer import optimize
    from explorer.optimizer.verify import check_steps, verify

    with pytest.raises(explorer.ModelError, match="typing rules"):
        optimize(two_writers())
    result = optimize(two_writers(), lenient=True)
    assert result.lenient
    verdict = verify(result)  # loads original and optimized in lenient mode instead of refusing them
    explorer_report, ort_report = verdict.reports
    assert explorer_report.unavailable is None and explorer_report.ok
    assert "Duplicate definition" in ort_report.unavailable  # onnxruntime refuses the model, as it should
    assert check_steps(result) == []
    path = tmp_path / "bad.onnx"
    onnx.save(two_writers(), path)
    assert main(["optimize", str(path)]) == 2
    assert main(["optimize", str(path), "--lenient"]) == 0
    out = capsys.readouterr().out
    assert "warning: lenient mode: Neg node 'b'" in out and "explorer: y: max abs diff 0" in out
