"""Shareable state: the address holds the model (a bundled sample or a local path), the random inputs' seed and
dimension sizes, the step cursor and the selected node (the page is the address's path). Opening such an
address restores them: the model and inputs before the sidebar draws, the cursor and node once the model is
active."""
from __future__ import annotations

from typing import Any

import streamlit as st

from ..inputs.samples import list_samples
from ..model.feeds import symbolic_dims, unnamed_dims
from ..model.model import Model
from . import state

SAMPLE, PATH, SEED, EVENT, NODE, DIM = "sample", "model", "seed", "event", "node", "dim."
RANDOM = "Random"


def restore() -> None:
    """Once per session: reads the address into the sidebar's widgets and remembers the rest for later."""
    if st.session_state.get(state.URL_READ):
        return
    st.session_state[state.URL_READ] = True
    params = {key: st.query_params.get(key) for key in st.query_params}
    if params.get(SAMPLE) in list_samples():
        st.session_state[state.W_SOURCE] = "Sample"
        st.session_state[state.W_SAMPLE] = params[SAMPLE]
    elif params.get(PATH):
        st.session_state[state.W_SOURCE] = "Local path"
        st.session_state[state.W_PATH] = params[PATH]
    st.session_state[state.URL_PENDING] = params


def _pending() -> dict[str, Any]:
    return st.session_state.get(state.URL_PENDING) or {}


def restore_inputs(model: Model) -> None:
    """Before the inputs are drawn for the first model: random inputs with the address's seed and sizes."""
    pending = _pending()
    if SEED not in pending and not any(key.startswith(DIM) for key in pending):
        return
    st.session_state[state.W_INPUT_MODE] = RANDOM
    st.session_state[state.W_SEED] = _int(pending.pop(SEED, 0), 0)
    for key in [k for k in pending if k.startswith(DIM)]:
        st.session_state[state.dim_key(model, key[len(DIM):])] = _int(pending.pop(key), 1, lowest=1)


def restore_position() -> None:
    """After the model is active: the address's cursor and selected node (once)."""
    pending = _pending()
    if EVENT in pending:
        state.set_cursor(_int(pending.pop(EVENT), 0))
    if NODE in pending:
        state.select_node(pending.pop(NODE))


def _int(text: Any, default: int, lowest: int = 0) -> int:
    try:
        return max(int(str(text)), lowest)
    except ValueError:
        return default


def publish(model: Model | None) -> None:
    """Writes the current model, inputs, cursor and selected node into the address (when they changed)."""
    source: state.ModelSource | None = st.session_state.get(state.ACTIVE)
    params: dict[str, str] = {}
    if source is not None and source.kind == "sample":
        params[SAMPLE] = source.label
    elif source is not None and source.kind == "path" and source.path:
        params[PATH] = source.path
    if model is not None and st.session_state.get(state.W_INPUT_MODE) == RANDOM:
        params[SEED] = str(st.session_state.get(state.W_SEED, 0))
        for name in [*symbolic_dims(model), *unnamed_dims(model)]:
            size = st.session_state.get(state.dim_key(model, name))
            if size is not None:
                params[DIM + name] = str(size)
    if st.session_state.get(state.CURSOR):
        params[EVENT] = str(st.session_state[state.CURSOR])
    if st.session_state.get(state.SELECTED):
        params[NODE] = str(st.session_state[state.SELECTED])
    if params != {key: st.query_params.get(key) for key in st.query_params}:
        st.query_params.from_dict(params)
