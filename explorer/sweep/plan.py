"""What a sweep runs: one Item per input, either random inputs made from (dims, seed) or a file read by path (an
.npz, or an ONNX test data set folder), each with where its reference values are when they come from files.
Items carry names and numbers only: the arrays are made or read where the item runs."""
from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import FeedError

TEST_DATA_SET = re.compile(r"test_data_set_(\d+)")


@dataclass(frozen=True)
class Item:
    """One input of a sweep. `dims` are the sizes of the symbolic dims random inputs are made with (a file's
    are read from its arrays where it runs); `reference` is the file or folder holding its reference values."""

    index: int
    label: str
    dims: tuple[tuple[str, int], ...] = ()
    seed: int | None = None
    path: str | None = None
    reference: str | None = None

    @property
    def dims_dict(self) -> dict[str, int]:
        return dict(self.dims)


def parse_numbers(text: str) -> list[int]:
    """Whole numbers >= 0 written as `0,1,2`, with inclusive ranges such as `8-12` among them (ValueError
    naming the part that is not)."""
    found: list[int] = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        try:
            first, last = int(low), int(high) if dash else int(low)
        except ValueError:
            raise ValueError(f"expected whole numbers such as 0,1,2 or 8-12, got {part.strip()!r}") from None
        if first < 0 or last < first:
            raise ValueError(f"expected numbers >= 0 and ranges low-high, got {part.strip()!r}")
        found.extend(range(first, last + 1))
    return found


def grid(dims: Mapping[str, Sequence[int]] | None = None, seeds: Sequence[int] | None = None) -> list[Item]:
    """Random inputs: every combination of the dims' sizes (in the order given) with every seed (default 0)."""
    dims = dict(dims or {})
    for name, sizes in dims.items():
        if not sizes:
            raise FeedError(f"dim {name!r} is given no sizes")
        if any(int(size) < 0 for size in sizes):
            raise FeedError(f"dim {name!r}: sizes are whole numbers >= 0, got {list(sizes)}")
    seeds = list(seeds) if seeds is not None else [0]
    if not seeds:
        raise FeedError("no seeds: give at least one")
    items: list[Item] = []
    for sizes in itertools.product(*(list(dict.fromkeys(int(s) for s in v)) for v in dims.values())):
        chosen = tuple(zip(dims, sizes))
        for seed in dict.fromkeys(int(s) for s in seeds):
            label = " ".join([*(f"{name}={size}" for name, size in chosen), f"seed {seed}"])
            items.append(Item(len(items), label, chosen, seed))
    return items


def input_files(folder: str | os.PathLike) -> list[Path]:
    """The inputs a folder holds: its .npz files and its ONNX test data sets (test_data_set_<n> folders with
    input_<i>.pb files), in name order (test data sets by number); the folder itself when it is one data set."""
    root = Path(folder)
    if not root.is_dir():
        raise FeedError(f"{str(root)!r} is not a folder of inputs" + ("" if root.exists() else " (it does not exist)"))
    if any(root.glob("input_*.pb")):
        return [root]
    found = [p for p in root.iterdir() if (p.is_file() and p.suffix == ".npz")
             or (p.is_dir() and TEST_DATA_SET.fullmatch(p.name))]
    if not found:
        raise FeedError(f"{str(root)!r} holds no .npz files and no test_data_set_<n> folders")
    return sorted(found, key=_name_order)


def _name_order(path: Path) -> tuple[str, int, str]:
    match = TEST_DATA_SET.fullmatch(path.name)
    return ("test_data_set", int(match.group(1)), "") if match else ("", 0, path.name)


def files(paths: Iterable[str | os.PathLike], references: str | os.PathLike | None = None) -> list[Item]:
    """One item per input file or test data set folder (kept even when missing: its row says so). With
    `references`, a folder of reference values: <references>/<name>.npz for an input <name>.npz (values keyed by
    ONNX value names), <references>/<set>/output_<i>.pb for a test data set <set> (the given folder itself when
    it holds them: a data set's own outputs)."""
    items: list[Item] = []
    for path in map(Path, paths):
        reference = None
        if references is not None:
            base = Path(references)
            own = base / path.name
            reference = str(base if path.is_dir() and base.resolve() == path.resolve() else own)
        items.append(Item(len(items), path.name, path=str(path), reference=reference))
    return items
