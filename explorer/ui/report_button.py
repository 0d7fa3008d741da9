"""The "Download report" button of the Compare, Step through and Gates pages: what the page shows as one
self-contained HTML file (explorer/views/report_html.py), made when the button is clicked."""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from explorer.bridge.report import FrameworkComparison
from explorer.compare import Comparison
from explorer.model.model import Model
from explorer.trace.trace import Trace
from explorer.ui import state
from explorer.views.report_html import report_html


def download_report(model: Model, page: str, trace: Trace | None = None, comparison: Comparison | None = None, *,
                    event_index: int | None = None, cells: Sequence[str] | None = None,
                    framework: FrameworkComparison | None = None) -> None:
    """A download button writing the report of `model` with this page's trace, comparison, step, cells or
    comparison with the framework model."""
    name = f"{model.source.rsplit('/', 1)[-1].removesuffix('.onnx')}.{page}.html"
    st.download_button("Download report", lambda: report_html(model, trace, comparison, event_index=event_index,
                                                              cells=cells, command=f"the app's {page} page",
                                                              framework=framework),
                       file_name=name, mime="text/html", key=state.keyed(state.W_REPORT_DOWNLOAD, page),
                       help="One HTML file that opens in any browser without a network: the drawing, the "
                            "first divergence, the values and the gates")
