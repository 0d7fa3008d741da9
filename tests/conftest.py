import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# CI draws the same examples on every run, so a red build is reproducible and never a dice roll.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _app_waits_for_onnxruntime(monkeypatch):
    """AppTests see onnxruntime's answers in the run that asks for them; tests of the progress line and of cancel
    set WAIT_S back to 0."""
    from explorer.ui import jobs

    monkeypatch.setattr(jobs, "WAIT_S", 600.0)


@pytest.fixture(autouse=True)
def fresh_caches():
    """Every test starts from empty Streamlit caches, so an AppTest never sees a model, run or drawing that an
    earlier test left behind."""
    import streamlit as st

    from explorer.ui.cache import forget_finished_runs

    st.cache_data.clear()
    st.cache_resource.clear()
    forget_finished_runs()


@pytest.fixture(scope="session")
def sweep_scheduler():
    """The address of a local Dask cluster of two worker processes, configured as a sweep configures its own,
    shared by the sweep tests of this process (its start-up is the cost)."""
    from explorer.sweep.cluster import local_cluster

    cluster = local_cluster(2)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()
