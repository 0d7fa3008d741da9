"""Proofs of equivalence: whole models through explorer and onnxruntime, each rewrite alone, and bisection naming
the rewrite that breaks a model (a deliberately wrong pattern plays the bug)."""
from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

from explorer.optimizer import optimize
from explorer.optimizer.verify import check_step, compare_models, find_culprit, verify
from tests.support.optimizer_models import WrongBiasPattern, body, chain_model, info, make, tensor


def test_a_correct_optimization_is_proven_by_both_judges_per_output():
    result = optimize(chain_model())
    feeds = {"x": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)}
    verdict = verify(result, feeds)
    assert verdict.status == "equivalent" and verdict.culprit is None
    assert [r.judge for r in verdict.reports] == ["explorer", "onnxruntime"]
    assert all(d.name == "y" and d.ok and d.max_abs <= 1e-6 for r in verdict.reports for d in r.diffs)
    report = json.loads(json.dumps(verdict.to_dict()))
    assert report["status"] == "equivalent" and report["judges"][1]["outputs"][0]["name"] == "y"


def test_bisection_names_the_rewrite_that_breaks_the_model():
    patterns = ["IdentityRemoval", "MulOne", "TransposeTranspose", WrongBiasPattern()]
    result = optimize(chain_model(), patterns=patterns)
    assert [s.pattern for s in result.steps].index("WrongBias") > 0
    verdict = verify(result)
    assert verdict.status == "different"
    assert verdict.culprit.pattern == "WrongBias" and verdict.culprit.removed == ["add_bias"]
    assert verdict.culprit_check.status == "different"
    lines = "\n".join(verdict.lines())
    assert "MISMATCH" in lines and "first failing rewrite: #" in lines and "WrongBias" in lines
    # every rewrite before it is fine alone
    for step in result.steps[: verdict.culprit.index]:
        assert check_step(step).status == "equivalent"


def test_bisection_finds_a_bad_rewrite_inside_a_loop_body():
    loop_body = body([h.make_node("Add", ["h_in", "step"], ["h_out"], name="add_step"),
                      h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")],
                     [info("i", T.INT64, []), info("cond_in", T.BOOL, []), info("h_in", shape=[2])],
                     [info("cond_out", T.BOOL, []), info("h_out", shape=[2])])
    model = make([h.make_node("Identity", ["x"], ["x1"], name="copy"),
                  h.make_node("Loop", ["trips", "", "x1"], ["y"], name="loop", body=loop_body)],
                 [info("x", shape=[2])], [info("y", shape=[2])],
                 [tensor("trips", 4, np.int64), tensor("step", [1.0, 2.0])])
    result = optimize(model, patterns=["IdentityRemoval", WrongBiasPattern()])
    culprit = find_culprit(result)
    assert culprit is not None and culprit.graph == "loop/body" and culprit.removed == ["loop/body/add_step"]


def test_no_culprit_when_the_models_agree():
    result = optimize(chain_model())
    assert find_culprit(result) is None


def test_no_verdict_when_the_original_cannot_run():
    model = make([h.make_node("Reshape", ["x", "shape"], ["r"]), h.make_node("Identity", ["r"], ["y0"]),
                  h.make_node("Relu", ["y0"], ["y"])],
                 [info("x", shape=[2, 3])], [info("y", shape=None)], [tensor("shape", [4, 4], np.int64)])
    result = optimize(model)
    verdict = verify(result)
    assert verdict.status == "inconclusive" and not verdict.ok
    assert all("original does not run" in r.unavailable for r in verdict.reports)


def test_floats_within_tolerance_integers_exactly():
    ints = make([h.make_node("Add", ["x", "one"], ["y"])], [info("x", T.INT64, [3])], [info("y", T.INT64, [3])],
                [tensor("one", 1, np.int64)])
    plus_two = make([h.make_node("Add", ["x", "two"], ["y"])], [info("x", T.INT64, [3])], [info("y", T.INT64, [3])],
                    [tensor("two", 2, np.int64)])
    assert compare_models(ints, plus_two).status == "different"
    floats = make([h.make_node("Mul", ["x", "k"], ["y"])], [info("x", shape=[3])], [info("y", shape=[3])],
                  [tensor("k", 1.0)])
    nudged = make([h.make_node("Mul", ["x", "k"], ["y"])], [info("x", shape=[3])], [info("y", shape=[3])],
                  [tensor("k", 1.00001)])
    further = make([h.make_node("Mul", ["x", "k"], ["y"])], [info("x", shape=[3])], [info("y", shape=[3])],
                   [tensor("k", 1.001)])
    feeds = {"x": np.array([0.5, -2.0, 3.0], np.float32)}
    assert compare_models(floats, nudged, feeds).status == "equivalent"
    verdict = compare_models(floats, further, feeds)
    assert verdict.status == "different"
    diff = verdict.reports[0].diffs[0]
    assert np.isclose(diff.max_abs, 0.003, rtol=1e-3) and np.isclose(diff.max_rel, 0.001, rtol=1e-3)


def test_a_failing_optimized_model_is_a_failure():
    good = make([h.make_node("Relu", ["x"], ["y"])], [info("x", shape=[2])], [info("y", shape=[2])])
    bad = make([h.make_node("Reshape", ["x", "s"], ["y"])], [info("x", shape=[2])], [info("y", shape=None)],
               [tensor("s", [3], np.int64)])
    verdict = compare_models(good, bad)
    assert verdict.status == "different" and all(r.error for r in verdict.reports)


def _overridable(ir_version: int) -> onnx.ModelProto:
    """y = x + b where b is both a graph input and an initializer (zeros): an input with a default."""
    model = make([h.make_node("Add", ["x", "b"], ["y"])], [info("x", shape=[2]), info("b", shape=[2])],
                 [info("y", shape=[2])], [tensor("b", np.zeros(2, np.float32))])
    model.ir_version = ir_version
    return model


def _folded(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with b no longer an input: a constant holding its default (what a wrong optimizer makes)."""
    wrong = onnx.ModelProto()
    wrong.CopyFrom(model)
    del wrong.graph.input[1]
    return wrong


def test_a_fed_input_with_an_initializer_default_reaches_both_judges_and_both_models():
    feeds = {"x": np.ones(2, np.float32), "b": np.full(2, 5, np.float32)}
    model = _overridable(8)
    result = optimize(model)
    assert [i.name for i in result.optimized.graph.input] == ["x", "b"]
    verdict = verify(result, feeds)
    assert verdict.status == "equivalent" and {r.judge for r in verdict.reports if r.ok} == {"explorer", "onnxruntime"}
    # making b a constant changes what a caller feeding b gets (x + 5 -> x + 0): both judges see it
    wrong = compare_models(model, _folded(model), feeds)
    assert wrong.status == "different"
    for report in wrong.reports:
        assert report.unavailable is None and not report.ok, report
        assert report.diffs[0].max_abs == 5.0
    # not fed, b keeps its default in both models
    assert compare_models(model, _folded(model), {"x": feeds["x"]}).status == "equivalent"


def test_onnxruntime_says_it_cannot_feed_an_initializer_of_an_ir3_model():
    # onnxruntime holds every initializer of an IR < 4 model as a constant (the IR lets a runtime choose):
    # fed b, it gives no verdict rather than a result on b's default; explorer runs with the fed b
    feeds = {"x": np.ones(2, np.float32), "b": np.full(2, 5, np.float32)}
    model = _overridable(3)
    verdict = compare_models(model, _folded(model), feeds)
    reports = {r.judge: r for r in verdict.reports}
    assert "cannot be fed 'b'" in reports["onnxruntime"].unavailable
    assert reports["explorer"].diffs[0].max_abs == 5.0 and verdict.status == "different"
    same = compare_models(model, model, feeds)  # explorer alone says so: never a bare "equivalent"
    assert same.status == "explorer only"
    assert "equivalence: explorer only (onnxruntime gave no verdict on the original" in same.lines()[-1]


def test_models_computing_in_float16_are_compared_within_its_precision():
    """x rounded through float16 differs from x by up to half a float16 unit (4.9e-4 relative): within the
    tolerances a float16 model is compared with (onnxruntime rounds or not as its own Casts fall), beyond
    float32's."""
    rounded = make([h.make_node("Cast", ["x"], ["half"], to=T.FLOAT16), h.make_node("Cast", ["half"], ["y"], to=T.FLOAT)],
                   [info("x", shape=[64])], [info("y", shape=[64])])
    plain = make([h.make_node("Identity", ["x"], ["y"])], [info("x", shape=[64])], [info("y", shape=[64])])
    feeds = {"x": np.linspace(0.1, 1.9, 64, dtype=np.float32) + np.float32(1e-4)}
    verdict = compare_models(rounded, plain, feeds)
    assert verdict.status == "equivalent", verdict.lines()
    assert verdict.tolerance == "rtol 0.002, atol 0.001: a model computes in float16"
    assert "tolerances rtol 0.002, atol 0.001: a model computes in float16" in verdict.lines()
    assert all(0 < d.max_rel < 1e-3 for r in verdict.reports for d in r.diffs)
    strict = compare_models(rounded, plain, feeds, rtol=1e-4, atol=1e-5)
    assert strict.status == "different" and not strict.tolerance


def test_a_proof_lets_go_of_what_its_own_runs_compiled_before_onnxruntime_runs(monkeypatch):
    """After runs that recorded HAND_OVER_BYTES, the programs the proof compiled are dropped before onnxruntime's
    child runs (the two processes' peaks add up), the caller's compiled program is left as it was, and the verdict
    is the same."""
    from explorer.executor import run
    from explorer.executor.run import has_program
    from explorer.model.model import load
    from explorer.optimizer import verify as proofs

    seen: list[tuple[str, bool, bool]] = []
    outputs = proofs._outputs

    def watch(judge, model, feeds, *recorded):
        seen.append((judge, has_program(before), has_program(model)))
        return outputs(judge, model, feeds, *recorded)

    monkeypatch.setattr(proofs, "_outputs", watch)
    before = load(chain_model())
    optimized = optimize(before).optimized
    assert compare_models(before, optimized).status == "equivalent"
    assert has_program(before)  # runs that recorded a few bytes: nothing worth a collection
    before = load(chain_model())
    seen.clear()
    monkeypatch.setattr(proofs, "HAND_OVER_BYTES", 0)  # as after runs that recorded HAND_OVER_BYTES
    assert compare_models(before, optimized).status == "equivalent"
    assert [s[0] for s in seen] == ["explorer", "explorer", "onnxruntime", "onnxruntime"]
    assert seen[2][1:] == (False, False) and not has_program(before)  # compiled by the proof, dropped
    seen.clear()
    run(before)  # the caller's own run: its program stays
    assert compare_models(before, optimized).status == "equivalent"
    assert seen[2][1] and has_program(before)
