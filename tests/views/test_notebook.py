"""Jupyter's rich display of explorer's objects (`_repr_html_`) and `explorer.show`: each shows what the object
holds, escaped, without a script; the tutorial notebook runs end to end (where nbclient and ipykernel are
installed)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.inputs.samples import sample_inputs, sample_path
from explorer.sweep.api import SweepResult
from explorer.views.notebook import view
from tests.support.hostile_names import hostile
from tests.support.report_checks import outside_references, parts
from tests.support.share_models import FEEDS, loop_model

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "notebook.ipynb"


def _text(page: str) -> str:
    return " ".join(" ".join(parts(page).text).split())


def _clean(page: str) -> None:
    assert outside_references(page) == [] and not parts(page).scripts
    assert all(rule.strip().startswith(".xpl") for rule in parts(page).styles[0].split("}") if rule.strip())


def test_model_and_trace():
    model = explorer.load(sample_path("nested_loops"))
    trace = explorer.run(model, sample_inputs("nested_loops"))
    page = model._repr_html_()
    _clean(page)
    assert f"{len(model.index.nodes)} nodes" in _text(page) and 'id="node:enc/body/inner/body/branch"' in page
    page = trace._repr_html_()
    _clean(page)
    assert f"{len(trace.events)} events, {len(trace.iteration_records)} loop iterations" in _text(page)


def test_comparison_names_the_departure():
    comparison = explorer.compare(explorer.load(loop_model(1.0)), explorer.load(loop_model(1.5)), FEEDS)
    page = comparison._repr_html_()
    _clean(page)
    assert comparison.first.describe() in _text(page) and 'class="plot"' in page


def test_cell_with_and_without_its_gates():
    model = explorer.load(sample_path("gru_pytorch_batch_first"))
    (cell,) = explorer.recurrent_cells(model)
    page = cell._repr_html_()
    _clean(page)
    assert cell.describe() in _text(page) and cell.gate_nodes[0]["z"] in _text(page)
    shown = view(cell, model=model)
    page = getattr(shown, "data", shown)  # an IPython HTML object, or the text without IPython
    assert page.count('class="heatmap"') >= 3  # z, r, h, H of the cell's run


def test_sweep_rows_worst_first():
    rows = [{"index": 0, "input": "T=8", "status": "ok", "differs": False, "max_abs": 1e-7, "max_rel": 1e-6,
             "first_divergence": None},
            {"index": 1, "input": "T=64", "status": "ok", "differs": True, "max_abs": 0.5, "max_rel": 0.1,
             "first_divergence": {"node": "loop/body/mix", "iteration": [3]}}]
    page = SweepResult(rows, total=2)._repr_html_()
    _clean(page)
    text = _text(page)
    assert "2 of 2 inputs: 1 agrees, 1 differs" in text
    assert text.index("T=64") < text.index("T=8") and "loop/body/mix" in text


def test_model_strings_are_escaped():
    model = explorer.load(hostile(loop_model()))
    trace = explorer.run(model, {model.inputs[0].name: FEEDS["x"]})
    for page in (model._repr_html_(), trace._repr_html_()):
        _clean(page)
        assert not [t for t, _ in parts(page).tags if t in ("img", "script", "iframe")]


def test_show_refuses_what_it_cannot_show():
    with pytest.raises(TypeError, match="explorer.show shows"):
        explorer.show(np.zeros(3))


EXECUTE = """
import sys
import nbclient, nbformat
notebook = nbformat.read(sys.argv[1], as_version=4)
nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                        resources={"metadata": {"path": str(__import__("pathlib").Path(sys.argv[1]).parent)}}).execute()
nbformat.write(notebook, sys.argv[2])
"""
MISSING = [name for name in ("nbclient", "nbformat", "ipykernel") if importlib.util.find_spec(name) is None]


@pytest.mark.skipif(bool(MISSING), reason=f"the tutorial notebook runs with nbclient, nbformat and ipykernel "
                                          f"(not installed: {', '.join(MISSING)})")
def test_the_tutorial_notebook_runs(tmp_path):
    import nbformat

    executed = tmp_path / "executed.ipynb"
    # in a child process: nbclient leaves this process's asyncio patched (nest_asyncio), which Playwright's sync API
    # of the browser tests run later in the same worker refuses
    subprocess.run([sys.executable, "-c", EXECUTE, str(NOTEBOOK), str(executed)], check=True, timeout=600)
    notebook = nbformat.read(executed, as_version=4)
    shown = [output.get("data", {}).get("text/html", "") for cell in notebook.cells if cell.cell_type == "code"
             for output in cell.outputs]
    assert sum('class="xpl"' in html for html in shown) >= 4 + (importlib.util.find_spec("ipywidgets") is None)
    assert any("First divergence: node" in html and "enc/body/inner/body" in html for html in shown)


@pytest.mark.skipif(importlib.util.find_spec("ipywidgets") is None or importlib.util.find_spec("IPython") is None,
                    reason="the step slider is an ipywidgets IntSlider (ipywidgets and IPython not installed)")
def test_show_steps_a_trace_with_a_slider():
    model = explorer.load(sample_path("nested_loops"))
    trace = explorer.run(model, sample_inputs("nested_loops"))
    summary, slider, step = view(trace, model=model).children
    assert slider.max == len(trace.events) - 1 and "Step 0" in step.value
    slider.value = 20
    assert "Step 20" in step.value and trace.events[20].node in step.value
