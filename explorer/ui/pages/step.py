"""Step through: a cursor over the recorded events, with the current node's values."""
from __future__ import annotations

import streamlit as st

from explorer.ui import state, widgets
from explorer.views import cursor as moves


def _go(index: int | None) -> None:
    if index is not None:
        state.set_cursor(index)


@st.fragment
def stepper() -> None:
    model, trace = state.active_model(), state.current_trace()
    if model is None or trace is None or not trace.events:
        st.info("No recorded events: choose a model and inputs in the sidebar.")
        return
    index = state.cursor(trace)
    event = trace.events[index]
    last = len(trace.events) - 1
    selected = state.selected_node() or event.node
    jumps = {
        "⏮": (0, "First event"),
        "◀": (index - 1 if index > 0 else None, "Previous event"),
        "▶": (index + 1 if index < last else None, "Next event"),
        "⏭": (last, "Last event"),
        "◀ iteration": (moves.previous_iteration(model, trace, index), "Same node, previous iteration of its loop"),
        "iteration ▶": (moves.next_iteration(model, trace, index), "Same node, next iteration of its loop"),
        "next run of node": (moves.next_execution(trace, index, selected),
                             f"Next execution of the selected node `{selected}`"),
        "first NaN/Inf": (moves.first_nonfinite(trace), "First event whose outputs hold NaN or Inf"),
    }
    for column, (label, (target, help_text)) in zip(st.columns([1, 1, 1, 1, 2, 2, 3, 3]), jumps.items()):
        column.button(label, key=f"w_step:{label}", help=help_text, disabled=target is None or target == index,
                      on_click=_go, args=(target,), width="stretch")
    if last > 0:
        if st.session_state.get(state.W_CURSOR) != index:
            st.session_state[state.W_CURSOR] = index
        st.slider("Event", 0, last, key=state.W_CURSOR, label_visibility="collapsed",
                  on_change=lambda: state.set_cursor(st.session_state[state.W_CURSOR]))
    st.markdown(f"**Event {index + 1} / {last + 1}** · "
                + " › ".join(f"`{c.text}`" for c in moves.breadcrumb(model, event))
                + f" · {event.seconds * 1e3:.3f} ms")
    if event.summarized:
        st.caption("Values past the trace memory budget are kept as summaries.")
    inputs, outputs = st.columns(2)
    with inputs:
        st.markdown("##### Inputs")
        for name, value in event.inputs.items():
            widgets.value_panel(name, value, key=f"step:in:{name}")
    with outputs:
        st.markdown("##### Outputs")
        for name, value in event.outputs.items():
            widgets.value_panel(name, value, key=f"step:out:{name}")


st.title("Step through")
stepper()
