"""Every text of an AppTest page that the browser renders as Markdown (texts, alerts, headings, captions, widget
labels and help, radio and pill options, expander, tab and popover labels), every plot's text (plotly reads a
few HTML tags in it) and every diagram's SVG: what a test of model-controlled text reads."""
from __future__ import annotations

import json
from collections.abc import Iterator
from xml.etree import ElementTree

import plotly.io
from streamlit.testing.v1 import AppTest

from tests.support.apptest import chart_svgs

PLAIN = {"text", "html", "code", "json", "dataframe", "arrow_data_frame", "selectbox", "multiselect", "exception"}
PLOT_KEYS = {"text", "name", "title", "hovertemplate", "hovertext", "ticktext", "texttemplate"}


def _nodes(node) -> Iterator:
    yield node
    children = getattr(node, "children", None) or {}
    for child in children.values() if isinstance(children, dict) else children:
        yield from _nodes(child)


def markdown_sources(at: AppTest) -> list[tuple[str, str]]:
    """(where, markdown source) of everything the page renders as Markdown."""
    found = []
    for node in _nodes(at._tree):
        proto, kind = getattr(node, "proto", None), getattr(node, "type", "")
        if proto is None or kind in PLAIN or not hasattr(proto, "ListFields"):
            continue
        for field, value in proto.ListFields():
            if field.name in ("body", "label", "help"):
                found.append((f"{kind}.{field.name}", value))
            elif field.name in ("expandable", "tab", "popover") and value.label:
                found.append((f"{field.name}.label", value.label))
            elif field.name == "options" and kind in ("radio", "button_group"):
                found += [(f"{kind}.option", getattr(o, "content", o)) for o in value]
    return found


def _strings(value, key: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str) and key in PLOT_KEYS:
        yield value


def plot_texts(at: AppTest) -> list[str]:
    """The texts of every plotly figure on the page (titles, names, hover texts, tick labels)."""
    return [text for chart in at.get("plotly_chart")
            for text in _strings(json.loads(plotly.io.from_json(chart.proto.spec).to_json()))]


def svg_markup(at: AppTest) -> list[str]:
    """Elements and attributes of the diagrams' and the inline charts' SVG that fetch or run something: links,
    images, foreign objects, scripts, event handlers."""
    found = []
    drawn = [json.loads(component.proto.json_args).get("svg") for component in at.get("component_instance")]
    for svg in [ElementTree.fromstring(s) for s in drawn if s] + chart_svgs(at):
        for element in svg.iter():
            tag = element.tag.rsplit("}", 1)[-1]
            if tag in ("image", "foreignObject", "script", "iframe", "img"):
                found.append(f"<{tag}>")
            found += [f"{tag} {name}" for name in element.attrib if name.lower().startswith("on")
                      or name.rsplit("}", 1)[-1] == "href"]  # graphviz's <a> carries only tooltips
    return found
