"""Learning mode in the app: the guided tour of a control-flow sample, and questions asked before the trace
reveals a branch or the next iteration (answers and tour positions live in session state)."""
from __future__ import annotations

import streamlit as st

from ..model.model import Model
from ..trace.trace import Iteration, Trace
from ..views import learning
from ..views.loops import BodyValues
from ..views.markup import md, md_code
from ..views.tours import tip_event, tour
from . import state


def enabled() -> bool:
    return bool(st.session_state.get(state.W_LEARNING))


def _answers() -> dict[str, str]:
    return st.session_state.setdefault(state.ANSWERS, {})


def tour_panel() -> None:
    """The active sample's tour, one tip at a time, until the learner closes it. Moving to a tip moves the step
    cursor to the first execution of the node it describes (and selects that node)."""
    trace = state.current_trace()
    source = st.session_state.get(state.ACTIVE)
    sample = source.label if source is not None and source.kind == "sample" else ""
    tips = tour(sample)
    positions: dict[str, int] = st.session_state.setdefault(state.TOUR, {})
    at = positions.get(sample, 0)
    if not tips or at >= len(tips):
        return

    def go(position: int) -> None:
        positions[sample] = position
        target = tip_event(trace, tips[position]) if trace is not None and position < len(tips) else None
        if target is not None:
            state.set_cursor(target)
            st.session_state[state.SELECTED] = tips[position].node

    with st.container(border=True):
        st.markdown(f"**Tour of {sample}** · {at + 1} of {len(tips)}: {tips[at].text}")
        back, ahead, close = st.columns([1, 1, 4])
        back.button("Back", key=state.keyed(state.W_TOUR, "back"), disabled=at == 0, on_click=lambda: go(at - 1))
        ahead.button("Next" if at + 1 < len(tips) else "Done", key=state.keyed(state.W_TOUR, "next"),
                     on_click=lambda: go(at + 1))
        close.button("Close the tour", key=state.keyed(state.W_TOUR, "close"),
                     on_click=lambda: positions.update({sample: len(tips)}))


def fingerprint() -> tuple[bool, tuple[str, ...]]:
    """What the questions asked so far depend on: whether learning mode is on, and what was answered."""
    return enabled(), tuple(sorted(_answers())) if enabled() else ()


def holds(model: Model, trace: Trace, index: int) -> bool:
    """Whether moving on from event `index` is held back: in learning mode, before the cursor enters an If
    branch, until the learner has predicted which one."""
    question = learning.branch_question(model, trace, index) if enabled() else None
    return question is not None and question.key not in _answers()


def branch_quiz(model: Model, trace: Trace, index: int) -> None:
    """Before the cursor enters an If branch: asks which one (see `holds`)."""
    question = learning.branch_question(model, trace, index) if enabled() else None
    if question is None:
        return
    answered = _answers().get(question.key)
    with st.container(border=True):
        if answered is not None:
            st.markdown(f"**{md(question.label)}**: {answered}")
            return
        choice = st.radio(f"Predict: which branch will **{md(question.label)}** take?", question.options, index=None,
                          horizontal=True, key=state.keyed(state.W_PREDICT, question.key))

        def check() -> None:
            picked = st.session_state.get(state.keyed(state.W_PREDICT, question.key))
            _answers()[question.key] = md(question.feedback(str(picked)))

        st.button("Check", key=state.keyed(state.W_CHECK, question.key), disabled=choice is None, on_click=check)


def carried_quiz(path: str, values: BodyValues, iterations: list[Iteration], position_key: str) -> int:
    """Loops page in learning mode: iterations are revealed one by one, each after the learner predicts the
    numbers it carries on. Returns how many iterations are revealed (the position shown)."""
    shown = int(st.session_state.setdefault(position_key, 0))
    last = _answers().get(f"{path}@{shown}")
    if last:
        st.markdown(f"Iteration {shown}: {last}")
    question = learning.carried_question(values, iterations, shown + 1) if shown + 1 < len(iterations) else None
    if shown + 1 >= len(iterations):
        st.caption("Every iteration is revealed.")
        return shown
    with st.container(border=True):
        if question is None:
            st.button(f"Reveal iteration {shown + 1}", key=state.keyed(state.W_CHECK, path, shown),
                      on_click=lambda: st.session_state.update({position_key: shown + 1}))
            return shown
        st.markdown(f"Predict what iteration {shown + 1} carries on "
                    + ", ".join(f"({md_code(name)} comes in as {md(text)})" for name, text in question.before.items()))
        guesses = {name: st.number_input(f"{md_code(name)} after iteration {shown + 1}", value=None, format="%.6g",
                                         key=state.keyed(state.W_PREDICT, path, shown, name))
                   for name in question.answers}

        def check() -> None:
            lines = [md(question.feedback(name, guesses[name])) for name in question.answers]
            _answers()[f"{path}@{shown + 1}"] = " · ".join(lines)
            st.session_state[position_key] = shown + 1

        st.button("Check and reveal", key=state.keyed(state.W_CHECK, path, shown),
                  disabled=any(g is None for g in guesses.values()), on_click=check)
    return shown
