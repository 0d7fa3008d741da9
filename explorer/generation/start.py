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


def first_inputs(export: DecoderExport, prompt: np.ndarray | None = None,
                 given: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The decoder's inputs at the first step: `given` ones (e.g. from an .npz) completed from `prompt`."""
    feeds = {k: np.asarray(v) for k, v in (given or {}).items()}
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
    for name in ("input_ids", "attention_mask", "position_ids"):  # as the decoder declares them (int32 or int64)
        if name in feeds and name in declared:
            feeds[name] = feeds[name].astype(helper.tensor_dtype_to_np_dtype(
                declared[name].type.tensor_type.elem_type or onnx.TensorProto.INT64))
    missing = [name for name in export.input_names() if name not in feeds]
    if missing:
        raise FeedError(f"the first step needs inputs {', '.join(missing)}: pass them with --inputs")
    feeds[FINISHED] = np.zeros(batch, bool)
    return feeds
