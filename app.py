"""explorer: `streamlit run app.py` — pick a model and inputs in the sidebar, then look at the run page by page."""
import streamlit as st

from explorer.ui import state, widgets

st.set_page_config(page_title="explorer · ONNX", page_icon="🔎", layout="wide")
state.init()
PAGES = [
    st.Page("explorer/ui/pages/graph.py", title="Graph", icon="🕸️", default=True),
    st.Page("explorer/ui/pages/step.py", title="Step through", icon="👣"),
    st.Page("explorer/ui/pages/loops.py", title="Loops", icon="🔁"),
    st.Page("explorer/ui/pages/gates.py", title="Gates", icon="🚪"),
]
page = st.navigation(PAGES)
widgets.sidebar()
widgets.status_banner()
page.run()
