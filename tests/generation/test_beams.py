"""Beam search in explorer.generate against transformers' own (reference_beams.json, stored by the recipe from
`generate` with num_beams on the same seeded models): the returned sequences and their scores; each step's info
and the caches reordered by the beams it names."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest

import explorer
from explorer.cli import main
from explorer.generation import against, generate_against
from explorer.generation.onnxruntime_loop import Chosen, onnxruntime_choices, onnxruntime_sessions
from explorer.generation.run import save_generation_model
from explorer.generation.wrap import LOOP
from tests.support.generation_faults import faulty_folder, scale_query_of_head

HERE = Path(__file__).resolve().parents[1] / "models" / "generation"


def searches(name: str, max_new_tokens: int, inputs: tuple[int, ...]) -> list[tuple[str, dict]]:
    stored = json.loads((HERE / name / "reference_beams.json").read_text())
    return [(name, {**entry, "given": stored["inputs"][entry["input"]]}) for entry in stored["searches"]
            if entry["max_new_tokens"] == max_new_tokens and entry["input"] in inputs]


def beam_generation(name: str, entry: dict) -> explorer.Generation:
    given = entry["given"]
    options = {"beams": entry["num_beams"], "num_return_sequences": entry["num_return_sequences"],
               "length_penalty": entry.get("length_penalty", 1.0), "early_stopping": entry.get("early_stopping", False),
               "max_new_tokens": entry["max_new_tokens"]}
    if "prompt" in given:
        return explorer.generate(HERE / name, given["prompt"], **options)
    features = np.load(HERE / name / "reference_features.npz")[given["input_features"]]
    return explorer.generate(HERE / name, inputs={"input_features": features}, **options)


CASES = [*searches("gpt2", 12, (0, 1, 2)), *searches("gpt2", 40, (0, 2)), *searches("llama", 12, (0, 1)),
         *searches("qwen2", 12, (0,)), *searches("t5", 40, (1,)), *searches("whisper", 40, (0,))]


@pytest.mark.parametrize(("name", "entry"), CASES, ids=[
    f"{name}-p{e['input']}-{e['max_new_tokens']}-beams{e['num_beams']}-lp{e.get('length_penalty', 1.0)}"
    f"{'-early' if e.get('early_stopping') else ''}" for name, e in CASES])
def test_beam_search_equals_transformers(name: str, entry: dict) -> None:
    generation = beam_generation(name, entry)
    assert generation.tokens.tolist() == entry["tokens"]  # every returned sequence, padded as transformers pads
    assert len(generation.steps) == entry["steps"]
    assert generation.sequence_scores is not None
    np.testing.assert_allclose(generation.sequence_scores, entry["sequence_scores"], rtol=1e-5, atol=1e-6)


def test_hypotheses_end_the_search() -> None:
    """GPT-2's end-of-sequence id 3 ends hypotheses: for prompt [100] with transformers' defaults, the search of 3
    beams is done (3 hypotheses, none that an open beam could still beat) after 38 of its 40 steps, its shorter
    returned sequences padded after their 3; with early_stopping and 4 beams it holds only 2 hypotheses at the
    end, which the length penalty of 0.5 prefers to the open beams."""
    for entry in (e for _, e in searches("gpt2", 40, (2,)) if e["num_beams"] in (3, 4)):
        generation = beam_generation("gpt2", entry)
        assert generation.tokens.tolist() == entry["tokens"]
        assert len(generation.steps) == entry["steps"] == (40 if entry.get("early_stopping") else 38)
        assert generation.steps[-1].info["finished"] == [not entry.get("early_stopping")]
        assert generation.sequence_lengths is not None
        assert generation.sequence_lengths.tolist() == [row.index(3) + 1 for row in entry["tokens"]]


def test_each_step_records_its_beams_and_reorders_the_caches() -> None:
    name, entry = searches("gpt2", 12, (0,))[0]
    generation = beam_generation(name, entry)
    steps = generation.steps
    beams = entry["num_beams"]
    assert len(steps) == 12 and generation.logits.shape == (12, beams, 128)
    for t, step in enumerate(steps):
        info = step.info
        assert len(info["tokens"]) == len(info["beams"]) == len(info["scores"]) == beams
        assert info["beams"] == generation.parents[t].tolist()
        assert info["tokens"] == generation.step_tokens[:, t].tolist()
        if t + 1 < len(steps):  # the next step reads each cache's rows in the order of the beams it continues
            returned = generation.trace.event(f"{LOOP}/body/{_present_node(generation)}", (t,)).outputs
            after = steps[t + 1].inputs
            for pair in generation.export.caches:
                np.testing.assert_array_equal(after[pair.past], np.asarray(returned[pair.present])[info["beams"]])
    # the first step extends each entry's first beam only (the others start at -1e9, as transformers starts them)
    assert steps[0].info["beams"] == [0] * beams
    # the best open beam, followed back through the rows it continued, spells the best returned sequence
    row, tokens = 0, []
    for t in reversed(range(len(steps))):
        tokens.append(steps[t].info["tokens"][row])
        row = steps[t].info["beams"][row]
    assert tokens[::-1] == entry["tokens"][0]


def _present_node(generation: explorer.Generation) -> str:
    """The body node returning present.0.key (the If between the two decoders, or the decoder's own node)."""
    name = generation.export.caches[0].present
    body = generation.model.index.graphs[f"{LOOP}/body"].proto
    return next(n.name for n in body.node if name in n.output)


@pytest.mark.parametrize("name", ["gpt2", "t5"])
def test_caches_held_once_and_every_step_read_back(name: str) -> None:
    """With beams a step's past is the previous present reordered: the trace holds each step's new positions once
    (within 1.5 x the final cache) and gives back, at every step, the present onnxruntime's decoder makes from the
    step's inputs; every value of every event equals the loop model's recording without the sharing."""
    generation = beam_generation(*searches(name, 12, (0,))[0])
    steps = generation.steps
    assert len(steps) > 8 and generation.trace_bytes <= 1.5 * generation.cache_bytes
    first, later, encoder = onnxruntime_sessions(generation.export)
    beams = {k: np.repeat(v, generation.strategy.beams, axis=0) for k, v in generation.encoder_feeds.items()}
    states = None if encoder is None else encoder.run(None, beams)[0]
    for t, step in enumerate(steps):
        session = first if t == 0 else later
        names = [i.name for i in session.get_inputs()]
        feeds = {k: v for k, v in step.inputs.items() if k in names}
        if "encoder_hidden_states" in names:
            feeds["encoder_hidden_states"], feeds["encoder_attention_mask"] = states, beams["attention_mask"]
        if "use_cache_branch" in names:
            feeds["use_cache_branch"] = np.array([t > 0])
        returned = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
        made = generation.trace.event(f"{LOOP}/body/{_present_node(generation)}", (t,)).outputs
        for pair in generation.export.caches:
            if not pair.static:  # the cross-attention caches are made once, and not reordered
                np.testing.assert_allclose(made[pair.present], returned[pair.present], atol=1e-5)
    unshared = explorer.run(generation.model, generation.loop_feeds)
    assert len(unshared.events) == len(generation.trace.events)
    for ours, recorded in zip(generation.trace.events, unshared.events):
        for a, b in ((ours.inputs, recorded.inputs), (ours.outputs, recorded.outputs)):
            for key, value in b.items():
                np.testing.assert_array_equal(a[key], value, err_msg=f"{ours.node} {ours.iteration} {key}")


def test_the_saved_loop_model_runs_the_same_search(tmp_path: Path) -> None:
    generation = beam_generation(*searches("gpt2", 12, (1,))[0])
    save_generation_model(generation, tmp_path / "gen.onnx", tmp_path / "gen.npz")
    model = explorer.load(onnx.load(str(tmp_path / "gen.onnx")))
    feeds = dict(np.load(tmp_path / "gen.npz"))
    trace = explorer.run(model, feeds)
    rows = np.asarray(trace.outputs["sequences"]).reshape(generation.tokens.shape[0], -1)
    np.testing.assert_array_equal(rows[:, :generation.tokens.shape[1]], generation.tokens)


def test_cli_beams_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name, entry = searches("gpt2", 12, (0,))[0]
    out = tmp_path / "beams.json"
    assert main(["generate", str(HERE / name), "--prompt-ids", ",".join(map(str, entry["given"]["prompt"])),
                 "--max-new-tokens", "12", "--beams", "3", "--num-return-sequences", "3", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["beams"] == 3 and report["strategy"] == "beams" and report["sequences"] == entry["tokens"]
    np.testing.assert_allclose(report["sequence_scores"], entry["sequence_scores"], rtol=1e-5)
    assert report["tokens"] == entry["tokens"][0]
    assert "3 beams" in capsys.readouterr().out


def test_beams_against_another_export(tmp_path: Path) -> None:
    """Against another export, both sides search with the same beams, compared row by row: GPT-2's decoder with
    past alone agrees with the merged folder; the planted fault (layer 0's query scale, head 1) parts at step 0
    in layer 1's cache (layer 0's caches come before its attention)."""
    name, entry = searches("gpt2", 12, (0,))[0]
    generation = beam_generation(name, entry)
    same = generate_against(generation, str(HERE / "gpt2" / "decoder_with_past_model.onnx"))
    assert same.first_token_diff is None and same.first_cache_departure is None and max(same.logit_error) < 1e-4
    faulty = generate_against(generation, str(faulty_folder(tmp_path, scale_query_of_head)))
    assert faulty.first_token_diff is not None and faulty.first_cache_departure is not None
    assert (faulty.first_cache_departure.step, faulty.first_cache_departure.layer) == (0, 1)
    assert len(faulty.tokens) == entry["num_beams"]  # a row per beam


@pytest.mark.parametrize("name", ["gpt2", "llama", "t5"])
def test_against_onnxruntime_with_the_same_beam_bookkeeping(name: str) -> None:
    """onnxruntime runs the loop's decoder calls with explorer's beam bookkeeping: its returned sequences are
    transformers' stored ones, and step by step its tokens, logits and reordered caches are ours."""
    name, entry = searches(name, 12, (0,))[0]
    generation = beam_generation(name, entry)
    chosen = onnxruntime_choices(generation.model.proto, generation.loop_feeds)
    ours = generation.trace.outputs
    np.testing.assert_array_equal(chosen.parents, ours["beam_parents"])
    session = onnxruntime.InferenceSession(generation.model.proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    sequences = dict(zip([o.name for o in session.get_outputs()], session.run(None, generation.loop_feeds)))
    returned = sequences["sequences"].reshape(-1, sequences["sequences"].shape[-1])
    assert [row[:len(want)] for row, want in zip(returned.tolist(), entry["tokens"])] == entry["tokens"]
    result = generate_against(generation, "onnxruntime")
    assert result.first_token_diff is None and result.first_cache_departure is None
    assert len(result.logit_error) == len(generation.steps) and max(result.logit_error) < 1e-4
    assert result.against_tokens == generation.step_tokens.tolist()  # a row per beam


def test_against_onnxruntime_finds_the_step_its_beams_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """A token onnxruntime's side chose otherwise at step 5: the first difference, the steps compared up to it."""
    generation = beam_generation(*searches("gpt2", 12, (0,))[0])
    choices = against.onnxruntime_choices

    def changed(*args: object) -> Chosen:
        chosen = choices(*args)  # type: ignore[arg-type]
        chosen.tokens[5, 0] += 1
        return chosen

    monkeypatch.setattr(against, "onnxruntime_choices", changed)
    result = generate_against(generation, "onnxruntime")
    assert result.first_token_diff == 5 and len(result.logit_error) == 6 and result.first_cache_departure is None


def test_prompt_sweep_with_beams(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps([[15, 2, 99, 7], [100]]))
    out = tmp_path / "rows.json"
    assert main(["generate", str(HERE / "gpt2"), "--prompts", str(prompts), "--max-new-tokens", "6", "--beams", "2",
                 "--against", str(HERE / "gpt2" / "decoder_with_past_model.onnx"), "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [len(row["tokens"]) for row in rows] == [2, 2]  # a row per beam
    assert all(row["first_token_diff"] is None for row in rows)
