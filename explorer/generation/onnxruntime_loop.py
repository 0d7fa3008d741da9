"""onnxruntime driving the same generation loop on the export's own files, step by step in Python: the first step
on the prompt, then each token with the previous step's `present.*` fed as `past_key_values.*`, the mask one
position longer and the positions counted along it, greedy choice, the pad id once a sequence ended.

Sampling and beam search choose with explorer's own logic: onnxruntime runs the generation loop model (the decoder
calls and explorer's selection nodes, on the same seeded draws), and its steps are then driven again on its own
chosen tokens and beams (`Chosen`), each cache reordered by the beams, to give every step's logits and caches."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from .beams import BEAM_PARENTS
from .decoder import ENCODER_MASK, ENCODER_STATES, MERGED_FLAG, DecoderExport
from .start import positions
from .wrap import FINISHED, TOKENS


@dataclass
class StepResult:
    """One decode step of a side: the token chosen per batch row, the last position's logits, the caches out."""

    step: int
    token: np.ndarray  # [batch]
    logits: np.ndarray  # [batch, vocab]
    presents: dict[str, np.ndarray]


@dataclass
class Chosen:
    """A side's choices: each row's token at every step [steps, rows], and with beams the row each row continues
    [steps, rows]."""

    tokens: np.ndarray
    parents: np.ndarray | None = None


def _session(proto: onnx.ModelProto) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])


def onnxruntime_choices(loop_model: onnx.ModelProto, loop_feeds: Mapping[str, np.ndarray]) -> Chosen:
    """onnxruntime's tokens (and beams) running the generation loop model on its inputs."""
    session = _session(loop_model)
    outputs = dict(zip([o.name for o in session.get_outputs()], session.run(None, dict(loop_feeds))))
    parents = outputs.get(BEAM_PARENTS)
    return Chosen(np.asarray(outputs[TOKENS]), None if parents is None else np.asarray(parents))


def onnxruntime_sessions(export: DecoderExport) -> tuple[Any, Any, Any]:
    """onnxruntime's sessions of the first step's decoder, of the later steps' (the same one when one file) and
    of the encoder (None for a decoder alone)."""
    later = _session(export.later)
    return ((_session(export.first) if export.first is not None else later), later,
            None if export.encoder is None else _session(export.encoder))


def onnxruntime_steps(export: DecoderExport, first: Mapping[str, np.ndarray], max_new_tokens: int,
                      sessions: tuple[Any, Any, Any] | None = None,
                      encoder: Mapping[str, np.ndarray] | None = None,
                      chosen: Chosen | None = None) -> Iterator[StepResult]:
    """The steps of onnxruntime's generation (see the module docstring), on `sessions` when given; an
    encoder-decoder's encoder runs once on `encoder` (its inputs), its states and mask fed to every step, and
    the cross-attention caches of the first step kept. With `chosen`, the steps feed its tokens instead of greedy
    ones, and each step's caches (`presents`) are reordered by its beams as the next step reads them."""
    first_session, later, encoder_session = sessions or onnxruntime_sessions(export)
    feeds = {k: v for k, v in first.items() if k != FINISHED}
    if encoder_session is not None:
        feeds[ENCODER_STATES] = encoder_session.run(None, dict(encoder or {}))[0]
        if encoder and "attention_mask" in encoder:
            feeds[ENCODER_MASK] = encoder["attention_mask"]
    finished = np.zeros(feeds["input_ids"].shape[0], bool)
    pad = export.pad_token_id or 0
    logits_name = export.logits_name()
    for step in range(max_new_tokens if chosen is None else min(max_new_tokens, len(chosen.tokens))):
        current = first_session if step == 0 else later
        names = [i.name for i in current.get_inputs()]
        given = {name: feeds[name] for name in names if name in feeds}
        if MERGED_FLAG in names:
            given[MERGED_FLAG] = np.array([step > 0])
        outputs = dict(zip([o.name for o in current.get_outputs()], current.run(None, given)))
        logits = outputs[logits_name][:, -1]
        if chosen is None:
            token = np.where(finished, pad, np.argmax(logits, axis=-1)).astype(np.int64)
        else:
            token = np.asarray(chosen.tokens[step], np.int64)
        rows = None if chosen is None or chosen.parents is None else chosen.parents[step]
        presents = {pair.present: feeds[pair.past] if pair.static and step else
                    outputs[pair.present] if rows is None or pair.static else outputs[pair.present][rows]
                    for pair in export.caches}
        yield StepResult(step, token, logits, presents)
        finished |= np.isin(token, export.eos_token_ids)
        if chosen is None and finished.all():
            return
        feeds["input_ids"] = token[:, None].astype(feeds["input_ids"].dtype)
        typed = feeds.get("position_ids", token).dtype
        if "attention_mask" in feeds:
            mask = feeds["attention_mask"]
            feeds["attention_mask"] = np.concatenate([mask, np.ones((len(token), 1), mask.dtype)], axis=1)
            if "position_ids" in feeds:
                feeds["position_ids"] = positions(feeds["attention_mask"])[:, -1:].astype(typed)
        elif "position_ids" in feeds:
            feeds["position_ids"] = feeds["position_ids"][:, -1:] + 1
        for pair in export.caches:
            feeds[pair.past] = presents[pair.present]
