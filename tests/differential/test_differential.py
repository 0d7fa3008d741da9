"""explorer against onnxruntime on every case of every family table (tests/differential/cases_*.py)."""
from __future__ import annotations

import pytest

from .collect import batches
from .harness import check

BATCHES = batches()


@pytest.mark.parametrize("key", list(BATCHES), ids=lambda k: f"{k[0] + '.' if k[0] else ''}{k[1]}-{k[2]}")
def test_explorer_matches_onnxruntime(key):
    judged = check(BATCHES[key])
    assert judged, f"no case of {key} could be judged: onnxruntime lacks every dtype tried and no spec value given"
