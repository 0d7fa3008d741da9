"""The mutation check of the kernels (tools/mutate_kernels.py): each mutant's line is still in its kernel, and (slow,
`python -m pytest -m slow tests/executor/test_mutation.py`) the differential tests of its family fail on every mutant."""
from __future__ import annotations

import pytest
from mutate_kernels import MUTANTS, ROOT, apply, check

from explorer.executor.ops import FAMILIES

FAMILY_NAMES = {family.__name__.rsplit(".", 1)[1] for family in FAMILIES}


def test_every_mutant_applies_to_a_kernel_family(tmp_path):
    for mutant in MUTANTS:
        assert mutant.family in FAMILY_NAMES and mutant.path == f"explorer/executor/ops/{mutant.family}.py"
        copy = tmp_path / mutant.path
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text((ROOT / mutant.path).read_text())
        apply(mutant, tmp_path)  # its line is there once
        assert copy.read_text() != (ROOT / mutant.path).read_text()
    assert len({m.family for m in MUTANTS}) >= 10


@pytest.mark.slow
def test_the_differential_tests_kill_every_mutant():
    outcomes = check(MUTANTS)
    assert all(outcome == "killed" for outcome in outcomes.values()), \
        {f"{m.family}: {m.what}": outcome for m, outcome in outcomes.items() if outcome != "killed"}
