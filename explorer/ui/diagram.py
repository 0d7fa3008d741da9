"""The diagram widget: DOT laid out by graphviz into SVG and shown in a component whose clicks select a node or
drill into a body; where graphviz is not installed, st.graphviz_chart lays it out in the browser (no clicks;
the node selector still works)."""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from ..views.builder import Drawing
from ..views.dot_escape import parse_svg_id
from ..views.render import GraphvizError, dot_available, render_svg
from . import state

_HTML = '<div class="explorer-diagram"></div>'
_CSS = """
.explorer-diagram { overflow: auto; max-height: 78vh; border: 1px solid rgba(128,128,128,.25);
                    border-radius: 6px; background: white; }
.explorer-diagram.fit svg { max-width: 100%; height: auto; }
.explorer-diagram g.node, .explorer-diagram g.cluster > text { cursor: pointer; }
.explorer-diagram g.node:hover polygon, .explorer-diagram g.node:hover path { filter: brightness(0.93); }
.explorer-diagram g.explorer-selected > polygon, .explorer-diagram g.explorer-selected > path,
.explorer-diagram g.explorer-selected a > path, .explorer-diagram g.explorer-selected a > polygon {
  stroke: #1c7ed6; stroke-width: 5; }
"""
# Clicks report the id of the nearest node or body cluster; the `reveal` element is marked (without a new
# layout) and scrolled into view.
_JS = """
export default function(component) {
  const { data, setTriggerValue, parentElement } = component;
  const root = parentElement.querySelector('.explorer-diagram');
  if (root.dataset.svgKey !== data.key) {
    root.innerHTML = data.svg;
    root.dataset.svgKey = data.key;
  }
  root.classList.toggle('fit', !!data.fit);
  root.onclick = (event) => {
    const target = event.target.closest('g.node, g.cluster');
    if (target && target.id) setTriggerValue('clicked', target.id);
  };
  root.querySelectorAll('.explorer-selected').forEach((el) => el.classList.remove('explorer-selected'));
  if (data.reveal) {
    const el = root.querySelector('[id="' + CSS.escape(data.reveal) + '"]');
    if (el && data.mark) el.classList.add('explorer-selected');
    if (el) {
      const box = el.getBoundingClientRect(), frame = root.getBoundingClientRect();
      root.scrollTop += box.top - frame.top - root.clientHeight / 2 + box.height / 2;
      root.scrollLeft += box.left - frame.left - root.clientWidth / 2 + box.width / 2;
    }
  }
}
"""
_component = st.components.v2.component("explorer.diagram", html=_HTML, css=_CSS, js=_JS)


@st.cache_data(max_entries=64, show_spinner=False)
def _svg(dot_text: str) -> str:
    return render_svg(dot_text, timeout=120)


def show(drawing: Drawing, *, key: str, on_click: Callable[[str, tuple[str, ...]], None] | None = None,
         reveal: str | None = None, mark: bool = False, fit: bool = True) -> None:
    """Draws a drawing. `on_click(kind, keys)` receives a clicked element's parsed id (see views.dot), e.g.
    ("node", (path,)) or ("graph", (body graph path,)); `reveal` is a node path whose box is scrolled into view,
    outlined when `mark` (a selection that needs no new layout)."""
    dot_text = drawing.dot
    target = drawing.box_for(reveal) if reveal else None
    if not dot_available():
        if not st.session_state.get(state.NO_DOT_NOTICE):
            st.session_state[state.NO_DOT_NOTICE] = True
            st.info("graphviz's `dot` is not installed, so diagrams are laid out in the browser and cannot be "
                    "clicked (install it with `apt-get install graphviz`); use the node selectors instead.")
        st.graphviz_chart(dot_text, width="stretch")
        return
    try:
        with st.spinner("Laying out the diagram…"):
            svg = _svg(dot_text)
    except GraphvizError as exc:
        st.warning(f"graphviz could not lay this diagram out ({exc}); drawing it in the browser instead.")
        st.graphviz_chart(dot_text, width="stretch")
        return

    def clicked() -> None:
        element_id = (st.session_state.get(key) or {}).get("clicked")
        if element_id and on_click is not None:
            on_click(*parse_svg_id(element_id))

    _component(key=key, data={"svg": svg, "key": str(hash(svg)), "reveal": target, "mark": mark, "fit": fit},
               on_clicked_change=clicked)
