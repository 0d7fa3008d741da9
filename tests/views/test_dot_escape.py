"""Any name is safe: DOT stays valid, the SVG graphviz writes from it parses as XML with no injected markup,
ids map back to node paths, and labels show the names literally."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import explorer
from explorer.views.dot import model_to_dot
from explorer.views.dot_escape import MAX_KEY, decode, encode, html, parse_svg_id, shorten, svg_id, visible
from explorer.views.render import dot_available, render_svg
from tests.support.diagrams import HOSTILE, hostile_model

needs_dot = pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
# protobuf strings are UTF-8: everything but lone surrogates
names = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(names)
def test_encode_round_trips_and_leaves_only_safe_characters(text):
    encoded = encode(text)
    assert decode(encoded) == text
    assert not set(encoded) & set('&"\'<>\\: \n\t')
    assert encoded.isprintable()
    kind, keys = parse_svg_id(svg_id("node", text, text))
    assert kind == "node" and keys == (text, text)


def test_ordinary_paths_stay_readable():
    for path in ("Loop_0/body/If_2/then_branch/Add_1", "/model/stft/Conv", "layer.0/attn", "名前/ü"):
        assert encode(path) == path


@given(names)
def test_html_text_has_no_markup_or_control_characters(text):
    escaped = html(text)
    assert "<" not in escaped and ">" not in escaped and '"' not in escaped
    assert all(c.isprintable() or c == " " for c in escaped)
    assert "&" not in escaped.replace("&amp;", "").replace("&lt;", "").replace("&gt;", "").replace("&quot;", "")


def svg_elements(svg: str):
    root = ET.fromstring(svg)  # raises on anything that is not well-formed XML
    for element in root.iter():
        assert element.tag.startswith(SVG), element.tag  # svg elements only: no <script>, <foreignObject>…
        assert element.tag not in (f"{SVG}script", f"{SVG}foreignObject")
        for attr in element.attrib:
            assert not attr.lower().startswith("on"), attr
            assert attr != f"{XLINK}href" and attr != "href", attr
    return root


def node_groups(root) -> dict[str, tuple[str, str]]:
    """SVG id of each node group -> (its <title>, all its text joined)."""
    out = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "node":
            title = g.find(f"{SVG}title").text
            out[g.get("id")] = (title, "".join(t.text or "" for t in g.iter(f"{SVG}text")))
    return out


@needs_dot
@pytest.mark.parametrize("options", [{}, {"fold_initializers": False}, {"expand": "none"},
                                     {"focus": "If_24/then_branch"}, {"scopes": "none"}])
def test_hostile_names_render_to_valid_svg(options):
    model = explorer.load(hostile_model())
    svg = render_svg(model_to_dot(model, **options).dot)
    groups = node_groups(svg_elements(svg))
    for ref in model.nodes():
        element_id = svg_id("node", ref.path)
        if element_id not in groups:
            continue  # outside a focus
        title, text = groups[element_id]
        assert title == element_id and parse_svg_id(title) == ("node", (ref.path,))
        if ref.name and ref.path == ref.name:  # unique names are shown literally (made visible, shortened)
            # inside the layer its scope names (the part before its last "/"), a node shows the rest of its name
            shown = ref.name if options.get("scopes") == "none" else ref.name.rsplit("/", 1)[-1]
            assert f"'{shorten(visible(shown), 32)}'" in text, (ref.name, text)


@needs_dot
def test_every_hostile_name_shows_up_literally():
    model = explorer.load(hostile_model())
    root = svg_elements(render_svg(model_to_dot(model, fold_initializers=False).dot))
    text = "".join(t.text or "" for t in root.iter(f"{SVG}text"))
    for name in HOSTILE:
        if name:
            assert shorten(visible(f"w0 {name}" if name == HOSTILE[0] else name), 24)[:6] in text, name
    assert "<script>alert(1)</script>" in text  # as text, never as an element
    assert "\\N\\G\\L" in text  # graphviz's own escapes stay literal


def one_node_model(node_name: str, value_name: str, input_name: str) -> explorer.Model:
    if value_name == input_name:
        value_name += "_"
    body = helper.make_graph([helper.make_node("Neg", [value_name], ["b" + value_name], name=node_name)], "b", [],
                             [helper.make_tensor_value_info("b" + value_name, TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Add", [input_name, "w"], [value_name], name=node_name),
         helper.make_node("If", ["c"], ["out"], name=node_name, then_branch=body, else_branch=body)],
        node_name, [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, [2]),
                    helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.ones(2, np.float32), "w")])
    return explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))


@needs_dot
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names, names.filter(lambda s: s not in ("", "w", "c", "out")),
       names.filter(lambda s: s not in ("", "w", "c", "out")))
def test_random_names_render_to_valid_svg(node_name, value_name, input_name):
    model = one_node_model(node_name, value_name, input_name)
    groups = node_groups(svg_elements(render_svg(model_to_dot(model).dot)))
    for ref in model.nodes():
        title, _ = groups[svg_id("node", ref.path)]
        assert parse_svg_id(title) == ("node", (ref.path,))


def test_ids_of_keys_past_graphviz_limits_are_short_stable_and_parse_back_through_their_drawing():
    key = "a/" + "n" * 20_000
    element = svg_id("node", key)
    assert len(element) < MAX_KEY and element == svg_id("node", key) != svg_id("node", key + "x")
    drawing = model_to_dot(one_node_model(key, "v", "x"))
    long = [path for path in drawing.nodes if len(path) > MAX_KEY]  # the If's branches hold nodes named `key`
    assert len(long) == 2
    for path in long:
        assert len(drawing.nodes[path]) < MAX_KEY and drawing.parse(drawing.nodes[path]) == ("node", (path,))
    assert drawing.parse(svg_id("input", "", "0")) == ("input", ("", "0"))


def test_the_process_keeps_no_long_key_beyond_the_drawings_that_hold_them():
    """Long keys were remembered in a dict of the process that only grew: every long name of every model any
    session drew stayed in memory for the server's life."""
    drawings = [model_to_dot(one_node_model(f"{i}/" + "n" * 20_000, "v", "x")) for i in range(3)]
    for drawing in drawings:
        for path, element in drawing.nodes.items():
            if len(path) > MAX_KEY:
                assert drawing.parse(element) == ("node", (path,))
                assert parse_svg_id(element) == ("node", (element.removeprefix("node:"),))  # no drawing: the digest
                assert (drawings[0].parse(element) == ("node", (path,))) == (drawing is drawings[0])
