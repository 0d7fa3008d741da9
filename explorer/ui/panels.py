"""Panels showing what a node is and what it computed: the node inspector and a value's statistics, table and
plot."""
from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from ..model.model import Model
from ..spec.contrib import OperatorDoc
from ..trace.trace import Trace
from ..views import inspector as views_inspector
from ..views import value_html
from ..views.charts import value_chart
from ..views.html_blocks import records_table, text_block
from ..views.markup import md, md_code
from ..views.tables import value_grid
from . import charts, state, widgets


def node_inspector(model: Model, trace: Trace | None, path: str) -> None:
    """Attributes, declared input/output types, and the values each execution produced."""
    details = views_inspector.node_details(model, path)
    st.subheader(md(details.label))
    module = f" · module {md_code(details.module)}" if details.module else ""
    st.caption(f"{md_code(details.path)} · domain {md(details.domain)}{module}")
    if details.doc is not None:
        operator_doc(details.doc)
    if details.attributes:
        st.html(records_table([{"attribute": name, "value": value} for name, value in details.attributes]))
    ports = [("input", p.name, p.type) for p in details.inputs] + [("output", p.name, p.type) for p in details.outputs]
    if ports:
        st.html(records_table([{"": side, "value": name, "declared type": kind} for side, name, kind in ports]))
    if details.bodies:
        st.caption("Bodies: " + ", ".join(md_code(b) for b in details.bodies))
    if trace is None:
        return
    runs = trace.events_of(path)
    if not runs:
        st.info("This node did not run in the recorded trace.")
        return
    if len(runs) > 1:
        st.caption(f"Ran {len(runs)} times")
        widgets.listed_table(views_inspector.executions(trace, path), state.keyed(state.W_ALL_ROWS, path), "executions")
    event = widgets.pick_execution(runs, state.keyed(state.K_EXEC, path))
    for name, value in event.outputs.items():
        value_panel(name, value, key=state.keyed(state.K_INSPECT, event.index, name))


def operator_doc(doc: OperatorDoc) -> None:
    """onnxruntime's doc of one of its own operators, with its attributes and the address of its section."""
    st.caption(f"onnxruntime's own operator ({md(doc.source)}) · [its documentation]({doc.url})")
    with st.expander(f"onnxruntime's doc of {md(doc.op_type)}-{doc.since_version}"):
        st.html(text_block(doc.text))
        if doc.attributes:
            st.html(records_table([{"attribute": name, "description": text} for name, text in doc.attributes.items()]))


def value_panel(name: str, value: Any, key: str, full: bool = True, plot: bool = True) -> None:
    """A value's statistics, and when `full` the value as a table when small (views.value_html) and (when `plot`)
    a plot; scalars inline. `key` names its plot: a key kept for the next value updates it in place."""
    st.html(value_html.wrapped([value_html.value_block(name, value, full)]))
    if full:
        plot_panel(name, value, key, plot)


def plot_panel(name: str, value: Any, key: str, plot: bool = True) -> None:
    """A value's plot when `plot` and it is worth one (not a scalar, nor a table of a few cells in one row)."""
    if not plot or (isinstance(value, np.ndarray) and value.ndim == 0):
        return
    grid = value_grid(value)
    chart = value_chart(value, name)
    if chart is not None and (grid is None or len(grid.rows) > 1 or len(grid.columns) > 4):
        charts.show(chart, key=key)
