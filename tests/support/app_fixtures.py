"""The fixture every test of the app starts from, registered for the whole suite by tests/conftest.py: autouse in
tests/app and tests/hosting (their conftest.py), asked for with `@pytest.mark.usefixtures("fresh_app")` by an
AppTest elsewhere. Streamlit is imported only when a test asks for it."""
from __future__ import annotations

import pytest


@pytest.fixture
def fresh_app(monkeypatch):
    """Empty Streamlit caches, no optimization kept and no shared answer of a job (nor one started ahead), so an AppTest never sees a
    model, run, drawing, optimization or proof that an earlier test left behind; and onnxruntime's answers seen in the run that asks for them (tests of the progress line and of cancel set
    explorer.ui.jobs.WAIT_S back to 0)."""
    import streamlit as st

    from explorer.ui import cache, jobs

    monkeypatch.setattr(jobs, "WAIT_S", 600.0)
    st.cache_data.clear()
    st.cache_resource.clear()
    monkeypatch.setattr(jobs, "_answers", type(jobs._answers)(jobs.SHARED_KEEP))
    monkeypatch.setattr(jobs, "_ahead", type(jobs._ahead)(jobs.SHARED_KEEP))
    monkeypatch.setattr(cache, "_optimizations", type(cache._optimizations)(cache.OPTIMIZATIONS_KEPT))
    yield
    _end_work_ahead(jobs)


def _end_work_ahead(jobs) -> None:
    """The optimizations made ahead in the test ended, and the proofs they started that no session took cancelled:
    their onnxruntime children would otherwise outlive the test, seen by the next one's count of children."""
    import threading

    for thread in threading.enumerate():
        if thread.name == "optimize ahead":
            thread.join(120)
    for job, _ in list(jobs._ahead._entries.values()):
        job.cancel()
