"""Sweeps on a real local Dask cluster of two worker processes (one per module, reached at its scheduler's
address as an existing cluster is): the planted pair flags exactly the inputs long enough to reach the iteration
where the two models part, each with its first divergence there; bad inputs give "error" rows with explorer's
own message; test data sets are judged by their reference outputs; an input that kills its worker twice gets an
"error" row naming it while every other input gets its row. Each test's judge is explorer.compare itself, run
here on the same inputs, or the message explorer.run gives for the same feeds."""
from __future__ import annotations

import json

import numpy as np
import pytest

import explorer
from explorer.errors import FeedError, SweepError
from explorer.inputs.input_files import feeds_from_npz
from explorer.sweep import plan
from explorer.sweep.writer import csv_path
from tests.support.sweep_models import ACC, PART_AT, KillOn, planted_pair, save_test_data_set

distributed = pytest.importorskip("distributed")


@pytest.fixture
def scheduler(sweep_scheduler):
    return sweep_scheduler


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return planted_pair(tmp_path_factory.mktemp("pair"))


def test_the_planted_pair_parts_exactly_on_the_inputs_that_reach_its_iteration(scheduler, pair, tmp_path):
    a, b = pair
    lengths = [2, PART_AT - 1, PART_AT, PART_AT + 1, PART_AT + 3]
    out = tmp_path / "rows.json"
    seen = []
    result = explorer.sweep(a, b, {"T": lengths}, seeds=[0, 1], scheduler=scheduler, out=out, on_row=seen.append)
    assert len(result.rows) == len(seen) == 10 and sorted(r["index"] for r in result.rows) == list(range(10))
    model_a, model_b = explorer.load(a), explorer.load(b)
    for row in result.rows:
        assert row["status"] == "ok" and row["seed"] in (0, 1) and row["file"] is None
        length = row["dims"]["T"]
        judge = explorer.compare(model_a, model_b, model_a.example_inputs(seed=row["seed"], dims={"T": length}))
        assert row["differs"] is judge.differs is (length > PART_AT)
        assert row["max_abs"] == max(d.max_abs for d in judge.outputs)
        assert row["outputs"] == {d.name: {"max_abs": d.max_abs, "max_rel": d.max_rel, "ok": d.ok}
                                  for d in judge.outputs}
        if length > PART_AT:
            assert row["first_divergence"]["node"] == ACC and row["first_divergence"]["iteration"] == [PART_AT]
            assert row["first_divergence"]["value"] == "s_out"
            assert row["max_abs"] == pytest.approx(0.5 * (length - PART_AT))
        else:
            assert row["first_divergence"] is None and row["max_abs"] == 0.0
    worst = result.worst()
    assert [r["dims"]["T"] for r in worst[:4]] == [PART_AT + 3, PART_AT + 3, PART_AT + 1, PART_AT + 1]
    assert result.exit_code == 1
    written = json.loads(out.read_text())
    assert [r["index"] for r in written] == [r["index"] for r in result.rows]
    lines = csv_path(out).read_text().splitlines()
    assert len(lines) == 11 and lines[0].split(",")[4] == "dim T"


def test_against_onnxruntime_every_input_agrees(scheduler, pair):
    a, _ = pair
    result = explorer.sweep(a, "onnxruntime", {"T": [1, PART_AT + 2]}, seeds=[3], scheduler=scheduler)
    assert [r["status"] for r in result.rows] == ["ok", "ok"] and result.exit_code == 0
    assert all(r["differs"] is False and r["first_nonfinite"] is None for r in result.rows)


def test_bad_inputs_give_error_rows_with_explorers_message(scheduler, pair, tmp_path):
    a, _ = pair
    model = explorer.load(a)
    good = model.example_inputs(seed=0, dims={"T": 3})
    np.savez(tmp_path / "good.npz", **good)
    np.savez(tmp_path / "ints.npz", X=np.ones((3, 3), np.int32))
    np.savez(tmp_path / "other_name.npz", Z=good["X"])
    (tmp_path / "test_data_set_0").mkdir()  # a data set without its input files
    paths = [tmp_path / name for name in ("good.npz", "ints.npz", "other_name.npz", "missing.npz", "test_data_set_0")]
    result = explorer.sweep(a, "onnxruntime", paths, scheduler=scheduler)
    rows = {r["input"]: r for r in result.rows}
    assert rows["good.npz"]["status"] == "ok" and rows["good.npz"]["dims"] == {"T": 3}
    for name in ("ints.npz", "other_name.npz"):
        with pytest.raises(FeedError) as raised:
            explorer.run(model, feeds_from_npz((tmp_path / name).read_bytes()))
        assert rows[name]["status"] == "error" and rows[name]["message"] == str(raised.value)
    assert "dtype int32" in rows["ints.npz"]["message"]
    assert rows["missing.npz"]["status"] == "error" and "does not exist" in rows["missing.npz"]["message"]
    assert "no input_<i>.pb" in rows["test_data_set_0"]["message"]
    assert result.exit_code == 1
    assert [r["input"] for r in result.worst()][-1] == "good.npz"  # errors before agreement


def test_test_data_sets_are_judged_by_their_own_outputs(scheduler, pair, tmp_path):
    a, _ = pair
    model = explorer.load(a)
    for n, (length, shift) in enumerate([(3, 0.0), (PART_AT + 2, 0.25)]):
        feeds = model.example_inputs(seed=n, dims={"T": length})
        outputs = explorer.run(model, feeds).outputs
        save_test_data_set(tmp_path / f"test_data_set_{n}", [feeds["X"]], [outputs["S"] + np.float32(shift),
                                                                           outputs["Y"]])
    result = explorer.sweep(a, tmp_path, tmp_path, scheduler=scheduler)
    rows = sorted(result.rows, key=lambda r: r["index"])
    assert [r["input"] for r in rows] == ["test_data_set_0", "test_data_set_1"]
    assert [r["dims"] for r in rows] == [{"T": 3}, {"T": PART_AT + 2}]
    assert rows[0]["differs"] is False and rows[1]["differs"] is True
    assert rows[1]["outputs"]["S"]["max_abs"] == pytest.approx(0.25) and rows[1]["outputs"]["Y"]["ok"]
    assert rows[1]["first_divergence"]["node"] == "loop" and rows[1]["first_divergence"]["value"] == "S"


def test_the_sweep_refuses_what_cannot_run(pair, tmp_path, monkeypatch):
    from explorer.sweep import cluster

    monkeypatch.setattr(cluster, "CONNECT_S", 1.0)
    a, b = pair
    with pytest.raises(SweepError, match="need inputs from files"):
        explorer.sweep(a, tmp_path, {"T": [2]})
    with pytest.raises(FeedError, match="no .npz files"):
        explorer.sweep(a, b, tmp_path)
    with pytest.raises(SweepError, match="cannot reach the Dask scheduler"):
        explorer.sweep(a, b, {"T": [2]}, scheduler="tcp://127.0.0.1:1")


def test_an_input_that_kills_its_worker_twice_gets_an_error_row(pair):
    from explorer.sweep.cluster import local_cluster

    a, b = pair
    killer = f"T={PART_AT + 1} seed 7"
    cluster = local_cluster(2)  # its own: the workers it kills are never those another test is using
    try:
        with distributed.Client(cluster, set_as_default=False) as client:
            client.register_plugin(KillOn(killer))
            result = explorer.sweep(a, b, {"T": [2, PART_AT + 1, PART_AT + 2]}, seeds=[7],
                                    scheduler=cluster.scheduler_address)
    finally:
        cluster.close()
    rows = {r["input"]: r for r in result.rows}
    assert sorted(rows) == sorted(["T=2 seed 7", killer, f"T={PART_AT + 2} seed 7"])
    assert rows[killer]["status"] == "error"
    assert rows[killer]["message"] == f"input {killer!r} killed its worker 2 times (the worker process died while " \
                                      "running it)"
    assert rows["T=2 seed 7"]["differs"] is False and rows[f"T={PART_AT + 2} seed 7"]["differs"] is True


def test_each_input_runs_on_one_blas_thread_whatever_the_limits_say(pair):
    a, b = pair
    ready = plan(a, b, {"T": [2]}, limits=explorer.Limits(max_iterations=50, threads=2))
    assert ready.job.limits == explorer.Limits(max_iterations=50, threads=1)
