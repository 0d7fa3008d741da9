"""onnxruntime driving the same generation loop on the export's own files, step by step in Python: the first step
on the prompt, then each token with the previous step's `present.*` fed as `past_key_values.*`, the mask one
position longer and the positions counted along it, greedy choice, the pad id once a sequence ended."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from .decoder import ENCODER_MASK, ENCODER_STATES, MERGED_FLAG, DecoderExport
from .start import positions
from .wrap import FINISHED


@dataclass
class StepResult:
    """One decode step of a side: the token chosen per batch row, the last position's logits, the caches out."""

    step: int
    token: np.ndarray  # [batch]
    logits: np.ndarray  # [batch, vocab]
    presents: dict[str, np.ndarray]


def onnxruntime_sessions(export: DecoderExport) -> tuple[Any, Any, Any]:
    """onnxruntime's sessions of the first step's decoder, of the later steps' (the same one when one file) and
    of the encoder (None for a decoder alone)."""
    import onnxruntime as ort

    def session(proto: onnx.ModelProto) -> ort.InferenceSession:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        return ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])

    later = session(export.later)
    return ((session(export.first) if export.first is not None else later), later,
            None if export.encoder is None else session(export.encoder))


def onnxruntime_steps(export: DecoderExport, first: Mapping[str, np.ndarray], max_new_tokens: int,
                      sessions: tuple[Any, Any, Any] | None = None,
                      encoder: Mapping[str, np.ndarray] | None = None) -> Iterator[StepResult]:
    """The steps of onnxruntime's generation (see the module docstring), on `sessions` when given; an
    encoder-decoder's encoder runs once on `encoder` (its inputs), its states and mask fed to every step, and
    the cross-attention caches of the first step kept."""
    first_session, later, encoder_session = sessions or onnxruntime_sessions(export)
    feeds = {k: v for k, v in first.items() if k != FINISHED}
    if encoder_session is not None:
        feeds[ENCODER_STATES] = encoder_session.run(None, dict(encoder or {}))[0]
        if encoder and "attention_mask" in encoder:
            feeds[ENCODER_MASK] = encoder["attention_mask"]
    finished = np.zeros(feeds["input_ids"].shape[0], bool)
    pad = export.pad_token_id or 0
    logits_name = export.logits_name()
    for step in range(max_new_tokens):
        current = first_session if step == 0 else later
        names = [i.name for i in current.get_inputs()]
        given = {name: feeds[name] for name in names if name in feeds}
        if MERGED_FLAG in names:
            given[MERGED_FLAG] = np.array([step > 0])
        outputs = dict(zip([o.name for o in current.get_outputs()], current.run(None, given)))
        logits = outputs[logits_name][:, -1]
        token = np.where(finished, pad, np.argmax(logits, axis=-1)).astype(np.int64)
        presents = {pair.present: feeds[pair.past] if pair.static and step else outputs[pair.present]
                    for pair in export.caches}
        yield StepResult(step, token, logits, presents)
        finished |= np.isin(token, export.eos_token_ids)
        if finished.all():
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
