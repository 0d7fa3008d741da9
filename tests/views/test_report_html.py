"""The self-contained HTML report: nothing outside the file, every model string escaped, the departing node's
names in the text, the step with its iteration tuple and If branch, the departing tensors and both sides' gates."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import explorer
from explorer.cli import main
from explorer.views.report_html import report_html
from tests.support.hostile_names import PAYLOADS, hostile
from tests.support.report_checks import outside_references, parts
from tests.support.share_models import DEPARTING_ITERATION, FEEDS, loop_model

KERAS = Path(__file__).parents[1] / "models" / "keras_exports"
DEPARTING = "loop/body/branch/then_branch/scale"


@pytest.fixture(scope="module")
def loop_pair():
    a, b = explorer.load(loop_model(1.0)), explorer.load(loop_model(1.5))
    return a, explorer.compare(a, b, FEEDS)


def test_the_page_refers_to_nothing_outside_itself(loop_pair):
    model, comparison = loop_pair
    page = report_html(model, comparison=comparison)
    assert outside_references(page) == []
    assert page.count("<script>") == 1 and "<svg" in page


def test_the_checks_catch_outside_references():
    """The test's own judge fails pages that load a script, a style sheet, an image or a font from elsewhere."""
    for bad in ('<script src="x.js"></script>', '<link rel="stylesheet" href="a.css">', '<img src="p.png">',
                "<style>@font-face { src: url(f.woff) }</style>", "<script>fetch('/x')</script>",
                '<a href="https://example.org/">x</a>'):
        assert outside_references(f"<html><body>{bad}</body></html>"), bad


def test_the_departure_in_words_with_its_step_and_branch(loop_pair):
    model, comparison = loop_pair
    text = " ".join(" ".join(parts(report_html(model, comparison=comparison)).text).split())  # outside the drawing
    assert DEPARTING in text and "Mul" in text and "scaled" in text
    assert f"iteration tuple ({DEPARTING_ITERATION},)" in text and f"Loop loop iteration {DEPARTING_ITERATION}" in text
    assert "If loop/body/branch took then_branch" in text
    assert comparison.first.describe() in text
    for row in comparison.rows(3):
        assert row["node"] in text


def test_the_departing_node_and_its_path_are_marked(loop_pair):
    model, comparison = loop_pair
    page = report_html(model, comparison=comparison)
    assert page.count('class="node departing"') == 1
    assert f'<g id="node:{DEPARTING}" class="node departing"' in page
    assert '<g id="node:loop/body/act" class="node on-path"' in page  # feeds the departing Mul
    assert '<g id="node:loop/body/emit" class="node on-path"' not in page  # downstream of it


def test_every_model_string_is_escaped():
    """A model whose every name is an HTML payload: the page holds no element and no script of the model's."""
    a, b = explorer.load(hostile(loop_model(1.0))), explorer.load(hostile(loop_model(1.5)))
    comparison = explorer.compare(a, b, {a.inputs[0].name: FEEDS["x"]})
    assert comparison.first is not None
    page = report_html(a, comparison=comparison, command="explorer report <script>alert(1)</script>")
    parsed = parts(page)
    assert outside_references(page) == []
    assert not [tag for tag, attrs in parsed.tags if tag in ("img", "iframe") or set(attrs) & {"href", "xlink:href"}]
    assert len(parsed.scripts) == 1 and "alert" not in parsed.scripts[0]
    text = " ".join(parsed.text)
    assert comparison.first.node in text  # the departing node's (hostile) name, as text
    assert any(payload in text for payload in PAYLOADS)


def test_cli_report_with_both_sides_gates(tmp_path, capsys):
    """A Keras LSTM against its float16 conversion at float32's tolerances: the LSTM's gates of both sides, the
    departing step outlined."""
    out = tmp_path / "report.html"
    code = main(["report", str(KERAS / "keras_lstm.onnx"), "--against", str(KERAS / "keras_lstm_fp16.onnx"),
                 "--rtol", "1e-4", "--atol", "1e-5", "-o", str(out)])
    assert code == 0
    page = out.read_text()
    assert outside_references(page) == []
    assert page.count('class="heatmap"') >= 8  # i, o, f, c, C, H of A and of B
    assert "<title>A · i</title>" in page and "<title>B · i</title>" in page
    assert 'class="marked-step"' in page
    assert "first divergence:" in capsys.readouterr().out


def test_a_run_alone_shows_the_chosen_step(tmp_path):
    out = tmp_path / "run.html"
    assert main(["report", "nested_loops", "--event", "20", "-o", str(out)]) == 0
    text = " ".join(" ".join(parts(out.read_text()).text).split())
    model = explorer.load(explorer.inputs.samples.sample_path("nested_loops"))
    from explorer.inputs.samples import sample_inputs

    event = explorer.run(model, sample_inputs("nested_loops")).events[20]
    assert "step 21 of" in text and event.node in text
    if event.iteration:
        assert f"iteration tuple {event.iteration}" in text


def test_a_tensor_of_many_elements_stays_small():
    """A departing value of a million elements is drawn in at most a few hundred points."""
    from explorer.views.svg_plots import heatmap, line_plot

    big = np.random.default_rng(0).normal(size=1_000_000)
    assert len(line_plot({"A": big}, "x")) < 20_000
    assert len(heatmap(big.reshape(1000, 1000), "x")) < 700_000


def test_the_reduced_model_rides_along(tmp_path):
    """--reduce embeds what `explorer reduce` writes as a .zip download inside the page (a data: link)."""
    import base64
    import io
    import zipfile

    for scale, name in ((1.0, "a.onnx"), (1.5, "b.onnx")):
        (tmp_path / name).write_bytes(loop_model(scale).SerializeToString())
    np.savez(tmp_path / "x.npz", **FEEDS)
    out = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "a.onnx"), "--against", str(tmp_path / "b.onnx"), "--inputs",
                 str(tmp_path / "x.npz"), "--reduce", "-o", str(out)]) == 0
    page = out.read_text()
    assert outside_references(page) == []
    (link,) = [attrs for tag, attrs in parts(page).tags if tag == "a" and attrs.get("download") == "reduced.zip"]
    data = base64.b64decode(link["href"].split(",", 1)[1])
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert {"reduced/model_a.onnx", "reduced/model_b.onnx", "reduced/test_data_set_0/input_0.pb",
            "reduced/test_data_set_0/output_0.pb", "reduced/README.md"} <= set(names)
    model = onnx.load_from_string(zipfile.ZipFile(io.BytesIO(data)).read("reduced/model_a.onnx"))
    assert [n.name for n in model.graph.node] == ["scale"]


def test_a_run_that_fails_is_reported_up_to_the_failing_node(tmp_path, capsys):
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper

    graph = h.make_graph([h.make_node("Relu", ["x"], ["r"], name="relu"),
                          h.make_node("Reshape", ["r", "shape"], ["y"], name="bad_reshape")], "fails",
                         [h.make_tensor_value_info("x", T.FLOAT, [6])], [h.make_tensor_value_info("y", T.FLOAT, None)],
                         [numpy_helper.from_array(np.array([4, 2], np.int64), "shape")])
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])
    proto.ir_version = 10
    (tmp_path / "fails.onnx").write_bytes(proto.SerializeToString())
    out = tmp_path / "fails.html"
    assert main(["report", str(tmp_path / "fails.onnx"), "-o", str(out)]) == 0
    assert "partial trace" in capsys.readouterr().out
    page = out.read_text()
    text = " ".join(" ".join(parts(page).text).split())
    assert "The run failed" in text and "cannot reshape" in text and "node bad_reshape (Reshape)" in text
    assert '<g id="node:bad_reshape" class="node departing"' in page and outside_references(page) == []


def test_a_framework_comparison_has_its_module_table_diagnosis_and_causes_in_the_page():
    """The export with its cell's reset gate applied before the product, against PyTorch's stored capture: the
    page names the cause, lists every module value in the framework's order with its status, gives the fix, and
    marks the cause's box in the drawing, with nothing outside the file."""
    from explorer.bridge import captured_side, compare_framework

    bridge = Path(__file__).parents[1] / "models" / "bridge"
    model = explorer.load(bridge / "faults" / "ts_loop_gru_reset_before.onnx")
    result = compare_framework(model, captured_side(bridge / "loop_gru.npz"))
    page = report_html(model, framework=result)
    assert outside_references(page) == []
    text = " ".join(parts(page).text)
    assert "Against the framework" in text and "First departing module: cell" in text
    table = text[text.index("Modules, in the framework's order"):]
    at = 0
    for check in result.checks:  # every module value, in the framework's order
        at = table.index(check.point.label, at)
    assert text.count("own error") >= 5 and "carried" in text  # each call of the cell departs on its own
    assert "move the reset gate after the candidate" in text
    assert page.count('class="node departing"') == 1  # the cell's box: every call is the one node
