"""Diagram structure: clusters per body, formal inputs and outputs with their roles, loop-carried back edges,
captures as dashed edges from their outer producer, collapse badges, expansion rules, drill-in with breadcrumb.
graphviz itself parses every DOT text here (dot -Tjson0), so the checks are on what it understood."""
from __future__ import annotations

import pytest

import explorer
from explorer.views.dot import model_to_dot
from explorer.views.dot_escape import parse_svg_id, svg_id
from explorer.views.navigation import breadcrumb, graph_title
from explorer.views.render import dot_available
from explorer.views.styles import CATEGORY_COLOURS
from tests.support.diagrams import box, nested_model, parse_dot, scoped_model

pytestmark = pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed")

THEN = "gate/then_branch"
ELSE = "gate/else_branch"
SCAN = "gate/then_branch/scan"
SCAN_BODY = "gate/then_branch/scan/body"
LOOP = "gate/then_branch/scan/body/loop"
LOOP_BODY = "gate/then_branch/scan/body/loop/body"


@pytest.fixture(scope="module")
def nested():
    return explorer.load(nested_model())


@pytest.fixture(scope="module")
def drawn(nested):
    return parse_dot(model_to_dot(nested).dot)


def cluster(path: str) -> str:
    return "cluster:" + svg_id("graph", path)


def label(parsed, name: str) -> str:
    return parsed.nodes[name]["label"]


def test_every_node_is_one_box_named_by_its_path(nested, drawn):
    for ref in nested.nodes():
        drawn_box = drawn.nodes[box(ref.path)]
        assert drawn_box["id"] == svg_id("node", ref.path)
        assert parse_svg_id(drawn_box["id"]) == ("node", (ref.path,))
        assert ref.op_type in drawn_box["label"]
    ops = [n for n in drawn.nodes if n in {box(r.path) for r in nested.nodes()}]
    assert len(ops) == len(list(nested.nodes()))


def test_each_body_is_a_cluster_nested_inside_its_parent(drawn):
    parents = {THEN: None, ELSE: None, SCAN_BODY: THEN, LOOP_BODY: SCAN_BODY}
    for body, parent_body in parents.items():
        assert cluster(body) in drawn.clusters
        # the wrapper frame of the owner sits between a body and the body around it
        wrapper = drawn.clusters[cluster(body)]["parent"]
        assert wrapper == "cluster:" + svg_id("wrapper", body.rsplit("/", 1)[0])
        outer = drawn.clusters[wrapper]["parent"]
        assert outer == (cluster(parent_body) if parent_body else None)
    assert "If 'gate' · then_branch" in drawn.clusters[cluster(THEN)]["label"]
    assert "Scan 'scan' · body" in drawn.clusters[cluster(SCAN_BODY)]["label"]
    assert "Loop 'loop' · body" in drawn.clusters[cluster(LOOP_BODY)]["label"]
    assert drawn.cluster_of(box(f"{LOOP_BODY}/add_x")) == cluster(LOOP_BODY)
    assert drawn.cluster_of(box(f"{SCAN_BODY}/squash")) == cluster(SCAN_BODY)
    assert drawn.cluster_of(box("relu")) is None


def test_formal_inputs_and_outputs_carry_their_roles(drawn):
    expected = {
        svg_id("input", SCAN_BODY, "0"): ("s_in", "state ← s0"),
        svg_id("input", SCAN_BODY, "1"): ("x_t", "slice of X (axis 0)"),
        svg_id("output", SCAN_BODY, "0"): ("s_out", "state → s_final"),
        svg_id("output", SCAN_BODY, "1"): ("y_t", "scan output → Y (axis 0)"),
        svg_id("input", LOOP_BODY, "0"): ("j", "iteration number"),
        svg_id("input", LOOP_BODY, "1"): ("cond_in", "condition in"),
        svg_id("input", LOOP_BODY, "2"): ("acc_in", "carried ← s_in"),
        svg_id("output", LOOP_BODY, "0"): ("cond_out", "condition out"),
        svg_id("output", LOOP_BODY, "1"): ("acc_out", "carried → looped"),
        svg_id("output", THEN, "0"): ("s_final", "→ state"),
        svg_id("output", ELSE, "1"): ("x_copy", "→ ys"),
    }
    for name, (value, role) in expected.items():
        text = label(drawn, name).replace("&gt;", ">").replace("&lt;", "<")
        assert value in text and role in text, (name, text)
    assert "3 float" in label(drawn, svg_id("input", SCAN_BODY, "1"))
    for name in (svg_id("input", LOOP_BODY, "2"), svg_id("output", SCAN_BODY, "1")):
        assert drawn.cluster_of(name) == cluster(name.split(":")[1])


def test_loop_carried_pairs_are_back_edges(drawn):
    carried = {(t, h) for t, h, a in drawn.edges if a.get("constraint") == "false"}
    assert carried == {
        (svg_id("output", LOOP_BODY, "0"), svg_id("input", LOOP_BODY, "1")),  # condition
        (svg_id("output", LOOP_BODY, "1"), svg_id("input", LOOP_BODY, "2")),  # acc
        (svg_id("output", SCAN_BODY, "0"), svg_id("input", SCAN_BODY, "0")),  # Scan state; the scan output is not
    }
    for t, h in carried:
        assert "dashed" in drawn.edges_between(t, h)[0]["style"]


def test_captures_are_dashed_edges_from_the_outer_producer(drawn):
    captures = {
        (svg_id("input", SCAN_BODY, "1"), box(f"{LOOP_BODY}/add_x")),  # x_t, one level up
        (svg_id("input", "", "3"), box(f"{LOOP_BODY}/scale_it")),  # scale, three levels up
        (svg_id("input", "", "2"), box(f"{ELSE}/negate")),  # s0
        (svg_id("input", "", "1"), box(f"{ELSE}/copy")),  # X
        (svg_id("input", "", "2"), box(SCAN)),  # the Scan in then_branch reads s0 and X from the main graph
        (svg_id("input", "", "1"), box(SCAN)),
    }
    for tail, head in captures:
        (edge,) = drawn.edges_between(tail, head)
        assert edge["style"] == "dashed", (tail, head)
    dashed = {(t, h) for t, h, a in drawn.visible_edges() if a.get("style") == "dashed"
              and a.get("constraint") != "false"}
    assert dashed == captures
    # a local edge is solid, with the value's name and inferred type
    (edge,) = drawn.edges_between(box(f"{LOOP_BODY}/add_x"), box(f"{LOOP_BODY}/scale_it"))
    assert "style" not in edge and "acc_sum" in edge["label"] and "3 float" in edge["label"]
    (edge,) = drawn.edges_between(box("relu"), svg_id("output", "", "1"))
    assert "T×3 float" in edge["label"]


def test_control_flow_edges_enter_the_header_and_leave_the_end_box(drawn):
    assert drawn.edges_between(svg_id("input", "", "0"), box("gate"))
    assert drawn.edges_between(svg_id("exit", "gate"), box("relu"))
    assert drawn.edges_between(svg_id("input", "", "1"), box(SCAN))  # X scanned
    assert drawn.edges_between(box(SCAN), svg_id("input", SCAN_BODY, "0"))  # binding
    assert drawn.edges_between(svg_id("output", SCAN_BODY, "1"), svg_id("exit", SCAN))
    assert not drawn.edges_between(box("gate"), box("relu"))


def test_initializers_fold_into_their_consumer(nested, drawn):
    assert "steps = 2" in label(drawn, box(LOOP))  # a main-graph initializer read two levels down
    assert not [n for n in drawn.nodes if n.startswith("init:")]
    unfolded = parse_dot(model_to_dot(nested, fold_initializers=False).dot)
    init = svg_id("init", "", "steps")
    assert "steps = 2" in label(unfolded, init)
    (edge,) = unfolded.edges_between(init, box(LOOP))
    assert edge["style"] == "dashed"  # captured by the Scan body's Loop


def test_collapsed_bodies_show_a_badge_and_their_captures(nested):
    drawn = parse_dot(model_to_dot(nested, expand="none").dot)
    assert not [c for c in drawn.clusters if c.startswith("cluster:graph:")]
    text = label(drawn, box("gate"))
    assert "▸ then_branch · 7 nodes · depth 3" in text
    assert "▸ else_branch · 2 nodes · depth 1" in text
    for i in (1, 2, 3):  # X, s0 and scale are read inside the bodies
        (edge,) = drawn.edges_between(svg_id("input", "", str(i)), box("gate"))
        assert edge["style"] == "dashed"
    assert "style" not in drawn.edges_between(svg_id("input", "", "0"), box("gate"))[0]
    assert drawn.edges_between(box("gate"), box("relu"))  # no end box when collapsed
    assert not [n for n in drawn.nodes if n.startswith("input:gate")]


def test_expand_rules(nested):
    def bodies(**kw) -> set[str]:
        text = model_to_dot(nested, **kw).dot
        return {parse_svg_id(c[len("cluster:"):])[1][0] for c in parse_dot(text).clusters if ":graph:" in c}

    everything = {THEN, ELSE, SCAN_BODY, LOOP_BODY}
    assert bodies() == everything
    assert bodies(expand="all") == everything
    assert bodies(expand="none") == set()
    assert bodies(expand=[LOOP_BODY]) == {THEN, SCAN_BODY, LOOP_BODY}  # enclosing bodies open too
    assert bodies(expand=ELSE) == {ELSE}
    assert bodies(expand={ELSE: False}) == {THEN, SCAN_BODY, LOOP_BODY}
    assert bodies(max_expanded_nodes=3) == {ELSE}  # then_branch holds 7 nodes, hiding the small Loop body
    assert bodies(max_expanded_nodes=3, focus=SCAN_BODY) == {LOOP_BODY}
    assert bodies(max_expanded_nodes=3, highlight=[f"{LOOP_BODY}/add_x"]) == everything
    with pytest.raises(ValueError, match="unknown body graph path 'nope'"):
        model_to_dot(nested, expand=["nope"])


def test_drill_in_draws_one_body_under_a_breadcrumb(nested):
    text = model_to_dot(nested, focus=SCAN_BODY).dot
    drawn = parse_dot(text)
    inside = {box(r.path) for r in nested.nodes() if r.path.startswith(SCAN_BODY + "/")}
    ops = {box(r.path) for r in nested.nodes()} & set(drawn.nodes)
    assert ops == inside
    assert "main graph › If 'gate' · then_branch › Scan 'scan' · body" in drawn.graph["label"]
    # scale comes from the main graph: a stub; x_t is the focused body's own formal input
    stub = svg_id("outer", "scale")
    assert "↑ scale" in label(drawn, stub)
    assert drawn.edges_between(stub, box(f"{LOOP_BODY}/scale_it"))
    assert drawn.edges_between(svg_id("input", SCAN_BODY, "1"), box(f"{LOOP_BODY}/add_x"))
    assert "state ← s0" in label(drawn, svg_id("input", SCAN_BODY, "0"))
    (carried,) = drawn.edges_between(svg_id("output", SCAN_BODY, "0"), svg_id("input", SCAN_BODY, "0"))
    assert carried["constraint"] == "false"  # the drilled-in body's own state still loops back


def test_breadcrumb_and_titles(nested):
    assert breadcrumb(nested, LOOP_BODY) == [
        ("", "main graph"), (THEN, "If 'gate' · then_branch"), (SCAN_BODY, "Scan 'scan' · body"),
        (LOOP_BODY, "Loop 'loop' · body")]
    assert breadcrumb(nested, LOOP_BODY, top=SCAN_BODY) == [
        (SCAN_BODY, "Scan 'scan' · body"), (LOOP_BODY, "Loop 'loop' · body")]
    assert graph_title(nested, "") == "main graph"
    with pytest.raises(ValueError):
        breadcrumb(nested, ELSE, top=THEN)
    with pytest.raises(ValueError):
        breadcrumb(nested, "no/such/graph")


def test_graph_path_is_the_top_of_the_drawing(nested):
    text = model_to_dot(nested, graph_path=THEN, focus=LOOP_BODY).dot
    drawn = parse_dot(text)
    assert drawn.graph["label"] == "<B>If 'gate' · then_branch › Scan 'scan' · body › Loop 'loop' · body</B>"
    assert {n for n in drawn.nodes if not n.startswith(("input:", "output:", "outer:"))} == {
        box(f"{LOOP_BODY}/{n}") for n in ("add_x", "scale_it", "keep_going")}
    plain = parse_dot(model_to_dot(nested, graph_path=THEN).dot)
    assert box(SCAN) in plain.nodes and box("gate") not in plain.nodes
    with pytest.raises(ValueError, match="outside graph_path"):
        model_to_dot(nested, graph_path=THEN, focus=ELSE)
    with pytest.raises(ValueError, match="neither a graph path nor a scope key"):
        model_to_dot(nested, focus="nowhere")


def test_op_categories_colour_the_boxes():
    drawn = parse_dot(model_to_dot(explorer.load(scoped_model()), scopes="all").dot)
    softmax = drawn.nodes[box("/head/Softmax")]
    matmul = drawn.nodes[box("/head/fc/MatMul")]
    assert softmax["fillcolor"] == CATEGORY_COLOURS["activation"][0]
    assert matmul["fillcolor"] == CATEGORY_COLOURS["linear"][0]
    assert "w_out ⟨4×4 float⟩" in matmul["label"]


def test_short_attributes_in_labels():
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
         helper.make_node("Cast", ["t"], ["c"], to=TensorProto.FLOAT16),
         helper.make_node("Softmax", ["c"], ["y"], axis=-1)],
        "attrs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 3, 2])])
    model = explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
    drawn = parse_dot(model_to_dot(model).dot)
    assert "perm=[0,2,1]" in label(drawn, box("Transpose_0"))
    assert "to=float16" in label(drawn, box("Cast_1"))
    assert "axis=-1" in label(drawn, box("Softmax_2"))
    (edge,) = drawn.edges_between(box("Transpose_0"), box("Cast_1"))
    assert "1×3×2 float" in edge["label"]


def test_body_roles_follow_the_spec():
    from onnx import TensorProto, helper

    from explorer.views.roles import body_roles

    def body(n_in: int, n_out: int):
        return helper.make_graph([], "b", [helper.make_tensor_value_info(f"i{k}", TensorProto.FLOAT, None)
                                           for k in range(n_in)],
                                 [helper.make_tensor_value_info(f"o{k}", TensorProto.FLOAT, None) for k in range(n_out)])

    seqmap = helper.make_node("SequenceMap", ["seq", "t", "s2"], ["out_a", "out_b"])
    roles = body_roles(seqmap, "body", body(3, 2), 21, is_sequence=lambda name: name == "s2")
    assert roles.inputs == ("element of seq", "= t", "element of s2")
    assert roles.outputs == ("→ sequence out_a", "→ sequence out_b") and roles.carried == ()
    # Scan-8 takes sequence_lens first and slices [batch, sequence, ...] inputs along axis 1; two state
    # variables, one scan input read backwards on axis 1 (Scan-9+)
    scan8 = helper.make_node("Scan", ["lens", "h", "c", "x"], ["h_f", "c_f", "y"], num_scan_inputs=1, directions=[1])
    assert body_roles(scan8, "body", body(3, 3), 8).inputs == ("state ← h", "state ← c",
                                                               "slice of x (axis 1, reversed)")
    scan = helper.make_node("Scan", ["h", "c", "x"], ["h_f", "c_f", "y"], num_scan_inputs=1,
                            scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[2])
    roles = body_roles(scan, "body", body(3, 3), 21)
    assert roles.inputs[2] == "slice of x (axis 1, reversed)"
    assert roles.outputs == ("state → h_f", "state → c_f", "scan output → y (axis 2)")
    assert roles.carried == ((0, 0), (1, 1))
    loop = helper.make_node("Loop", ["M", "", "a"], ["a_f", "stack"])
    roles = body_roles(loop, "body", body(3, 3), 21)
    assert roles.inputs == ("iteration number", "condition in", "carried ← a")
    assert roles.outputs == ("condition out", "carried → a_f", "scan output → stack (stacked)")
    assert roles.carried == ((0, 1), (1, 2))


def test_undefined_names_and_stable_output():
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Add", ["x", "ghost"], ["y"], name="add")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
    text = model_to_dot(model).dot
    drawn = parse_dot(text)
    assert "? ghost" in label(drawn, svg_id("missing", "ghost"))
    assert drawn.edges_between(svg_id("missing", "ghost"), box("add"))
    assert model_to_dot(model).dot == text  # the same model draws the same text
