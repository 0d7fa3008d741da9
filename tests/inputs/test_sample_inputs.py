"""The inputs some samples are first run on (sample_models/sample_inputs.json): rebuilt exactly, valid for their
model, and making the loops iterate as worked out by hand."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.compare.outputs import compare_with_onnxruntime
from explorer.inputs.samples import list_samples, sample_inputs, sample_path

ROOT = Path(__file__).resolve().parents[2]
WITH_INPUTS = sorted(json.loads((ROOT / "sample_models" / "sample_inputs.json").read_text()))


def test_build_script_rebuilds_the_inputs_exactly(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "sample_models" / "build.py"), str(tmp_path)], check=True,
                   capture_output=True)
    assert (tmp_path / "sample_inputs.json").read_text() == (ROOT / "sample_models" / "sample_inputs.json").read_text()


def test_only_known_samples_have_inputs_and_the_others_none():
    assert set(WITH_INPUTS) <= set(list_samples())
    assert sample_inputs("tiny_mlp") is None and sample_inputs("no_such_sample") is None


@pytest.mark.parametrize("name", WITH_INPUTS)
def test_inputs_fit_the_model_and_match_onnxruntime(name):
    model = explorer.load(sample_path(name))
    feeds = sample_inputs(name)
    trace = explorer.run(model, feeds)  # FeedError if a name, dtype or rank does not fit
    assert compare_with_onnxruntime(model, feeds, trace.outputs).ok


def stop(trace: explorer.Trace, path: str) -> tuple[int, str | None]:
    [event] = trace.events_of(path)
    return event.info["iterations"], event.info.get("stop_reason")


def test_loop_spec_stops_on_cond_before_the_trip_count():
    # a=3, b=6: keepgoing = a+b > a-b holds while b_in > 0; b goes 6 -> -3 -> 6, so iteration 1 (b_in=-3) says stop
    trace = explorer.run(explorer.load(sample_path("loop_spec")), sample_inputs("loop_spec"))
    assert stop(trace, "loop") == (2, "cond false")
    assert trace.outputs["b_final"] == 6 and trace.outputs["user_defined_vals"].tolist() == [12, -6]


def test_while_loop_halves_six_times():
    trace = explorer.run(explorer.load(sample_path("while_loop")), sample_inputs("while_loop"))
    assert stop(trace, "while") == (6, "cond false")  # |8*[3, 4]| = 40 -> 20, 10, 5, 2.5, 1.25, 0.625
    np.testing.assert_array_equal(trace.outputs["x_small"], [0.375, 0.5])


def test_loop_sequence_collects_five_prefix_sums():
    trace = explorer.run(explorer.load(sample_path("loop_sequence")), sample_inputs("loop_sequence"))
    assert stop(trace, "collect") == (5, "trip count reached")
    assert [s.tolist() for s in trace.outputs["prefix_sums"]] == [[k, 2 * k] for k in range(1, 6)]


def test_nested_loops_runs_four_scan_steps_of_three_inner_iterations():
    trace = explorer.run(explorer.load(sample_path("nested_loops")), sample_inputs("nested_loops"))
    assert len(trace.iterations("enc")) == 4 and len(trace.iterations("enc/body/inner")) == 12
