"""explorer's seeded sampling: transformers' filters (temperature, top-k, top-p; judged by transformers' own
warpers on stored logits, reference_warpers.npz), then a draw from NumPy's default_rng(seed) defined in
explorer/generation/token_sampling.py (judged here by a direct NumPy computation of that definition). transformers
draws with torch's generator: its sampled tokens differ by design and are not compared."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import explorer
from explorer.cli import main
from explorer.errors import FeedError
from explorer.generation import generate_against
from explorer.generation.onnxruntime_loop import onnxruntime_choices, onnxruntime_steps
from explorer.generation.parts import LAST_LOGITS, STEP
from explorer.generation.strategy import Sampling
from explorer.generation.token_sampling import DRAWN, DRAWS, draws, sampling_nodes

HERE = Path(__file__).resolve().parents[1] / "models" / "generation"
GPT2 = HERE / "gpt2"
PROMPT = [15, 2, 99, 7]


def filtered(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> np.ndarray:
    """The filters as the definition states them, in plain NumPy (float32, -inf where filtered out)."""
    scores = logits.astype(np.float32) / np.float32(temperature) if temperature != 1.0 else logits.astype(np.float32)
    if top_k:
        kth = np.sort(scores, axis=1)[:, -min(top_k, scores.shape[1])][:, None]
        scores = np.where(scores < kth, -np.inf, scores).astype(np.float32)
    if top_p < 1.0:
        for row in scores:
            order = np.argsort(row, kind="stable")
            probs = np.exp(row[order] - row[order].max())
            cumulative = np.cumsum(probs / probs.sum())
            out = cumulative <= np.float32(1 - top_p)
            out[-1] = False
            row[order[out]] = -np.inf
    return scores


def drawn(scores: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The definition's draw: the first token whose cumulative probability exceeds u × the total."""
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    cumulative = np.cumsum((probs / probs.sum(axis=1, keepdims=True)).astype(np.float64), axis=1)
    return np.array([int(np.searchsorted(c, x * c[-1], side="right")) for c, x in zip(cumulative, u)])


def run_filters(logits: np.ndarray, sampling: Sampling, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sampling nodes alone on `logits` (rows, vocab): (the scores they leave, the drawn tokens)."""
    nodes = sampling_nodes(sampling)
    filters = [o for n in nodes for o in n.output if o in ("sample.tempered", "sample.top_k_scores",
                                                          "sample.top_p_scores")]
    kept = filters[-1] if filters else "sample.logits"
    graph = helper.make_graph(nodes, "sampling", [
        helper.make_tensor_value_info(LAST_LOGITS, TensorProto.FLOAT, list(logits.shape)),
        helper.make_tensor_value_info(STEP, TensorProto.INT64, []),
        helper.make_tensor_value_info(DRAWS, TensorProto.DOUBLE, [1, logits.shape[0]])],
        [helper.make_tensor_value_info(DRAWN, TensorProto.INT64, [logits.shape[0]]),
         helper.make_tensor_value_info(kept, TensorProto.FLOAT, list(logits.shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    trace = explorer.run(explorer.load(model), {LAST_LOGITS: logits, STEP: np.array(0, np.int64),
                                                DRAWS: u[None, :]})
    return np.asarray(trace.outputs[kept]), np.asarray(trace.outputs[DRAWN])


def test_filters_equal_transformers_warpers_and_the_draw_its_definition() -> None:
    stored = np.load(GPT2 / "reference_warpers.npz")
    logits = stored["logits"]
    u = draws(7, 1, logits.shape[0])[0]
    for k, (temperature, top_k, top_p) in enumerate(stored["settings"]):
        sampling = Sampling(0, int(top_k), float(top_p), float(temperature))
        scores, tokens = run_filters(logits, sampling, u)
        theirs = stored[f"w{k}"]
        np.testing.assert_array_equal(np.isfinite(scores), np.isfinite(theirs))  # the same tokens kept
        np.testing.assert_allclose(scores[np.isfinite(scores)], theirs[np.isfinite(theirs)], rtol=1e-6)
        np.testing.assert_array_equal(tokens, drawn(filtered(logits, temperature, int(top_k), top_p), u))
        assert np.isfinite(np.take_along_axis(theirs, tokens[:, None], axis=1)).all()


def test_a_generation_draws_as_defined_and_honours_its_filters() -> None:
    for sampling in (Sampling(3), Sampling(5, top_k=4, temperature=0.7), Sampling(11, top_k=0, top_p=0.6)):
        generation = explorer.generate(GPT2, [PROMPT, [5, 6, 7, 8]], max_new_tokens=10, sample=sampling.seed,
                                       top_k=sampling.top_k, top_p=sampling.top_p, temperature=sampling.temperature)
        u = draws(sampling.seed, 10, 2)
        for t in range(generation.logits.shape[0]):
            scores = filtered(generation.logits[t], sampling.temperature, sampling.top_k, sampling.top_p)
            expected = np.where(generation.steps[t].inputs["gen.finished"], 0, drawn(scores, u[t]))
            assert generation.step_tokens[:, t].tolist() == expected.tolist()
            if sampling.top_k:
                rank = (generation.logits[t] > np.take_along_axis(generation.logits[t], expected[:, None], 1)).sum(1)
                assert (rank < sampling.top_k).all()
        assert generation.steps[0].info["tokens"] == generation.step_tokens[:, 0].tolist()


def test_the_same_seed_gives_the_same_tokens_another_seed_others() -> None:
    def tokens(seed: int) -> list[list[int]]:
        return explorer.generate(GPT2, PROMPT, max_new_tokens=12, sample=seed, top_k=0).tokens.tolist()

    assert tokens(1) == tokens(1)
    assert len({json.dumps(tokens(seed)) for seed in (1, 2, 3)}) == 3


def test_a_low_temperature_is_greedy_a_high_one_spreads() -> None:
    greedy = explorer.generate(GPT2, PROMPT, max_new_tokens=12).tokens
    cold = explorer.generate(GPT2, PROMPT, max_new_tokens=12, sample=4, top_k=0, temperature=1e-3).tokens
    np.testing.assert_array_equal(cold, greedy)
    rows = [PROMPT] * 400  # one step of 400 identical rows: the tokens' frequencies are the filtered softmax's
    hot = explorer.generate(GPT2, rows, max_new_tokens=1, sample=4, top_k=0, temperature=3.0)
    scores = filtered(hot.logits[0, :1], 3.0, 0, 1.0)[0]
    probs = np.exp(scores - scores.max())
    probs /= probs.sum()
    counts = np.bincount(hot.step_tokens[:, 0], minlength=probs.size)
    assert np.abs(counts / 400 - probs).max() < 4 * np.sqrt(probs.max() / 400)
    assert np.count_nonzero(counts) > 20


def test_refusals() -> None:
    with pytest.raises(FeedError, match="top_p"):
        explorer.generate(GPT2, PROMPT, sample=0, top_p=0.0)
    with pytest.raises(FeedError, match="temperature"):
        explorer.generate(GPT2, PROMPT, sample=0, temperature=0.0)
    with pytest.raises(FeedError, match="beams"):
        explorer.generate(GPT2, PROMPT, sample=0, beams=2)


def test_cli_sample_json(tmp_path: Path) -> None:
    out = tmp_path / "sample.json"
    assert main(["generate", str(GPT2), "--prompt-ids", "15,2,99,7", "--max-new-tokens", "6", "--sample", "9",
                 "--top-k", "5", "--top-p", "0.9", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["strategy"] == "sample" and report["seed"] == 9 and report["top_k"] == 5
    expected = explorer.generate(GPT2, [15, 2, 99, 7], max_new_tokens=6, sample=9, top_k=5, top_p=0.9)
    assert report["tokens"] == expected.tokens[0].tolist()


@pytest.mark.parametrize("folder", [GPT2, HERE / "t5"])
def test_against_onnxruntime_with_the_same_draws(folder: Path, tmp_path: Path) -> None:
    """onnxruntime runs the loop's decoder calls with explorer's filters and the same seeded draws: its tokens are
    the definition's draws on its own logits, and step by step equal ours (the CLI's --against onnxruntime)."""
    sampling = Sampling(5, top_k=4, temperature=0.7)
    generation = explorer.generate(folder, [PROMPT, [5, 6, 7, 8]], max_new_tokens=10, sample=sampling.seed,
                                   top_k=sampling.top_k, temperature=sampling.temperature)
    result = generate_against(generation, "onnxruntime")
    assert result.first_token_diff is None and result.first_cache_departure is None
    assert len(result.logit_error) == len(generation.steps) and max(result.logit_error) < 1e-4
    chosen = onnxruntime_choices(generation.model.proto, generation.loop_feeds)
    u = draws(sampling.seed, 10, 2)
    steps = onnxruntime_steps(generation.export, generation.feeds, 10, encoder=generation.encoder_feeds,
                              chosen=chosen)
    finished = np.zeros(2, bool)
    for t, step in enumerate(steps):  # onnxruntime's own logits drawn as defined
        expected = np.where(finished, 0, drawn(filtered(step.logits, 0.7, 4, 1.0), u[t]))
        assert chosen.tokens[t].tolist() == expected.tolist()
        finished |= np.isin(expected, generation.export.eos_token_ids)
    out = tmp_path / "against.json"
    assert main(["generate", str(folder), "--prompt-ids", "15,2,99,7", "--max-new-tokens", "6", "--sample", "5",
                 "--top-k", "4", "--temperature", "0.7", "--against", "onnxruntime", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["against"]["tokens"] == report["tokens"] and report["first_token_diff"] is None
