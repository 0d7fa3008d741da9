"""Comparisons of onnxruntime's generation operators: explorer's run against another model step by step, and
against onnxruntime, which returns only the operator's outputs."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

import explorer
from tests.support.generation_ops import MODELS, feeds


def test_a_planted_fault_is_found_at_its_step_and_node():
    """A decoder whose second attention's output projection is scaled by 1.01: compare finds the first divergence
    at that MatMul, inside the BeamSearch's decoder, at the first step."""
    faulty = onnx.load(MODELS / "gpt2_beam.onnx")
    decoder = next(a.g for a in faulty.graph.node[0].attribute if a.name == "decoder")
    weight = next(t for t in decoder.initializer if t.name == "transformer.h.1.attn.c_proj.weight")
    weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight) * np.float32(1.01), weight.name))
    comparison = explorer.compare(MODELS / "gpt2_beam.onnx", faulty, feeds("beam"))
    first = comparison.first
    assert first is not None
    assert (first.node, first.iteration) == ("BeamSearch_gpt2/decoder/GptAttention_1_matmul", (0,))


def test_against_onnxruntime_the_outputs_are_compared_and_the_decoder_said_unreachable():
    comparison = explorer.compare(MODELS / "gpt2_greedy.onnx", "onnxruntime", feeds("greedy"))
    assert not comparison.differs and {o.name for o in comparison.outputs} == {"sequences"}
    reasons = {u.reason for u in comparison.unaligned}
    assert reasons == {"inside a GreedySearch's decoder: onnxruntime returns only the operator's outputs"}
