"""Small models for the sharing tests: a Loop whose body holds an If taken at one iteration only, where side B
scales by another constant (a planted change at iteration 3 of 6), with unnamed and duplicate node names in the
main graph (for Model Explorer's node ids)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper as h

from tests.support.control_flow_models import I64, B, F, const, graph, model, node, vi

TRIPS = 6
DEPARTING_ITERATION = 3


def loop_model(scale: float = 1.0, w_scale: float = 1.0, at: int = DEPARTING_ITERATION) -> onnx.ModelProto:
    """x [4] -> Loop of TRIPS iterations: h = tanh(h @ W) (then times `scale` at iteration 3) + bias; W (read by
    the body from the main graph) times `w_scale`; the If's branch taken at iteration `at`."""
    then_branch = graph([node("Mul", ["act", "k"], ["scaled"], name="scale")], "then", [], [vi("scaled", F, [4])],
                        [const("k", scale)])
    else_branch = graph([node("Identity", ["act"], ["kept"], name="keep")], "else", [], [vi("kept", F, [4])])
    body = graph([
        node("MatMul", ["h", "W"], ["mix"], name="mix"),
        node("Tanh", ["mix"], ["act"], name="act"),
        node("Equal", ["i", "three"], ["is3"], name="is3"),
        node("If", ["is3"], ["picked"], name="branch", then_branch=then_branch, else_branch=else_branch),
        node("Add", ["picked", "bias"], ["h_next"], name="out"),
        node("Identity", ["cond"], ["cond_out"], name="go_on"),
        node("Identity", ["h_next"], ["y"], name="emit"),
    ], "body", [vi("i", I64, []), vi("cond", B, []), vi("h", F, [4])],
        [vi("cond_out", B, []), vi("h_next", F, [4]), vi("y", F, [4])], [const("three", at, np.int64)])
    rng = np.random.default_rng(0)
    main = graph([
        h.make_node("Identity", ["x"], ["x0"]),  # unnamed: Model Explorer's adapter calls it "node"
        node("Loop", ["trips", "true", "x0"], ["h_last", "ys"], name="loop", body=body),
        node("Mul", ["h_last", "two"], ["doubled"], name="twice"),
        node("Mul", ["doubled", "two"], ["out"], name="twice"),  # a duplicate name: "twice_1" there
    ], "loop_model", [vi("x", F, [4])], [vi("out", F, [4]), vi("ys", F, [TRIPS, 4])],
        [const("trips", TRIPS, np.int64), const("true", True, np.bool_),
         const("W", rng.normal(size=(4, 4)) * 0.5 * w_scale), const("bias", [0.1, -0.2, 0.3, 0.0]), const("two", 2.0)])
    return model(main)


FEEDS = {"x": np.array([0.5, -1.0, 0.25, 2.0], np.float32)}
