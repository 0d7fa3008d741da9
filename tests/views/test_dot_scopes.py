"""Large graphs: PyTorch-style scopes as collapsible clusters, blocks for graphs without scope names, the
box budget, drill-in to a scope, and search."""
from __future__ import annotations

import pytest
from onnx import TensorProto, helper

import explorer
from explorer.views.dot import model_to_dot
from explorer.views.dot_escape import svg_id
from explorer.views.grouping import BLOCK_LIMIT, ScopeTree, auto_depth
from explorer.views.layers import scope_parts
from explorer.views.navigation import breadcrumb
from explorer.views.render import dot_available
from explorer.views.search import search, search_nodes
from tests.support.diagrams import box, nested_model, parse_dot, scoped_model

needs_dot = pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed")


@pytest.fixture(scope="module")
def scoped():
    return explorer.load(scoped_model())


def chain_model(names: list[str]) -> explorer.Model:
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=n) for i, n in enumerate(names)]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(f"v{len(names)}", TensorProto.FLOAT, [2])])
    return explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))


def test_scope_parts():
    assert scope_parts("/encoder/layer.0/attn/MatMul") == ("encoder", "layer.0", "attn")
    assert scope_parts("/Relu") == () and scope_parts("Relu_3") == () and scope_parts("") == ()
    assert scope_parts("model/dense/MatMul") == ("model", "dense")


def test_scope_tree_of_an_export(scoped):
    tree = ScopeTree(scoped.index.graphs[""])
    assert set(tree.scopes) == {"/encoder", "/head"} | {
        f"/encoder/layer.{i}{s}" for i in range(3) for s in ("", "/attn", "/mlp")}
    assert tree.members[:2] == ["/proj/MatMul", "/Relu"]  # single-node scopes dissolve into their parent
    layer = tree.scopes["/encoder/layer.1"]
    assert layer.size == 7 and layer.depth == 1 and layer.parent is tree.scopes["/encoder"]
    assert [m if isinstance(m, str) else m.key for m in layer.members] == [
        "/encoder/layer.1/attn", "/encoder/layer.1/Add", "/encoder/layer.1/mlp", "/encoder/layer.1/Add_1"]
    assert tree.scopes["/encoder/layer.1/mlp"].nodes() == ["/encoder/layer.1/mlp/fc1/MatMul",
                                                           "/encoder/layer.1/mlp/act/Relu"]
    assert [s.key for s in tree.chain("/encoder/layer.2/attn/Softmax")] == [
        "/encoder", "/encoder/layer.2", "/encoder/layer.2/attn"]
    assert auto_depth(tree.members, 4) == 0  # proj, Relu, encoder, head
    assert auto_depth(tree.members, 7) == 1  # encoder opens into its 3 layers, head into 2 nodes
    assert auto_depth(tree.members, 100) == 3  # every scope open: the deepest (attn, mlp) sit at depth 2


def test_chains_merge_and_bodies_key_their_scopes():
    model = chain_model(["/a/b/c/X", "/a/b/c/Y", "/a/Z"])
    tree = ScopeTree(model.index.graphs[""])
    assert set(tree.scopes) == {"/a", "/a/b/c"}
    assert tree.scopes["/a/b/c"].label == "b/c"
    only = ScopeTree(chain_model(["/a/b/X", "/a/b/Y"]).index.graphs[""])
    assert set(only.scopes) == {"/a/b"} and only.scopes["/a/b"].label == "a/b"


@needs_dot
def test_scopes_draw_as_clusters_or_boxes(scoped):
    drawn = parse_dot(model_to_dot(scoped, scopes="all").dot)
    attn = "cluster:" + svg_id("scope", "/encoder/layer.0/attn")
    assert drawn.clusters[attn]["parent"] == "cluster:" + svg_id("scope", "/encoder/layer.0")
    assert drawn.cluster_of(box("/encoder/layer.0/attn/Softmax")) == attn
    assert "<B>Softmax</B>" in drawn.nodes[box("/encoder/layer.0/attn/Softmax")]["label"]  # leaf name only
    collapsed = parse_dot(model_to_dot(scoped, scopes="none").dot)
    scope = svg_id("scope", "/encoder")
    assert "21 nodes" in collapsed.nodes[scope]["label"] and "MatMul×9" in collapsed.nodes[scope]["label"]
    assert not collapsed.clusters
    assert {n for n in collapsed.nodes if not n.startswith(("input:", "output:"))} == {
        box("/proj/MatMul"), box("/Relu"), scope, svg_id("scope", "/head")}
    (edge,) = collapsed.edges_between(box("/Relu"), scope)  # h0 feeds two nodes inside: one edge
    assert "h0" in edge["label"]
    (edge,) = collapsed.edges_between(scope, svg_id("scope", "/head"))
    assert "/encoder/layer.2/out" in edge["tooltip"]


@needs_dot
def test_box_budget_and_reveal(scoped):
    small = parse_dot(model_to_dot(scoped, max_boxes=4).dot)
    assert svg_id("scope", "/encoder") in small.nodes
    wider = parse_dot(model_to_dot(scoped, max_boxes=7).dot)
    assert "cluster:" + svg_id("scope", "/encoder") in wider.clusters
    assert svg_id("scope", "/encoder/layer.1") in wider.nodes
    target = "/encoder/layer.1/mlp/act/Relu"
    revealed = parse_dot(model_to_dot(scoped, max_boxes=4, highlight=[target]).dot)
    assert box(target) in revealed.nodes
    assert revealed.nodes[box(target)]["penwidth"] == "4"
    assert svg_id("scope", "/encoder/layer.0") in revealed.nodes  # its siblings stay closed
    explicit = parse_dot(model_to_dot(scoped, scopes=["/encoder/layer.1/mlp"]).dot)
    assert box(target) in explicit.nodes and svg_id("scope", "/head") in explicit.nodes
    with pytest.raises(ValueError, match="unknown scope key"):
        model_to_dot(scoped, scopes=["/decoder"])


@needs_dot
def test_drill_into_a_scope(scoped):
    drawn = parse_dot(model_to_dot(scoped, focus="/encoder/layer.1").dot)
    ops = {n for n in drawn.nodes if not n.startswith(("outer:", "outside:"))}
    assert ops == {box(p) for p in ScopeTree(scoped.index.graphs[""]).scopes["/encoder/layer.1"].nodes()}
    assert drawn.edges_between(svg_id("outer", "/encoder/layer.0/out"), box("/encoder/layer.1/attn/MatMul"))
    assert drawn.edges_between(box("/encoder/layer.1/Add_1"), svg_id("outside", "/encoder/layer.1/out"))
    assert "main graph › encoder › layer.1" in drawn.graph["label"]
    assert breadcrumb(scoped, "/encoder/layer.1") == [("", "main graph"), ("/encoder", "encoder"),
                                                      ("/encoder/layer.1", "layer.1")]


@needs_dot
def test_graphs_without_scope_names_get_blocks():
    count = 2 * BLOCK_LIMIT + 7
    model = chain_model([f"Relu_{i}" for i in range(count)])
    tree = ScopeTree(model.index.graphs[""])
    blocks = tree.members
    assert len(blocks) <= 101 and all(not isinstance(b, str) for b in blocks)
    assert [p for b in blocks for p in b.nodes()] == [f"Relu_{i}" for i in range(count)]
    first = blocks[0]
    assert first.key == f"#0-{first.size - 1}" and first.label == f"Relu_0 … Relu_{first.size - 1}"
    drawn = parse_dot(model_to_dot(model).dot)
    assert len(drawn.nodes) == len(blocks) + 2  # one box per block, plus the input and the output
    inside = parse_dot(model_to_dot(model, focus=first.key).dot)
    assert {n for n in inside.nodes if not n.startswith(("outer:", "outside:"))} == {box(p) for p in first.nodes()}


def test_search(scoped):
    assert len(search_nodes(scoped, "op:MatMul")) == 11
    assert search_nodes(scoped, "name:layer.2/attn") == [
        "/encoder/layer.2/attn/MatMul", "/encoder/layer.2/attn/Softmax", "/encoder/layer.2/attn/MatMul_1"]
    assert search_nodes(scoped, "value:/encoder/layer.1/res") == [
        "/encoder/layer.1/Add", "/encoder/layer.1/mlp/fc1/MatMul", "/encoder/layer.1/Add_1"]
    hits = search(scoped, "softmax")
    assert [h.field for h in hits] == ["op"] * 4
    assert search(scoped, "w_q")[0].field == "value"  # initializer names are value names too
    assert search_nodes(scoped, "") == [] and search_nodes(scoped, "op:") == []
    assert len(search_nodes(scoped, "relu", limit=2)) == 2
    nested = explorer.load(nested_model())
    assert search_nodes(nested, "op:add") == ["gate/then_branch/scan/body/loop/body/add_x"]
    assert search_nodes(nested, "x_t") == ["gate/then_branch/scan/body/loop/body/add_x"]
