"""Layers: the module hierarchy exporters wrote (dynamo's metadata, TorchScript's and optimum's scoped names,
tf2onnx's layer names) groups real exports into the modules of the framework model they came from, and every
page reads it (the drawing's boxes, search, the step breadcrumb, the inspector, the worst values)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.views.cursor import breadcrumb_text
from explorer.views.dot_escape import svg_id
from explorer.views.draw_facts import ModelFacts
from explorer.views.grouping import Scope
from explorer.views.inspector import node_details
from explorer.views.layers import metadata_parts, module_paths, relative
from explorer.views.search import search

MODELS = Path(__file__).parents[1] / "models"
GPT2 = MODELS / "generation" / "gpt2"
OVERVIEW = 60  # the Graph page's box budget (pages/graph.py OVERVIEW_BOXES)


@pytest.fixture(scope="module")
def gpt2() -> explorer.Model:
    return explorer.load(GPT2 / "decoder_with_past_model.onnx")


def test_dynamo_scopes_are_module_paths():
    assert relative(["", "encoder", "encoder.layer.0", "encoder.layer.0.attn"]) == ("encoder", "layer.0", "attn")
    model = explorer.load(MODELS / "torch_cells_in_context" / "dynamo_rnnt_predictor.onnx")
    graph = model.index.graphs[""]
    # the recipe's module: RnntPredictor.lstm_layers[i] (CustomLSTM) with x2g, p2g (Linear) and g_norm, c_norm
    found = {p for p in module_paths(graph)}
    assert {("lstm_layers.0", "x2g"), ("lstm_layers.1", "p2g"), ("lstm_layers.0", "g_norm")} <= found
    node = next(n for n in graph.proto.node if metadata_parts(n) == ("lstm_layers.1", "x2g"))
    assert "lstm_layers.1.x2g" in dict((e.key, e.value) for e in node.metadata_props)["pkg.torch.onnx.name_scopes"]
    tree = ModelFacts.of(model).tree(graph)
    assert {"/lstm_layers.0", "/lstm_layers.1"} <= set(tree.scopes)
    assert [m.key for m in tree.members if isinstance(m, Scope)][:2] == ["/lstm_layers.0", "/lstm_layers.1"]


def test_tf2onnx_nodes_without_a_scope_join_their_producers_layer():
    model = explorer.load(MODELS / "keras_exports" / "keras_lstm_stacked.onnx")
    graph = model.index.graphs[""]
    paths = dict(zip((n.name for n in graph.proto.node), module_paths(graph)))
    lstms = [name for name in paths if name.startswith("LSTM__")]
    assert len(lstms) == 2  # tf2onnx names the fused LSTM nodes without their layer
    assert sorted(paths[n] for n in lstms) == [("sequential_1", "lstm_1"), ("sequential_1", "lstm_1_2")]
    tree = ModelFacts.of(model).tree(graph)
    assert tree.members == [tree.scopes["/sequential_1"]]  # nothing left loose at the top


def test_gpt2_with_past_opens_as_its_embeddings_blocks_and_head(gpt2):
    config = json.loads((GPT2 / "config.json").read_text())
    graph = gpt2.index.graphs[""]
    tree = ModelFacts.of(gpt2).tree(graph)
    # TorchScript left its constants and the tied weights' Identity nodes unscoped: they join their layers
    assert tree.members == [tree.scopes["/transformer"], "/lm_head/MatMul"]
    drawing = explorer.model_to_dot(gpt2, max_boxes=OVERVIEW)
    blocks = [f"/transformer/h.{i}" for i in range(config["n_layer"])]
    for key in blocks + ["/transformer/ln_f"]:
        assert svg_id("scope", key) in drawing.boxes, key
    embeddings = [s for s in tree.scopes["/transformer"].members if isinstance(s, Scope) and "#" in s.key]
    assert embeddings[0].label.startswith("wte, wpe")  # the run before the blocks: the embeddings and the mask
    assert drawing.shows("/lm_head/MatMul")
    ops = [b for b in drawing.boxes if b.startswith("node:")]
    assert len(ops) == 1  # no row of Constant boxes above the model: every op inside its layer's box
    assert len(drawing.boxes) <= 25
    assert "transformer/h.0" in drawing.dot  # a layer's box names its whole module path


def test_layers_are_searchable_by_module_path(gpt2, tmp_path):
    hits = search(gpt2, "module:h.1/mlp")
    assert hits and all(h.field == "module" and h.text.startswith("transformer/h.1/mlp") for h in hits)
    assert {h.path for h in hits} == {p for p in gpt2.index.nodes
                                      if ModelFacts.of(gpt2).module_of(p).startswith("transformer/h.1/mlp")}
    dynamo = explorer.load(MODELS / "bridge" / "dynamo_cells.onnx")
    found = search(dynamo, "module:gcell")  # dynamo's node names (node_linear_10) do not say their module
    assert len(found) > 10 and not any("gcell" in h.path for h in found)
    assert {h.path for h in found} <= {h.path for h in search(dynamo, "gcell")}  # a plain query finds them too


def test_breadcrumb_and_inspector_name_the_layer(gpt2):
    path = "/transformer/h.0/attn/MatMul"
    assert path in gpt2.index.nodes
    assert node_details(gpt2, path).module == "transformer/h.0/attn"
    trace = explorer.run(gpt2, _feeds(gpt2))
    event = trace.events_of(path)[0]
    assert breadcrumb_text(gpt2, event).startswith("transformer › h.0 › attn › MatMul")


def _feeds(model: explorer.Model) -> dict:
    """One token after three of past: the shapes optimum's decoder with past is fed while generating."""
    rng = np.random.default_rng(0)
    feeds = {"input_ids": np.array([[5]], np.int64), "attention_mask": np.ones((1, 4), np.int64),
             "position_ids": np.array([[3]], np.int64)}
    for value in model.proto.graph.input:
        if value.name.startswith("past_key_values"):
            feeds[value.name] = rng.standard_normal((1, 4, 3, 8)).astype(np.float32)
    return feeds


def test_worst_values_name_their_layer():
    from explorer.views.compare import worst_rows
    from tests.support.diagrams import scoped_model

    model = explorer.load(scoped_model())
    result = explorer.compare(model, "onnxruntime")
    rows = worst_rows(model, result, 50)
    assert rows and list(rows[0])[:2] == ["node", "module"]
    for row in rows:  # the module path is the node name's scope, as TorchScript writes it
        assert row["module"] == "/".join(row["node"].split("/")[1:-1]), row
    assert any(row["module"].startswith("encoder/layer.") for row in rows)


def test_render_draws_a_big_model_as_its_layers_and_opens_one(tmp_path, capsys):
    from explorer.cli import main

    out = tmp_path / "gpt2.dot"
    assert main(["render", str(GPT2 / "decoder_with_past_model.onnx"), "-o", str(out)]) == 0
    overview = out.read_text()
    boxes = re.findall(r'^\s*"[^"]+" \[', overview, re.MULTILINE)
    assert 10 <= len(boxes) <= 40  # a few dozen boxes for 553 nodes…
    for i in range(2):  # …each block one box, named by its module path
        assert f'id="scope:/transformer/h.{i}"' in overview and f"transformer/h.{i}<" in overview
    assert 'id="node:/transformer/h.0/attn/MatMul"' not in overview
    assert main(["render", str(GPT2 / "decoder_with_past_model.onnx"), "-o", str(out), "--expand", "h.0"]) == 0
    opened = out.read_text()
    assert '"cluster:scope:/transformer/h.0"' in opened and 'id="scope:/transformer/h.1"' in opened
    assert '"cluster:scope:/transformer/h.1"' not in opened
    assert 'id="scope:/transformer/h.0/attn"' in opened  # one level opened, its sub-layers boxes
    assert main(["render", str(GPT2 / "decoder_with_past_model.onnx"), "-o", str(out), "--expand", "h.9"]) == 2
    assert "neither a body graph path nor a layer" in capsys.readouterr().err


def test_random_inputs_of_a_decoder_with_past_run(gpt2):
    """optimum declares the attention mask `[batch_size, past_sequence_length + sequence_length]`: random inputs
    give it the sum of those sizes (it was 2 whatever they were) and ones (a mask), so the decoder runs on random
    inputs (it failed in the mask's Gather) and its drawing opens as its layers, not at a failed node."""
    feeds = gpt2.example_inputs(dims={"batch_size": 1, "sequence_length": 2, "past_sequence_length": 3})
    assert feeds["attention_mask"].shape == (1, 5) and feeds["past_key_values.0.key"].shape == (1, 4, 3, 8)
    assert (feeds["attention_mask"] == 1).all()  # a mask, not random counts (their cumulative sum indexed past it)
    from explorer.model.feeds import symbolic_dims

    assert symbolic_dims(gpt2) == ["batch_size", "sequence_length", "past_sequence_length"]  # the sidebar's sizes
    for seed in range(4):
        assert explorer.run(gpt2, gpt2.example_inputs(seed=seed)).error is None
