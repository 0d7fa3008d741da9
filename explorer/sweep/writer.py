"""Rows written as they come: a JSON file that is a valid array after every row (each row goes in before the
closing bracket), and a CSV beside it with one column per dim, per output error and per part of the first
divergence. Infinite and NaN errors are written as "inf" and "nan" (JSON has no such numbers). Both are written
to temporary files beside their targets and moved into place when the sweep ends, finished or stopped
(atomic_write.py): files of the same names are replaced only then, never emptied first."""
from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import IO, Any

from ..files.atomic_write import Staged
from .rows import verdict_of

_CLOSE = b"\n]\n"


def csv_path(out: str | os.PathLike) -> Path:
    """Where the CSV of the rows written to `out` goes: beside it, with the suffix .csv."""
    path = Path(out)
    return path.with_suffix(".csv") if path.suffix.lower() != ".csv" else path.with_suffix(".csv.csv")


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class RowWriter:
    """Appends rows to `out` (JSON) and to its CSV (see csv_path). `dims` and `outputs` name the CSV's columns."""

    def __init__(self, out: str | os.PathLike, dims: list[str], outputs: list[str]) -> None:
        self.path = Path(out)
        self.csv_path = csv_path(out)
        self._dims, self._outputs = dims, outputs
        self._rows = 0
        self._files = Staged()
        try:
            self._json: IO[bytes] = self._files.open(self.path, "w+b")
            self._json.write(b"[" + _CLOSE)
            self._json.flush()
            self._csv_file: IO[str] = self._files.open(self.csv_path, "w", newline="")
        except BaseException:
            self._files.discard()
            raise
        self._csv = csv.writer(self._csv_file)
        self._csv.writerow(["index", "input", "seed", "file", *(f"dim {d}" for d in dims), "verdict", "status",
                            "max_abs", "max_rel", *(f"{kind} {o}" for o in outputs for kind in ("max_abs", "max_rel")),
                            "divergence node", "divergence iteration", "divergence value", "nonfinite node",
                            "nonfinite iteration", "seconds", "message"])
        self._csv_file.flush()

    def write(self, row: dict[str, Any]) -> None:
        text = json.dumps(_plain(row), allow_nan=False).encode()
        self._json.seek(-len(_CLOSE), os.SEEK_END)
        self._json.write((b",\n" if self._rows else b"\n") + text + _CLOSE)
        self._json.flush()
        self._rows += 1
        first, bad = row["first_divergence"] or {}, row["first_nonfinite"] or {}
        outputs = row["outputs"]
        self._csv.writerow(_plain([
            row["index"], row["input"], row["seed"], row["file"] or "", *(row["dims"].get(d, "") for d in self._dims),
            verdict_of(row), row["status"], row["max_abs"], row["max_rel"],
            *(outputs.get(o, {}).get(kind) for o in self._outputs for kind in ("max_abs", "max_rel")),
            first.get("node", ""), first.get("iteration", ""), first.get("value", ""), bad.get("node", ""),
            bad.get("iteration", ""), round(row["seconds"], 6), row["message"]]))
        self._csv_file.flush()

    def close(self) -> None:
        """Moves both files into place with the rows written so far (a sweep stopped early keeps them)."""
        try:
            self._files.commit()
        except BaseException:
            self._files.discard()
            raise
