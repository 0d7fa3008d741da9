"""Constant folding evaluates a node with the kernel a run builds, through the engine's guarded evaluation: the
guards' cheap bound, then the estimate behind it, refuse a result over the byte limit before the kernel runs."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

from explorer.optimizer.evaluate import NotFoldable, evaluate

OPSETS = {"": 17}


def _untyped(name: str) -> None:
    return None


def test_a_node_is_evaluated_by_its_kernel():
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.float32([1, 2, 3])
    [out] = evaluate(h.make_node("Add", ["a", "b"], ["y"], name="add"), OPSETS, [a, b], _untyped, 1000)
    np.testing.assert_array_equal(out, a + b)


def test_a_result_over_the_limit_is_refused_with_its_size():
    node = h.make_node("Expand", ["x", "shape"], ["y"], name="expand")
    args = [np.zeros(1, np.float32), np.array([1000, 1000], np.int64)]
    with pytest.raises(NotFoldable, match=r"^its result would take 4000000 bytes \(limit 1000\)$"):
        evaluate(node, OPSETS, args, _untyped, 1000)


def test_a_cheap_bound_over_the_limit_is_checked_by_the_estimate_behind_it():
    """Mul of two [100] float32: the bound (100 x 100 elements, 40000 bytes) is over 1000, the output (400 bytes)
    is not: the node folds."""
    x = np.arange(100, dtype=np.float32)
    [out] = evaluate(h.make_node("Mul", ["a", "b"], ["y"], name="mul"), OPSETS, [x, x], _untyped, 1000)
    np.testing.assert_array_equal(out, x * x)


def test_a_broadcast_over_the_limit_is_refused_with_its_exact_size():
    """[100, 1] + [1, 100] float32 makes [100, 100]: 40000 bytes."""
    a, b = np.zeros((100, 1), np.float32), np.zeros((1, 100), np.float32)
    with pytest.raises(NotFoldable, match=r"^its result would take 40000 bytes \(limit 1000\)$"):
        evaluate(h.make_node("Add", ["a", "b"], ["y"], name="add"), OPSETS, [a, b], _untyped, 1000)


def test_recurrent_cells_and_unknown_operators_are_not_folded():
    lstm = h.make_node("LSTM", ["x", "w", "r"], ["y"], name="lstm", hidden_size=1)
    args = [np.zeros((1, 1, 1), np.float32), np.zeros((1, 4, 1), np.float32), np.zeros((1, 4, 1), np.float32)]
    with pytest.raises(NotFoldable, match="^its kernel runs bodies or recurrent cells$"):
        evaluate(lstm, OPSETS, args, _untyped, 1000)
    with pytest.raises(NotFoldable, match=r"^no kernel: .*operator 'Frob'"):
        evaluate(h.make_node("Frob", ["x"], ["y"], name="frob"), OPSETS, [np.zeros(1)], _untyped, 1000)
