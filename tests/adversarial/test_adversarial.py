"""The adversarial corpus: every case runs in a forked child under a memory cap and a wall-clock limit, and must
end in its expected outcome class: agreement with onnxruntime ("ok"), an explorer error of the expected class,
or the stated result of the tool (rendered, equivalent, inconclusive, a CLI exit code with a one-line error)."""
from __future__ import annotations

import pytest

from .cases import CASES, EXPECTED
from .harness import run_isolated


def test_the_corpus_is_broad():
    assert len(CASES) >= 60
    assert len(set(EXPECTED.values())) >= 10


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_ends_in_its_expected_outcome(name):
    outcome = run_isolated(CASES[name])
    assert outcome["class"] == EXPECTED[name], outcome["message"]
