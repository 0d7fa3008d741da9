"""`explorer.generate`: a decoder export driven token by token, recorded as one trace whose generation loop has
one iteration per decode step."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FeedError
from ..executor import run
from ..files.atomic_write import replacing
from ..limits import Limits
from ..model.model import Model, load
from ..trace.shared_caches import held_bytes, share_caches
from ..trace.trace import Iteration, Trace
from .beams import (
    BEAM_PARENTS,
    BEAM_SCORES,
    DONE,
    PARENTS,
    SEQUENCE_LENGTHS,
    SEQUENCE_SCORES,
    SEQUENCES,
    STATE,
    start_state,
)
from .decoder import ENCODER_MASK, DecoderExport, open_decoder
from .sharing import beam_chains, step_chains
from .start import encoder_inputs, first_inputs
from .strategy import GREEDY, BeamSearch, Sampling, Strategy, strategy_of
from .token_sampling import DRAWS, draws
from .wrap import ENCODER_IDS, FINISHED, LOOP, START, STEP_LOGITS, TOKEN, TOKENS, generation_model, next_of


@dataclass
class Generation:
    """One recorded generation. `tokens` [sequences, new tokens]: one row per batch entry (with beams, per returned
    sequence, entry after entry, padded with the pad id past its end); `logits` [steps, rows, vocab], the last
    position's at every step (rows: the batch, or batch entries × beams); `trace` the run of `model` (the
    generation loop), step t being iteration (t,) of its Loop `generate`; `cache_bytes` the final cache's bytes,
    `trace_bytes` what the trace holds for the caches of all steps. With beams, `sequence_scores` and
    `sequence_lengths` [sequences], `parents` [steps, rows] (the row each row continues)."""

    export: DecoderExport
    model: Model
    trace: Trace
    feeds: dict[str, np.ndarray]  # the decoder's first-step inputs (one row per batch entry)
    encoder_feeds: dict[str, np.ndarray]  # the encoder's inputs by its own names (none for a decoder alone)
    tokens: np.ndarray
    logits: np.ndarray
    cache_bytes: int
    trace_bytes: int
    max_new_tokens: int
    strategy: Strategy = GREEDY
    loop_feeds: dict[str, np.ndarray] = field(default_factory=dict)  # the loop model's inputs that give it
    sequence_scores: np.ndarray | None = None
    sequence_lengths: np.ndarray | None = None
    parents: np.ndarray | None = None

    @property
    def steps(self) -> list[Iteration]:
        """The loop's iterations, one per decode step."""
        return self.trace.iterations(LOOP)

    @property
    def step_tokens(self) -> np.ndarray:
        """The token each row chose at every step: [rows, steps]."""
        return np.asarray(self.trace.outputs[TOKENS]).T

    def given(self) -> dict[str, np.ndarray]:
        """The inputs that give another export this generation's start: the encoder's, or the decoder's first
        ones without its caches (each export starts from its own empty caches)."""
        if self.encoder_feeds:
            return {**self.encoder_feeds, "decoder_input_ids": self.feeds["input_ids"]}
        pasts = {pair.past for pair in self.export.caches}
        return {k: v for k, v in self.feeds.items() if k not in pasts}

    def presents(self, step: int) -> dict[str, np.ndarray]:
        """Every cache the decoder returned at `step` (`present.*` by name); with beams, as reordered for the next
        step by the beams chosen."""
        outputs = self.steps[step].outputs
        return {pair.present: outputs[next_of(self.export, pair.past, self.strategy)] for pair in self.export.caches}


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
             *, with_past: str | Path | None = None, encoder: str | Path | None = None,
             inputs: Mapping[str, np.ndarray] | None = None, max_new_tokens: int = 20, sample: int | None = None,
             top_k: int = 50, top_p: float = 1.0, temperature: float = 1.0, beams: int = 1,
             length_penalty: float = 1.0, early_stopping: bool = False, num_return_sequences: int = 1,
             strategy: Strategy | None = None, limits: Limits | None = None) -> Generation:
    """Generation of `max_new_tokens` (fewer when every sequence reached an end-of-sequence id, or every beam
    search is done) from a decoder export: a decoder .onnx (`with_past` the decoder of the later steps when it has
    no past inputs, `encoder` the encoder of an encoder-decoder) or an optimum-style folder with config.json.
    `prompt_ids`: one prompt, or one per batch row (an encoder-decoder's encoder reads it); `inputs`: the first
    step's inputs (input_ids, attention_mask, ...; an encoder-decoder's encoder inputs, and decoder_input_ids)
    instead, completed as optimum would. Greedy by default; `sample=SEED` draws tokens (top_k, top_p,
    temperature as transformers' warpers; explorer's own seeded draws, see generation/token_sampling.py); `beams=K`
    runs transformers' beam search (length_penalty, early_stopping, num_return_sequences); `strategy` (as
    explorer.generation.strategy holds them) instead of those."""
    if max_new_tokens < 1:
        raise FeedError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    if strategy is None:
        strategy = strategy_of(sample, top_k, top_p, temperature, beams, length_penalty, early_stopping,
                               num_return_sequences)
    export = model if isinstance(model, DecoderExport) else open_decoder(model, with_past, encoder)
    prompt = None if prompt_ids is None else np.array(prompt_ids, np.int64)
    first = first_inputs(export, prompt, inputs)
    encoder_feeds = {} if export.encoder is None else encoder_inputs(export, prompt, inputs or {})
    pad = export.pad_token_id or 0
    feeds = loop_inputs(strategy, first, encoder_feeds, max_new_tokens, pad)
    wrapped = load(generation_model(export, pad, export.eos_token_ids, strategy))
    trace = run(wrapped, feeds, limits=limits)
    records = trace.iterations(LOOP)
    describe_steps(records, strategy)
    beam = isinstance(strategy, BeamSearch)
    chains = beam_chains(trace, records, export.caches) if beam else step_chains(records, export.caches)
    share_caches(trace, chains)
    last: dict[str, Any] = records[-1].outputs if records else {}
    carried = [next_of(export, pair.past, strategy) for pair in export.caches]
    cache_bytes = sum(int(dict.__getitem__(last, name).nbytes) for name in carried if name in last)
    held = [value for record in records for side in (record.inputs, record.outputs)  # as held, not made whole
            for name in (*(pair.past for pair in export.caches), *carried)
            if (value := dict.get(side, name)) is not None]
    if beam:
        held += [value for chain in beam_chains(trace, records, export.caches) for value in chain.presents]
    generation = Generation(export, wrapped, trace, {k: v for k, v in first.items() if not k.startswith("gen.")},
                            encoder_feeds, np.asarray(trace.outputs[TOKENS]).T, np.asarray(trace.outputs[STEP_LOGITS]),
                            cache_bytes, held_bytes(held), max_new_tokens, strategy, feeds)
    if beam:
        generation.tokens, generation.sequence_scores = returned_sequences(trace.outputs)
        generation.sequence_lengths = np.asarray(trace.outputs[SEQUENCE_LENGTHS]).reshape(-1)
        generation.parents = np.asarray(trace.outputs[BEAM_PARENTS])
    return generation


def loop_inputs(strategy: Strategy, first: Mapping[str, np.ndarray], encoder: Mapping[str, np.ndarray],
                max_new_tokens: int, pad: int) -> dict[str, np.ndarray]:
    """The loop model's inputs for `strategy`: with beams every row repeated for its beams and the beam state
    added; when sampling, the draws."""
    rows = next(iter(first.values())).shape[0]
    if isinstance(strategy, BeamSearch):
        def repeated(values: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            return {k: np.repeat(v, strategy.beams, axis=0) for k, v in values.items() if k != FINISHED}

        state = start_state(rows, strategy, max_new_tokens, pad)
        return loop_feeds({**repeated(first), **state}, max_new_tokens, repeated(encoder))
    feeds = loop_feeds(first, max_new_tokens, encoder)
    if isinstance(strategy, Sampling):
        feeds[DRAWS] = draws(strategy.seed, max_new_tokens, rows)
    return feeds


def describe_steps(records: list[Iteration], strategy: Strategy) -> None:
    """Each step's info, as the generation operators record theirs: each row's token, whether each sequence
    ended (with beams: each batch entry's search done), the row each row continues and its beam score."""
    for record in records:
        outputs = record.outputs
        info = record.info
        info["tokens"] = np.asarray(outputs[TOKEN]).tolist()
        if isinstance(strategy, BeamSearch):
            info["beams"] = np.asarray(outputs[PARENTS]).tolist()
            info["scores"] = np.asarray(outputs[STATE[BEAM_SCORES][0]]).tolist()
            info["finished"] = np.asarray(outputs[STATE[DONE][0]]).tolist()
        else:
            info["finished"] = np.asarray(outputs["gen.next_finished"]).tolist()


def returned_sequences(outputs: Mapping[str, object]) -> tuple[np.ndarray, np.ndarray]:
    """(tokens [entries × returned, longest length], scores [entries × returned]) of a beam search: each returned
    sequence's new tokens, the pad id past its length, as transformers' generate returns them after the prompt."""
    sequences = np.asarray(outputs[SEQUENCES])
    lengths = np.asarray(outputs[SEQUENCE_LENGTHS]).reshape(-1)
    tokens = sequences.reshape(-1, sequences.shape[-1])[:, :int(lengths.max())]
    return tokens, np.asarray(outputs[SEQUENCE_SCORES]).reshape(-1)


def save_generation_model(generation: Generation, path: str | Path, inputs: str | Path | None = None) -> None:
    """Writes the generation loop model (and its inputs as an .npz), which the app runs and shows step by step."""
    with replacing(path) as out:  # a temporary file moved into place once whole
        out.write(generation.model.proto.SerializeToString())
    if inputs is not None:
        arrays: dict[str, Any] = dict(generation.loop_feeds)
        target = str(inputs) if str(inputs).endswith(".npz") else f"{inputs}.npz"  # the name np.savez gives it
        with replacing(target) as out:
            np.savez(out, **arrays)
