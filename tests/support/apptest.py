"""What the AppTests share: the app and its pages, starting it (on a sample), uploading a model through the
sidebar, and reading what a run of the app shows (texts, figures, the diagram canvas's arguments). Every test
starts from empty Streamlit caches (app_fixtures.py's `fresh_app`)."""
from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pandas as pd
import plotly.io
from streamlit.testing.v1 import AppTest

from explorer.ui import state
from explorer.views.dot_escape import svg_id
from tests.support.html_tables import Tables

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGES = {name: f"explorer/ui/pages/{name}.py" for name in ("graph", "step", "loops", "gates", "optimizer")}
SVG = "{http://www.w3.org/2000/svg}"


def start(sample: str | None = None, timeout: float = 60) -> AppTest:
    """The app run once, on `sample` when given (else on whatever it opens with)."""
    at = AppTest.from_file(APP, default_timeout=timeout).run()
    if sample is not None and at.selectbox(key=state.W_SAMPLE).value != sample:
        at.selectbox(key=state.W_SAMPLE).set_value(sample).run()
    return at


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    """`data` uploaded as the model file `name` through the sidebar."""
    at.radio(key=state.W_SOURCE).set_value("Upload").run()
    return at.file_uploader(key=state.W_UPLOAD).upload(name, data).run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def open_tab(at: AppTest, label: str) -> AppTest:
    """The Compare page with its tab `label` opened, as a click on it does (only the open tab runs)."""
    at.session_state[state.W_COMPARE_TAB] = label
    return at.run()


def texts(at: AppTest) -> str:
    """The page's markdown, captions and info boxes, one per line."""
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info])


def html_text(at: AppTest) -> str:
    """The page's HTML blocks (st.html: the values of a step and of the node inspector), one per line."""
    return "\n".join(block.proto.body for block in at.html)


def value_tables(at: AppTest, tips: bool = False) -> list[pd.DataFrame]:
    """The value tables of the page's HTML blocks, as shown (row labels as the index, column labels as the
    columns, the cells' texts; with `tips`, each cell's tooltip instead: its full precision, None when the
    text is the value already)."""
    parser = Tables()
    parser.feed(html_text(at))
    frames = []
    for rows in parser.tables:
        head, body = rows[0], rows[1:]
        frames.append(pd.DataFrame([[tip if tips else text for text, tip in row[1:]] for row in body],
                                   index=[row[0][0] for row in body], columns=[text for text, _ in head[1:]]))
    return frames


def record_tables(at: AppTest) -> list[pd.DataFrame]:
    """The tables of records of the page's HTML blocks (views.html_blocks.records_table: a header row, then one
    row per record), their numbers read back as numbers."""
    parser = Tables()
    parser.feed("\n".join(block.proto.body for block in at.html if 'class="xb"' in block.proto.body))
    frames = []
    for rows in parser.tables:
        frame = pd.DataFrame([[text for text, _ in row] for row in rows[1:]], columns=[text for text, _ in rows[0]])
        frames.append(frame.apply(_numbers))
    return frames


def _numbers(column: pd.Series) -> pd.Series:
    """A column of numbers' texts as numbers, of True and False as bools; any other as it is."""
    if len(column) and set(column) <= {"True", "False"}:
        return column == "True"
    try:
        return pd.to_numeric(column)
    except (ValueError, TypeError):
        return column


def text_blocks(at: AppTest) -> list[str]:
    """The texts of the page's preformatted HTML blocks (views.html_blocks.text_block), in order."""
    found = []
    for block in at.html:
        parser = _Shown()
        parser.feed(block.proto.body)
        if "pre" in parser.tags:
            found.append("".join(parser.text))
    return found


class _Shown(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.text: list[str] = []
        self.styling = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)
        self.styling = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self.styling = False

    def handle_data(self, data: str) -> None:
        if not self.styling:
            self.text.append(data)


def html_shown(at: AppTest) -> tuple[set[str], str]:
    """The tags the page's HTML blocks use, and the text a reader sees of them."""
    parser = _Shown()
    parser.feed(html_text(at))
    return parser.tags, "".join(parser.text)


def position(at: AppTest) -> str:
    """The Step page canvas's position line at the event it shows."""
    shown = stepper(at)
    return shown["frames"][shown["at"]]["text"]


def interactive(at: AppTest) -> AppTest:
    """The sidebar's "Interactive charts" turned on: the pages show plotly figures (`figures`)."""
    return at.toggle(key=state.W_INTERACTIVE_CHARTS).set_value(True).run()


CHART = re.compile(r'<img class="chart" alt="[^"]*" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')


def chart_svgs(at: AppTest) -> list[ElementTree.Element]:
    """The inline SVG charts on the page (what it shows by default), parsed."""
    return [ElementTree.fromstring(base64.b64decode(data)) for block in at.html
            for data in CHART.findall(block.proto.body)]


def chart_titles(at: AppTest) -> list[str]:
    """The titles of the page's inline SVG charts."""
    return [svg.findtext(f"{SVG}title") or "" for svg in chart_svgs(at)]


def figures(at: AppTest) -> list:
    """The plotly figures on the page (with `interactive` on)."""
    return [plotly.io.from_json(chart.proto.spec) for chart in at.get("plotly_chart")]


def array(data) -> np.ndarray:
    """A figure's array as it travels in the spec: a list, or plotly's typed array {dtype, bdata, shape}."""
    if not isinstance(data, dict):
        return np.asarray(data, dtype=float)
    flat = np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
    shape = [int(n) for n in str(data.get("shape", flat.size)).split(",")]
    return flat.reshape(shape).astype(float)


def diagram_svg(at: AppTest, key: str) -> ElementTree.Element:
    """The SVG the diagram component of that widget key was given."""
    return ElementTree.fromstring(diagram_args(at, key)["svg"])


def diagram_args(at: AppTest, key: str) -> dict:
    """What the diagram canvas of that widget key was given (layout, svg, focus, hits, legend, ...)."""
    [component] = [c for c in at.get("component_instance") if c.proto.id.endswith(key)]
    return json.loads(component.proto.json_args)


def step_state(at: AppTest, node_path: str) -> str | None:
    """The trace state (views.styles.NODE_STATES) the Step page's canvas gives a node drawn in its SVG; None
    when the node has no box of its own there."""
    args = diagram_args(at, "w_step_diagram")
    box = svg_id("node", node_path)
    if not any(g.get("id") == box for g in ElementTree.fromstring(args["svg"]).iter(f"{SVG}g")):
        return None
    return next((name for name, ids in args["marks"]["states"].items() if box in ids), None)


def outline(svg: ElementTree.Element, node_path: str) -> str | None:
    """The stroke colour of a node's box in the SVG (see views.dot for the ids)."""
    for group in svg.iter(f"{SVG}g"):
        if group.get("id") == svg_id("node", node_path):
            shape = next(e for e in group.iter() if e.tag in (f"{SVG}path", f"{SVG}polygon"))
            return shape.get("stroke")
    return None


def stepper(at: AppTest) -> dict:
    """The Step page canvas's stepper: `at` (the event shown), `last`, and `frames` (event -> marks, position
    text and moves, see views.step_moves.frame) of the events it can show at once."""
    args = diagram_args(at, state.W_STEP_DIAGRAM)["stepper"]
    return {**args, "frames": {int(k): v for k, v in args["frames"].items()}}


def move_target(at: AppTest, name: str) -> int | None:
    """The event the Step page's move `name` ("next", "next_iteration", "level0+", ...) goes to; None when it
    is disabled."""
    shown = stepper(at)
    [target] = [move[4] for move in shown["frames"][shown["at"]]["moves"] if move[0] == name]
    return target


def step_to(at: AppTest, index: int) -> AppTest:
    """Moves the Step page's cursor as the canvas does (its slider or a move): the canvas tells the server the
    event as its value, whose callback sets the cursor; AppTest cannot click inside a component, so this sets
    the cursor and reruns."""
    assert 0 <= index <= stepper(at)["last"]
    at.session_state[state.CURSOR] = index
    return at.run()


def step_move(at: AppTest, name: str) -> AppTest:
    """A click on the Step page's move `name` (it must be enabled)."""
    target = move_target(at, name)
    assert target is not None, f"the move {name!r} is disabled"
    return step_to(at, target)
