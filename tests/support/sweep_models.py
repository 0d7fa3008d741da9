"""Models and inputs the sweep tests share: a planted pair (a Loop that sums the rows of X, and the same Loop
that adds 0.5 to every row from iteration PART_AT on: they agree on inputs of at most PART_AT rows and part on
longer ones, first at the body's `acc` at iteration PART_AT), inputs folders, and a Dask worker plugin that
makes one input kill the worker process running it."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import onnx
from distributed.diagnostics.plugin import WorkerPlugin
from onnx import TensorProto, helper, numpy_helper

PART_AT = 4
ACC = "loop/body/acc"


def summing_loop(part_at: int | None = None) -> onnx.ModelProto:
    """S = sum of X's rows and Y = the running sums, by a Loop over X's T rows; with `part_at`, each row from
    that iteration on gets 0.5 added before it is summed."""
    body_nodes = [helper.make_node("Gather", ["X", "i"], ["x_i"], name="take", axis=0)]
    summand = "x_i"
    if part_at is not None:
        body_nodes += [
            helper.make_node("Constant", [], ["start"], name="start",
                             value=numpy_helper.from_array(np.array(part_at - 1, np.int64))),
            helper.make_node("Greater", ["i", "start"], ["late"], name="late"),
            helper.make_node("Cast", ["late"], ["late_f"], name="late_f", to=TensorProto.FLOAT),
            helper.make_node("Constant", [], ["half"], name="half",
                             value=numpy_helper.from_array(np.array(0.5, np.float32))),
            helper.make_node("Mul", ["late_f", "half"], ["bump"], name="bump"),
            helper.make_node("Add", ["x_i", "bump"], ["x_b"], name="bumped"),
        ]
        summand = "x_b"
    body_nodes += [helper.make_node("Add", ["s_in", summand], ["s_out"], name="acc"),
                   helper.make_node("Identity", ["cond_in"], ["cond_out"], name="go_on"),
                   helper.make_node("Identity", ["s_out"], ["y"], name="emit")]
    body = helper.make_graph(
        body_nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    graph = helper.make_graph(
        [helper.make_node("Shape", ["X"], ["shape"], name="shape"),
         helper.make_node("Gather", ["shape", "zero"], ["trip"], name="trip", axis=0),
         helper.make_node("Loop", ["trip", "go", "s0"], ["S", "Y"], name="loop", body=body)],
        "summing_loop",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["T", 3])],
        [helper.make_tensor_value_info("S", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["T", 3])],
        [numpy_helper.from_array(np.array(0, np.int64), "zero"),
         numpy_helper.from_array(np.array(True), "go"),
         numpy_helper.from_array(np.zeros(3, np.float32), "s0")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def planted_pair(folder: Path) -> tuple[Path, Path]:
    """The two models of the planted pair, saved in `folder`: (the plain sum, the one that parts at PART_AT)."""
    a, b = folder / "sums.onnx", folder / "sums_parting.onnx"
    onnx.save(summing_loop(), a)
    onnx.save(summing_loop(PART_AT), b)
    return a, b


def save_test_data_set(folder: Path, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> Path:
    """An ONNX test data set: input_<i>.pb and output_<i>.pb files."""
    folder.mkdir(parents=True, exist_ok=True)
    for kind, arrays in (("input", inputs), ("output", outputs)):
        for i, array in enumerate(arrays):
            (folder / f"{kind}_{i}.pb").write_bytes(numpy_helper.from_array(array).SerializeToString())
    return folder


class KillOn(WorkerPlugin):
    """A Dask worker plugin: the worker process running the input labelled `label` is killed (SIGKILL) as it
    starts that input; every other input runs as usual."""

    name = "explorer-test-kill-on"

    def __init__(self, label: str) -> None:
        self.label = label

    def setup(self, worker: object) -> None:
        from explorer.sweep import task

        original, label = task.feeds_of, self.label

        def feeds_or_die(model, item, *rest):
            if item.label == label:
                os.kill(os.getpid(), signal.SIGKILL)
            return original(model, item, *rest)

        self.original = original
        task.feeds_of = feeds_or_die

    def teardown(self, worker: object) -> None:
        from explorer.sweep import task

        task.feeds_of = self.original
