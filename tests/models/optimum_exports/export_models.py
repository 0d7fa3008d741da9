"""The recipe of the optimum exports in this folder: decoders with past keys and values of tiny Llama, Qwen2, T5
and Whisper models (hidden size 32, two decoder layers, a vocabulary of 100), built from transformers' config
classes with seeded random weights (no download: HF_HUB_OFFLINE=1), saved to a temporary folder and exported
from there by optimum's ONNX exporter (`main_export`, which checks onnxruntime's outputs against PyTorch's), at
opset 17. The merged decoders (`decoder_model_merged.onnx`) choose between their two decoders with an If on
`use_cache_branch`. Writes the .onnx files, renamed, and feeds.json: per file one or more sets of inputs (the
merged decoders one per branch), each input a `value`, or a seeded random `shape` (integers below `high`).
Every set is run by onnxruntime before it is written. Run from this folder with the PyTorch venv:
python export_models.py (CI has no torch: the files are committed)."""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from optimum.exporters.onnx import main_export  # noqa: E402
from transformers import (  # noqa: E402
    LlamaConfig,
    LlamaForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
    T5Config,
    T5ForConditionalGeneration,
    WhisperConfig,
    WhisperForConditionalGeneration,
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "bench"))
from real_models import feeds_of  # noqa: E402

VOCAB, HIDDEN, HEADS, LAYERS = 100, 32, 4, 2
BATCH, SEQ, PAST, ENCODED = 2, 3, 4, 5  # the inputs' sizes (Whisper's encoder gives 16 positions)


def llama() -> torch.nn.Module:
    return LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=64,
                                        num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=2,
                                        max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2))


def qwen2() -> torch.nn.Module:
    return Qwen2ForCausalLM(Qwen2Config(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=64,
                                        num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=2,
                                        max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2))


def t5() -> torch.nn.Module:
    return T5ForConditionalGeneration(T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=8, d_ff=64, num_layers=LAYERS,
                                               num_decoder_layers=LAYERS, num_heads=HEADS,
                                               relative_attention_num_buckets=8, relative_attention_max_distance=16,
                                               pad_token_id=0, eos_token_id=1, decoder_start_token_id=0))


def whisper() -> torch.nn.Module:
    return WhisperForConditionalGeneration(WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=16, d_model=HIDDEN, encoder_layers=1, decoder_layers=LAYERS,
        encoder_attention_heads=HEADS, decoder_attention_heads=HEADS, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_source_positions=16, max_target_positions=32, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1, suppress_tokens=[], begin_suppress_tokens=[]))


# model -> (its builder, optimum's task, dummy input sizes the exporter traces with, {exported file: file here})
MODELS = {
    "llama": (llama, "text-generation-with-past", {}, {"model.onnx": "llama_decoder_with_past.onnx"}),
    "qwen2": (qwen2, "text-generation-with-past", {}, {"model.onnx": "qwen2_decoder_with_past.onnx"}),
    "t5": (t5, "text2text-generation-with-past", {}, {
        "decoder_model.onnx": "t5_decoder.onnx", "decoder_with_past_model.onnx": "t5_decoder_with_past.onnx",
        "decoder_model_merged.onnx": "t5_decoder_merged.onnx"}),
    "whisper": (whisper, "automatic-speech-recognition-with-past", {"nb_max_frames": 32}, {
        "decoder_model.onnx": "whisper_decoder.onnx",
        "decoder_with_past_model.onnx": "whisper_decoder_with_past.onnx",
        "decoder_model_merged.onnx": "whisper_decoder_merged.onnx"}),
}


def export(name: str, folder: Path) -> None:
    make, task, shapes, _ = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    with tempfile.TemporaryDirectory() as saved:
        model.save_pretrained(saved)
        main_export(saved, folder, task=task, opset=17, local_files_only=True, atol=1e-4, **shapes)


def random(*shape: int) -> dict:
    return {"shape": list(shape), "dtype": "float32"}


def tokens(*shape: int) -> dict:
    return {"shape": list(shape), "dtype": "int64", "high": VOCAB}


def ones(*shape: int) -> dict:
    return {"value": np.ones(shape, np.int64).tolist(), "dtype": "int64"}


def past(layers: int, kinds: dict[str, int], heads: int, batch: int = BATCH) -> dict:
    """past_key_values.<layer>[.<kind>].key/value of `kinds` (kind -> its length; "" for a decoder-only model)."""
    found = {}
    for layer in range(LAYERS):
        for kind, length in kinds.items():
            for which in ("key", "value"):
                found[f"past_key_values.{layer}{'.' + kind if kind else ''}.{which}"] = random(batch, heads, length, 8)
    return found


def feed_sets(file: str) -> list[dict]:
    """The inputs the tests and the bench judge a file on (see the module docstring)."""
    encoded = 16 if file.startswith("whisper") else ENCODED
    if file.endswith("_decoder_with_past.onnx") and not file.startswith(("t5", "whisper")):
        positions = np.tile(np.arange(PAST, PAST + SEQ), (BATCH, 1))
        return [{"input_ids": tokens(BATCH, SEQ), "attention_mask": ones(BATCH, PAST + SEQ),
                 "position_ids": {"value": positions.tolist(), "dtype": "int64"},
                 **past(LAYERS, {"": PAST}, 2)}]
    encoder = {"encoder_attention_mask": ones(BATCH, encoded)} if file.startswith("t5") else {}
    states = {"encoder_hidden_states": random(BATCH, encoded, HIDDEN)}
    if file.endswith("_decoder.onnx"):
        return [{**encoder, "input_ids": tokens(BATCH, SEQ), **states}]
    with_past = {**encoder, "input_ids": tokens(BATCH, 1),
                 **past(LAYERS, {"decoder": PAST, "encoder": encoded}, HEADS)}
    if file.endswith("_decoder_with_past.onnx"):
        return [with_past]
    first_step = {**encoder, "input_ids": tokens(BATCH, SEQ), **states,
                  **past(LAYERS, {"decoder": 1, "encoder": encoded}, HEADS)}  # not read on this branch
    return [{**with_past, **states, "use_cache_branch": {"value": [True], "dtype": "bool"}},
            {**first_step, "use_cache_branch": {"value": [False], "dtype": "bool"}}]


def check(path: Path, sets: list[dict]) -> None:
    """onnxruntime runs the file on each set of inputs (as bench/real_models.py makes them)."""
    rng = np.random.default_rng(0)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for inputs in sets:
        session.run(None, feeds_of(inputs, rng))


def main() -> None:
    listing = {}
    with tempfile.TemporaryDirectory() as work:
        for name, (_, _, _, files) in MODELS.items():
            export(name, Path(work) / name)
            for exported, kept in files.items():
                shutil.copyfile(Path(work) / name / exported, HERE / kept)
                listing[kept] = feed_sets(kept)
                check(HERE / kept, listing[kept])
    (HERE / "feeds.json").write_text("{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}"
                                                        for k, v in sorted(listing.items())) + "\n}\n")
    for kept in sorted(listing):
        print(f"{kept}: {(HERE / kept).stat().st_size} bytes")


if __name__ == "__main__":
    main()
