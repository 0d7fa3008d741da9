"""The diagram widget: a Drawing laid out by graphviz (on the server when `dot` is installed, else in the browser by
Graphviz compiled to WebAssembly) and shown on a pan-and-zoom canvas (components/diagram: @panzoom/panzoom, zoom
buttons, minimap, legend). Clicks select a node or drill into a body; the selected or current node is zoomed to
and outlined; search hits are highlighted; the same drawing is never laid out twice, and a fragment rerun
(stepping) sends the canvas only what changed on an unchanged layout, not the layout again."""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.components.v1 import declare_component
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ..hosting.recent import MadeOnce
from ..model.model import Model
from ..views import styles
from ..views.builder import Drawing
from ..views.dot import model_to_dot
from ..views.heat import NodeValues
from ..views.markup import md
from ..views.render import GraphvizError, dot_available, render_svg
from ..views.trace_marks import state_css
from . import owned
from .state import K_FIRST_SHOWN, K_FRAMES_SENT, K_LAYOUT_SENT, keyed

_component = declare_component("explorer_diagram", path=str(Path(__file__).parent / "components" / "diagram"))
HEIGHT = 640


def drawing(model: Model, key: str, **options: Any) -> Drawing:
    """`model_to_dot(model, **options)`, held by the session by the model and `key`, which must tell apart every
    choice of options the caller makes (a 20,000-node model takes seconds to draw, and a page reruns on every
    click)."""
    return owned.held("drawings", (model.sha256, key), lambda: model_to_dot(model, **options))


def show_ahead(model: Model, key: str, *, canvas: str, height: int = HEIGHT) -> bool:
    """Whether the canvas under the key `canvas` was just sent without a drawing: so when `drawing(model, key,
    ...)` is not made yet, once per session and drawing. The browser then loads the canvas's frame and files while
    the server makes the drawing (a 20,000-node model's overview takes the server most of a second, the frame a
    third of one), and the canvas, once loaded, asks for a rerun, which shows the drawing (`show` with the same
    `canvas` key: the same frame). Call it where `show` is called, instead of it in this script run."""
    wanted = (model.sha256, key)
    shown: set[tuple[str, str]] = st.session_state.setdefault(K_FIRST_SHOWN, set())
    if owned.holdings().has("drawings", wanted) or wanted in shown:
        return False
    shown.add(wanted)
    _component(pending=hashlib.sha1(repr(wanted).encode("utf-8")).hexdigest(), height=height, key=canvas, default=None)
    return True


LAYOUTS_BYTES = 64 << 20  # SVGs kept for every session, the least recently used going first
_layouts: MadeOnce[str, str] = MadeOnce(LAYOUTS_BYTES, weight=len)


def _dot_key(dot: str) -> str:
    return hashlib.sha1(dot.encode("utf-8")).hexdigest()


def lay_out_ahead(*drawings: Drawing) -> None:
    """Starts graphviz on those of `drawings` no session has laid out yet, each in a process of its own, at once:
    a page showing several drawings (`show` takes each SVG, waiting for it if need be) then waits about as long
    as their slowest layout, not their sum (the Optimizer's four drawings of silero-vad, 40 ms each)."""
    if dot_available():
        for drawing in drawings:
            _layouts.ahead(_dot_key(drawing.dot), partial(render_svg, drawing.dot, timeout=120), "graphviz layout")


def _layout(key: str, dot: str) -> str:
    """The SVG of DOT text `dot` (named `key`, its hash), laid out by graphviz once for every session: a page
    opened in a new session draws what another session drew already (the same model, the same view) without
    graphviz, which takes tens of milliseconds for a few nodes and seconds for thousands."""
    return _layouts.get(key, partial(render_svg, dot, timeout=120))


def laid_out(drawing: Drawing) -> dict[str, str]:
    """The drawing for the canvas: its SVG when the server can lay it out (held by the session by its DOT text),
    else its DOT text for the browser to lay out. `layout` names it."""
    key = _dot_key(drawing.dot)
    if dot_available():
        try:
            return {"layout": key, "svg": owned.held("svgs", key, lambda: _layout(key, drawing.dot))}
        except GraphvizError as exc:
            st.caption(f"graphviz on the server could not lay this diagram out ({md(exc)}); the browser does.")
    return {"layout": key, "dot": drawing.dot}


def _layout_args(drawing: Drawing, key: str) -> dict[str, str]:
    """`laid_out(drawing)`, or only its `layout` name when this is a fragment rerun and the canvas under `key`
    was last sent that layout: the canvas keeps the SVGs it has shown (and asks again, see `show`, when it was
    re-created and lost them). A whole-page run always sends the layout (the page may be a new one)."""
    ctx = get_script_run_ctx()
    layout = _dot_key(drawing.dot)
    sent = _sent_key(key)
    if ctx is not None and ctx.fragment_ids_this_run and st.session_state.get(sent) == layout:
        return {"layout": layout}
    st.session_state[sent] = layout
    return laid_out(drawing)


def _sent_key(key: str) -> str:
    return keyed(K_LAYOUT_SENT, key)


def _unsent_frames(key: str, stepper: dict[str, Any], fresh: bool) -> dict[int, Any]:
    """The stepper's frames the canvas under `key` was not sent yet, and always the current one (the canvas
    keeps those of the same `set`; a step sends only those that came into its window). All of them when the
    canvas may be new (`fresh`: its layout was sent in this run) or the set is another."""
    record = keyed(K_FRAMES_SENT, key)
    name, sent = st.session_state.get(record) or (None, frozenset())
    if fresh or name != stepper["set"]:
        sent = frozenset()
    frames = {i: frame for i, frame in stepper["frames"].items() if i not in sent or i == stepper["at"]}
    st.session_state[record] = (stepper["set"], sent | frames.keys())
    return frames


def show(drawing: Drawing, *, key: str, on_click: Callable[[str, tuple[str, ...]], None] | None = None,
         reveal: str | None = None, mark: bool = False, hits: Iterable[str] = (),
         values: NodeValues | None = None, height: int = HEIGHT, marks: dict[str, Any] | None = None,
         step: int | None = None, stepper: dict[str, Any] | None = None,
         on_step: Callable[[int], None] | None = None, report: bool = False) -> None:
    """Draws a drawing on the canvas. `on_click(kind, keys)` receives a clicked element's parsed id (see
    views.dot), e.g. ("node", (path,)) or ("graph", (body graph path,)); `reveal` is a node path whose box is
    zoomed to (outlined when `mark`); `hits` are node paths to highlight; `values` adds its legend. `marks`
    (a trace position, see views.trace_marks.Marks.as_args) restyle the laid-out drawing in the browser:
    stepping to event `step` keeps the layout and the zoom, and pans only when the current node leaves the view.
    `stepper` puts the step moves and slider on the canvas (`at`, `last`, `frames`: event -> its frame, see
    views.step_moves.frame, and `set`: a name for the frames, which stay valid while it is the same): a move to
    an event it has the frame of shows at once, then `on_step(event)`; it is sent only the frames it lacks.
    `report`: the canvas tells the server (a rerun) when it has drawn the layout."""
    target = drawing.box_for(reveal) if reveal else None
    boxes = sorted({box for box in (drawing.box_for(p) for p in hits) if box is not None})
    legend = {"title": values.title, "items": values.legend()} if values is not None else None

    def changed() -> None:
        value = st.session_state.get(key) or {}
        if value.get("missing"):  # a re-created canvas was sent only a layout's name
            st.session_state.pop(_sent_key(key), None)
        elif value.get("clicked") and on_click is not None:
            on_click(*drawing.parse(value["clicked"]))
        elif value.get("go") is not None and on_step is not None:
            on_step(int(value["go"]))

    layout = _layout_args(drawing, key)
    if stepper is not None:  # the number of the canvas's last message seen: a rerun for an older move is not shown
        stepper = {**stepper, "answered": (st.session_state.get(key) or {}).get("n"),
                   "frames": _unsent_frames(key, stepper, fresh=len(layout) > 1)}
    _component(**layout, focus=target, mark=mark, hits=boxes, legend=legend, height=height,
               colours={"selected": styles.SELECTION_COLOUR, "hit": styles.NODE_STATES["match"]["color"],
                        "badge": styles.LABEL_TINTS["iteration"]},
               marks=marks, state_css=_STATE_CSS if marks else None, follow=marks is not None, step=step,
               stepper=stepper, report=report, key=key, on_change=changed, default=None)


_STATE_CSS = state_css()

