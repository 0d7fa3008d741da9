"""The recipe of the decoders in this folder: tiny random GPT-2, Llama, Qwen2, T5 and Whisper models (hidden size 32, two layers, a
vocabulary of 128, untied output embeddings so that greedy tokens vary), built from transformers' config classes
with seeded weights (no download: HF_HUB_OFFLINE=1), saved to a temporary folder and exported by optimum's ONNX
exporter (`main_export`, which checks onnxruntime's outputs against PyTorch's), at opset 17, each into an
optimum-style folder with its config.json:

- gpt2/: `decoder_model.onnx` (the first step: no past in, `present.*` out; optimum's GPT2OnnxConfig with
  use_past_in_inputs=False), `decoder_with_past_model.onnx` (task
  text-generation-with-past: `past_key_values.*` in, `present.*` out) and `decoder_model_merged.onnx`, the two
  merged by optimum's `merge_decoders` (an If on `use_cache_branch`);
- llama/ and qwen2/: `model.onnx`, one decoder with past (grouped-query attention, rotary positions; Qwen2's
  biased q/k/v projections), first step on an empty past, as optimum exports decoders today;
- t5/: an encoder-decoder: `encoder_model.onnx`, `decoder_model.onnx` (the first step: the encoder's states in,
  the decoder's and the cross-attention's caches out), `decoder_with_past_model.onnx` (later steps: both caches in,
  the decoder's out) and `decoder_model_merged.onnx`; the prompt feeds the encoder, decoding starts from the
  config's decoder_start_token_id;
- whisper/: `encoder_model.onnx` (input_features [batch, 16 mel bins, 32 frames]) and `decoder_model_merged.onnx`;
  its reference is GenerationMixin's plain greedy generation from seeded random features (reference_features.npz);
- llama_int4/ and llama_dynamic/: the Llama decoder quantized by onnxruntime's tools (MatMulNBits with 4-bit
  weights; DynamicQuantizeLinear + MatMulInteger), and gpt2_optimized/: GPT-2's decoder with past rewritten by
  onnxruntime's transformer optimizer, for generations against the float ones
  (`python make_generation_models.py onnxruntime-tools` makes only these).

Each folder's reference.json holds transformers' `generate` (greedy, `max_new_tokens`) for fixed prompts (the first
one also for 40 tokens, where GPT-2 stops at its end-of-sequence id 3): the new tokens, and per step the chosen token's logit margin over the runner-up (how far a float error must go to change
the token). reference_logits.npz holds transformers' logits of every step (`p<prompt>`: [steps, vocab]).
reference_beams.json holds transformers' beam search (`generate` with num_beams, its other arguments as listed,
`BEAMS`) for the same prompts (Whisper: the same features): the steps it ran, every returned sequence's new
tokens (the pad id past its end, as transformers pads them) and its score; gpt2/reference_warpers.npz transformers' sampling filters
(temperature, top-k, top-p) on its stored logits. `python make_generation_models.py beams` makes only these,
from the same seeded models (no optimum needed: the weights are the exports').
Run from this folder with the PyTorch venv: python make_generation_models.py (CI has no torch: the files are
committed)."""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from transformers import (  # noqa: E402
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
    T5Config,
    T5ForConditionalGeneration,
    WhisperConfig,
    WhisperForConditionalGeneration,
)
from transformers.generation.utils import GenerationMixin  # noqa: E402

HERE = Path(__file__).resolve().parent
VOCAB, HIDDEN, HEADS, LAYERS = 128, 32, 4, 2
PROMPTS = [[15, 2, 99, 7], [5, 6, 7], [100]]
MAX_NEW_TOKENS = 12
LONG = 40  # the first prompt again, long enough for GPT-2 to reach its end-of-sequence id
SPECIAL = {"bos_token_id": 1, "eos_token_id": 3, "pad_token_id": 0}


def gpt2() -> torch.nn.Module:
    return GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_positions=64,
                                      tie_word_embeddings=False, initializer_range=0.2, **SPECIAL))


def llama() -> torch.nn.Module:
    return LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=64,
                                        num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=2,
                                        max_position_embeddings=64, tie_word_embeddings=False,
                                        initializer_range=0.2, **SPECIAL))


def qwen2() -> torch.nn.Module:
    return Qwen2ForCausalLM(Qwen2Config(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=64,
                                        num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=2,
                                        max_position_embeddings=64, tie_word_embeddings=False,
                                        initializer_range=0.2, **SPECIAL))


def t5() -> torch.nn.Module:
    return T5ForConditionalGeneration(T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=8, d_ff=64, num_layers=LAYERS,
                                               num_decoder_layers=LAYERS, num_heads=HEADS,
                                               relative_attention_num_buckets=8, relative_attention_max_distance=16,
                                               tie_word_embeddings=False,
                                               pad_token_id=0, eos_token_id=3, decoder_start_token_id=0))


def whisper() -> torch.nn.Module:
    return WhisperForConditionalGeneration(WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=16, d_model=HIDDEN, encoder_layers=1, decoder_layers=LAYERS,
        encoder_attention_heads=HEADS, decoder_attention_heads=HEADS, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_source_positions=16, max_target_positions=64, tie_word_embeddings=False, init_std=0.05, pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2, decoder_start_token_id=1, suppress_tokens=[], begin_suppress_tokens=[]))


def export(make: Callable[[], torch.nn.Module], task: str, folder: Path, past_in: bool = True,
           **shapes: int) -> torch.nn.Module:
    """The model exported into `folder`; `past_in=False`: the first step's decoder (no past in, `present.*` out),
    as optimum's exporter wrote decoder_model.onnx before it exported one decoder with past."""
    from optimum.exporters.onnx import main_export
    from optimum.exporters.onnx.model_configs import GPT2OnnxConfig

    torch.manual_seed(0)
    model = make().eval()
    custom = {}
    if not past_in:
        custom["model"] = GPT2OnnxConfig(model.config, task="text-generation", use_past=True, use_past_in_inputs=False)
    with tempfile.TemporaryDirectory() as saved:
        model.save_pretrained(saved)
        main_export(saved, folder, task=task, opset=17, local_files_only=True, atol=1e-4,
                    custom_onnx_configs=custom or None, **shapes)
    return model


def reference(model: torch.nn.Module, folder: Path) -> None:
    """transformers' greedy generation of every prompt: reference.json and reference_logits.npz."""
    entries, logits = [], {}
    for k, (prompt, count) in enumerate([*((p, MAX_NEW_TOKENS) for p in PROMPTS), (PROMPTS[0], LONG)]):
        ids = torch.tensor([prompt])
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=count,
                                 do_sample=False, output_logits=True, return_dict_in_generate=True)
        steps = torch.cat(out.logits).numpy().astype(np.float32)  # [steps, vocab]
        top2 = np.sort(steps, axis=-1)[:, -2:]
        start = 1 if model.config.is_encoder_decoder else len(prompt)  # after decoder_start_token_id, or the prompt
        new = out.sequences[0, start:].tolist()
        entries.append({"prompt": prompt, "max_new_tokens": count, "tokens": new,
                        "margins": [float(f"{m:.4g}") for m in top2[:, 1] - top2[:, 0]]})
        logits[f"p{k}"] = steps
        print(f"{folder.name} {prompt} -> {new} (smallest margin {float(np.min(top2[:, 1] - top2[:, 0])):.3g})")
    (folder / "reference.json").write_text(json.dumps(
        {"generate": "transformers greedy", "prompts": entries}, indent=1) + "\n")
    np.savez_compressed(folder / "reference_logits.npz", **logits)


def reference_whisper(model: torch.nn.Module, folder: Path) -> None:
    """Plain greedy generation (GenerationMixin's: Whisper's own adds its task logic) from seeded random
    features: reference.json, reference_logits.npz, and the features in reference_features.npz."""
    entries, logits, features = [], {}, {}
    generator = torch.Generator().manual_seed(0)
    for k in range(3):
        x = torch.randn(1, 16, 32, generator=generator)  # [batch, mel bins, frames]
        with torch.no_grad():
            out = GenerationMixin.generate(model, input_features=x, max_new_tokens=MAX_NEW_TOKENS, do_sample=False,
                                           output_logits=True, return_dict_in_generate=True)
        steps = torch.cat(out.logits).numpy().astype(np.float32)
        top2 = np.sort(steps, axis=-1)[:, -2:]
        new = out.sequences[0, 1:].tolist()
        entries.append({"input_features": f"p{k}", "max_new_tokens": MAX_NEW_TOKENS, "tokens": new,
                        "margins": [float(f"{m:.4g}") for m in top2[:, 1] - top2[:, 0]]})
        logits[f"p{k}"], features[f"p{k}"] = steps, x.numpy()
        print(f"{folder.name} features p{k} -> {new}")
    (folder / "reference.json").write_text(json.dumps(
        {"generate": "transformers greedy (GenerationMixin)", "prompts": entries}, indent=1) + "\n")
    np.savez_compressed(folder / "reference_logits.npz", **logits)
    np.savez_compressed(folder / "reference_features.npz", **features)


def onnxruntime_tools() -> None:
    """The committed float decoders rewritten by onnxruntime's tools: Llama's quantized, weights to 4 bits in
    blocks of 16 (MatMulNBits, llama_int4/) and dynamically to 8 bits (DynamicQuantizeLinear + MatMulInteger,
    llama_dynamic/); GPT-2's decoder with past by the transformer optimizer (gpt2_optimized/: LayerNorm and Gelu
    fused into SkipLayerNormalization and FastGelu). Each folder holds its float model's config.json."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    from onnxruntime.transformers.optimizer import optimize_model

    source = HERE / "llama"
    for name, model in (("llama_int4", "llama"), ("llama_dynamic", "llama"), ("gpt2_optimized", "gpt2")):
        (HERE / name).mkdir(exist_ok=True)
        shutil.copyfile(HERE / model / "config.json", HERE / name / "config.json")
    optimized = optimize_model(str(HERE / "gpt2" / "decoder_with_past_model.onnx"), model_type="gpt2", num_heads=HEADS,
                               hidden_size=HIDDEN, opt_level=1, use_gpu=False)
    optimized.save_model_to_file(str(HERE / "gpt2_optimized" / "model.onnx"))
    quantizer = MatMulNBitsQuantizer(onnx.load(str(source / "model.onnx")), block_size=16, is_symmetric=True)
    quantizer.process()
    quantizer.model.save_model_to_file(str(HERE / "llama_int4" / "model.onnx"))
    quantize_dynamic(str(source / "model.onnx"), str(HERE / "llama_dynamic" / "model.onnx"),
                     weight_type=QuantType.QInt8)


BEAMS = [  # transformers' defaults (length_penalty 1.0, early_stopping False), then other settings
    {"num_beams": 3, "num_return_sequences": 3},
    {"num_beams": 4, "num_return_sequences": 2, "length_penalty": 0.5, "early_stopping": True},
    {"num_beams": 2, "num_return_sequences": 1, "length_penalty": 2.0},
]


def reference_beams(model: torch.nn.Module, folder: Path, inputs: list[dict[str, torch.Tensor]]) -> None:
    """transformers' beam search for every input and every setting of BEAMS: reference_beams.json."""
    import transformers

    entries = []
    for k, given in enumerate(inputs):
        for count in (MAX_NEW_TOKENS, LONG):
            for settings in BEAMS:
                with torch.no_grad():
                    out = GenerationMixin.generate(model, **given, max_new_tokens=count, do_sample=False,
                                                   output_scores=True, return_dict_in_generate=True, **settings)
                first = given.get("input_ids", given.get("input_features"))
                start = 1 if model.config.is_encoder_decoder else first.shape[1]
                entries.append({"input": k, "max_new_tokens": count, **settings, "steps": len(out.scores),
                                "tokens": out.sequences[:, start:].tolist(),
                                "sequence_scores": [float(s) for s in out.sequences_scores]})
                print(f"{folder.name} input {k} {count} {settings} -> {entries[-1]['tokens'][0]}")
    prompts = [{"prompt": given["input_ids"][0].tolist()} if "input_ids" in given else {"input_features": f"p{k}"}
               for k, given in enumerate(inputs)]
    (folder / "reference_beams.json").write_text(json.dumps(
        {"generate": f"transformers {transformers.__version__} beam search", "inputs": prompts,
         "searches": entries}, indent=1) + "\n")


WARPERS = [  # (temperature, top_k, top_p): transformers' sampling filters
    (1.0, 50, 1.0), (0.7, 10, 1.0), (1.0, 0, 0.9), (1.3, 20, 0.8), (0.5, 0, 0.5)]


def reference_warpers(folder: Path) -> None:
    """transformers' sampling filters (its warpers, in generate's order) on the stored logits of every step of
    the first prompt: reference_warpers.npz holds, per setting of WARPERS, the scores they leave (-inf where a
    token is filtered out)."""
    from transformers.generation.logits_process import (
        LogitsProcessorList,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    logits = torch.from_numpy(np.load(folder / "reference_logits.npz")["p0"])
    kept = {"logits": logits.numpy()}
    for k, (temperature, top_k, top_p) in enumerate(WARPERS):
        warpers = LogitsProcessorList()
        if temperature != 1.0:
            warpers.append(TemperatureLogitsWarper(temperature))
        if top_k:
            warpers.append(TopKLogitsWarper(top_k))
        if top_p < 1.0:
            warpers.append(TopPLogitsWarper(top_p))
        kept[f"w{k}"] = warpers(torch.zeros(logits.shape[0], 1, dtype=torch.long), logits.clone()).numpy()
    np.savez_compressed(folder / "reference_warpers.npz", settings=np.array(WARPERS), **kept)


def beams() -> None:
    """reference_beams.json of every float export, from the same seeded models (as main() made them)."""
    for name, make in (("gpt2", gpt2), ("llama", llama), ("qwen2", qwen2), ("t5", t5)):
        torch.manual_seed(0)
        model = make().eval()
        inputs = [{"input_ids": torch.tensor([p]), "attention_mask": torch.ones(1, len(p), dtype=torch.long)}
                  for p in PROMPTS]
        reference_beams(model, HERE / name, inputs)
    reference_warpers(HERE / "gpt2")
    torch.manual_seed(0)
    model = whisper().eval()
    features = np.load(HERE / "whisper" / "reference_features.npz")
    reference_beams(model, HERE / "whisper", [{"input_features": torch.from_numpy(features[f"p{k}"])}
                                              for k in range(3)])


def check(path: Path) -> None:
    """onnxruntime loads the file."""
    ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def main() -> None:
    from optimum.onnx.graph_transformations import merge_decoders

    with tempfile.TemporaryDirectory() as work:
        scratch = Path(work)
        folder = HERE / "gpt2"
        folder.mkdir(exist_ok=True)
        export(gpt2, "text-generation-with-past", scratch / "no_past", past_in=False)
        model = export(gpt2, "text-generation-with-past", scratch / "past")
        shutil.copyfile(scratch / "no_past" / "model.onnx", folder / "decoder_model.onnx")
        shutil.copyfile(scratch / "past" / "model.onnx", folder / "decoder_with_past_model.onnx")
        shutil.copyfile(scratch / "past" / "config.json", folder / "config.json")
        merge_decoders(folder / "decoder_model.onnx", folder / "decoder_with_past_model.onnx",
                       save_path=folder / "decoder_model_merged.onnx")
        reference(model, folder)

        for name, make in (("llama", llama), ("qwen2", qwen2)):
            folder = HERE / name
            folder.mkdir(exist_ok=True)
            model = export(make, "text-generation-with-past", scratch / name)
            for file in ("model.onnx", "config.json"):
                shutil.copyfile(scratch / name / file, folder / file)
            reference(model, folder)

        folder = HERE / "t5"
        folder.mkdir(exist_ok=True)
        model = export(t5, "text2text-generation-with-past", scratch / "t5")
        for file in ("encoder_model.onnx", "decoder_model.onnx", "decoder_with_past_model.onnx",
                     "decoder_model_merged.onnx", "config.json"):
            shutil.copyfile(scratch / "t5" / file, folder / file)
        reference(model, folder)

        folder = HERE / "whisper"
        folder.mkdir(exist_ok=True)
        model = export(whisper, "automatic-speech-recognition-with-past", scratch / "whisper", nb_max_frames=32)
        for file in ("encoder_model.onnx", "decoder_model_merged.onnx", "config.json"):
            shutil.copyfile(scratch / "whisper" / file, folder / file)
        reference_whisper(model, folder)
    onnxruntime_tools()
    for path in sorted(HERE.glob("*/*.onnx")):
        check(path)
        print(f"{path.relative_to(HERE)}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    if sys.argv[1:] == ["onnxruntime-tools"]:  # only the committed float decoders' rewrites
        onnxruntime_tools()
    elif sys.argv[1:] == ["beams"]:  # only transformers' beam searches
        beams()
    else:
        main()
