"""A Loop that runs exactly once (constant trip count 1, no condition or a constant true one) replaced by its
body, checked against onnxruntime, and on the real model where it fires."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from explorer.optimizer import optimize
from tests.support.optimizer_models import (
    applied,
    body,
    declines,
    info,
    make,
    ops,
    proven,
    real_model,
    tensor,
)


def single_trip_loop(trips: int, cond: str = "") -> object:
    """A Loop over state h (initial h0) and a scan output: h_out = h + w * iteration, scan = Relu(h_out)."""
    loop_body = body([h.make_node("Cast", ["iter"], ["i"], to=T.FLOAT), h.make_node("Mul", ["w", "i"], ["wi"]),
                      h.make_node("Add", ["h_in", "wi"], ["h_out"]), h.make_node("Relu", ["h_out"], ["r"]),
                      h.make_node("Add", ["h_out", "w"], ["wasted"]),
                      h.make_node("Identity", ["cond_in"], ["cond_out"])],
                     [info("iter", T.INT64, []), info("cond_in", T.BOOL, []), info("h_in", shape=[2])],
                     [info("cond_out", T.BOOL, []), info("h_out", shape=[2]), info("r", shape=[2])])
    inputs = [info("h0", shape=[2])] + ([info(cond, T.BOOL, [])] if cond else [])
    return make([h.make_node("Loop", ["trips", cond, "h0"], ["h", "rs"], body=loop_body)],
                inputs, [info("h", shape=None), info("rs", shape=None)],
                [tensor("trips", trips, np.int64), tensor("w", [2.0, 3.0])])


def test_a_loop_that_runs_once_becomes_its_body():
    result = optimize(single_trip_loop(1))
    assert "Loop" not in ops(result.optimized) and applied(result)["SingleTripLoop"] == 1
    # the only iteration is number 0: h = h0 + w * 0 folds to h0, the scan output is Relu(h0) with a leading axis
    assert sorted(o for o in ops(result.optimized) if o != "Constant") == ["Identity", "Relu", "Unsqueeze"]
    proven(result, {"h0": np.array([1.0, -5.0], np.float32)})


@pytest.mark.parametrize(("trips", "cond"), [(2, ""), (1, "go")])
def test_a_loop_that_may_not_run_exactly_once_stays(trips, cond):
    result = optimize(single_trip_loop(trips, cond))
    assert "Loop" in ops(result.optimized)
    feeds = {"h0": np.array([1.0, -5.0], np.float32)} | ({"go": np.array(False)} if cond else {})
    proven(result, feeds)


def test_a_single_trip_loop_of_a_real_model_is_unrolled():
    path, recorded = real_model("ort_github_issue_10305.onnx")
    result = optimize(path)
    assert applied(result)["SingleTripLoop"] == 1 and "Loop" not in ops(result.optimized)
    proven(result, recorded)


@pytest.mark.parametrize("rank", [0, 1])
def test_an_iteration_number_read_as_a_value_unrolls_only_when_declared_a_scalar(rank):
    """onnxruntime passes the iteration number with one dim when the body declares it so, the spec a scalar."""
    loop_body = body([h.make_node("Identity", ["iter"], ["it"]), h.make_node("Identity", ["cond_in"], ["cond_out"])],
                     [info("iter", T.INT64, [1] * rank), info("cond_in", T.BOOL, [1] * rank)],
                     [info("cond_out", T.BOOL, [1] * rank), info("it", T.INT64, None)])
    model = make([h.make_node("Loop", ["one", ""], ["its"], body=loop_body)], [], [info("its", T.INT64, None)],
                 [tensor("one", 1, np.int64)])
    result = optimize(model)
    assert ("Loop" in ops(result.optimized)) == bool(rank)
    if rank:
        assert declines(result, "SingleTripLoop") == [
            "the body reads its iteration number or condition, declared not as scalars"]
    else:
        proven(result, {})
