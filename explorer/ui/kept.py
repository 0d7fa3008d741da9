"""The sidebar's widget values, kept across a page switch. A page opened with st.switch_page (the Sweep page's
"Open in Compare", the Graph page's "Step through from its first run") runs without the browser's widget states,
so every widget the code never set starts over at its default: the model picked by path would become the default
sample. The values are copied to an app-owned key after the sidebar is drawn and put back before it is drawn
again, where a switch dropped them."""
from __future__ import annotations

import streamlit as st

from . import state

KEPT = "kept_sidebar"  # app-owned copy of the sidebar's widget values
KEYS = (state.W_SOURCE, state.W_SAMPLE, state.W_PATH, state.W_LENIENT, state.W_INPUT_MODE, state.W_SEED,
        state.W_MAX_ITERATIONS, state.W_BUDGET_MB, state.W_DISK_MB, state.W_MAX_TENSOR_MB, state.W_MAX_EVENTS,
        state.W_THREADS, state.W_LEARNING, state.W_INTERACTIVE_CHARTS)
PREFIXES = ("w_dim:",)  # per-model keys made by state.dim_key


def restore() -> None:
    """Puts back the kept values a page switch dropped."""
    for key, value in st.session_state.get(KEPT, {}).items():
        if key not in st.session_state:
            st.session_state[key] = value


def keep() -> None:
    """Copies the sidebar's widget values (after it is drawn)."""
    st.session_state[KEPT] = {key: st.session_state[key] for key in list(st.session_state)
                              if isinstance(key, str) and (key in KEYS or key.startswith(PREFIXES))}
