"""Every differential case, gathered from the per-family tables (cases_<family>.py, each with `cases()`)."""
from __future__ import annotations

import importlib
from collections import defaultdict
from functools import cache
from pathlib import Path

from .harness import Case

HERE = Path(__file__).parent


@cache
def all_cases() -> tuple[Case, ...]:
    found: list[Case] = []
    for path in sorted(HERE.glob("cases_*.py")):
        module = importlib.import_module(f"{__package__}.{path.stem}")
        found.extend(module.cases())
    return tuple(found)


@cache
def _by_operator() -> dict[tuple[str, str], list[Case]]:
    grouped: dict[tuple[str, str], list[Case]] = defaultdict(list)
    for case in all_cases():
        grouped[(case.domain, case.op)].append(case)
    return grouped


def cases_of(domain: str, op: str) -> list[Case]:
    """The cases of one operator."""
    return _by_operator().get((domain, op), [])


def batches() -> dict[tuple[str, str, int], list[Case]]:
    """Cases grouped by (domain, op, version): each group is one model."""
    grouped: dict[tuple[str, str, int], list[Case]] = defaultdict(list)
    for case in all_cases():
        grouped[case.key].append(case)
    return dict(sorted(grouped.items()))
