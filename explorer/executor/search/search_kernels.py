"""GreedySearch, BeamSearch, WhisperBeamSearch and Sampling (com.microsoft) as special kernels: `factory(op, bodies)`, each decode step
one iteration of the node, its subgraphs' events carrying the step as their last iteration index. An iteration
records what the decoder was fed and returned, and in its info the subgraphs that ran, each row's chosen token,
the row it continues (beam search) and its score (beam search: the beam's summed log-probability)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import ExecutionError, where
from ...trace.shared_caches import CacheSteps, share_caches
from ...trace.trace import IterationInfo
from ..body_values import one_value
from ..ops.base import Call, OpNode, SpecialKernel
from .decoders import DecoderRun, EncoderDecoder, GptDecoder, Step
from .processors import Processors
from .scorer import BeamScorer
from .token_draws import MinstdRand0, TopP, multinomial

if TYPE_CHECKING:
    from ...trace.trace import EventInfo
    from ..compiled import Bodies

GREEDY_INPUTS = ("input_ids", "max_length", "min_length", "repetition_penalty", "vocab_mask", "prefix_vocab_mask",
                 "attention_mask", "presence_mask", "seed")
BEAM_INPUTS = ("input_ids", "max_length", "min_length", "num_beams", "num_return_sequences", "length_penalty",
               "repetition_penalty", "vocab_mask", "prefix_vocab_mask", "attention_mask", "decoder_input_ids",
               "logits_processor")
MAX_LENGTH = 4096  # onnxruntime's bound on max_length


@dataclass(frozen=True)
class Inputs:
    """The node's inputs by name (None when omitted), read once per execution."""

    values: dict[str, Any]
    call: Call

    def scalar(self, name: str, default: float) -> float:
        value = self.values.get(name)
        return default if value is None else float(one_value(value, name, self.call))

    def error(self, message: str) -> ExecutionError:
        call = self.call
        return ExecutionError(f"{where(call.path, call.op_type, call.iteration)}: {message}", node=call.path,
                              op_type=call.op_type, iteration=call.iteration)


def _layout(op: OpNode, bodies: Bodies) -> GptDecoder | EncoderDecoder:
    model_type = op.get_int("model_type", 0)
    if model_type == 0:
        return GptDecoder(op, bodies)
    if model_type in (1, 2):
        return EncoderDecoder(op, bodies, op.get_int("decoder_start_token_id", -1), whisper=model_type == 2)
    raise op.error(f"model_type {model_type} is not run by explorer (0: GPT-2, 1: T5, 2: Whisper)")


def _read(args: Sequence[Any], names: tuple[str, ...], call: Call) -> Inputs:
    return Inputs({name: value for name, value in zip(names, args) if value is not None}, call)


def _processors(op: OpNode, inputs: Inputs, eos: int, temperature: float = 1.0) -> Processors:
    penalty = inputs.scalar("repetition_penalty", 1.0)
    if penalty <= 0:
        raise inputs.error(f"repetition_penalty must be greater than 0, got {penalty}")
    return Processors(eos, int(inputs.scalar("min_length", 0)), penalty, op.get_int("no_repeat_ngram_size", 0),
                      inputs.values.get("vocab_mask"), inputs.values.get("prefix_vocab_mask"), temperature,
                      inputs.values.get("presence_mask"), op.get_float("presence_penalty", 0.0))


def _prompt(inputs: Inputs, first: int, rank: int = 2) -> tuple[np.ndarray, int]:
    """(input_ids, max_length), checked as onnxruntime checks them; `first` the length of the sequences the search
    starts from (the prompt's for GPT-2, 1 for T5, the start tokens' for Whisper); `rank` input_ids' (3 for
    Whisper's features)."""
    input_ids = np.asarray(inputs.values["input_ids"])
    if input_ids.ndim != rank:
        raise inputs.error(f"input_ids must have rank {rank}, got shape {input_ids.shape}")
    max_length = int(inputs.scalar("max_length", MAX_LENGTH))
    if not first < max_length <= MAX_LENGTH:
        raise inputs.error(f"max_length ({max_length}) must exceed the sequence the search starts from ({first}) and "
                           f"be at most {MAX_LENGTH}")
    return input_ids, max_length


class _Loop:
    """The steps of one execution: run the subgraphs, let `choose` pick each row's token, record the iteration,
    feed the next step, until max_length or `choose` says every sequence ended."""

    def __init__(self, call: Call, run: DecoderRun, sequences: np.ndarray, max_length: int,
                 vocab: int | None) -> None:
        self.call, self.run, self.sequences, self.max_length, self.vocab = call, run, sequences, max_length, vocab
        self.steps = 0
        self.ran: list[tuple[Step, np.ndarray | None]] = []  # each step's decoder run and the rows it continues

    def go(self, choose: Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray | None, IterationInfo, bool]]
           ) -> str:
        call, engine = self.call, self.call.engine
        rows = self.sequences.shape[0]
        while self.sequences.shape[1] < self.max_length:
            engine.check_iterations(self.steps, call.path, call.op_type, call.iteration)
            index = (*call.iteration, self.steps)
            step: Step = self.run.run(index, rows, self.vocab)
            tokens, parents, info, ended = choose(step.logits, self.steps + 1)
            info["subgraphs"] = step.subgraphs
            engine.record_iteration(call.path, index, step.feeds, step.returned, info)
            self.steps += 1
            self.ran.append((step, parents))
            if ended:
                return "every sequence ended"
            if self.sequences.shape[1] < self.max_length:
                self.run.advance(step, tokens, parents)
        return "max_length reached"

    def share(self, first_event: int) -> None:
        """Every step's caches recorded once (trace/shared_caches.py), from the first step the decoder ran."""
        ran = [(step, parents) for step, parents in self.ran if "decoder" in step.subgraphs and
               step.subgraphs[-1] == "decoder"]
        caches = []
        for past, present in self.run.cache_names:
            presents = [step.returned.get(present) for step, _ in ran]
            nexts = [following.feeds.get(past) for following, _ in ran[1:]] + [None]
            caches.append(CacheSteps(presents, [parents for _, parents in ran], nexts, self.run.batch_axis))
        share_caches(self.call.engine.trace, caches, first_event)


def _vocab(op: OpNode) -> int | None:
    """The vocab_size attribute when set (logits padded past it are cut), else None: the logits' own size."""
    size = op.get_int("vocab_size", -1)
    return size if size > 0 else None


def greedy_search_kernel(op: OpNode, bodies: Bodies) -> SpecialKernel:
    """GreedySearch: the best-scoring token of each row, after the logits processors."""
    return _greedy(op, bodies, sampling=False)


def sampling_kernel(op: OpNode, bodies: Bodies) -> SpecialKernel:
    """Sampling: a token drawn from the top-p part of each row's softmax, after the logits processors."""
    return _greedy(op, bodies, sampling=True)


def _greedy(op: OpNode, bodies: Bodies, sampling: bool) -> SpecialKernel:
    if op.get_int("model_type", 0) != 0:
        raise op.error(f"model_type {op.get_int('model_type', 0)}: onnxruntime's {op.op_type} runs decoder-only "
                       "models (model_type 0) only")
    layout = GptDecoder(op, bodies)
    eos, pad, vocab = op.get_int("eos_token_id"), op.get_int("pad_token_id"), _vocab(op)
    temperature = op.get_float("temperature", 1.0) if sampling else 1.0
    top_p = TopP(op.get_float("top_p", 0.0), op.get_float("filter_value", float("-inf")),
                 op.get_int("min_tokens_to_keep", 0), bool(op.get_int("custom", 0))) if sampling else None
    wants_filtered = sampling and len(op.node.proto.output) > 1 and bool(op.node.proto.output[1])

    def run(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        inputs = _read(args, GREEDY_INPUTS, call)
        input_ids, max_length = _prompt(inputs, np.shape(args[0])[1])
        processors = _processors(op, inputs, eos, temperature)
        search = layout.start(call, input_ids, inputs.values.get("attention_mask"), 1, pad)
        loop = _Loop(call, search, search.prompt, max_length, vocab)
        ended = np.zeros(input_ids.shape[0], dtype=bool)
        generator = MinstdRand0(int(inputs.scalar("seed", 0)))
        filtered: list[np.ndarray] = []

        def choose(scores: np.ndarray, step: int) -> tuple[np.ndarray, None, IterationInfo, bool]:
            processors.apply(scores, loop.sequences, step)
            if top_p is not None:
                top_p.filter(scores)
                filtered[:] = [scores.copy()]
                tokens = multinomial(scores, generator)
            else:
                tokens = np.argmax(scores, axis=1).astype(np.int32)
            chose = tokens.tolist()
            ended[tokens == eos] = True
            tokens[ended] = pad  # a row that ended goes on with the pad id
            loop.sequences = np.concatenate([loop.sequences, tokens[:, None]], axis=1)
            return tokens, None, IterationInfo(tokens=chose, finished=ended.tolist()), bool(ended.all())

        first_event = len(call.engine.trace.events)
        reason = loop.go(choose)
        loop.share(first_event)
        out = np.zeros((input_ids.shape[0], max_length), dtype=np.int32)
        out[:, :loop.sequences.shape[1]] = loop.sequences
        results: list[Any] = [out]
        if wants_filtered:
            results.append(filtered[0] if filtered else np.zeros((input_ids.shape[0], 0), dtype=np.float32))
        return results, {"stop_reason": reason, "iterations": loop.steps}

    return run


def log_softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float32, as onnxruntime's CPU softmax computes it."""
    shifted: np.ndarray = scores - scores.max(axis=1, keepdims=True)
    result: np.ndarray = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True, dtype=np.float32))
    return result


def beam_search_kernel(op: OpNode, bodies: Bodies) -> SpecialKernel:
    """BeamSearch: each batch entry's beams extended by the 2 × beams best (beam, token) candidates of their summed
    log-probabilities, finished hypotheses kept by the beam scorer."""
    layout = _layout(op, bodies)
    eos, pad, vocab = op.get_int("eos_token_id"), op.get_int("pad_token_id"), _vocab(op)
    early = bool(op.get_int("early_stopping", 0))
    outputs = list(op.node.proto.output)
    wanted = [k < len(outputs) and bool(outputs[k]) for k in range(5)]
    if any(wanted[3:]):
        raise op.error("cross_qk and non_speech_probs (WhisperBeamSearch's) are not computed by explorer")
    whisper = op.op_type == "WhisperBeamSearch"

    def run(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        inputs = _read(args, BEAM_INPUTS, call)
        refused = sorted(set(inputs.values) & set(BEAM_INPUTS[12:])) + (
            ["logits_processor"] if inputs.scalar("logits_processor", 0) != 0 else [])
        if refused or ("decoder_input_ids" in inputs.values and not whisper):
            raise inputs.error(f"{', '.join(refused or ['decoder_input_ids'])} (Whisper's) are not run by explorer")
        starts = inputs.values.get("decoder_input_ids")
        first = (np.shape(args[0])[1] if isinstance(layout, GptDecoder) else
                 1 if starts is None else np.shape(starts)[1])
        input_ids, max_length = _prompt(inputs, first, 3 if whisper else 2)
        beams, returned = int(inputs.scalar("num_beams", 1)), int(inputs.scalar("num_return_sequences", 1))
        if not 1 <= returned <= beams <= 128:
            raise inputs.error(f"num_beams ({beams}) must be in 1..128 and num_return_sequences ({returned}) in "
                               "1..num_beams")
        processors = _processors(op, inputs, eos)
        if processors.min_length >= max_length:
            raise inputs.error(f"min_length ({processors.min_length}) must be smaller than max_length ({max_length})")
        batch = input_ids.shape[0]
        scorer = BeamScorer(batch, beams, inputs.scalar("length_penalty", 1.0), early, eos, pad)
        search = (layout.start(call, input_ids, inputs.values.get("attention_mask"), beams, pad)
                  if isinstance(layout, GptDecoder) else
                  layout.start(call, input_ids, inputs.values.get("attention_mask"), beams, pad, starts))
        loop = _Loop(call, search, search.prompt, max_length, vocab)
        initial = np.zeros((batch, beams), dtype=np.float32)
        initial[:, 1:] = np.float32(-1e9)  # the first step extends each entry's first beam only
        beam_scores: np.ndarray = initial.reshape(-1)
        kept: list[np.ndarray] = []

        def choose(logits: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray, IterationInfo, bool]:
            nonlocal beam_scores
            scores = log_softmax(logits)
            processors.apply(scores, loop.sequences, step)
            scores += beam_scores[:, None]
            if wanted[2]:
                kept.append(scores.reshape(batch, beams, -1).copy())
            flat = scores.reshape(batch, -1)
            best = np.argsort(-flat, axis=1, kind="stable")[:, :2 * beams]
            size = scores.shape[1]
            scorer.process(loop.sequences, np.take_along_axis(flat, best, axis=1).reshape(-1),
                           (best % size).reshape(-1), (best // size).reshape(-1))
            beam_scores = scorer.next_scores.copy()
            tokens, parents = scorer.next_tokens.copy(), scorer.next_indices.copy()
            loop.sequences = np.concatenate([loop.sequences[parents], tokens[:, None]], axis=1)
            info = IterationInfo(tokens=tokens.tolist(), beams=parents.tolist(), scores=beam_scores.tolist(),
                                 finished=[entry.done for entry in scorer.entries])
            return tokens, parents, info, scorer.is_done

        first_event = len(call.engine.trace.events)
        reason = loop.go(choose)
        loop.share(first_event)
        sequences, sequence_scores = scorer.finalize(loop.sequences, beam_scores, returned, max_length)
        results: list[Any] = [sequences, sequence_scores if wanted[1] else None]
        if wanted[2]:
            started = loop.sequences.shape[1] - loop.steps
            scores_out = np.zeros((max_length - started, batch, beams, kept[0].shape[-1] if kept else 0),
                                  dtype=np.float32)
            scores_out[:len(kept)] = kept
            results.append(scores_out)
        return results, {"stop_reason": "every batch entry done" if reason == "every sequence ended" else reason,
                         "iterations": loop.steps}

    return run


GENERATION_KERNELS: dict[tuple[str, str], Callable[[OpNode, Bodies], SpecialKernel]] = {
    ("com.microsoft", "GreedySearch"): greedy_search_kernel,
    ("com.microsoft", "BeamSearch"): beam_search_kernel,
    ("com.microsoft", "Sampling"): sampling_kernel,
    ("com.microsoft", "WhisperBeamSearch"): beam_search_kernel,
}
"""onnxruntime's generation operators, by (domain, op_type)."""
