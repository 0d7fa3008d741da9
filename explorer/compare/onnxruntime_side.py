"""onnxruntime's side of a comparison: the model run by onnxruntime with every value explorer recorded exposed
as an output (bodies included, see expose.py), in chunks of at most `max_exposed` values. A chunk onnxruntime
refuses is bisected until the values it cannot return are isolated and listed with its reason."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model import Model
from .expose import at_iteration, exposed_model
from .onnxruntime import run_onnxruntime, short_error
from .recording import Produced, Recording, is_summary

MAX_EXPOSED = 512

Runner = Callable[[Any, dict[str, Any]], dict[str, Any]]


def onnxruntime_recording(model: Model, feeds: dict[str, Any], like: Recording, *,
                          max_exposed: int = MAX_EXPOSED, runner: Runner = run_onnxruntime) -> Recording:
    """onnxruntime's values of every value `like` (explorer's recording of `model`) holds, at the same keys and
    iterations. The recording's `error` says why onnxruntime gave nothing at all."""
    recording = Recording("onnxruntime", "onnxruntime", model=model)
    try:
        recording.outputs = runner(model, feeds)
    except ImportError:
        recording.error = "onnxruntime is not installed (pip install onnxruntime)"
        return recording
    except Exception as exc:  # noqa: BLE001 - whatever onnxruntime refuses is reported, not raised
        recording.error = f"onnxruntime cannot run the model: {short_error(exc)}"
        return recording
    wanted = [p for p in like.in_order() if not all(is_summary(v) for v in p.values.values())]
    for start in range(0, len(wanted), max(1, max_exposed)):
        _collect(model, feeds, wanted[start:start + max_exposed], recording, runner)
    return recording


def _collect(model: Model, feeds: dict[str, Any], chunk: list[Produced], recording: Recording,
             runner: Runner) -> None:
    exposed, refused = exposed_model(model, chunk)
    recording.missing.update(refused)
    if not exposed.outputs:
        return
    try:
        results = runner(exposed.proto, feeds)
    except Exception as exc:  # noqa: BLE001 - bisect down to the values onnxruntime refuses
        chunk = [p for p in chunk if p.key not in refused]
        if len(chunk) == 1:
            recording.missing[chunk[0].key] = f"onnxruntime cannot return it: {short_error(exc)}"
            return
        half = len(chunk) // 2
        _collect(model, feeds, chunk[:half], recording, runner)
        _collect(model, feeds, chunk[half:], recording, runner)
        return
    by_key = {p.key: p for p in chunk}
    for output, key in exposed.outputs.items():
        source = by_key[key]
        entry = recording.produced[key] = Produced(source.node, source.op_type, source.name, source.position)
        stacked = results.get(output)
        for iteration, order in source.order.items():
            try:
                entry.values[iteration] = at_iteration(stacked, iteration)
            except (IndexError, TypeError):
                continue  # onnxruntime ran that loop fewer times: the iteration is missing on its side
            entry.order[iteration] = order
