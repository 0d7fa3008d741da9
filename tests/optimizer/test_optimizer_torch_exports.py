"""Real PyTorch exports (tests/models/torch_exports, recipe in export_models.py there): loops and a torch.cond
that reshape with their inputs' own sizes, whose shape arithmetic the optimizer folds inside the bodies from what
each body knows of its carried values and of outer values; and a GPT-2 attention block with past keys and values, whose
position ids arange(past, past + seq) have length seq once the propagation cancels past. How many nodes the
optimizer leaves against the other tools, and the proofs on every export, are in test_optimizer_exports.py."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer.optimizer import optimize
from tests.support.optimizer_models import proven

MODELS = Path(__file__).parents[1] / "models" / "torch_exports"


@pytest.fixture(scope="module")
def results():
    return {path.name: optimize(str(path)) for path in sorted(MODELS.glob("*.onnx"))}


def body_steps(result, pattern: str) -> list:
    return [s for s in result.steps if s.pattern == pattern and "body" in s.graph]


def test_decoder_body_drops_the_view_by_its_batch_size(results):
    """y.view(x.size(0), -1) in the body: y is carried, starts as x [batch, 8] and comes back from
    out(h).view(-1, 8), [batch, 8] again, so it is [batch, 8] on every iteration and both views go."""
    result = results["ts_rnn_decoder.onnx"]
    facts = [f for s in body_steps(result, "NoOpReshape") for f in s.facts]
    assert "y.9 has shape [batch, 8]" in facts and "/out/Gemm_output_0 has shape [batch, 8]" in facts
    loop = next(n for n in result.optimized.graph.node if n.op_type == "Loop")
    inner = [n.op_type for n in loop.attribute[0].g.node if n.op_type != "Constant"]
    assert inner == ["Gemm", "Gemm", "Tanh", "Gemm", "Unsqueeze", "SequenceInsert"]  # y.unsqueeze(1) stays


def test_time_loop_body_drops_the_view_by_a_shape_computed_outside(results):
    """h.view(b, 16) with b = x.size(0) computed in the outer graph: the body reads [batch, 16] as a known
    value, and the carried h (new_zeros(b, 16), then tanh of a [batch, 16] Gemm) has that shape."""
    result = results["ts_time_loop.onnx"]
    reshape = body_steps(result, "NoOpReshape")
    assert [s.facts for s in reshape] == [["h.11 has shape [batch, 16]", "/Concat_1_output_0 = [batch, 16]"]]
    computed = [s.facts for s in body_steps(result, "ComputedReshape")]
    assert computed == [["/Reshape_output_0 has shape [batch, 12]", "/Gather_2_output_0 has shape [batch, 3, 4]"],
                        ["/Reshape_2_output_0 has shape [batch, 1, 16]", "/Tanh_output_0 has shape [batch, 16]"]]


def test_greedy_decoder_body_folds_its_views_and_double_negations(results):
    result = results["ts_greedy_tokens.onnx"]
    assert [s.facts for s in body_steps(result, "NoOpReshape")] == [
        ["h.17 has shape [batch, 16]", "/Concat_4_output_0 = [batch, -1]"]]  # h.view(h.size(0), -1)
    assert [s.facts for s in body_steps(result, "ComputedReshape")] == [
        ["/Reshape_1_output_0 has shape [batch, 8]", "/emb/Gather_output_0 has shape [batch, 1, 8]"],
        ["/Reshape_3_output_0 has shape [batch, 1]", "/ArgMax_output_0 has shape [batch]"]]
    assert sorted(s.graph for s in result.steps if s.pattern == "NotNot") == [
        "/If/then_branch", "/Loop/body//If_1/then_branch"]


def test_dynamo_while_loop_body_drops_its_allowzero_reshape(results):
    """The dynamo exporter writes h.reshape(h.shape[0], -1) as Reshape(h, [-1, 8], allowzero=1)."""
    result = results["dynamo_while_loop.onnx"]
    assert [s.facts for s in body_steps(result, "NoOpReshape")] == [
        ["x_while_loop_body_graph_0__subgraph_in has shape [batch, 8]"]]


def test_dynamo_cond_branch_drops_its_reshape_to_the_input_shape(results):
    """torch.cond's branch x.reshape(x.shape[0], -1) on x [batch, 8]: the branch reads x's shape from the outer
    graph; both branches stay equivalent (a positive and a negative sum pick each)."""
    result = results["dynamo_cond.onnx"]
    assert [(s.graph, s.facts) for s in result.steps if s.pattern == "NoOpReshape"] == [
        ("node_cond__0/then_branch", ["x has shape [batch, 8]"])]
    x = np.abs(np.random.default_rng(2).standard_normal((4, 8))).astype(np.float32)
    proven(result, {"x": x})
    proven(result, {"x": -x})


def test_gpt_position_ids_keep_the_batch_and_the_heads_fold(results):
    """arange(past, seq + past) has length (seq+past)-past = seq: the position embeddings are [1, seq, 16], so
    their sum with the token embeddings is [batch, seq, 16]; with the batch dim known, c_attn's Gemm between
    views becomes a MatMul (FlatMatMul), and each split_heads/merge_heads view gets a constant target that copies
    the dims it keeps; c_proj's Gemm, whose flatten also merges the heads, becomes a MatMul on the regrouped
    input."""
    result = results["ts_gpt_attention_past.onnx"]
    assert ["/Unsqueeze_2_output_0 has shape [1, seq]", "/Concat_1_output_0 = [-1, seq]"] in [
        s.facts for s in result.steps if s.pattern == "NoOpReshape"]
    flat = [s.facts for s in result.steps if s.pattern == "FlatMatMul"]
    assert flat == [["/ln/LayerNormalization_output_0 has shape [batch, seq, 16]",
                     "/c_attn/Reshape_1_output_0 has shape [batch, seq, 48]"],
                    ["/Transpose_4_output_0 has shape [unk__22, unk__20, 2, 8]",  # merge_heads folded in: regrouped
                     "/c_proj/Reshape_1_output_0 has shape [unk__22, unk__20, 16]"]]
    views = [s.facts for s in result.steps if s.pattern == "ComputedReshape"]
    assert views[:3] == [[f"/Reshape_{k}_output_0 has shape [batch, seq, 2, 8]",
                          f"/Split_output_{k - 2} has shape [batch, seq, 16]"] for k in (2, 3, 4)]
    assert len(views) == 4
    rng = np.random.default_rng(1)
    for batch, seq, past in [(3, 5, 0), (1, 1, 7)]:  # no past; one new token
        proven(result, {"input_ids": rng.integers(0, 20, (batch, seq)),
                        "past_key": rng.standard_normal((batch, 2, past, 8)).astype(np.float32),
                        "past_value": rng.standard_normal((batch, 2, past, 8)).astype(np.float32)})
