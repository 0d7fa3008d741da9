"""Graph: the model's nodes, a searchable selector, and the inspector of the selected node."""
from __future__ import annotations

import streamlit as st

from explorer.ui import state, widgets

st.title("Graph")
model, trace = state.active_model(), state.current_trace()
if model is None:
    st.info("Choose a model in the sidebar.")
else:
    path = widgets.node_selector(model)
    if path is not None:
        widgets.node_inspector(model, trace, path)
