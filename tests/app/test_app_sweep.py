"""The Sweep page driven with AppTest, on the planted pair (a Loop and the same Loop parting from iteration
PART_AT on) and on a local Dask cluster reached at its scheduler's address: rows worst first, the error against
the swept dim with one line per seed, and an input opened in the Compare page at its first divergence; a folder of
test data sets judged by their own outputs, an input of it opened as the sidebar's "Sweep input"."""
from __future__ import annotations

import numpy as np
import pytest

import explorer
from explorer.sweep.plan import Item
from explorer.ui import state
from explorer.ui.sweeping import key
from explorer.ui.widgets import SWEPT_INPUTS
from tests.support.apptest import chart_titles, figures, interactive, start
from tests.support.markdown_text import shown
from tests.support.sweep_models import ACC, PART_AT, planted_pair, save_test_data_set

PAGE = "explorer/ui/pages/sweep.py"


@pytest.fixture
def pair(tmp_path):
    return planted_pair(tmp_path)


def sweep_page(model_path):
    at = start(timeout=120)
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(model_path)).run()
    return at.switch_page(PAGE).run()


def finish(at):
    """Runs the sweep the Start button began to its end, then the page again."""
    job, _ = at.session_state[state.SWEEP_JOB]
    assert job.wait(240)
    return at.run()


def test_a_grid_sweep_shows_the_rows_worst_first_and_opens_one_at_its_divergence(pair, sweep_scheduler):
    a, b = pair
    at = sweep_page(a)
    model = explorer.load(a)
    at.text_input(key=key("dim", model.sha256, "T")).input(f"2,3,{PART_AT + 1},{PART_AT + 2}").run()
    at.text_input(key=key("seeds")).input("0,1").run()
    at.radio(key=key("against")).set_value("path").run()
    at.text_input(key=key("path")).input(str(b)).run()
    at.radio(key=key("where")).set_value("scheduler").run()
    at.text_input(key=key("scheduler")).input(sweep_scheduler).run()
    assert "8 inputs" in "\n".join(c.value for c in at.caption)
    at.button(key=key("start")).click().run()
    at = finish(at)
    assert not at.exception and not at.error
    assert any("8 of 8 inputs: **4 differ**, 4 agree" in m.value for m in at.markdown)
    table = at.dataframe[0].value
    assert list(table["input"][:2]) == [f"T={PART_AT + 2} seed 0", f"T={PART_AT + 2} seed 1"]
    assert list(table["verdict"]) == ["differs"] * 4 + ["agrees"] * 4
    assert set(table["first divergence"][:4]) == {f"{ACC} (Add) at iteration ({PART_AT},), value 's_out'"}
    assert chart_titles(at) == ["error against T"]
    [figure] = figures(interactive(at))
    assert [t.name for t in figure.data] == ["seed 0", "seed 1"]
    assert list(figure.data[0].x) == [2, 3, PART_AT + 1, PART_AT + 2]
    assert figure.data[0].y[-1] == pytest.approx(0.5 * 2) and figure.data[0].y[0] == pytest.approx(1e-12)

    choices = at.selectbox(key=key("pick")).options
    label = next(o for o in choices if o.startswith(f"T={PART_AT + 1} seed 1"))
    at.selectbox(key=key("pick")).select(label).run()
    at.button(key=key("open")).click().run()
    assert not at.exception
    assert at.radio(key=state.W_INPUT_MODE).value == "Random" and at.number_input(key=state.W_SEED).value == 1
    assert at.number_input(key=state.dim_key(model, "T")).value == PART_AT + 1
    assert at.radio(key=state.W_COMPARE_B).value == "path"
    texts = "\n".join(t.value for t in at.text)
    assert f"node '{ACC}' (Add) at iteration ({PART_AT},), value 's_out'" in texts
    trace = explorer.run(model, model.example_inputs(seed=1, dims={"T": PART_AT + 1}))
    divergence = next(e.index for e in trace.events if e.node == ACC and e.iteration == (PART_AT,))
    assert at.slider(key=state.W_COMPARE_CURSOR).value == divergence


def test_a_folder_of_test_data_sets_opens_an_input_with_its_own_reference(pair, sweep_scheduler, tmp_path):
    a, _ = pair
    model = explorer.load(a)
    folder = tmp_path / "sets"
    for n, shift in enumerate([0.0, 0.25]):
        feeds = model.example_inputs(seed=n, dims={"T": 3})
        outputs = explorer.run(model, feeds).outputs
        save_test_data_set(folder / f"test_data_set_{n}", [feeds["X"]],
                           [outputs["S"] + np.float32(shift), outputs["Y"]])
    at = sweep_page(a)
    at.radio(key=key("inputs")).set_value("folder").run()
    at.text_input(key=key("folder")).input(str(folder)).run()
    at.radio(key=key("against")).set_value("folder").run()
    at.text_input(key=key("references")).input(str(folder)).run()
    at.radio(key=key("where")).set_value("scheduler").run()
    at.text_input(key=key("scheduler")).input(sweep_scheduler).run()
    at.button(key=key("start")).click().run()
    at = finish(at)
    table = at.dataframe[0].value
    assert list(table["input"]) == ["test_data_set_1", "test_data_set_0"]
    assert list(table["verdict"]) == ["differs", "agrees"]
    at.selectbox(key=key("pick")).select(at.selectbox(key=key("pick")).options[0]).run()
    at.button(key=key("open")).click().run()
    assert not at.exception
    assert at.radio(key=state.W_INPUT_MODE).value == "Sweep input"
    assert at.radio(key=state.W_COMPARE_B).value == "sweep"
    assert "node 'loop' (Loop), value 'S'" in "\n".join(t.value for t in at.text)


def test_the_error_chart_draws_one_line_per_size_of_the_other_dims():
    """Rows swept over T and B: the chart against T has one line per seed and B, each line's points at one B (a
    line through points of other B sizes would zig-zag)."""
    from explorer.views.sweep import error_figure

    rows = [{"index": k, "input": f"T={t} B={b} seed {s}", "dims": {"T": t, "B": b}, "seed": s,
             "max_abs": float(t * b + s) / 10, "max_rel": 0.0, "status": "ok", "differs": True}
            for k, (t, b, s) in enumerate((t, b, s) for t in (2, 4, 8) for b in (1, 3) for s in (0, 1))]
    figure = error_figure(rows, "T")
    lines = {trace.name: (list(trace.x), list(trace.y)) for trace in figure.data}
    assert set(lines) == {"seed 0, B=1", "seed 0, B=3", "seed 1, B=1", "seed 1, B=3"}
    assert lines["seed 1, B=3"] == ([2, 4, 8], [0.7, 1.3, 2.5])


def test_the_compare_page_reads_a_sweep_inputs_reference_under_the_sessions_limits(pair, tmp_path, monkeypatch):
    """The reference values of a sweep input opened in Compare were read under explorer's default limits (2 GiB
    of input), not the session's, which never pass the operator's caps (here 1 MB of memory)."""
    monkeypatch.setenv("EXPLORER_MAX_MEMORY_MB", "1")
    a, _ = pair
    model = explorer.load(a)
    inputs = save_test_data_set(tmp_path / "set", [model.example_inputs(seed=0, dims={"T": 3})["X"]], [])
    reference = tmp_path / "reference.npz"
    np.savez(reference, S=np.zeros(1 << 19, np.float32))  # 2 MiB once read
    at = start()
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(a)).run()
    at.session_state[state.SWEPT_INPUT] = (model.sha256, Item(0, "set", path=str(inputs), reference=str(reference)))
    at.run().radio(key=state.W_INPUT_MODE).set_value(SWEPT_INPUTS).run()  # as the Sweep page's "Open" leaves it
    at = at.switch_page("explorer/ui/pages/compare.py").run()
    at.radio(key=state.W_COMPARE_B).set_value("sweep").run()
    assert not at.exception
    errors = "\n".join(shown(e.value) for e in at.error)
    assert "The sweep's reference values do not load" in errors and f"more than {1 << 20} bytes" in errors, errors
