"""A page's drawings laid out ahead (diagram.lay_out_ahead): each by graphviz once, all at once, the page's `show`
taking each SVG when it is done; a layout that fails ahead fails where it is shown, and is tried again later."""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from explorer.hosting.recent import MadeOnce
from explorer.ui import diagram
from explorer.views.render import GraphvizError

DOTS = ("digraph { a -> b }", "digraph { c -> d }")


@pytest.fixture
def graphviz(monkeypatch) -> list[tuple[str, float, float]]:
    """A stand-in for graphviz that takes 0.3 s per layout; each call is recorded as (dot, start, end)."""
    calls: list[tuple[str, float, float]] = []
    lock = threading.Lock()

    def render_svg(dot: str, *, timeout: float) -> str:
        start = time.monotonic()
        time.sleep(0.3)
        if "fails" in dot:
            raise GraphvizError("syntax error in line 1")
        with lock:
            calls.append((dot, start, time.monotonic()))
        return f"<svg>{dot}</svg>"

    monkeypatch.setattr(diagram, "render_svg", render_svg)
    monkeypatch.setattr(diagram, "dot_available", lambda: True)
    monkeypatch.setattr(diagram, "_layouts", MadeOnce(1 << 20, weight=len))
    return calls


def test_drawings_laid_out_ahead_are_laid_out_at_once_and_each_once(graphviz):
    diagram.lay_out_ahead(*(SimpleNamespace(dot=dot) for dot in DOTS))
    diagram.lay_out_ahead(SimpleNamespace(dot=DOTS[0]))  # under way already: not started again
    svgs = [diagram._layout(diagram._dot_key(dot), dot) for dot in DOTS]
    assert svgs == [f"<svg>{dot}</svg>" for dot in DOTS]
    assert sorted(dot for dot, _, _ in graphviz) == sorted(DOTS)
    (_, first_start, first_end), (_, second_start, second_end) = graphviz
    assert second_start < first_end and first_start < second_end  # side by side, not one after the other
    diagram.lay_out_ahead(SimpleNamespace(dot=DOTS[1]))  # laid out: nothing to do
    assert diagram._layout(diagram._dot_key(DOTS[1]), DOTS[1]) == f"<svg>{DOTS[1]}</svg>" and len(graphviz) == 2
    assert all(diagram._layouts.ready(diagram._dot_key(dot)) for dot in DOTS)


def test_a_layout_that_fails_ahead_fails_where_it_is_shown_and_is_tried_again(graphviz):
    dot = "digraph { fails }"
    diagram.lay_out_ahead(SimpleNamespace(dot=dot))
    with pytest.raises(GraphvizError, match="syntax error"):
        diagram._layout(diagram._dot_key(dot), dot)
    assert diagram._layouts.find(diagram._dot_key(dot)) is None
    with pytest.raises(GraphvizError, match="syntax error"):  # not kept as if laid out
        diagram._layout(diagram._dot_key(dot), dot)
