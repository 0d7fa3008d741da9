"""A generation in the app: the generation loop model that `explorer generate --save-model` writes, opened with
its inputs, shows one Loop iteration per decode step on the Loops page, and the Step through page moves over it."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

import explorer
from explorer.generation.wrap import LOOP
from explorer.ui import state
from explorer.views.generation import PARTS
from explorer.views.step_moves import moves_at, position_text
from tests.support.apptest import (
    array,
    assert_clean,
    chart_titles,
    figures,
    interactive,
    record_tables,
    start,
    upload,
)

GPT2 = Path(__file__).resolve().parents[1] / "models" / "generation" / "gpt2"


def test_loops_and_step_pages_run_over_the_tokens() -> None:
    entry = json.loads((GPT2 / "reference.json").read_text())["prompts"][1]
    generation = explorer.generate(GPT2, entry["prompt"], max_new_tokens=entry["max_new_tokens"])
    at = upload(start(), "generation.onnx", generation.model.proto.SerializeToString())
    at.radio(key=state.W_INPUT_MODE).set_value("Upload .npz or .pb").run()
    buffer = io.BytesIO()
    np.savez(buffer, **generation.loop_feeds)
    at.file_uploader(key=state.W_NPZ).upload("generation.npz", buffer.getvalue()).run()
    at.switch_page("explorer/ui/pages/loops.py").run()
    assert_clean(at)
    at.selectbox(key="w_loop").set_value(LOOP).run()
    assert_clean(at)
    assert "**12 iterations** · stopped: trip count reached after 12 iterations" in [m.value for m in at.markdown]
    [table] = [f for f in record_tables(at) if "iteration" in f.columns]
    assert table["gen.token →"].tolist() == [f"[{token}]" for token in entry["tokens"]]
    assert next(s for s in at.slider if s.label == "Iteration").max == 11
    at.switch_page("explorer/ui/pages/step.py").run()
    assert_clean(at)


def test_the_step_cursor_moves_by_token() -> None:
    generation = explorer.generate(GPT2, [5, 6, 7], max_new_tokens=6)
    trace, model = generation.trace, generation.model
    node = f"{LOOP}/body/optimum::if/then_branch//transformer/h.1/attn/MatMul"
    index = trace.event(node, (3,)).index
    moves = {m.name: m.target for m in moves_at(model, trace, index, None)}
    assert trace.events[moves["next_iteration"]].node == node and trace.events[moves["next_iteration"]].iteration == (4,)
    assert trace.events[moves["prev_iteration"]].iteration == (2,)
    assert trace.events[moves["level0+"]].iteration[0] == 4
    assert "iteration 3" in position_text(model, trace, index)


def test_the_compare_page_shows_two_generations_token_by_token(tmp_path: Path) -> None:
    """A generation against another export's (GPT-2 with layer 0's query scaled for one head): the Compare page
    lists both sides' tokens step by step and names the first step whose tokens differ."""
    from tests.support.generation_faults import faulty_folder, scale_query_of_head

    prompt = [15, 2, 99, 7]
    ours = explorer.generate(GPT2 / "decoder_with_past_model.onnx", prompt, max_new_tokens=3)
    theirs = explorer.generate(faulty_folder(tmp_path, scale_query_of_head), prompt, max_new_tokens=3)
    (tmp_path / "a.onnx").write_bytes(ours.model.proto.SerializeToString())
    (tmp_path / "b.onnx").write_bytes(theirs.model.proto.SerializeToString())
    at = start(timeout=120)
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key="w_path").input(str(tmp_path / "a.onnx")).run()
    at.radio(key=state.W_INPUT_MODE).set_value("Upload .npz or .pb").run()
    buffer = io.BytesIO()
    np.savez(buffer, **ours.loop_feeds)
    at.file_uploader(key=state.W_NPZ).upload("generation.npz", buffer.getvalue()).run()
    at.switch_page("explorer/ui/pages/compare.py").run()
    at.radio(key="w_compare_b").set_value("path").run()
    at.text_input(key="w_compare_path").input(str(tmp_path / "b.onnx")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert "the first token that differs: step 1" in [c.value for c in at.caption]
    [table] = [f for f in record_tables(at) if "same" in f.columns]
    assert [str(t) for t in table["A"]] == [str(t) for t in ours.tokens[0]]
    assert [str(t) for t in table["B"]] == [str(t) for t in theirs.tokens[0]]
    assert table["same"].tolist()[:2] == [True, False] and table[""].tolist()[1] == PARTS
    assert "Cache error |A − B| per step and layer" in chart_titles(at)
    interactive(at)
    [heatmap] = [f for f in figures(at) if "Cache error" in f.layout.title.text]
    assert list(heatmap.layout.yaxis.ticktext) == ["present.0.key", "present.0.value", "present.1.key",
                                                   "present.1.value"]
    errors = array(heatmap.data[0].z)  # caches down, steps across
    assert errors.shape == (4, 3) and not errors[:2, 0].any() and errors[2:, 0].min() > 1e-3  # layer 0's caches
