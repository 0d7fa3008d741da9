"""Where two generations part: the first new token that differs; before it, per step, the logit error and the
rank of the chosen token on the other side; the first step and layer where a cache departs, down to head and
position; and, against another model, the first value inside that step's graph that parts (explorer.compare).

Steps are compared while both sides fed the decoder the same tokens: up to and including the step whose chosen
token differs; after it, each side continues from its own token and their values no longer answer one question."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..compare import compare
from ..compare.saturation import RECOMPUTED, recompute
from ..errors import FeedError
from ..proto.graph import attribute_value
from .onnxruntime_loop import StepResult, onnxruntime_choices, onnxruntime_steps
from .run import Generation, generate
from .strategy import BeamSearch, Greedy
from .wrap import LOOP

ATOL, RTOL = 1e-4, 1e-4


@dataclass
class CacheDeparture:
    """The first cache value beyond the tolerance: its step, layer, head and position (None where the cache's
    layout has no such axis), the `present.*` name, and its largest error at that step."""

    step: int
    layer: int
    head: int | None
    position: int | None
    name: str
    max_abs: float


@dataclass
class GenerationComparison:
    """explorer's generation against another side (onnxruntime, another model, reference tokens)."""

    against: str
    tokens: list[list[int]]
    against_tokens: list[list[int]]
    first_token_diff: int | None
    logit_error: list[float] = field(default_factory=list)  # per compared step, the largest |a - b|
    rank: list[int] = field(default_factory=list)  # per compared step, the worst rank of our token on their side
    first_cache_departure: CacheDeparture | None = None
    first_divergence: dict[str, Any] | None = None  # inside the first departing step's graph (another model)
    saturated_steps: list[int] = field(default_factory=list)  # against onnxruntime: where its u8s8 kernel saturates
    trace_bytes: int = 0
    cache_bytes: int = 0

    def to_json(self) -> dict[str, Any]:
        """The report as --json writes it (one row's tokens as a flat list when the batch is one)."""
        def flat(rows: list[list[int]]) -> list[int] | list[list[int]]:
            return rows[0] if len(rows) == 1 else rows

        return {"tokens": flat(self.tokens), "against": {"kind": self.against, "tokens": flat(self.against_tokens)},
                "first_token_diff": self.first_token_diff,
                "first_cache_departure": None if self.first_cache_departure is None
                else asdict(self.first_cache_departure),
                "first_divergence": self.first_divergence, "logit_error": self.logit_error, "rank": self.rank,
                "saturated_steps": self.saturated_steps,
                "trace_bytes": self.trace_bytes, "cache_bytes": self.cache_bytes}


def _steps(generation: Generation) -> Iterator[StepResult]:
    tokens = generation.step_tokens  # [rows, steps]: with beams, each row's token (its beam reordered each step)
    for step in range(generation.logits.shape[0]):
        yield StepResult(step, tokens[:, step], generation.logits[step], generation.presents(step))


def first_difference(ours: np.ndarray, theirs: np.ndarray) -> int | None:
    """The index of the first new token that differs in any row ([batch, tokens] each), or None; a side that
    stopped earlier differs where it has no token."""
    length = min(ours.shape[1], theirs.shape[1])
    differs = np.nonzero((ours[:, :length] != theirs[:, :length]).any(axis=0))[0]
    if differs.size:
        return int(differs[0])
    return None if ours.shape[1] == theirs.shape[1] else length


def rank_of(token: np.ndarray, logits: np.ndarray) -> int:
    """The worst, over rows, rank of `token` [batch] among `logits` [batch, vocab] (0: their top choice)."""
    chosen = np.take_along_axis(logits, token[:, None], axis=1)
    return int((logits > chosen).sum(axis=1).max())


def cache_departure(step: int, ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray],
                    layers: dict[str, int], atol: float = ATOL, rtol: float = RTOL) -> CacheDeparture | None:
    """The first cache (by layer, then name) whose values at `step` part beyond atol + rtol·|theirs|: the first
    position that departs and, there, the head with the largest error."""
    for name in sorted(ours, key=lambda n: (layers[n], n)):
        a, b = np.asarray(ours[name], np.float64), np.asarray(theirs[name], np.float64)
        if a.shape != b.shape:
            return CacheDeparture(step, layers[name], None, None, name, float("inf"))
        error = np.abs(a - b)
        departs = error > atol + rtol * np.abs(b)
        if not departs.any():
            continue
        max_abs = float(error.max())
        if a.ndim < 4:
            where = np.argwhere(departs)[0]
            return CacheDeparture(step, layers[name], None, int(where[-2]) if a.ndim >= 2 else None, name, max_abs)
        by_head_position = np.where(departs, error, 0.0).max(axis=-1).max(axis=0)  # [heads, positions]
        position = int(np.nonzero(by_head_position.max(axis=0))[0][0])
        head = int(np.argmax(by_head_position[:, position]))
        return CacheDeparture(step, layers[name], head, position, name, max_abs)
    return None


def compare_steps(generation: Generation, other: Iterable[StepResult], label: str,
                  atol: float = ATOL, rtol: float = RTOL) -> GenerationComparison:
    """Our generation against another side's steps (see the module docstring); with beams, row by row (batch
    entries × beams), each side's rows reordered by its own beams."""
    layers = {pair.present: pair.layer for pair in generation.export.caches}
    theirs_tokens, logit_error, ranks = [], [], []
    departure = None
    parted = False
    for result, ours in zip(other, _steps(generation)):
        theirs_tokens.append(result.token)
        if parted:
            continue
        logit_error.append(float(np.abs(ours.logits.astype(np.float64) - result.logits).max()))
        ranks.append(rank_of(ours.token, result.logits))
        if departure is None:
            departure = cache_departure(ours.step, ours.presents, result.presents, layers, atol, rtol)
        parted = bool((ours.token != result.token).any())
    for result in other:  # the other side's remaining tokens (it may go on longer)
        theirs_tokens.append(result.token)
    ours_tokens = generation.step_tokens
    against = np.stack(theirs_tokens, axis=1) if theirs_tokens else np.zeros((ours_tokens.shape[0], 0), int)
    return GenerationComparison(label, ours_tokens.tolist(), against.tolist(),
                                first_difference(ours_tokens, against), logit_error, ranks, departure,
                                trace_bytes=generation.trace_bytes, cache_bytes=generation.cache_bytes)


def saturated_steps(generation: Generation) -> list[int]:
    """The steps where onnxruntime's u8s8 kernel, on an x86 CPU without VNNI, computes an integer product of our
    generation otherwise than the spec: a raw pair sum of one leaves int16 (explorer.compare.saturation)."""
    found: set[int] = set()
    for event in generation.trace.events:
        if event.op_type not in RECOMPUTED or not event.iteration or event.iteration[0] in found:
            continue
        node = generation.model.node(event.node).proto
        recorded = event.inputs
        inputs = [recorded.get(name) if name else None for name in node.input]
        if recompute(event.op_type, inputs, {a.name: attribute_value(a) for a in node.attribute})[2]:
            found.add(event.iteration[0])
    return sorted(found)


def against_onnxruntime(generation: Generation, atol: float = ATOL, rtol: float = RTOL) -> GenerationComparison:
    """Our generation against onnxruntime driving the same loop on the same export (sampling and beams: choosing
    with explorer's own logic and draws, see generation/onnxruntime_loop.py), with the steps where its u8s8 kernel
    saturates on a CPU without VNNI (where that explains a difference, the difference is its)."""
    first, encoder, chosen = generation.feeds, generation.encoder_feeds, None
    if not isinstance(generation.strategy, Greedy):
        chosen = onnxruntime_choices(generation.model.proto, generation.loop_feeds)
        if isinstance(generation.strategy, BeamSearch):
            beams = generation.strategy.beams
            first, encoder = ({k: np.repeat(v, beams, axis=0) for k, v in values.items()}
                              for values in (first, encoder))
    steps = onnxruntime_steps(generation.export, first, generation.max_new_tokens, encoder=encoder, chosen=chosen)
    result = compare_steps(generation, steps, "onnxruntime", atol, rtol)
    result.saturated_steps = saturated_steps(generation)
    return result


def against_model(generation: Generation, other: Generation, atol: float = ATOL,
                  rtol: float = RTOL) -> GenerationComparison:
    """Our generation against another export's (same prompt, same number of tokens), and the first value inside
    the first departing step's graph that parts, when both loops have the same structure."""
    result = compare_steps(generation, _steps(other), other.export.source, atol, rtol)
    step = _first_departing_step(result)
    if step is not None:
        found = compare(generation.trace, other.trace, model=generation.model).first  # each value at its precision
        if found is not None:
            ours = generation.trace.event(found.node, found.iteration).outputs[found.name]
            theirs = other.trace.event(found.b_node, found.iteration).outputs[found.b_name]
            result.first_divergence = {"node": found.node.removeprefix(f"{LOOP}/body/"), "op_type": found.op_type,
                                       "name": found.name, "step": found.iteration[0] if found.iteration else None,
                                       "iteration": list(found.iteration), "max_abs": found.max_abs,
                                       "head": worst_head(ours, theirs)}
    return result


def worst_head(ours: object, theirs: object) -> int | None:
    """The head (axis 1 of a [batch, heads, positions, ...] attention value) where two values part the most."""
    if not isinstance(ours, np.ndarray) or not isinstance(theirs, np.ndarray) or ours.shape != theirs.shape \
            or ours.ndim != 4 or ours.dtype.kind != "f":
        return None
    error = np.abs(ours.astype(np.float64) - theirs)
    return int(np.argmax(error.max(axis=(0, 2, 3))))


def _first_departing_step(result: GenerationComparison) -> int | None:
    departing = [s for s, e in enumerate(result.logit_error) if e > 0]
    if result.first_cache_departure is not None:
        departing.append(result.first_cache_departure.step)
    return min(departing) if departing else None


def read_tokens(path: str | Path) -> np.ndarray:
    """Reference tokens [batch, tokens] from a .npy, or a .json list (or {"tokens": ...})."""
    path = Path(path)
    if path.suffix == ".npy":
        value = np.load(path, allow_pickle=False)
    else:
        data = json.loads(path.read_text())
        value = np.array(data["tokens"] if isinstance(data, dict) else data)
    if value.dtype.kind not in "iu" or value.ndim not in (1, 2):
        raise FeedError(f"{path}: reference tokens must be integers, one row or [batch, tokens]")
    return value.reshape(1, -1) if value.ndim == 1 else value


def against_tokens(generation: Generation, tokens: np.ndarray, label: str = "reference") -> GenerationComparison:
    """Our tokens against reference ones (e.g. transformers' generate)."""
    return GenerationComparison(label, generation.tokens.tolist(), tokens.tolist(),
                                first_difference(generation.tokens, tokens), trace_bytes=generation.trace_bytes,
                                cache_bytes=generation.cache_bytes)


def generate_against(generation: Generation, against: str, with_past: str | None = None,
                     atol: float = ATOL, rtol: float = RTOL) -> GenerationComparison:
    """`against`: "onnxruntime", reference tokens (.npy, .json), or another export (run on the same inputs)."""
    if against == "onnxruntime":
        return against_onnxruntime(generation, atol, rtol)
    if against.endswith((".npy", ".json")) and Path(against).is_file():
        return against_tokens(generation, read_tokens(against), against)
    other = generate(against, with_past=with_past, inputs=generation.given(), max_new_tokens=generation.logits.shape[0],
                     strategy=generation.strategy)
    return against_model(generation, other, atol, rtol)
