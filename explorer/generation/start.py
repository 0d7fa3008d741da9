"""The first step's inputs of a generation: the prompt ids, a mask of ones, positions counted along the mask (1
where masked, as transformers and optimum make them) and empty caches of the declared layout."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
from onnx import helper

from ..errors import FeedError
from .decoder import DecoderExport
from .wrap import FINISHED


def positions(mask: np.ndarray) -> np.ndarray:
    """Position ids from an attention mask: its cumulative sum less one, 1 where masked."""
    counted = np.cumsum(mask, axis=1) - 1
    return np.where(mask == 0, 1, counted).astype(np.int64)


def _empty_cache(value: onnx.ValueInfoProto, batch: int) -> np.ndarray:
    """A cache of no positions: [batch, heads, 0, head size] as the decoder declares it (its third axis empty)."""
    dims = value.type.tensor_type.shape.dim
    shape = []
    for axis, dim in enumerate(dims):
        if axis == 0:
            shape.append(batch)
        elif dim.HasField("dim_value"):
            shape.append(dim.dim_value)
        elif "past" in dim.dim_param or "sequence" in dim.dim_param:
            shape.append(0)
        else:
            raise FeedError(f"input {value.name!r}: axis {axis} ({dim.dim_param or 'unnamed'}) has no size the "
                            "decoder declares; pass the first step's inputs with --inputs")
    if shape.count(0) != 1:
        raise FeedError(f"input {value.name!r}: cannot tell its positions' axis from {shape}")
    dtype = helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
    return np.zeros(shape, dtype)


def _typed(feeds: dict[str, np.ndarray], model: onnx.ModelProto) -> None:
    """Integer ids, masks and positions as `model` declares them (int32 or int64)."""
    declared = {i.name: i for i in model.graph.input}
    for name in ("input_ids", "attention_mask", "position_ids"):
        if name in feeds and name in declared:
            feeds[name] = feeds[name].astype(helper.tensor_dtype_to_np_dtype(
                declared[name].type.tensor_type.elem_type or onnx.TensorProto.INT64))


def encoder_inputs(export: DecoderExport, prompt: np.ndarray | None,
                   given: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The encoder's inputs by its own names: `given` ones (Whisper's input_features, ...), else the prompt as
    input_ids with a mask of ones."""
    assert export.encoder is not None
    names = [i.name for i in export.encoder.graph.input]
    feeds = {k: np.asarray(v) for k, v in given.items() if k in names}
    if "input_ids" in names and "input_ids" not in feeds:
        if prompt is None:
            raise FeedError("no prompt: pass the prompt ids or an input_ids array")
        feeds["input_ids"] = np.asarray(prompt, np.int64).reshape(-1, prompt.shape[-1])
    if "attention_mask" in names and "attention_mask" not in feeds:
        feeds["attention_mask"] = np.ones(feeds["input_ids"].shape, np.int64)
    _typed(feeds, export.encoder)
    missing = [name for name in names if name not in feeds]
    if missing:
        raise FeedError(f"the encoder needs inputs {', '.join(missing)}: pass them with --inputs")
    return feeds


def first_inputs(export: DecoderExport, prompt: np.ndarray | None = None,
                 given: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The decoder's inputs at the first step: `given` ones (e.g. from an .npz) completed from `prompt`; for an
    encoder-decoder, its ids are `decoder_input_ids` (else the config's decoder_start_token_id)."""
    feeds = {k: np.asarray(v) for k, v in (given or {}).items()}
    if export.encoder is not None:
        batch = next(iter(encoder_inputs(export, prompt, feeds).values())).shape[0]
        start = export.decoder_start_token_id if export.decoder_start_token_id is not None else export.pad_token_id
        feeds = {"input_ids": feeds.get("decoder_input_ids", np.full((batch, 1), start or 0, np.int64))}
    if "input_ids" not in feeds:
        if prompt is None:
            raise FeedError("no prompt: pass the prompt ids or an input_ids array")
        feeds["input_ids"] = np.asarray(prompt, np.int64).reshape(-1, prompt.shape[-1])
    ids = feeds["input_ids"]
    batch = ids.shape[0]
    if export.has_input("attention_mask") and "attention_mask" not in feeds:
        feeds["attention_mask"] = np.ones(ids.shape, np.int64)
    if export.has_input("position_ids") and "position_ids" not in feeds:
        mask = feeds.get("attention_mask", np.ones(ids.shape, np.int64))
        feeds["position_ids"] = positions(mask)
    declared = {i.name: i for i in export.later.graph.input}
    for pair in export.caches:
        if pair.past not in feeds:
            feeds[pair.past] = _empty_cache(declared[pair.past], batch)
    _typed(feeds, export.later)
    missing = [name for name in export.input_names() if name not in feeds]
    if missing:
        raise FeedError(f"the first step needs inputs {', '.join(missing)}: pass them with --inputs")
    feeds[FINISHED] = np.zeros(batch, bool)
    return feeds
