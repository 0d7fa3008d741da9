"""onnxruntime's side of a comparison: the model run by onnxruntime (in a child process under a wall-clock
limit, see explorer/judge/judge.py) with every value explorer recorded exposed as an output (bodies included, see
expose.py), in chunks of at most `max_exposed` values, the first with the graph outputs: one run of onnxruntime
for a model of fewer values. A chunk onnxruntime refuses is bisected until the values it cannot return are isolated
and listed with its reason.

onnxruntime's values may take as much memory as explorer's values (its copies where explorer's are views among
them) and its child holds a run's values while it runs: so that a comparison holds at most twice what explorer's run
holds, onnxruntime's values stay in memory up to half of the memory explorer's values hold and go to disk past it
(as they arrive), and each of its runs returns at most that half."""
from __future__ import annotations

import mmap
from typing import Any

import numpy as np

from ..budgets import MAX_EXPOSED
from ..judge.judge import Keep, NoVerdict, run_onnxruntime
from ..limits import Limits
from ..model.model import Model
from ..trace.spill import RunFolder, removed_with
from .expose import at_iteration, exposed_model
from .recording import Key, Produced, Recording, is_summary

BISECTED = ("refused", "crash")  # answers that may come from one value; others (timeout, memory) end the run
KEPT_IN_MEMORY = 64 << 10  # smaller arrays stay in memory when the others go to disk
SHARE_FLOOR = 8 << 20  # onnxruntime's values of a model whose values take less stay in memory, in one run


def onnxruntime_recording(model: Model, feeds: dict[str, Any], like: Recording, *, max_exposed: int = MAX_EXPOSED,
                          timeout: float | None = None, limits: Limits | None = None) -> Recording:
    """onnxruntime's values of every value `like` (explorer's recording of `model`) holds, at the same keys and
    iterations. The recording's `error` says why onnxruntime gave nothing at all. The graph outputs come with the
    first chunk of values, in one run; when that run fails, from a run of the model as given, the chunks then
    asked one by one."""
    recording = Recording("onnxruntime", "onnxruntime", model=model)
    if like.limit_hit:
        recording.error = (f"not run: explorer's own run stopped at a limit ({like.error}); onnxruntime has no "
                           "such bound")
        return recording
    wanted = [p for p in like.in_order() if not all(is_summary(v) for v in p.values.values())]
    chunks, keep = _plan(wanted, recording, max(1, max_exposed), limits)
    failed = _with_outputs(model, feeds, chunks[0], recording, timeout, keep) if chunks else None
    if failed is None and chunks:
        chunks = chunks[1:]
    else:
        try:
            recording.outputs = run_onnxruntime(model.as_given(), feeds, timeout=timeout)
        except NoVerdict as exc:
            recording.error = str(exc)
            return recording
        if failed is not None and failed.kind not in BISECTED:  # asked again, it would end the same way
            for p in wanted:
                recording.missing.setdefault(p.key, str(failed))
            return recording
    for k, chunk in enumerate(chunks):
        try:
            _collect(model, feeds, chunk, recording, timeout, keep)
        except NoVerdict as exc:
            for p in (p for later in chunks[k:] for p in later):
                recording.missing.setdefault(p.key, str(exc))
            break
    return recording


def _plan(wanted: list[Produced], recording: Recording, count: int,
          limits: Limits | None) -> tuple[list[list[Produced]], Keep | None]:
    """The chunks the values are asked in, and where onnxruntime's arrays go as they arrive (None: memory)."""
    keep = None
    share = max(SHARE_FLOOR, _held(wanted) // 2)
    budget = share if sum(_size(p) for p in wanted) > share else None
    if budget is not None:
        recording.spill = RunFolder((limits or Limits()).trace_disk_bytes)
        removed_with(recording, recording.spill)
        keep = _keeper(recording.spill, share)
    # a value whose shape changes from one iteration to the next cannot be stacked as a loop's output: asked
    # alone, after the others, it costs one run instead of a bisection through the others
    uneven = {p.key for p in wanted if len({np.shape(v) for v in p.values.values()}) > 1}
    chunks = _chunks([p for p in wanted if p.key not in uneven], count, budget)
    return chunks + [[p] for p in wanted if p.key in uneven], keep


def _size(p: Produced) -> int:
    return sum(v.nbytes for v in p.values.values() if isinstance(v, np.ndarray))


def _held(wanted: list[Produced]) -> int:
    """The memory explorer's values hold: each array they are views of counted once, those on disk not."""
    roots: dict[int, int] = {}
    for p in wanted:
        for value in p.values.values():
            root = value
            while isinstance(root, np.ndarray) and isinstance(root.base, np.ndarray):
                root = root.base
            if isinstance(root, np.ndarray) and not (isinstance(root.base, memoryview)
                                                     and isinstance(root.base.obj, mmap.mmap)):
                roots[id(root)] = root.nbytes
    return sum(roots.values())


def _chunks(wanted: list[Produced], count: int, budget: int | None) -> list[list[Produced]]:
    """The values in order, in chunks of at most `count` values and (when given) `budget` bytes, each chunk at
    least one value."""
    chunks: list[list[Produced]] = []
    size = 0
    for p in wanted:
        bytes_ = _size(p)
        if not chunks or len(chunks[-1]) >= count or (budget is not None and size + bytes_ > budget):
            chunks.append([])
            size = 0
        chunks[-1].append(p)
        size += bytes_
    return chunks


def _keeper(folder: RunFolder, share: int) -> Keep:
    """Each array's bytes kept in memory up to `share` bytes in all, past it written to the folder as they
    arrive (memory holds one at a time)."""
    held = 0

    def keep(buffer: memoryview) -> Any:
        nonlocal held
        if buffer.nbytes < KEPT_IN_MEMORY or held + buffer.nbytes <= share:
            held += buffer.nbytes
            return buffer
        stored = folder.store(np.frombuffer(buffer, np.uint8))
        return buffer if stored is None else stored  # past the disk's limit: in memory
    return keep


def _with_outputs(model: Model, feeds: dict[str, Any], chunk: list[Produced], recording: Recording,
                  timeout: float | None, keep: Keep | None) -> NoVerdict | None:
    """The graph outputs and the chunk's values in one run; why onnxruntime gave none (nothing kept then)."""
    exposed, refused = exposed_model(model, chunk)
    outputs = [o.name for o in model.graph.output]
    try:
        results = run_onnxruntime(exposed.proto, feeds, list(dict.fromkeys([*outputs, *exposed.outputs])),
                                  timeout=timeout, keep=keep)
    except NoVerdict as exc:
        return exc
    recording.outputs = {name: results[name] for name in outputs}
    recording.missing.update(refused)
    _keep(exposed.outputs, results, chunk, recording)
    return None


def _collect(model: Model, feeds: dict[str, Any], chunk: list[Produced], recording: Recording,
             timeout: float | None, keep: Keep | None) -> None:
    exposed, refused = exposed_model(model, chunk)
    recording.missing.update(refused)
    if not exposed.outputs:
        return
    try:
        results = run_onnxruntime(exposed.proto, feeds, list(exposed.outputs), timeout=timeout, keep=keep)
    except NoVerdict as exc:
        if exc.kind not in BISECTED:
            raise
        chunk = [p for p in chunk if p.key not in refused]
        if len(chunk) == 1:
            recording.missing[chunk[0].key] = f"onnxruntime cannot return it: {exc}"
            return
        half = len(chunk) // 2
        _collect(model, feeds, chunk[:half], recording, timeout, keep)
        _collect(model, feeds, chunk[half:], recording, timeout, keep)
        return
    _keep(exposed.outputs, results, chunk, recording)


def _keep(outputs: dict[str, Key], results: dict[str, Any], chunk: list[Produced], recording: Recording) -> None:
    """onnxruntime's exposed values placed at the keys and iterations of explorer's."""
    by_key = {p.key: p for p in chunk}
    for output, key in outputs.items():
        source = by_key[key]
        entry = recording.produced[key] = Produced(source.node, source.op_type, source.name, source.position)
        stacked = results.get(output)
        for iteration, order in source.order.items():
            try:
                entry.values[iteration] = at_iteration(stacked, iteration)
            except (IndexError, TypeError):
                continue  # onnxruntime ran that loop fewer times: the iteration is missing on its side
            entry.order[iteration] = order
