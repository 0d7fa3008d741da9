import os

import pytest
from hypothesis import settings

# CI draws the same examples on every run, so a red build is reproducible and never a dice roll.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# `fresh_app`, which the tests of the app start from (autouse in tests/app and tests/hosting)
pytest_plugins = ["tests.support.app_fixtures"]


@pytest.fixture(scope="session")
def sweep_scheduler():
    """The address of a local Dask cluster of two worker processes, configured as a sweep configures its own,
    shared by the sweep tests of this process, in tests/sweep, compare, files and app (its start-up is the cost)."""
    from explorer.sweep.cluster import local_cluster

    cluster = local_cluster(2)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


CONFORMANCE_GROUPS = {"test_backend_case_on_own_kernels": "explorer's own kernels",
                      "test_backend_case_on_the_reference_fallback": "the onnx.reference fallback"}


def pytest_terminal_summary(terminalreporter) -> None:
    """The ONNX backend cases run on explorer's own kernels and those reaching the onnx.reference fallback, counted
    apart (tests/executor/test_conformance.py)."""
    from collections import Counter

    counts: Counter[tuple[str, str]] = Counter()
    for outcome in ("passed", "failed"):
        for report in terminalreporter.stats.get(outcome, []):
            test = getattr(report, "nodeid", "").rsplit("::", 1)[-1].split("[")[0]
            if getattr(report, "when", "") == "call" and test in CONFORMANCE_GROUPS:
                counts[(CONFORMANCE_GROUPS[test], outcome)] += 1
    if counts:
        terminalreporter.write_line("conformance: " + "; ".join(
            f"{counts[(group, 'passed')] + counts[(group, 'failed')]:,} cases on {group} "
            f"({counts[(group, 'passed')]:,} passed, {counts[(group, 'failed')]:,} failed)"
            for group in CONFORMANCE_GROUPS.values()))
