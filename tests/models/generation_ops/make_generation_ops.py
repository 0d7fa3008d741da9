"""The recipe of the models in this folder: onnxruntime's generation operators as onnxruntime's own tool writes them
(`onnxruntime.transformers.convert_generation`), around tiny random GPT-2 and T5 models (hidden size 32, two
layers, a vocabulary of 128, untied output embeddings so that the tokens vary; the GPT-2 is the one of
../generation/, seeded the same way), and what onnxruntime returns on them (expected.npz):

- gpt2_greedy.onnx: GreedySearch around the GPT-2 decoder with past (its Attention, SkipLayerNormalization,
  FastGelu and EmbedLayerNormalization fused by the tool's optimizer; past_i and present_i hold key and value);
- gpt2_beam.onnx: BeamSearch around the same decoder, with sequences_scores and the per-step scores;
- gpt2_sampling.onnx: Sampling (top_p 0.6) with a seed input;
- t5_beam.onnx: BeamSearch (model_type 1) around a T5 encoder (its outputs: each layer's cross-attention key and
  value) and decoder, with sequences_scores and scores;
- whisper_beam.onnx: WhisperBeamSearch (model_type 2) around a tiny random Whisper (16 mel bins, 3000 frames as
  the tool requires, a vocabulary of 128) written by onnxruntime's Whisper tool
  (`onnxruntime.transformers.models.whisper.convert_to_onnx`): an encoder that also runs the decoder's first step
  from the start token, and the decoder. The tool reads Whisper's special token ids from a tokenizer, which a
  random model has not: the recipe hands it ids inside the vocabulary;
- t5_beam_init.onnx: the same in the tool's earlier layout (--encoder_decoder_init): the encoder also runs the
  decoder's first step (logits, the encoder's hidden states, the self-attention present), the decoder reads the
  hidden states too.

expected.npz holds, per case, the feeds (`<case>/<input>`) and onnxruntime's outputs (`<case>=<output>`); the cases
are listed in CASES. The tool needs transformers 4.x (its GPT-2 exporter passes past as tuples) and the eager
attention (the TorchScript exporter at opset 11 has no scaled_dot_product_attention). Run from this folder in a
venv with torch, transformers 4.44, onnx and onnxruntime: python make_generation_ops.py (CI needs none of them but
onnxruntime: the files are committed)."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

os.environ["HF_HUB_OFFLINE"] = "1"

import sys  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from onnxruntime.transformers import convert_generation as cg  # noqa: E402
from onnxruntime.transformers.models.t5.convert_to_onnx import export_onnx_models as export_t5_onnx_models  # noqa: E402
from transformers import (  # noqa: E402
    GPT2Config,
    GPT2LMHeadModel,
    T5Config,
    T5ForConditionalGeneration,
    WhisperConfig,
    WhisperForConditionalGeneration,
)
from transformers.models.gpt2 import modeling_gpt2  # noqa: E402

HERE = Path(__file__).resolve().parent
VOCAB, HIDDEN, HEADS, LAYERS = 128, 32, 4, 2


def i32(*values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int32)


def f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


GPT2_PROMPTS = i32([15, 2, 99, 7], [5, 6, 7, 8])
PADDED = i32([3, 3, 100, 7], [5, 6, 7, 8])  # GPT-2's pad id is its eos id, 3: the first row is left-padded
T5_PROMPTS = i32([15, 2, 99, 7, 3], [5, 6, 7, 8, 3])
def features(seed: int) -> np.ndarray:
    """Whisper's input features for one clip: 16 mel bins × 3000 frames, seeded."""
    return np.random.default_rng(seed).standard_normal((16, 3000)).astype(np.float32)


CASES: dict[str, tuple[str, dict[str, np.ndarray]]] = {
    "greedy": ("gpt2_greedy.onnx", {"input_ids": GPT2_PROMPTS, "max_length": i32(20), "min_length": i32(1),
                                    "repetition_penalty": f32(1.0)}),
    "greedy_long": ("gpt2_greedy.onnx", {"input_ids": GPT2_PROMPTS[:1], "max_length": i32(60),
                                         "min_length": i32(0), "repetition_penalty": f32(1.0)}),
    "greedy_penalty": ("gpt2_greedy.onnx", {"input_ids": PADDED, "max_length": i32(24), "min_length": i32(12),
                                            "repetition_penalty": f32(1.4)}),
    "beam": ("gpt2_beam.onnx", {"input_ids": GPT2_PROMPTS, "max_length": i32(16), "min_length": i32(1),
                                "num_beams": i32(4), "num_return_sequences": i32(2), "length_penalty": f32(1.0),
                                "repetition_penalty": f32(1.0)}),
    "beam_long": ("gpt2_beam.onnx", {"input_ids": GPT2_PROMPTS, "max_length": i32(50), "min_length": i32(0),
                                     "num_beams": i32(3), "num_return_sequences": i32(3),
                                     "length_penalty": f32(0.6), "repetition_penalty": f32(1.0)}),
    "beam_penalty": ("gpt2_beam.onnx", {"input_ids": PADDED, "max_length": i32(20), "min_length": i32(10),
                                        "num_beams": i32(2), "num_return_sequences": i32(1),
                                        "length_penalty": f32(1.3), "repetition_penalty": f32(1.5)}),
    "sampling": ("gpt2_sampling.onnx", {"input_ids": GPT2_PROMPTS, "max_length": i32(20), "min_length": i32(1),
                                        "repetition_penalty": f32(1.0), "seed": i32(7)}),
    "t5_beam": ("t5_beam.onnx", {"input_ids": T5_PROMPTS, "max_length": i32(14), "min_length": i32(1),
                                 "num_beams": i32(4), "num_return_sequences": i32(2), "length_penalty": f32(1.0),
                                 "repetition_penalty": f32(1.0)}),
    "whisper_beam": ("whisper_beam.onnx", {"input_features": np.stack([features(0), features(1)]),
                                           "max_length": i32(12), "min_length": i32(1), "num_beams": i32(3),
                                           "num_return_sequences": i32(2), "length_penalty": f32(1.0),
                                           "repetition_penalty": f32(1.0)}),
    "whisper_beam_penalty": ("whisper_beam.onnx", {"input_features": features(2)[None], "max_length": i32(20),
                                                   "min_length": i32(4), "num_beams": i32(4),
                                                   "num_return_sequences": i32(4), "length_penalty": f32(0.8),
                                                   "repetition_penalty": f32(3.0)}),
    "t5_init_beam": ("t5_beam_init.onnx", {"input_ids": T5_PROMPTS, "max_length": i32(14), "min_length": i32(1),
                                           "num_beams": i32(4), "num_return_sequences": i32(2),
                                           "length_penalty": f32(1.0), "repetition_penalty": f32(1.0)}),
    "t5_beam_long": ("t5_beam.onnx", {"input_ids": T5_PROMPTS[:1], "max_length": i32(40), "min_length": i32(0),
                                      "num_beams": i32(3), "num_return_sequences": i32(3),
                                      "length_penalty": f32(0.8), "repetition_penalty": f32(1.2)}),
}


def gpt2() -> torch.nn.Module:
    return GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_positions=64,
                                      tie_word_embeddings=False, initializer_range=0.2, bos_token_id=1,
                                      eos_token_id=3, pad_token_id=0))


def t5() -> torch.nn.Module:
    return T5ForConditionalGeneration(T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=8, d_ff=64, num_layers=LAYERS,
                                               num_decoder_layers=LAYERS, num_heads=HEADS,
                                               relative_attention_num_buckets=8, relative_attention_max_distance=16,
                                               tie_word_embeddings=False, initializer_factor=4.0,
                                               pad_token_id=0, eos_token_id=3, decoder_start_token_id=0))


def whisper() -> torch.nn.Module:
    return WhisperForConditionalGeneration(WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=16, d_model=HIDDEN, encoder_layers=1, decoder_layers=LAYERS,
        encoder_attention_heads=HEADS, decoder_attention_heads=HEADS, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_source_positions=1500, max_target_positions=64, init_std=0.3, tie_word_embeddings=False,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, suppress_tokens=[],
        begin_suppress_tokens=[]))


class SpecialTokens:
    """What the Whisper tool asks of a tokenizer: the special tokens' ids (inside the tiny vocabulary)."""

    IDS = {"<|translate|>": 120, "<|transcribe|>": 121, "<|startoflm|>": 122, "<|nospeech|>": 123,
           "<|nocaptions|>": 123, "<|notimestamps|>": 124, "<|0.00|>": 125}

    @classmethod
    def from_pretrained(cls, *args: Any, **kwargs: Any) -> SpecialTokens:
        return cls()

    def convert_tokens_to_ids(self, tokens: list[str]) -> list[int]:
        return [self.IDS[token] for token in tokens]


def convert_whisper(saved: Path, work: Path) -> None:
    """WhisperBeamSearch written by the Whisper tool (its parity check needs a processor and is skipped)."""
    sys.path.insert(0, str(Path(cg.__file__).parent / "models" / "whisper"))  # the tool imports its siblings
    import convert_to_onnx as whisper_tool  # noqa: PLC0415
    import whisper_chain  # noqa: PLC0415

    whisper_chain.WhisperTokenizer = SpecialTokens
    whisper_tool.main(["-m", str(saved), "--output", str(work / "whisper"), "--cache_dir", str(work / "cache"),
                       "--overwrite", "--output_sequence_scores", "--output_scores"])
    shutil.copyfile(work / "whisper" / f"{saved.name}_beamsearch.onnx", HERE / "whisper_beam.onnx")


def convert(saved: Path, work: Path, output: str, model_type: str, kind: cg.GenerationType, *extra: str) -> None:
    """One model written by the tool into this folder."""
    args = cg.parse_arguments(["-m", str(saved), "--model_type", model_type, "--output", str(work / output),
                               "--cache_dir", str(work / "cache"), *extra])
    cg.convert_generation_model(args, kind)
    shutil.copyfile(work / output, HERE / output)


def t5_subgraphs(saved: Path, work: Path, encoder_decoder_init: bool = False) -> list[str]:
    """The T5 encoder and decoder exported by the tool's T5 exporter, unoptimized: its optimizer fuses
    RelativePositionBias, which onnxruntime runs only on CUDA. `encoder_decoder_init`: the earlier layout, whose
    encoder also runs the decoder's first step."""
    folder = work / ("t5_init" if encoder_decoder_init else "t5_subgraphs")
    folder.mkdir()
    paths = export_t5_onnx_models(model_name_or_path=str(saved), cache_dir=str(work / "cache"),
                                  output_dir=str(folder), optimize_onnx=False, use_int32_inputs=True,
                                  model_type="t5", overwrite=True, encoder_decoder_init=encoder_decoder_init)
    return ["--encoder_decoder_init_onnx", paths[0], "--decoder_onnx", paths[1]]


def written(sequences: np.ndarray, prompt: int, end: int = 3) -> np.ndarray:
    """GreedySearch's and Sampling's sequences with 0 past what onnxruntime writes: when every row has ended (the
    end id 3, which it writes as the pad id, also 3) before max_length, it leaves the rest of its output as its
    memory held it."""
    ended = [np.flatnonzero(row[prompt:] == end) for row in sequences]
    if all(len(found) for found in ended):
        sequences = sequences.copy()
        sequences[:, prompt + max(int(found[0]) for found in ended) + 1:] = 0
    return sequences


def expected() -> None:
    """onnxruntime's outputs on every case, with the feeds."""
    stored: dict[str, np.ndarray] = {}
    for case, (file, feeds) in CASES.items():
        session = ort.InferenceSession(str(HERE / file), providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        outputs = session.run(None, feeds)
        if file in ("gpt2_greedy.onnx", "gpt2_sampling.onnx"):
            outputs[0] = written(outputs[0], feeds["input_ids"].shape[1])
        for name, value in feeds.items():
            stored[f"{case}/{name}"] = value
        for name, value in zip(names, outputs):
            stored[f"{case}={name}"] = value
        print(case, outputs[0].tolist())
    np.savez_compressed(HERE / "expected.npz", **stored)


def main() -> None:
    modeling_gpt2.GPT2PreTrainedModel._supports_sdpa = False  # the exporter's opset 11 has no SDPA
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        os.chdir(work)  # the tool writes its parity results to the current folder
        torch.manual_seed(0)
        gpt2().eval().save_pretrained(work / "gpt2")
        torch.manual_seed(0)
        t5().eval().save_pretrained(work / "t5")
        torch.manual_seed(0)
        whisper().eval().save_pretrained(work / "whisper_hf")
        convert(work / "gpt2", work, "gpt2_greedy.onnx", "gpt2", cg.GenerationType.GREEDYSEARCH,
                "--num_beams", "1", "--num_return_sequences", "1")
        convert(work / "gpt2", work, "gpt2_beam.onnx", "gpt2", cg.GenerationType.BEAMSEARCH,
                "--output_sequences_scores", "--output_token_scores")
        convert(work / "gpt2", work, "gpt2_sampling.onnx", "gpt2", cg.GenerationType.SAMPLING,
                "--num_beams", "1", "--num_return_sequences", "1", "--top_p", "0.6", "--seed")
        convert(work / "t5", work, "t5_beam.onnx", "t5", cg.GenerationType.BEAMSEARCH,
                "--output_sequences_scores", "--output_token_scores", *t5_subgraphs(work / "t5", work))
        convert(work / "t5", work, "t5_beam_init.onnx", "t5", cg.GenerationType.BEAMSEARCH,
                "--output_sequences_scores", *t5_subgraphs(work / "t5", work, encoder_decoder_init=True))
        convert_whisper(work / "whisper_hf", work)
    expected()


if __name__ == "__main__":
    main()
