"""onnxruntime's com.microsoft schemas (explorer/spec/contrib_schemas.json): nodes of that domain are checked
against them like the default domain's against onnx's, and the table is what the installed onnxruntime says."""
from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

import explorer
from explorer.spec.contrib import CONTRIB_DOMAIN, _table, contrib_doc, contrib_operators, contrib_schema
from explorer.spec.schema import schema_at


def _model(op, inputs, **attrs):
    node = h.make_node(op, [f"x{i}" for i in range(len(inputs))], ["y"], name="n", domain=CONTRIB_DOMAIN, **attrs)
    graph = h.make_graph([node], "g", [h.make_tensor_value_info(f"x{i}", T.FLOAT, list(v.shape))
                                       for i, v in enumerate(inputs)], [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(CONTRIB_DOMAIN, 1)])
    return model, {f"x{i}": v for i, v in enumerate(inputs)}


def test_the_table_is_the_installed_onnxruntimes():
    if _table()["onnxruntime"] != onnxruntime.__version__:
        pytest.skip(f"the table comes from onnxruntime {_table()['onnxruntime']}; {onnxruntime.__version__} is "
                    "installed (python tools/contrib_schemas.py writes it anew)")
    theirs = {s.name: s for s in ort_c.get_all_operator_schema() if s.domain == CONTRIB_DOMAIN}
    assert set(contrib_operators()) == set(theirs)
    assert contrib_operators("") == ("LayerNormalization", "SimplifiedLayerNormalization")
    for name, schema in theirs.items():
        ours = contrib_schema(name, schema.since_version)
        assert ours is not None and ours.since_version == schema.since_version
        assert {k: a.type.name for k, a in ours.attributes.items()} == \
            {k: a.type.name for k, a in schema.attributes.items()}, name
        assert [f.name for f in ours.inputs] == [f.name for f in schema.inputs], name
        assert (ours.max_input, ours.max_output) == (schema.max_input, schema.max_output), name


def test_defaults_come_from_onnxruntime():
    schema = contrib_schema("SkipLayerNormalization", 1)
    assert schema is not None
    assert schema.attributes["epsilon"].default_value.f == pytest.approx(1e-12)
    assert contrib_schema("SkipLayerNormalization", 0) is None and contrib_schema("NoSuchOp", 1) is None


def test_the_default_domains_layer_norms_before_onnx_defines_them_are_onnxruntimes():
    assert schema_at("LayerNormalization", 16, "").since_version == 1
    assert schema_at("LayerNormalization", 17, "").since_version == 17
    assert schema_at("SimplifiedLayerNormalization", 21, "").attributes["stash_type"].default_value.i == 1
    assert schema_at("Affine", 21, "") is None  # onnxruntime's other old ones are not taken


def test_an_attribute_the_schema_lacks_is_refused_naming_it():
    x = np.zeros((1, 2, 4), np.float32)
    model, feeds = _model("SkipLayerNormalization", [x, x, np.ones(4, np.float32)], momentum=0.5)
    with pytest.raises(explorer.ExecutionError, match=r"node 'n'.*SkipLayerNormalization-1 has no attribute "
                                                      r"'momentum'"):
        explorer.run(model, feeds)


def test_an_operator_onnxruntime_does_not_define_says_so():
    model, feeds = _model("NoSuchOp", [np.zeros(2, np.float32)])
    with pytest.raises(explorer.UnsupportedOperatorError, match="which onnxruntime does not define"):
        explorer.run(model, feeds)


def test_the_doc_is_onnxruntimes_with_its_address():
    doc = contrib_doc("Tokenizer")
    assert doc is not None and "tokenexp" in doc.text and doc.domain == CONTRIB_DOMAIN
    assert doc.url.endswith("ContribOperators.md#com.microsoft.Tokenizer")
    assert "mark" in doc.attributes and doc.source.startswith("onnxruntime ")
    assert contrib_doc("NoSuchOp") is None


def _fused_model():
    x = h.make_tensor_value_info("x", T.FLOAT, [2, 4])
    nodes = [h.make_node("FastGelu", ["x"], ["g"], name="gelu", domain=CONTRIB_DOMAIN),
             h.make_node("LayerNormalization", ["g", "scale"], ["y"], name="norm", axis=-1),
             h.make_node("Relu", ["y"], ["z"], name="relu")]
    graph = h.make_graph(nodes, "g", [x], [h.make_tensor_value_info("z", T.FLOAT, None)],
                         initializer=[h.make_tensor("scale", T.FLOAT, [4], [1.0] * 4)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 14), h.make_opsetid(CONTRIB_DOMAIN, 1)])


def test_the_inspector_gives_onnxruntimes_doc_of_its_own_operators():
    from explorer.views.inspector import node_details

    model = explorer.load(_fused_model())
    gelu = node_details(model, "gelu")
    assert gelu.domain == CONTRIB_DOMAIN and gelu.doc is not None and "tanh" in gelu.doc.text
    norm = node_details(model, "norm")  # LayerNormalization at opset 14: onnxruntime's, before onnx's 17
    assert norm.doc is not None and norm.doc.domain == "" and "epsilon" in norm.doc.attributes
    assert node_details(model, "relu").doc is None


@pytest.mark.usefixtures("fresh_app")
def test_the_graph_page_shows_the_doc_of_a_picked_contrib_node():
    from explorer.ui import state
    from tests.support.apptest import assert_clean, start, upload

    at = upload(start(), "fused.onnx", _fused_model().SerializeToString())
    at.selectbox(key=state.W_NODE_PICK).set_value("gelu").run()
    assert_clean(at)
    assert any("domain com" in c.value and "microsoft" in c.value for c in at.caption)
    [doc] = [e for e in at.expander if "onnxruntime" in e.label and "FastGelu" in e.label]
    assert "0.797885" in doc.html[0].proto.body  # the doc as a text block
    assert any("ContribOperators.md#com.microsoft.FastGelu" in c.value for c in at.caption)
