"""Generation step by step on optimum's exports of tiny GPT-2, Llama and Qwen2 (tests/models/generation): explorer's
tokens against transformers' generate (stored by the recipe) and onnxruntime driving the same loop; one trace
whose loop has an iteration per step; caches recorded once; planted faults found at their step, layer and head."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import explorer
from explorer.cli import main
from explorer.errors import FeedError
from explorer.generation import generate_against
from explorer.generation.against import (
    GenerationComparison,
    against_model,
    against_onnxruntime,
    against_tokens,
    saturated_steps,
)
from explorer.generation.onnxruntime_loop import onnxruntime_steps
from explorer.generation.prompts import read_prompts, sweep_prompts
from explorer.generation.strategy import Sampling
from explorer.generation.wrap import LOOP
from explorer.sweep import cluster
from tests.support.generation_faults import faulty_folder, scale_query_of_head
from tests.support.quantized_reference import dynamic_quantize_linear, matmul_integer

HERE = Path(__file__).resolve().parents[1] / "models" / "generation"
GPT2, LLAMA, QWEN2, T5, WHISPER = (HERE / name for name in ("gpt2", "llama", "qwen2", "t5", "whisper"))


def reference(folder: Path) -> list[dict]:
    return json.loads((folder / "reference.json").read_text())["prompts"]


def short(folder: Path) -> list[dict]:
    return [entry for entry in reference(folder) if entry["max_new_tokens"] == 12]


@pytest.mark.parametrize(("model", "with_past", "folder"), [
    (T5, None, T5),  # an encoder-decoder: the encoder once, its states and cross-attention caches every step
    (T5 / "decoder_model.onnx", T5 / "decoder_with_past_model.onnx", T5),
    (GPT2, None, GPT2),  # the folder: decoder_model_merged.onnx, an If on use_cache_branch
    (GPT2 / "decoder_model.onnx", GPT2 / "decoder_with_past_model.onnx", GPT2),  # two files
    (GPT2 / "decoder_with_past_model.onnx", None, GPT2),  # one file, the first step on an empty past
    (HERE / "gpt2_optimized", None, GPT2),  # onnxruntime's transformer optimizer: SkipLayerNormalization, FastGelu
    (LLAMA, None, LLAMA),
    (QWEN2, None, QWEN2),
], ids=["t5-merged", "t5-two-files", "gpt2-merged", "gpt2-two-files", "gpt2-with-past", "gpt2-optimized", "llama",
                             "qwen2"])
def test_tokens_equal_transformers_and_onnxruntime(model: Path, with_past: Path | None, folder: Path) -> None:
    logits = np.load(folder / "reference_logits.npz")
    encoder = folder / "encoder_model.onnx" if (folder / "encoder_model.onnx").exists() else None
    for k, entry in enumerate(short(folder)):
        generation = explorer.generate(model, entry["prompt"], with_past=with_past, encoder=encoder,
                                       max_new_tokens=entry["max_new_tokens"])
        assert generation.tokens.tolist() == [entry["tokens"]]
        np.testing.assert_allclose(generation.logits[:, 0], logits[f"p{k}"], atol=2e-5)
        steps = list(onnxruntime_steps(generation.export, generation.feeds, entry["max_new_tokens"],
                                       encoder=generation.encoder_feeds))
        assert [int(s.token[0]) for s in steps] == entry["tokens"]
        result = against_onnxruntime(generation)
        assert result.first_token_diff is None and result.first_cache_departure is None
        assert max(result.logit_error) < 1e-4 and max(result.rank) == 0


def test_one_trace_one_iteration_per_step() -> None:
    entry = short(GPT2)[0]
    generation = explorer.generate(GPT2, entry["prompt"], max_new_tokens=12)
    steps = generation.trace.iterations(LOOP)
    assert [s.index for s in steps] == [(t,) for t in range(12)]
    assert [int(s.outputs["gen.token"][0]) for s in steps] == entry["tokens"]
    branches = [e.info["branch"] for e in generation.trace.events if e.op_type == "If"]
    assert branches == ["else_branch"] + ["then_branch"] * 11  # use_cache_branch: false at the first step only
    assert steps[1].inputs["input_ids"].tolist() == [[entry["tokens"][0]]]
    assert steps[1].inputs["attention_mask"].shape == (1, 5) and steps[1].inputs["position_ids"].tolist() == [[4]]
    assert {e.iteration for e in generation.trace.events if e.node.startswith(f"{LOOP}/")} == {(t,) for t in range(12)}


def test_stops_at_end_of_sequence_as_transformers() -> None:
    (entry,) = [e for e in reference(GPT2) if e["max_new_tokens"] == 40]
    assert entry["tokens"][-1] == 3 and len(entry["tokens"]) < 40  # the config's eos_token_id
    generation = explorer.generate(GPT2, entry["prompt"], max_new_tokens=40)
    assert generation.tokens.tolist() == [entry["tokens"]]
    assert generation.trace.event(LOOP).info["stop_reason"] == "cond false"


@pytest.mark.parametrize("folder", [GPT2, LLAMA])
def test_caches_recorded_once(folder: Path) -> None:
    (entry,) = [e for e in reference(folder) if e["max_new_tokens"] == 40]
    generation = explorer.generate(folder, entry["prompt"], max_new_tokens=40)
    steps = len(generation.steps)
    assert steps > 20
    assert generation.trace_bytes <= 1.5 * generation.cache_bytes  # a copy per step would hold about steps / 2 x
    ours = [generation.presents(t) for t in range(steps)]
    for result in onnxruntime_steps(generation.export, generation.feeds, 40):  # every step's values still right
        for name, value in result.presents.items():
            np.testing.assert_allclose(ours[result.step][name], value, atol=1e-5)
    first, last = ours[0]["present.0.key"], ours[-1]["present.0.key"]
    assert np.shares_memory(first, last) and first.shape[2] == 4 and last.shape[2] == 4 + steps - 1
    loop = generation.trace.event(LOOP)
    assert not any(np.shares_memory(v, last) for v in loop.input_values if isinstance(v, np.ndarray))


def _against_fault(tmp_path: Path, edit: Callable[[onnx.ModelProto], None]) -> GenerationComparison:
    """GPT-2's decoder with past against a copy that `edit` changed, on the first prompt."""
    prompt = short(GPT2)[0]["prompt"]
    ours = explorer.generate(GPT2 / "decoder_with_past_model.onnx", prompt, max_new_tokens=12)
    return against_model(ours, explorer.generate(faulty_folder(tmp_path, edit), prompt, max_new_tokens=12))


def test_planted_key_scale_found_at_its_layer_and_head(tmp_path: Path) -> None:
    def scale_keys(model: onnx.ModelProto) -> None:  # layer 1's keys of head 2 (c_attn's columns 32 + 8h ...)
        (tensor,) = [t for t in model.graph.initializer if t.name == "transformer.h.1.attn.c_attn.weight"]
        weight = numpy_helper.to_array(tensor).copy()
        weight[:, 32 + 16:32 + 24] *= 1.25
        tensor.CopyFrom(numpy_helper.from_array(weight, tensor.name))

    result = _against_fault(tmp_path, scale_keys)
    departure = result.first_cache_departure
    assert departure is not None
    assert (departure.step, departure.layer, departure.head, departure.position, departure.name) == \
        (0, 1, 2, 0, "present.1.key")
    assert result.first_divergence is not None and result.first_divergence["step"] == 0
    assert result.first_divergence["node"].startswith("/transformer/h.1/attn/c_attn")


def test_planted_attention_scale_found_at_its_step_layer_and_head(tmp_path: Path) -> None:
    result = _against_fault(tmp_path, scale_query_of_head)
    found = result.first_divergence
    assert found is not None
    assert (found["node"], found["step"], found["head"]) == ("/transformer/h.0/attn/MatMul", 0, 1)
    departure = result.first_cache_departure  # layer 0's caches come before its attention: layer 1's part
    assert departure is not None and (departure.step, departure.layer) == (0, 1)
    assert result.logit_error[0] > 1e-3


def test_against_reference_tokens_names_the_first_difference() -> None:
    entry = short(LLAMA)[0]
    generation = explorer.generate(LLAMA, entry["prompt"], max_new_tokens=12)
    changed = list(entry["tokens"])
    changed[5] += 1
    assert against_tokens(generation, np.array([changed])).first_token_diff == 5
    assert against_tokens(generation, np.array([entry["tokens"]])).first_token_diff is None
    assert against_tokens(generation, np.array([entry["tokens"][:7]])).first_token_diff == 7


def test_command_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entry = short(GPT2)[1]
    out = tmp_path / "out.json"
    ids = ",".join(map(str, entry["prompt"]))
    assert main(["generate", str(GPT2), "--prompt-ids", ids, "--max-new-tokens", "12", "--against", "onnxruntime",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["tokens"] == entry["tokens"] == report["against"]["tokens"]
    assert report["first_token_diff"] is None and report["first_cache_departure"] is None
    assert len(report["logit_error"]) == 12 and report["trace_bytes"] <= 1.5 * report["cache_bytes"]
    loop, trace = tmp_path / "loop.onnx", tmp_path / "trace.npz"
    assert main(["generate", str(GPT2), "--prompt-ids", ids, "--max-new-tokens", "12", "--save-model", str(loop),
                 "--save", str(trace)]) == 0
    saved = explorer.Trace.load(trace)
    assert [int(s.outputs["gen.token"][0]) for s in saved.iterations(LOOP)] == entry["tokens"]
    inputs = dict(np.load(tmp_path / "loop.npz"))
    assert explorer.run(explorer.load(loop), inputs).outputs["tokens"][:, 0].tolist() == entry["tokens"]
    tokens = tmp_path / "tokens.npy"
    np.save(tokens, np.array(entry["tokens"][:3] + [0] * 9))
    assert main(["generate", str(GPT2), "--prompt-ids", ids, "--max-new-tokens", "12", "--reference", str(tokens),
                 "--json", str(out)]) == 1
    assert json.loads(out.read_text())["first_token_diff"] == 3
    assert "first token that differs: new token 3" in capsys.readouterr().out


def test_float16_conversion_drifts_from_the_first_layer(tmp_path: Path) -> None:
    from onnxruntime.transformers.float16 import convert_float_to_float16

    folder = tmp_path / "fp16"
    folder.mkdir()
    onnx.save(convert_float_to_float16(onnx.load(str(LLAMA / "model.onnx")), keep_io_types=False),
              str(folder / "model.onnx"))
    (folder / "config.json").write_text((LLAMA / "config.json").read_text())
    entry = short(LLAMA)[0]
    ours = explorer.generate(LLAMA, entry["prompt"], max_new_tokens=12)
    result = generate_against(ours, str(folder))
    theirs = np.array(result.against_tokens)
    assert theirs.dtype == np.int64 and result.first_token_diff == against_tokens(ours, theirs).first_token_diff
    departure = result.first_cache_departure  # float16's rounding shows in the first layer's first cache
    assert departure is not None and (departure.step, departure.layer) == (0, 0)
    assert 1e-4 < departure.max_abs < 1e-2
    assert 1e-4 < max(result.logit_error) < 5e-2


def test_int32_ids_mask_and_positions(tmp_path: Path) -> None:
    """A decoder that takes its ids, mask and positions as int32 (as onnxruntime-genai's models do)."""
    model = onnx.load(str(LLAMA / "model.onnx"))
    graph = model.graph
    for value in [i for i in graph.input if i.name in ("input_ids", "attention_mask", "position_ids")]:
        value.type.tensor_type.elem_type = onnx.TensorProto.INT32
        for node in graph.node:
            node.input[:] = [f"{value.name}.int64" if name == value.name else name for name in node.input]
        graph.node.insert(0, helper.make_node("Cast", [value.name], [f"{value.name}.int64"],
                                              to=onnx.TensorProto.INT64))
    folder = tmp_path / "int32"
    folder.mkdir()
    onnx.save(model, str(folder / "model.onnx"))
    (folder / "config.json").write_text((LLAMA / "config.json").read_text())
    entry = short(LLAMA)[2]
    generation = explorer.generate(folder, entry["prompt"], max_new_tokens=12)
    assert generation.tokens.tolist() == [entry["tokens"]]
    assert generation.steps[3].inputs["attention_mask"].dtype == np.int32
    result = against_onnxruntime(generation)
    assert result.first_token_diff is None and max(result.logit_error) < 1e-4


def test_what_cannot_be_generated_is_said() -> None:
    with pytest.raises(explorer.ModelError, match="no past inputs"):
        explorer.generate(GPT2 / "decoder_model.onnx", [1, 2])  # the first step's decoder alone
    with pytest.raises(explorer.FeedError, match="at least 1"):
        explorer.generate(GPT2, [1, 2], max_new_tokens=0)
    with pytest.raises(explorer.FeedError, match="no prompt"):
        explorer.generate(GPT2)


def test_encoder_decoder_keeps_its_cross_attention_caches() -> None:
    entry = short(T5)[1]
    generation = explorer.generate(T5, entry["prompt"], max_new_tokens=12)
    main = [e for e in generation.trace.events if not e.iteration]
    assert sum(e.op_type == "Loop" for e in main) == 1 and len(main) > 50  # the encoder ran once, before the loop
    cross = [generation.presents(t)["present.1.encoder.key"] for t in range(12)]
    assert all(c.shape == (1, 4, 3, 8) and np.shares_memory(c, cross[0]) for c in cross)  # the prompt's 3 positions
    assert generation.presents(11)["present.1.decoder.key"].shape == (1, 4, 12, 8)
    assert generation.trace_bytes <= 1.5 * generation.cache_bytes


def test_prompts_swept_worst_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "a.json").write_text("[15, 2, 99, 7]")
    (folder / "b.txt").write_text("5, 6, 7")
    np.save(folder / "c.npy", np.array([100]))
    assert read_prompts(folder) == {"a": [15, 2, 99, 7], "b": [5, 6, 7], "c": [100]}
    faulty = faulty_folder(tmp_path, scale_query_of_head)
    out = tmp_path / "rows.json"
    clusters = []
    started = cluster.local_cluster
    monkeypatch.setattr(cluster, "local_cluster", lambda workers: clusters.append(workers) or started(workers))
    assert main(["generate", str(GPT2 / "decoder_with_past_model.onnx"), "--prompts", str(folder), "--against",
                 str(faulty), "--max-new-tokens", "12", "--workers", "2", "--json", str(out)]) == 1
    assert clusters == [2]  # on Dask, a local cluster of two worker processes
    rows = json.loads(out.read_text())["rows"]
    assert [(r["prompt"], r["first_token_diff"]) for r in rows] == [("a", 1), ("b", 2), ("c", 6)]
    # one position at step 0: a softmax over one score, whatever its scale, so the caches part from step 1
    assert rows[2]["first_cache_departure"]["step"] == 1 and rows[0]["first_cache_departure"]["step"] == 0
    assert [r["tokens"] for r in rows[:2]] == [short(GPT2)[0]["tokens"], short(GPT2)[1]["tokens"]]


def test_a_grid_of_seeds_swept_on_dask_worst_first(tmp_path: Path) -> None:
    """--seeds: one sampled generation per prompt and seed, on Dask; each row is the generation of its seed against
    the other side, as this process makes it, and the rows come worst first."""
    faulty = faulty_folder(tmp_path, scale_query_of_head)
    out = tmp_path / "rows.json"
    assert main(["generate", str(GPT2 / "decoder_with_past_model.onnx"), "--prompt-ids", "15,2,99,7", "--seeds",
                 "1,2,3,4", "--sample", "0", "--top-k", "0", "--against", str(faulty), "--max-new-tokens", "8",
                 "--workers", "2", "--json", str(out)]) == 1
    rows = json.loads(out.read_text())["rows"]
    assert sorted(row["seed"] for row in rows) == [1, 2, 3, 4]
    here = sweep_prompts(GPT2 / "decoder_with_past_model.onnx", {"prompt": [15, 2, 99, 7]}, str(faulty),
                         seeds=[1, 2, 3, 4], max_new_tokens=8, strategy=Sampling(0, top_k=0))
    assert [(r["seed"], r["tokens"], r["against"], r["first_token_diff"]) for r in rows] == \
        [(r["seed"], r["tokens"], r["against"], r["first_token_diff"]) for r in here]
    for row in rows:
        ours = explorer.generate(GPT2 / "decoder_with_past_model.onnx", [15, 2, 99, 7], max_new_tokens=8,
                                 sample=row["seed"], top_k=0)
        assert row["tokens"] == ours.tokens[0].tolist()
    diffs = [r["first_token_diff"] if r["first_token_diff"] is not None else 99 for r in rows]
    assert diffs == sorted(diffs) and len({json.dumps(r["tokens"]) for r in rows}) > 1
    with pytest.raises(FeedError, match="seeds"):
        sweep_prompts(GPT2, {"a": [1]}, "onnxruntime", seeds=[1])


def test_whisper_from_its_input_features(tmp_path: Path) -> None:
    """Whisper's encoder reads input_features (given with --inputs); its merged decoder runs every step."""
    features = np.load(WHISPER / "reference_features.npz")
    logits = np.load(WHISPER / "reference_logits.npz")
    entries = reference(WHISPER)
    assert len({tuple(e["tokens"]) for e in entries}) == 3  # the features decide the tokens
    for entry in entries:
        name = entry["input_features"]
        generation = explorer.generate(WHISPER, inputs={"input_features": features[name]}, max_new_tokens=12)
        assert generation.tokens.tolist() == [entry["tokens"]]
        np.testing.assert_allclose(generation.logits[:, 0], logits[name], atol=2e-5)
        assert against_onnxruntime(generation).first_token_diff is None
    inputs, tokens, out = tmp_path / "features.npz", tmp_path / "tokens.npy", tmp_path / "out.json"
    np.savez(inputs, input_features=features["p1"])
    np.save(tokens, np.array(entries[1]["tokens"]))
    assert main(["generate", str(WHISPER), "--inputs", str(inputs), "--max-new-tokens", "12", "--reference",
                 str(tokens), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["tokens"] == entries[1]["tokens"]


def test_int4_decoder_parts_from_the_float_one_in_its_first_layer() -> None:
    """onnxruntime's MatMulNBits quantization of Llama (tests/models/generation/llama_int4): against the float
    decoder the tokens part where the recipe's logits say; the drift starts in layer 0 at step 0; against
    onnxruntime driving the same int4 loop every token and logit agrees (its kernel is float arithmetic)."""
    entry = short(LLAMA)[0]
    ours = explorer.generate(LLAMA, entry["prompt"], max_new_tokens=12)
    result = generate_against(ours, str(HERE / "llama_int4"))
    assert result.against_tokens[0][:1] == entry["tokens"][:1] and result.first_token_diff == 1
    departure = result.first_cache_departure
    assert departure is not None and (departure.step, departure.layer, departure.name) == (0, 0, "present.0.key")
    found = result.first_divergence
    assert found is not None and found["step"] == 0 and found["node"].startswith("/model/layers.0/")
    assert result.rank[-1] > 0  # at the step that parts, our token is not the int4 model's top choice
    int4 = explorer.generate(HERE / "llama_int4", entry["prompt"], max_new_tokens=12)
    judged = against_onnxruntime(int4)
    assert judged.first_token_diff is None and max(judged.logit_error) < 1e-4


def test_dynamically_quantized_decoder_is_exact_integer_arithmetic() -> None:
    """DynamicQuantizeLinear + MatMulInteger (llama_dynamic): at every step, every quantization and integer product
    of explorer's generation equals exact integer arithmetic from the spec (tests/support/quantized_reference.py), a judge
    that holds on any CPU (onnxruntime's u8s8 kernel saturates on one without VNNI, and its tokens then part)."""
    generation = explorer.generate(HERE / "llama_dynamic", short(LLAMA)[0]["prompt"], max_new_tokens=12)
    quantized = [e for e in generation.trace.events if e.op_type == "DynamicQuantizeLinear"]
    products = [e for e in generation.trace.events if e.op_type == "MatMulInteger"]
    assert {e.iteration for e in products} == {(t,) for t in range(12)} and len(products) == 12 * 15  # 7 products a layer, and the logits
    for event in quantized:
        y, scale, zero = dynamic_quantize_linear(event.input_values[0])
        np.testing.assert_array_equal(event.output_values[0], y)
        assert event.output_values[1] == scale and event.output_values[2] == zero
    for event in products:
        (expected,) = matmul_integer(list(event.input_values), {})
        np.testing.assert_array_equal(event.output_values[0], expected)


def test_the_steps_where_onnxruntime_saturates_are_named() -> None:
    """Against onnxruntime, the steps whose integer products its u8s8 kernel saturates on an x86 CPU without
    VNNI, found from explorer's own values (so on any CPU): every step of the dynamic Llama, none of the float."""
    prompt = short(LLAMA)[0]["prompt"]
    dynamic = explorer.generate(HERE / "llama_dynamic", prompt, max_new_tokens=4)
    assert saturated_steps(dynamic) == [0, 1, 2, 3]
    assert against_onnxruntime(explorer.generate(LLAMA, prompt, max_new_tokens=4)).saturated_steps == []


@pytest.mark.parametrize("folder", [GPT2, LLAMA, T5], ids=["gpt2", "llama", "t5"])
def test_a_left_padded_batch_gives_each_prompt_its_own_tokens(folder: Path) -> None:
    """Two prompts in one batch, the shorter padded on the left and masked: each row's tokens are those of its
    prompt alone (positions counted along the mask, as transformers and optimum count them)."""
    (long_one, short_one) = (short(folder)[0], short(folder)[1])  # 4 and 3 ids
    ids = np.array([[0] + short_one["prompt"], long_one["prompt"]])
    mask = np.array([[0, 1, 1, 1], [1, 1, 1, 1]])
    generation = explorer.generate(folder, inputs={"input_ids": ids, "attention_mask": mask}, max_new_tokens=12)
    assert generation.tokens.tolist() == [short_one["tokens"], long_one["tokens"]]
    assert against_onnxruntime(generation).first_token_diff is None
