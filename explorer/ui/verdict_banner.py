"""The Compare page's verdict, at the top: one banner (agree, where the sides part, or no verdict), and the views
opened where it points: the node marked in the diagram, the Gates tab on the departing node, gate, direction and
batch item (once per comparison: the user's own choices stay theirs afterwards)."""
from __future__ import annotations

import streamlit as st

from ..compare import Comparison
from ..compare.verdict import Verdict
from ..views.markup import md
from ..views.verdict import full_verdict
from . import state

OPENED = "compare_verdict_opened"  # the comparison whose verdict last set the Gates tab's choices
GATES_TAB = "Gates"


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


def open_tab(verdict: Verdict) -> str | None:
    """The tab to open first: the Gates tab when the sides part at a gate."""
    return GATES_TAB if verdict.first is not None and verdict.first.gate is not None else None


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
