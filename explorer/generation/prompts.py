"""Generations over many prompts, each against the same other side, worst first: where tokens part earliest,
then the largest logit error."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FeedError
from ..limits import Limits
from .against import ATOL, RTOL, generate_against
from .decoder import DecoderExport, open_decoder
from .run import generate
from .strategy import Strategy

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


def _worst_first(row: dict[str, Any]) -> tuple[float, float]:
    diff = row["first_token_diff"]
    return (diff if diff is not None else float("inf"), -max(row["logit_error"], default=0.0))


def sweep_prompts(model: str | Path, prompts: Mapping[str, Sequence[int]], against: str, *,
                  with_past: str | Path | None = None, encoder: str | Path | None = None, max_new_tokens: int = 20,
                  atol: float = ATOL, rtol: float = RTOL, strategy: Strategy | None = None,
                  limits: Limits | None = None) -> list[dict[str, Any]]:
    """One generation per prompt against `against` (as `generate_against` takes it): a row per prompt with its
    name, tokens, the other side's, the first token that differs, the largest logit error and the first cache
    departure, worst first; each generation chooses its tokens by `strategy` (greedy by default)."""
    export: DecoderExport = open_decoder(model, with_past, encoder)
    rows = []
    for name, prompt in prompts.items():
        generation = generate(export, list(prompt), max_new_tokens=max_new_tokens, strategy=strategy, limits=limits)
        report = generate_against(generation, against, atol=atol, rtol=rtol).to_json()
        rows.append({"prompt": name, "ids": list(prompt), **report})
    return sorted(rows, key=_worst_first)
