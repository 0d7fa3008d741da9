"""explorer against onnxruntime on every case of every family table (tests/differential/cases_*.py)."""
from __future__ import annotations

from collections import Counter

import pytest

from .collect import batches
from .harness import check

BATCHES = batches()


@pytest.mark.parametrize("key", list(BATCHES), ids=lambda k: f"{k[0] + '.' if k[0] else ''}{k[1]}-{k[2]}")
def test_explorer_matches_onnxruntime(key, record_property):
    tally: Counter[str] = Counter()
    try:
        judged = check(BATCHES[key], tally)
    finally:
        record_property("judges", dict(tally))  # conftest.py sums them per judge and prints the unjudged
    assert judged, f"no case of {key} could be judged"
