"""The Sweep page's session: its widget keys, the session's sweep (a background SweepJob, one at a time), and
opening one of its inputs: that input becomes the app's inputs (random ones through the sidebar's seed and
sizes, a file as the sidebar's "Sweep input"), the Compare page's B becomes the sweep's reference, and the
Compare page opens at the first divergence."""
from __future__ import annotations

from typing import Any

import streamlit as st

from ..sweep import Plan
from ..sweep.job import SweepJob
from ..sweep.plan import Item
from . import state
from .widgets import RANDOM_INPUTS, SWEPT_INPUTS

COMPARE_PAGE = "explorer/ui/pages/compare.py"


def key(part: str, *names: object) -> str:
    """The Sweep page's widget key for `part` (and a name of the model's, such as a dim's)."""
    return state.keyed(f"{state.K_SWEEP}_{part}", *names) if names else f"{state.K_SWEEP}_{part}"


def current() -> SweepJob | None:
    found = st.session_state.get(state.SWEEP_JOB)
    return None if found is None else found[0]


def start(plan: Plan, scheduler: str | None, workers: int | None, reference: Any) -> SweepJob:
    """Starts the plan as the session's sweep (a running one is cancelled first). `reference` is what the
    Compare page takes as B when an input is opened: "onnxruntime", "pytorch", ("sample", name), ("path", path)
    or "sweep" (each input's own reference values)."""
    previous = current()
    if previous is not None:
        previous.cancel()
    job = SweepJob(plan, scheduler=scheduler, workers=workers).start()
    st.session_state[state.SWEEP_JOB] = (job, reference)
    return job


def open_input(index: int, model_key: str) -> None:
    """Makes input `index` of the session's sweep the app's inputs and B its reference, then opens the Compare
    page at the first divergence. A button's callback: it runs before the sidebar's widgets are drawn, and a page
    switched to from a callback keeps their values (switched to from the script, they start over)."""
    job, reference = st.session_state[state.SWEEP_JOB]
    item: Item = job.plan.items[index]
    model = state.active_model()
    if item.path is None and model is not None:
        st.session_state[state.W_INPUT_MODE] = RANDOM_INPUTS
        st.session_state[state.W_SEED] = item.seed or 0
        for name, size in item.dims:
            st.session_state[state.dim_key(model, name)] = size
    else:
        st.session_state[state.SWEPT_INPUT] = (model_key, item)
        st.session_state[state.W_INPUT_MODE] = SWEPT_INPUTS
    if isinstance(reference, tuple):
        kind, where = reference
        st.session_state[state.W_COMPARE_B] = kind
        st.session_state[state.W_COMPARE_SAMPLE if kind == "sample" else state.W_COMPARE_PATH] = where
    else:
        st.session_state[state.W_COMPARE_B] = reference
    st.session_state[state.AT_DIVERGENCE] = True
    st.session_state[state.GO_TO_PAGE] = COMPARE_PAGE
