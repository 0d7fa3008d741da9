"""onnxruntime's side of a comparison: the model run by onnxruntime (in a child process under a wall-clock
limit, see explorer/judge/judge.py) with every value explorer recorded exposed as an output (bodies included, see
expose.py), in chunks of at most `max_exposed` values. A chunk onnxruntime refuses is bisected until the values
it cannot return are isolated and listed with its reason."""
from __future__ import annotations

from typing import Any

from ..budgets import MAX_EXPOSED
from ..judge.judge import NoVerdict, run_onnxruntime
from ..model.model import Model
from .expose import at_iteration, exposed_model
from .recording import Produced, Recording, is_summary

BISECTED = ("refused", "crash")  # answers that may come from one value; others (timeout, memory) end the run


def onnxruntime_recording(model: Model, feeds: dict[str, Any], like: Recording, *, max_exposed: int = MAX_EXPOSED,
                          timeout: float | None = None) -> Recording:
    """onnxruntime's values of every value `like` (explorer's recording of `model`) holds, at the same keys and
    iterations. The recording's `error` says why onnxruntime gave nothing at all."""
    recording = Recording("onnxruntime", "onnxruntime", model=model)
    if like.limit_hit:
        recording.error = (f"not run: explorer's own run stopped at a limit ({like.error}); onnxruntime has no "
                           "such bound")
        return recording
    try:
        recording.outputs = run_onnxruntime(model.as_given(), feeds, timeout=timeout)
    except NoVerdict as exc:
        recording.error = str(exc)
        return recording
    wanted = [p for p in like.in_order() if not all(is_summary(v) for v in p.values.values())]
    for start in range(0, len(wanted), max(1, max_exposed)):
        try:
            _collect(model, feeds, wanted[start:start + max_exposed], recording, timeout)
        except NoVerdict as exc:
            for p in wanted[start:]:
                recording.missing.setdefault(p.key, str(exc))
            break
    return recording


def _collect(model: Model, feeds: dict[str, Any], chunk: list[Produced], recording: Recording,
             timeout: float | None) -> None:
    exposed, refused = exposed_model(model, chunk)
    recording.missing.update(refused)
    if not exposed.outputs:
        return
    try:
        results = run_onnxruntime(exposed.proto, feeds, list(exposed.outputs), timeout=timeout)
    except NoVerdict as exc:
        if exc.kind not in BISECTED:
            raise
        chunk = [p for p in chunk if p.key not in refused]
        if len(chunk) == 1:
            recording.missing[chunk[0].key] = f"onnxruntime cannot return it: {exc}"
            return
        half = len(chunk) // 2
        _collect(model, feeds, chunk[:half], recording, timeout)
        _collect(model, feeds, chunk[half:], recording, timeout)
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
