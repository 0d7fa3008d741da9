"""The Optimizer page says why each rewrite was valid (the shape facts it used) and what blocked the patterns
that declined (their most common reasons); the logic is the optimizer's records, the page only shows them."""
from __future__ import annotations

from explorer.inputs.samples import sample_path
from explorer.optimizer import optimize
from explorer.ui import state, widgets
from explorer.views.rewrites import decline_rows
from tests.support.apptest import PAGES, assert_clean, record_tables, start, texts


def test_declines_group_by_cause_across_value_names():
    result = optimize(str(sample_path("opt_loop_body")))
    rows = {r["pattern"]: r for r in decline_rows(result)}
    assert rows["IdentityRemoval"]["reason"] == "'…' is a graph output and '…' is not produced in this graph"
    assert rows["LoopInvariantHoisting"] == {"pattern": "LoopInvariantHoisting", "nodes declined": 1,
                                             "reason": "no loop-invariant computation in the body", "times": 1}
    # the carried state keeps its [2, 4] shape on every iteration, so the body's MatMul + Add became a Gemm
    assert "MatMulAdd" not in rows
    [gemm] = [s for s in result.steps if s.pattern == "MatMulAdd"]
    assert "h_in has shape [2, 4]" in gemm.facts


def test_the_page_shows_why_rewrites_fired_and_why_patterns_declined():
    at = start("opt_shape_chain")
    at.switch_page(PAGES["optimizer"]).run()
    assert_clean(at)
    [steps] = [f for f in record_tables(at) if "round" in f.columns]
    why = dict(zip(steps["pattern"], steps["why"]))
    assert why["ShapeGather"] == "x has shape [batch, 3, 4]"
    [declined] = [f for f in record_tables(at) if "nodes declined" in f.columns]
    assert declined[["pattern", "reason", "times"]].values.tolist() == [["ShapeGather", "a selected dim is not known", 1]]
    pick = int(steps.index[steps["pattern"] == "ShapeGather"][0])
    at.selectbox(key="w_rewrite_pick").set_value(pick).run()
    assert_clean(at)
    assert "**Why it fired:** `x has shape [batch, 3, 4]`" in texts(at)


def test_a_long_list_of_rewrites_shows_its_first_rows_until_all_are_asked_for(monkeypatch):
    monkeypatch.setattr(widgets, "LISTED_ROWS", 5)  # opt_shape_chain has 17 rewrites
    at = start("opt_shape_chain")
    at.switch_page(PAGES["optimizer"]).run()
    assert_clean(at)
    [steps] = [f for f in record_tables(at) if "round" in f.columns]
    assert steps["#"].tolist() == [0, 1, 2, 3, 4]
    at.toggle(key=state.W_ALL_REWRITES).set_value(True).run()
    assert_clean(at)
    [steps] = [f for f in record_tables(at) if "round" in f.columns]
    assert steps["#"].tolist() == list(range(17))
    assert len(optimize(str(sample_path("opt_shape_chain"))).steps) == 17
