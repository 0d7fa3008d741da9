"""Model Explorer's node data: the file holds to the format of Model Explorer's sources (the schema beside this
test), each node is where Model Explorer's ONNX adapter draws it, and the numbers are explorer's own trace's."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import explorer
from explorer.cli import main
from explorer.views.adapter_ids import adapter_placements
from explorer.views.node_data import node_data, node_numbers
from tests.support.share_models import DEPARTING_ITERATION, FEEDS, TRIPS, loop_model

SCHEMA = json.loads((Path(__file__).parent / "model_explorer_node_data.schema.json").read_text())


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nd")
    a, b = folder / "a.onnx", folder / "b.onnx"
    a.write_bytes(loop_model(1.0).SerializeToString())
    b.write_bytes(loop_model(1.5).SerializeToString())
    import numpy as np

    np.savez(folder / "x.npz", **FEEDS)
    return folder


def test_adapter_ids_follow_the_onnx_adapter():
    """The main graph by its name; the unnamed node is "node"; a duplicate name gets "_1"; the Loop's body is a
    graph of its own, "<loop>/body"; the If's branches are flattened into the body, renamed "<if>/<branch>/<n>"."""
    placed = {path: (p.graph, p.node) for path, p in adapter_placements(loop_model()).items()}
    assert placed["Identity_0"] == ("loop_model", "node")
    assert placed["Mul_2"] == ("loop_model", "twice")
    assert placed["Mul_3"] == ("loop_model", "twice_1")
    assert placed["loop/body/mix"] == ("loop/body", "mix")
    assert placed["loop/body/branch/then_branch/scale"] == ("loop/body", "branch/then_branch/scale")
    assert placed["loop/body/branch/else_branch/keep"] == ("loop/body", "branch/else_branch/keep")


def test_cli_writes_schema_valid_errors_from_the_comparison(sides, capsys):
    out = sides / "data.json"
    code = main(["export-node-data", str(sides / "a.onnx"), "--against", str(sides / "b.onnx"),
                 "--inputs", str(sides / "x.npz"), "-o", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    body = data["loop/body"]["results"]
    comparison = explorer.compare(explorer.load(loop_model(1.0)), explorer.load(loop_model(1.5)), FEEDS)
    scale = comparison.value("loop/body/branch/then_branch/scale")
    assert body["branch/then_branch/scale"]["value"] == pytest.approx(scale.max_abs)
    assert body["branch/then_branch/scale"]["value"] > 0.01  # the planted change
    assert body["mix"]["value"] > 0  # iterations after the change carry it
    assert body["branch/then_branch/scale"]["bgColor"] != data["loop_model"]["results"]["node"]["bgColor"]
    assert "loop/body/branch/then_branch/scale" in capsys.readouterr().out
    assert comparison.first.iteration == (DEPARTING_ITERATION,)


@pytest.mark.parametrize("metric", ["time", "runs", "nan"])
def test_trace_metrics_are_the_traces_own(metric):
    model = explorer.load(loop_model())
    trace = explorer.run(model, FEEDS)
    data = node_data(model, node_numbers(trace, metric))
    jsonschema.validate(data, SCHEMA)
    body = data["loop/body"]["results"]
    if metric == "runs":
        assert body["mix"]["value"] == TRIPS == len(trace.events_of("loop/body/mix"))
        assert body["branch/then_branch/scale"]["value"] == 1
        assert body["branch/else_branch/keep"]["value"] == TRIPS - 1
        assert data["loop_model"]["results"]["twice_1"]["value"] == 1
    elif metric == "time":
        expected = sum(e.seconds for e in trace.events_of("loop/body/mix")) * 1e3
        assert body["mix"]["value"] == pytest.approx(expected)
    else:
        assert all(r["value"] == 0 for r in body.values())


def test_nan_counts_and_infinite_errors_stay_json():
    """A NaN the run wrote is counted; an error of a value one side lacks is written as the largest float (JSON
    has no Infinity)."""
    import numpy as np

    model = explorer.load(loop_model())
    trace = explorer.run(model, {"x": np.array([np.nan, 0, 0, 0], np.float32)})
    data = node_data(model, node_numbers(trace, "nan"))
    assert data["loop_model"]["results"]["node"]["value"] == 1
    assert data["loop/body"]["results"]["mix"]["value"] == 4 * TRIPS  # a NaN in h spreads to every element
    json.dumps(data, allow_nan=False)
