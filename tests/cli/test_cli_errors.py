"""The command line as a new user meets it: sample names for MODEL (run on the sample's own inputs), and plain
one-line errors (no traceback) for bad arguments, missing files, unknown nodes and failed runs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import explorer

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=cwd,
                          check=False)


def test_a_sample_name_runs_on_the_sample_inputs(tmp_path):
    result = cli("run", "loop_spec", cwd=tmp_path)  # not a file there: the bundled sample
    assert result.returncode == 0, result.stderr
    # the spec's values stop the loop on its cond in the second iteration
    assert "inputs: the sample's own" in result.stdout and "output user_defined_vals: int32[2]" in result.stdout
    seeded = cli("run", "loop_spec", "--seed", "0", cwd=tmp_path)
    assert "inputs: random (seed 0)" in seeded.stdout


def test_a_dimension_the_inputs_do_not_have_is_reported():
    result = cli("run", "nested_loops", "--dim", "Q=3", "--dim", "T=3")
    assert result.returncode == 0, result.stderr
    assert "warning: the inputs have no dimension 'Q' (theirs: T)" in result.stdout
    assert "output Y: float32[3, 3]" in result.stdout


def failing_loop() -> bytes:
    """A Loop whose body reshapes a growing vector to two rows: 2 elements fit, 3 do not (iteration 1)."""
    body = h.make_graph(
        [h.make_node("Concat", ["acc_in", "x"], ["acc_out"], name="grow", axis=0),
         h.make_node("Reshape", ["acc_out", "rows"], ["sq"], name="to_rows"),
         h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")], "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("acc_in", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, ["m"]),
         h.make_tensor_value_info("sq", T.FLOAT, [2, None])],
        [numpy_helper.from_array(np.array([2, -1], np.int64), "rows")])
    graph = h.make_graph(
        [h.make_node("Loop", ["trips", "", "x"], ["acc", "squares"], name="grow_loop", body=body)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1])],
        [h.make_tensor_value_info("acc", T.FLOAT, [None]), h.make_tensor_value_info("squares", T.FLOAT, None)],
        [numpy_helper.from_array(np.array(5, np.int64), "trips")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21)]).SerializeToString()


def test_a_failed_run_keeps_its_partial_trace(tmp_path):
    (tmp_path / "fails.onnx").write_bytes(failing_loop())
    result = cli("run", str(tmp_path / "fails.onnx"), "--save", str(tmp_path / "partial.npz"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "'grow_loop/body/to_rows' (Reshape) at iteration (1,) failed" in result.stderr
    assert "the partial trace holds 5 events" in result.stdout  # iteration 0's three, then grow and the failure
    trace = explorer.Trace.load(tmp_path / "partial.npz")
    assert [e.node.rsplit("/", 1)[-1] for e in trace.events] == ["grow", "to_rows", "keep", "grow", "to_rows"]
    assert trace.error.node == "grow_loop/body/to_rows"


@pytest.mark.parametrize("args, message", [
    (["run", "nested_loops", "--dim", "T=abc"], "argument --dim: expected NAME=SIZE, e.g. T=8, got 'T=abc'"),
    (["run", "nested_loops", "--inputs", "/no/such/feeds.npz"], "error: No such file or directory: '/no/such"),
    (["rnn", "gru_pytorch_batch_first", "--node", "nope"], "error: no node with path 'nope'\n"),
    (["render", "nested_loops", "-o", "/no/such/dir/out.svg"], "error: No such file or directory"),
    (["run", "no_such_model"], "error: 'no_such_model' does not exist"),
])
def test_bad_arguments_give_one_line_errors(args, message):
    result = cli(*args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_an_event_outside_the_trace_is_an_error_not_a_traceback(tmp_path):
    assert cli("run", "nested_loops", "--save", str(tmp_path / "t.npz")).returncode == 0
    result = cli("render", "nested_loops", "-o", str(tmp_path / "out.svg"), "--trace", str(tmp_path / "t.npz"),
                 "--event", "500")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "event index 500 is outside the trace's 73 events" in result.stderr


def test_an_unnamed_axis_is_sized_as_input_and_axis(tmp_path):
    graph = h.make_graph([h.make_node("ReduceSum", ["x"], ["s"], name="total", keepdims=0)], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [None, 3])], [h.make_tensor_value_info("s", T.FLOAT, [])])
    (tmp_path / "dyn.onnx").write_bytes(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]).SerializeToString())
    result = cli("run", str(tmp_path / "dyn.onnx"), "--dim", "x[0]=7", "--save", str(tmp_path / "t.npz"))
    assert result.returncode == 0 and "warning" not in result.stdout, result.stdout + result.stderr
    assert explorer.Trace.load(tmp_path / "t.npz").feeds["x"].shape == (7, 3)


def test_rnn_report_runs_the_model_for_computed_weights_without_inputs():
    result = subprocess.run([sys.executable, "-m", "explorer", "rnn", "gru_pytorch_batch_first"],
                            capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr
    assert "GRU 'gru' (exporter not recorded in the model)" in result.stdout
    assert "mean |x|" in result.stdout and "note: no run" not in result.stdout


KINFERENCE = ROOT.parent / "shared" / "models" / "JetBrains-Research__kinference/utils/utils-testing/src/commonMain/resources"


@pytest.mark.skipif(not KINFERENCE.is_dir(), reason="../shared/models is absent")
def test_an_onnx_test_data_set_folder_is_read_as_inputs(tmp_path):
    """The kinference bidirectional GRU declares no input shapes: its shipped test data set is how to run it."""
    case = KINFERENCE / "gru/test_gru_bidirectional"
    trace_path = tmp_path / "t.npz"
    result = cli("run", str(case / "model.onnx"), "--inputs", str(case / "test_data_set_0"), "--save", str(trace_path))
    assert result.returncode == 0, result.stderr
    trace = explorer.Trace.load(trace_path)
    expected = [numpy_helper.to_array(onnx.load_tensor(str(case / f"test_data_set_0/output_{i}.pb"))) for i in (0, 1)]
    for want, got in zip(expected, trace.outputs.values()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_folder_without_test_data_says_so(tmp_path):
    result = cli("run", "tiny_mlp", "--inputs", str(tmp_path))
    assert result.returncode == 2 and "no input_<i>.pb files" in result.stderr
