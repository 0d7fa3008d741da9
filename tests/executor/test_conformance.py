"""Every ONNX backend node case through explorer.run, at the case's own tolerances: the cases explorer runs on its own
kernels and those that reach an operator still run by the onnx.reference fallback (ops.REFERENCE_FALLBACK) are
separate tests, counted apart after the run (conftest.py)."""
from __future__ import annotations

import pytest

from tests.support.conformance import all_cases, fallback_operators, known_failures, run_case

LISTED = known_failures()
ON_FALLBACK = sorted(name for name in all_cases() if fallback_operators(name))
ON_OWN_KERNELS = sorted(set(all_cases()) - set(ON_FALLBACK))


def test_known_failures_name_real_cases_and_how_they_fail():
    unknown = sorted(set(LISTED) - set(all_cases()))
    assert not unknown, f"conformance_known_failures.txt names cases that do not exist: {unknown}"
    vague = sorted(name for name, known in LISTED.items() if not known.random and not (known.error and known.parts))
    assert not vague, f"listed without the exception and message they fail with (`=> Error: message`): {vague}"


def test_case_count_is_what_onnx_ships():
    assert len(all_cases()) >= 1884


def check(name: str) -> None:
    """The case passes, or fails exactly as listed (random ones: shapes and dtypes only)."""
    known = LISTED.get(name)
    if known is None:
        run_case(name)
        return
    if known.random:
        run_case(name, values=False)  # sampled values cannot match another generator's; shapes and dtypes must
        return
    try:
        run_case(name)
    except Exception as exc:  # noqa: BLE001 - compared with the listed failure below
        assert known.matches(exc), \
            f"{name} fails otherwise than listed ({known.error}: {' | '.join(known.parts)}):\n{type(exc).__name__}: {exc}"
        return
    pytest.fail(f"{name} passes now: remove it from tests/support/conformance_known_failures.txt")


@pytest.mark.parametrize("name", ON_OWN_KERNELS)
def test_backend_case_on_own_kernels(name: str):
    check(name)


@pytest.mark.parametrize("name", ON_FALLBACK)
def test_backend_case_on_the_reference_fallback(name: str):
    """Cases reaching an operator explorer still runs through onnx.reference (named in the test's failure)."""
    check(name)
