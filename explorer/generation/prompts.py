"""Generations over many prompts (and a grid of sampling seeds), each against the same other side, worst first:
where tokens part earliest, then the largest logit error. Each generation is a task a worker runs (the command
line runs them on Dask, as `explorer sweep` runs its inputs)."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ExplorerError, FeedError, failure_text
from ..limits import Limits
from .against import ATOL, RTOL, generate_against
from .decoder import DecoderExport, open_decoder
from .run import generate
from .strategy import Sampling, Strategy

PROMPT_FILES = (".json", ".npy", ".txt")


def _ids(value: object, where: str) -> list[int]:
    array = np.asarray(value)
    if array.dtype.kind not in "iu" or array.ndim != 1 or not array.size:
        raise FeedError(f"{where}: a prompt is a non-empty list of token ids")
    return [int(v) for v in array]


def read_prompts(path: str | Path) -> dict[str, list[int]]:
    """Prompts by name: a folder of prompt files (.json lists, .npy arrays, .txt comma-separated ids; the file's
    stem names it), or one .json file holding a list of prompts (named by their index) or a name -> prompt map."""
    path = Path(path)
    if path.is_dir():
        files = sorted(f for f in path.iterdir() if f.suffix in PROMPT_FILES)
        if not files:
            raise FeedError(f"{path}: no prompt files ({', '.join(PROMPT_FILES)})")
        prompts = {}
        for file in files:
            if file.suffix == ".npy":
                value: object = np.load(file, allow_pickle=False)
            elif file.suffix == ".txt":
                value = [int(v) for v in file.read_text().replace(",", " ").split()]
            else:
                value = json.loads(file.read_text())
            prompts[file.stem] = _ids(value, str(file))
        return prompts
    data = json.loads(path.read_text())
    if isinstance(data, Mapping):
        return {str(name): _ids(value, f"{path}: {name}") for name, value in data.items()}
    if isinstance(data, Sequence):
        return {str(k): _ids(value, f"{path}: prompt {k}") for k, value in enumerate(data)}
    raise FeedError(f"{path}: expected a list of prompts or a name -> prompt map")


def _worst_first(row: dict[str, Any]) -> tuple[bool, float, float]:
    diff = row.get("first_token_diff")
    return ("error" not in row, diff if diff is not None else float("inf"),
            -max(row.get("logit_error") or [], default=0.0))


@dataclass(frozen=True)
class PromptTask:
    """One generation of a prompt sweep as a worker runs it: the prompt (its name and ids), the export's files,
    the other side, how tokens are chosen (a sampling seed of the grid is in `strategy`) and the limits."""

    name: str
    ids: tuple[int, ...]
    model: str
    against: str
    with_past: str | None = None
    encoder: str | None = None
    max_new_tokens: int = 20
    atol: float = ATOL
    rtol: float = RTOL
    strategy: Strategy | None = None
    limits: Limits | None = None


_exports: dict[tuple[str, str | None, str | None], DecoderExport] = {}  # opened once per worker process


def prompt_row(task: PromptTask) -> dict[str, Any]:
    """The row of one prompt: its name, ids (and seed), tokens, the other side's, the first token that differs,
    the logit errors and the first cache departure; what went wrong as its `error` instead."""
    row: dict[str, Any] = {"prompt": task.name, "ids": list(task.ids)}
    if isinstance(task.strategy, Sampling):
        row["seed"] = task.strategy.seed
    try:
        key = (task.model, task.with_past, task.encoder)
        export = _exports.get(key) or _exports.setdefault(key, open_decoder(*key))
        generation = generate(export, list(task.ids), max_new_tokens=task.max_new_tokens, strategy=task.strategy,
                              limits=task.limits)
        row.update(generate_against(generation, task.against, atol=task.atol, rtol=task.rtol).to_json())
    except ExplorerError as exc:
        row["error"] = failure_text(exc)
    return row


def prompt_tasks(model: str | Path, prompts: Mapping[str, Sequence[int]], against: str, *,
                 seeds: Sequence[int] | None = None, with_past: str | Path | None = None,
                 encoder: str | Path | None = None, max_new_tokens: int = 20, atol: float = ATOL,
                 rtol: float = RTOL, strategy: Strategy | None = None,
                 limits: Limits | None = None) -> list[PromptTask]:
    """A task per prompt, or per prompt and seed of `seeds` (each a Sampling of `strategy`'s filters)."""
    if seeds and not isinstance(strategy, Sampling):
        raise FeedError("a grid of seeds draws tokens: give the sampling settings (--sample) with the seeds")
    strategies = [replace(strategy, seed=int(seed)) for seed in seeds] if seeds and isinstance(
        strategy, Sampling) else [strategy]
    return [PromptTask(name, tuple(int(i) for i in ids), str(model), against,
                       None if with_past is None else str(with_past), None if encoder is None else str(encoder),
                       max_new_tokens, atol, rtol, chosen, limits)
            for name, ids in prompts.items() for chosen in strategies]


def sweep_prompts(model: str | Path, prompts: Mapping[str, Sequence[int]], against: str, *,
                  seeds: Sequence[int] | None = None, with_past: str | Path | None = None,
                  encoder: str | Path | None = None, max_new_tokens: int = 20, atol: float = ATOL,
                  rtol: float = RTOL, strategy: Strategy | None = None, limits: Limits | None = None,
                  mapper: Callable[[Callable[[PromptTask], dict[str, Any]], list[PromptTask]],
                                   Iterable[dict[str, Any]]] = map) -> list[dict[str, Any]]:
    """One generation per prompt (and per seed of `seeds`, sampling with `strategy`'s filters) against `against`
    (as `generate_against` takes it): a row each (`prompt_row`), worst first (failed ones, then the earliest token
    that differs, then the largest logit error). `mapper(prompt_row, tasks)` runs them: in this process by
    default; `explorer.sweep.cluster.mapped` runs them on Dask, as the command line does."""
    open_decoder(model, with_past, encoder)  # a model that cannot be opened fails here, once
    tasks = prompt_tasks(model, prompts, against, seeds=seeds, with_past=with_past, encoder=encoder,
                         max_new_tokens=max_new_tokens, atol=atol, rtol=rtol, strategy=strategy, limits=limits)
    return sorted(mapper(prompt_row, tasks), key=_worst_first)
