"""A Slice of a Slice merged into one Slice, checked against onnxruntime on bounds that clamp, count from the end
or leave nothing, and on gtcrn, whose ScatterND rows become nested Slices."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

from explorer.optimizer import optimize
from tests.support.optimizer_models import declines, info, make, ops, proven, real_model, run_alone, tensor

BIG = 2**63 - 1
X = np.arange(2 * 10 * 6, dtype=np.float32).reshape(2, 10, 6)


def nested(first: tuple, second: tuple, shape: list | None = None) -> object:
    """Slice(Slice(x, *first), *second); each a (starts, ends, axes[, steps]) of constants."""
    inits, names = [], []
    for tag, params in (("a", first), ("b", second)):
        group = []
        for label, value in zip(("s", "e", "ax", "st"), params):
            inits.append(tensor(f"{tag}{label}", value, np.int64))
            group.append(f"{tag}{label}")
        names.append(group)
    return make([h.make_node("Slice", ["x", *names[0]], ["mid"]), h.make_node("Slice", ["mid", *names[1]], ["y"])],
                [info("x", shape=[2, 10, 6] if shape is None else shape)], [info("y", shape=None)], inits)


@pytest.mark.parametrize(("first", "second"), [
    (([2], [9], [1]), ([1], [4], [1])),                 # [2, 9) then [1, 4): x[:, 3:6]
    (([-8], [BIG], [1]), ([-3], [-1], [-2])),           # from the end, the second with a negative axis
    (([0], [4], [1]), ([3], [100], [1])),               # the second end clamps to what the first left
    (([6], [2], [1]), ([0], [1], [1])),                 # the first leaves nothing
    (([1], [9], [1]), ([5], [2], [1])),                 # the second leaves nothing
    (([1, 0], [9, 1], [1, 0]), ([1], [5], [2])),        # different axes join, one shared
    (([0], [10], [1], [2]), ([0], [3], [2])),           # a step on an axis only one of them slices
])
def test_a_slice_of_a_slice_becomes_one_slice(first, second):
    result = run_alone(nested(first, second), "SliceSlice")
    assert ops(result.optimized).count("Slice") == 1
    proven(result, {"x": X})


def test_steps_on_a_shared_axis_stay():
    result = run_alone(nested(([0], [10], [1], [2]), ([1], [4], [1])), "SliceSlice")
    assert ops(result.optimized).count("Slice") == 2
    assert declines(result, "SliceSlice") == ["both slice axis 1 with a step other than 1"]


def test_a_shared_axis_of_unknown_size_stays():
    result = run_alone(nested(([2], [9], [1]), ([1], [4], [1]), shape=[2, "n", 6]), "SliceSlice")
    assert ops(result.optimized).count("Slice") == 2
    assert declines(result, "SliceSlice") == ["both slice axis 1, whose size is not known"]


def test_an_inner_slice_read_elsewhere_stays_for_its_other_reader():
    model = nested(([2], [9], [1]), ([1], [4], [1]))
    model.graph.node.append(h.make_node("Relu", ["mid"], ["r"]))
    model.graph.output.append(info("r", shape=None))
    result = run_alone(model, "SliceSlice")
    [last] = [n for n in result.optimized.graph.node if n.output[0] == "y"]
    assert ops(result.optimized).count("Slice") == 2 and last.input[0] == "x"
    proven(result, {"x": X})


def test_gtcrn_rows_sliced_twice_are_sliced_once():
    path, recorded = real_model("gtcrn_simple.onnx")
    result = optimize(path)
    assert len([s for s in result.steps if s.pattern == "SliceSlice"]) == 10
    proven(result, recorded)
