"""`explorer.generate`: a decoder export driven token by token, recorded as one trace whose generation loop has
one iteration per decode step."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FeedError
from ..executor import run
from ..files.atomic_write import replacing
from ..limits import Limits
from ..model.model import Model, load
from ..trace.trace import Iteration, Trace
from .decoder import ENCODER_MASK, DecoderExport, open_decoder
from .sharing import held_bytes, share_caches
from .start import encoder_inputs, first_inputs
from .wrap import ENCODER_IDS, FINISHED, LOOP, START, STEP_LOGITS, TOKENS, generation_model


@dataclass
class Generation:
    """One recorded generation. `tokens` [batch, new tokens]; `logits` [steps, batch, vocab], the last position's
    at every step; `trace` the run of `model` (the generation loop), step t being iteration (t,) of its Loop
    `generate`; `cache_bytes` the final cache's bytes, `trace_bytes` what the trace holds for the caches of all
    steps."""

    export: DecoderExport
    model: Model
    trace: Trace
    feeds: dict[str, np.ndarray]  # the decoder's first-step inputs
    encoder_feeds: dict[str, np.ndarray]  # the encoder's inputs by its own names (none for a decoder alone)
    tokens: np.ndarray
    logits: np.ndarray
    cache_bytes: int
    trace_bytes: int
    max_new_tokens: int

    @property
    def steps(self) -> list[Iteration]:
        """The loop's iterations, one per decode step."""
        return self.trace.iterations(LOOP)

    @property
    def loop_feeds(self) -> dict[str, np.ndarray]:
        """The inputs of `model` (the generation loop) that give this generation."""
        return loop_feeds({**self.feeds, FINISHED: np.zeros(self.tokens.shape[0], bool)}, self.max_new_tokens,
                          self.encoder_feeds)

    def given(self) -> dict[str, np.ndarray]:
        """The inputs that give another export this generation's start: the encoder's, or the decoder's first
        ones without its caches (each export starts from its own empty caches)."""
        if self.encoder_feeds:
            return {**self.encoder_feeds, "decoder_input_ids": self.feeds["input_ids"]}
        pasts = {pair.past for pair in self.export.caches}
        return {k: v for k, v in self.feeds.items() if k not in pasts}

    def presents(self, step: int) -> dict[str, np.ndarray]:
        """Every cache the decoder returned at `step` (`present.*` by name)."""
        outputs = self.steps[step].outputs
        return {pair.present: outputs[pair.present] for pair in self.export.caches}


def loop_feeds(first: Mapping[str, np.ndarray], max_new_tokens: int,
               encoder: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The generation loop model's inputs: the first step's values as `start.<name>`, the step count, and the
    encoder's inputs (its ids and mask renamed as the loop model's main graph has them)."""
    renamed = {"input_ids": ENCODER_IDS, "attention_mask": ENCODER_MASK}
    feeds = {renamed.get(name, name): value for name, value in (encoder or {}).items()}
    feeds.update({START + name: value for name, value in first.items()})
    feeds["max_new_tokens"] = np.array(max_new_tokens, np.int64)
    return feeds


def generate(model: str | Path | DecoderExport, prompt_ids: Sequence[int] | Sequence[Sequence[int]] | None = None,
             *, with_past: str | Path | None = None, encoder: str | Path | None = None, inputs: Mapping[str, np.ndarray] | None = None,
             max_new_tokens: int = 20, limits: Limits | None = None) -> Generation:
    """Greedy generation of `max_new_tokens` (fewer when every sequence reached an end-of-sequence id) from a
    decoder export: a decoder .onnx (`with_past` the decoder of the later steps when it has no past inputs,
    `encoder` the encoder of an encoder-decoder) or an optimum-style folder with config.json. `prompt_ids`: one
    prompt, or one per batch row (an encoder-decoder's encoder reads it); `inputs`: the first step's inputs
    (input_ids, attention_mask, ...; an encoder-decoder's encoder inputs, and decoder_input_ids) instead,
    completed as optimum would."""
    if max_new_tokens < 1:
        raise FeedError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    export = model if isinstance(model, DecoderExport) else open_decoder(model, with_past, encoder)
    prompt = None if prompt_ids is None else np.array(prompt_ids, np.int64)
    first = first_inputs(export, prompt, inputs)
    encoder_feeds = {} if export.encoder is None else encoder_inputs(export, prompt, inputs or {})
    wrapped = load(generation_model(export, export.pad_token_id or 0, export.eos_token_ids))
    trace = run(wrapped, loop_feeds(first, max_new_tokens, encoder_feeds), limits=limits)
    records = trace.iterations(LOOP)
    share_caches(trace, records, export.caches)
    last = records[-1].outputs if records else {}
    cache_bytes = sum(int(last[pair.present].nbytes) for pair in export.caches if pair.present in last)
    held = [side.get(name) for record in records for side in (record.inputs, record.outputs)
            for pair in export.caches for name in (pair.past, pair.present)]
    tokens = np.asarray(trace.outputs[TOKENS]).T
    return Generation(export, wrapped, trace, {k: v for k, v in first.items() if not k.startswith("gen.")}, encoder_feeds,
                      tokens, np.asarray(trace.outputs[STEP_LOGITS]), cache_bytes, held_bytes(held), max_new_tokens)


def save_generation_model(generation: Generation, path: str | Path, inputs: str | Path | None = None) -> None:
    """Writes the generation loop model (and its inputs as an .npz), which the app runs and shows step by step."""
    with replacing(path) as out:  # a temporary file moved into place once whole
        out.write(generation.model.proto.SerializeToString())
    if inputs is not None:
        arrays: dict[str, Any] = dict(generation.loop_feeds)
        target = str(inputs) if str(inputs).endswith(".npz") else f"{inputs}.npz"  # the name np.savez gives it
        with replacing(target) as out:
            np.savez(out, **arrays)
