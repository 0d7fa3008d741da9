"""A chart on the page: inline SVG by default (the page opens without loading plotly.js, a second or more in a new
tab), the plotly figure when the sidebar's "Interactive charts" is on (zoom, hover, a slider over slices)."""
from __future__ import annotations

import streamlit as st

from ..views.charts import Chart
from . import state


def interactive() -> bool:
    """Whether the session asked for plotly's interactive charts."""
    return bool(st.session_state.get(state.W_INTERACTIVE_CHARTS))


def show(chart: Chart, key: str) -> None:
    """`chart` where the page is (a column: call it inside `with column:`); `key` names its plotly chart."""
    if interactive():
        st.plotly_chart(chart.figure(), key=key, width="stretch")
    else:
        st.html(chart.html())
