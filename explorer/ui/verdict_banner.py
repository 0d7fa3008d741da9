"""The Compare page's verdict, at the top: one banner (agree, where the sides part, or no verdict), and the views
opened where it points: the node marked in the diagram, the tab opened first, the Gates tab on the departing
node, gate, direction and batch item (once per comparison: the user's own choices stay theirs afterwards)."""
from __future__ import annotations

import streamlit as st

from ..compare import Comparison
from ..compare.verdict import Verdict
from ..views.compare import divergence_index
from ..views.markup import md
from ..views.verdict import full_verdict
from . import state

OPENED = "compare_verdict_opened"  # the comparison whose verdict last set the Gates tab's choices
TAB_OPENED = "compare_tab_opened"  # the comparison whose verdict last chose the open tab
GATES_TAB = "Gates"
STEP_BOTH_TAB = "Step both"


def verdict_of(result: Comparison) -> Verdict:
    """The comparison's verdict, made once per comparison."""
    cached = st.session_state.get("compare_verdict")
    if cached is not None and cached[0] is result:
        return cached[1]
    found = full_verdict(result)
    st.session_state["compare_verdict"] = (result, found)
    return found


def banner(verdict: Verdict) -> None:
    """The verdict sentence: green when the sides agree, red where they part, amber when there is none."""
    text = md(verdict.sentence)
    if verdict.agree is True:
        st.success(text)
    elif verdict.agree is False:
        st.error(text)
    else:
        st.warning(text)


def marked_node(verdict: Verdict) -> str | None:
    """The node the diagram marks: where the sides part."""
    return verdict.first.onnx_node or None if verdict.first is not None else None


def open_tab(result: Comparison, verdict: Verdict, labels: list[str]) -> None:
    """Opens a new comparison on the tab its verdict points to: Gates when the sides part at a gate, Step both at
    the first divergence when a sweep's input was opened here, else the first of `labels` (once per comparison,
    before the tabs are made)."""
    if st.session_state.get(TAB_OPENED) == id(result) and state.W_COMPARE_TAB in st.session_state:
        return
    st.session_state[TAB_OPENED] = id(result)
    if st.session_state.get(state.AT_DIVERGENCE) and divergence_index(result) is not None:
        st.session_state[state.W_COMPARE_TAB] = STEP_BOTH_TAB
    elif verdict.first is not None and verdict.first.gate is not None:
        st.session_state[state.W_COMPARE_TAB] = GATES_TAB
    else:
        st.session_state[state.W_COMPARE_TAB] = labels[0]


def point_gates(result: Comparison, verdict: Verdict) -> None:
    """Sets the Gates tab's run, gate, direction and batch item to the departure, once per comparison (before
    the tab's widgets are made)."""
    first = verdict.first
    if first is None or first.gate is None or st.session_state.get(OPENED) == id(result):
        return
    st.session_state[OPENED] = id(result)
    node = first.onnx_node
    st.session_state[state.W_COMPARE_RNN] = f"{node}\x1f{','.join(map(str, first.iteration))}"
    st.session_state[state.keyed(state.K_COMPARE_GATE, node)] = first.gate
    st.session_state[state.keyed(state.K_COMPARE_DIR, node)] = first.direction or 0
    st.session_state[state.keyed(state.K_COMPARE_ITEM, node)] = int(first.extra.get("batch_item", 0))


def departure_caption(verdict: Verdict, node: str) -> str | None:
    """Where the shown node's gates depart, for the Gates tab."""
    first = verdict.first
    if first is None or first.gate is None or first.onnx_node != node:
        return None
    return (f"Gate {first.gate} departs first at time step {first.step} (direction {first.direction}, batch item "
            f"{first.extra.get('batch_item', 0)}, unit {first.extra.get('unit', 0)}).")
